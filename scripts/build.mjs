// Bundles the CLI and the public entry points so `worksync --help` starts fast
// (a bundle avoids resolving hundreds of Effect modules at every cron start).
import { build } from "esbuild"

await build({
  entryPoints: { cli: "src/cli/main.ts", index: "src/index.ts", emulator: "src/emulator/index.ts" },
  outdir: "dist",
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  splitting: true,
  sourcemap: true,
  external: ["better-sqlite3"],
  logLevel: "warning",
  banner: { js: "import { createRequire as __wsCreateRequire } from 'node:module'; const require = __wsCreateRequire(import.meta.url);" }
})
