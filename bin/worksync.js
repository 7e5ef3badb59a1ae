#!/usr/bin/env node
// The CLI ships as an esbuild bundle (built by `npm install` through `prepare`):
// cron starts it often, and the bundle starts several times faster than the sources.
import "../dist/cli.js"
