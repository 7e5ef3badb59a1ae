// Bundles the CLI and the public entry points so `worksync --help` starts fast
// (a bundle avoids resolving hundreds of Effect modules at every cron start).
// Builds into a fresh directory and swaps it in, so a CLI started meanwhile never
// sees a half-written bundle.
import { build } from "esbuild"
import { renameSync, rmSync } from "node:fs"

const tmp = `dist.tmp-${process.pid}`
const old = `dist.old-${process.pid}`

await build({
  entryPoints: {
    cli: "src/cli/main.ts",
    index: "src/index.ts",
    emulator: "src/emulator/index.ts",
    promise: "src/facade/index.ts"
  },
  outdir: tmp,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  splitting: true,
  sourcemap: true,
  minify: true,
  external: ["better-sqlite3"],
  logLevel: "warning",
  banner: { js: "import { createRequire as __wsCreateRequire } from 'node:module'; const require = __wsCreateRequire(import.meta.url);" }
})

try {
  renameSync("dist", old)
} catch {
  // no previous build
}
renameSync(tmp, "dist")
rmSync(old, { recursive: true, force: true })
