// What `worksync --help` evaluates: bundles the CLI with code splitting (with a metafile,
// into a temporary directory) and lists the source modules reachable from the entry
// through static imports only (chunks loaded by `import()` are left out), largest
// packages first. The shipped dist/cli.cjs is one file, but esbuild keeps the same
// modules behind lazy initialisers there, so this is the set a start evaluates.
// Exits 1 when the start-up graph holds a module that belongs behind a dynamic import.
// With --entry FILE, the graph a command's run module (src/cli/run/NAME.ts) evaluates when
// the command runs: there, only the PostgreSQL drivers must stay out (they load when a
// location names PostgreSQL).
//
//   node scripts/cli-graph.mjs [--all] [--entry FILE]   (--all: every module, not only the totals)
import { build } from "esbuild"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"

const entryAt = process.argv.indexOf("--entry")
const entryFile = entryAt > 0 ? process.argv[entryAt + 1] : "src/cli/main.ts"

const outdir = mkdtempSync(join(tmpdir(), "worksync-cli-graph-"))
try {
  const { metafile } = await build({
    entryPoints: { cli: entryFile },
    outdir,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node22",
    splitting: true,
    minify: true,
    external: ["better-sqlite3"],
    metafile: true,
    write: false,
    logLevel: "warning"
  })

  const outputs = metafile.outputs
  const entry = Object.keys(outputs).find((o) => outputs[o].entryPoint === entryFile)
  const seen = new Set()
  const visit = (out) => {
    if (seen.has(out)) return
    seen.add(out)
    for (const i of outputs[out].imports) if (i.kind === "import-statement" && outputs[i.path]) visit(i.path)
  }
  visit(entry)

  const inputs = new Map()
  for (const out of seen) {
    for (const [file, { bytesInOutput }] of Object.entries(outputs[out].inputs)) {
      inputs.set(file, (inputs.get(file) ?? 0) + bytesInOutput)
    }
  }
  const groupOf = (file) => {
    const nm = file.lastIndexOf("node_modules/")
    if (nm >= 0) {
      const parts = file.slice(nm + 13).split("/")
      return parts[0].startsWith("@") ? `${parts[0]}/${parts[1]}` : parts[0]
    }
    return file.split("/").slice(0, 2).join("/")
  }
  const groups = new Map()
  for (const [file, bytes] of inputs) groups.set(groupOf(file), (groups.get(groupOf(file)) ?? 0) + bytes)
  const total = [...seen].reduce((n, o) => n + outputs[o].bytes, 0)
  console.log(`static graph of the CLI (split build): ${seen.size} file(s), ${(total / 1024).toFixed(0)} KB minified, ${inputs.size} modules`)
  for (const [group, bytes] of [...groups].sort((a, b) => b[1] - a[1])) {
    console.log(`  ${(bytes / 1024).toFixed(1).padStart(7)} KB  ${group}`)
  }
  if (process.argv.includes("--all")) {
    for (const [file, bytes] of [...inputs].sort((a, b) => b[1] - a[1])) console.log(`  ${String(bytes).padStart(8)}  ${file}`)
  }

  // --why PATTERN: one chain of static imports from the entry to the first module matching PATTERN.
  const whyAt = process.argv.indexOf("--why")
  if (whyAt > 0) {
    const pattern = new RegExp(process.argv[whyAt + 1])
    const parent = new Map([[entryFile, null]])
    const queue = [entryFile]
    let found
    while (queue.length > 0 && found === undefined) {
      const file = queue.shift()
      for (const i of metafile.inputs[file]?.imports ?? []) {
        if (i.kind !== "import-statement" || parent.has(i.path)) continue
        parent.set(i.path, file)
        if (pattern.test(i.path)) {
          found = i.path
          break
        }
        queue.push(i.path)
      }
    }
    const chain = []
    for (let f = found; f != null; f = parent.get(f)) chain.unshift(f)
    console.log(found === undefined ? `\nnothing matches ${pattern}` : `\nwhy ${found}:\n  ${chain.join("\n  -> ")}`)
  }

  const forbidden = entryAt > 0
    ? [/node_modules\/(@effect\/sql-pg|pg|pg-pool|pg-boss)\//]
    : [
      /^src\/(store|sync|connectors|client|streams|emulator)\//,
      /node_modules\/(csv-parse|csv-stringify|picomatch|undici|graphql|busboy)\//
    ]
  // effect/Schema (with fast-check, through effect/FastCheck) stays: @effect/cli's own
  // option parsing imports it (internal/primitive.js), so only @effect/cli could drop it.
  const bad = [...inputs.keys()].filter((f) => forbidden.some((re) => re.test(f)))
  if (bad.length > 0) {
    console.log(`\nin the start-up graph but should load on use:\n${bad.map((f) => `  ${f}`).join("\n")}`)
    process.exitCode = 1
  }
} finally {
  rmSync(outdir, { recursive: true, force: true })
}
