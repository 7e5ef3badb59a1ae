// Bundles the CLI and the public entry points so `worksync --help` starts fast
// (a bundle avoids resolving hundreds of Effect modules at every cron start).
// Builds into a fresh directory and swaps it in, so a CLI started meanwhile never
// sees a half-written bundle.
//
// The library entries are ESM with shared chunks. The CLI is one CommonJS file
// (dist/cli.cjs) that bin/worksync.js compiles with a V8 code cache: compiling the
// bundle was the largest single cost of a start, and a script's code cache (vm.Script's
// cachedData) can be kept beside the bundle, keyed to it. Commands still evaluate their work (./run/)
// only when they run: esbuild keeps dynamically imported modules behind lazy
// initialisers, and V8 compiles a function only when it is first called.
// The cache itself is made here, by one `--help` run of the fresh build.
//
// Type declarations for the library's users go to dist/types (tsconfig.types.json): the
// sources import each other with `.ts` extensions, which a project compiling them under
// its own settings would reject.
import { build } from "esbuild"
import { spawn, spawnSync } from "node:child_process"
import { renameSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

const tmp = `dist.tmp-${process.pid}`
const old = `dist.old-${process.pid}`

const common = {
  outdir: tmp,
  bundle: true,
  platform: "node",
  target: "node22",
  sourcemap: true,
  minify: true,
  external: ["better-sqlite3"],
  // The dependencies' license comments go to a .LEGAL.txt beside each bundle. At the end of
  // the CLI bundle they held its only non-ASCII characters, and one such character makes V8
  // hold the whole 3 MB source as a two-byte string: 50-100 ms more at every start.
  legalComments: "linked",
  logLevel: "warning"
}

/** tsc writing the declarations, as a promise (it runs while esbuild bundles). */
const declarations = () =>
  new Promise((resolve, reject) => {
    // TypeScript 7 exports no `bin/tsc` path: the launcher is found beside its package.json.
    const tsc = join(dirname(createRequire(import.meta.url).resolve("typescript/package.json")), "bin", "tsc")
    const child = spawn(process.execPath, [tsc, "-p", "tsconfig.types.json", "--outDir", `${tmp}/types`], { stdio: "inherit" })
    child.on("error", reject)
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`type declarations: tsc exited with ${code}`))))
  })

await Promise.all([
  declarations(),
  build({
    ...common,
    entryPoints: {
      index: "src/index.ts",
      emulator: "src/emulator/index.ts",
      promise: "src/facade/index.ts"
    },
    format: "esm",
    splitting: true,
    banner: { js: "import { createRequire as __wsCreateRequire } from 'node:module'; const require = __wsCreateRequire(import.meta.url);" }
  }),
  build({
    ...common,
    // The threads' code (the planning thread of src/store/plan-writer.ts, the export threads
    // of src/connectors/export-threads.ts) sits next to both bundles.
    entryPoints: {
      cli: "src/cli/main.ts",
      "plan-writer.worker": "src/store/plan-writer.worker.ts",
      "export.worker": "src/connectors/export.worker.ts"
    },
    format: "cjs",
    outExtension: { ".js": ".cjs" },
    // import.meta.url (how a module finds files next to it) from CommonJS's module.filename
    // (bin/worksync.js, which runs cli.cjs without __filename, gives its module one).
    define: { "import.meta.url": "__wsModuleUrl" },
    banner: { js: "var __wsModuleUrl = require('node:url').pathToFileURL(module.filename).href;" }
  })
])

try {
  renameSync("dist", old)
} catch {
  // no previous build
}
renameSync(tmp, "dist")
rmSync(old, { recursive: true, force: true })

// Writes dist/cli.cjs.cache (a failure here only costs the first real start its compile).
spawnSync(process.execPath, ["bin/worksync.js", "--help"], { stdio: "ignore" })
