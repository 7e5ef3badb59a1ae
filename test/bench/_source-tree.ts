/**
 * For benchmarks that compare source trees (AGAINST=DIR): an esbuild plugin that takes
 * this tree's src/ imports from another tree (a `git worktree` of another commit) instead,
 * so one entry file bundles either tree's code.
 */
import { build, type Plugin } from "esbuild"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** This checkout's root. */
export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")

/** Imports of this tree's src/ taken from `tree`'s instead. */
export const sourcesOf = (tree: string): Plugin => ({
  name: "sources-of",
  setup(b) {
    b.onResolve({ filter: /\/src\// }, (args) => {
      const resolved = path.resolve(args.resolveDir, args.path)
      return resolved.startsWith(path.join(root, "src") + path.sep)
        ? { path: path.join(tree, path.relative(root, resolved)) }
        : undefined
    })
  }
})

/**
 * A benchmark's child (`child`, an entry file of test/bench) and the threads it starts
 * (`threads`: bundle name to a path under src/), bundled from `tree` into `out` as the CLI
 * is bundled: the child as ESM, each thread as the CommonJS file the code loads by name. A
 * thread missing from `tree` (an older commit) is left out, and the code then runs without it.
 */
export const bundleTree = async (
  tree: string,
  out: string,
  child: string,
  threads: Readonly<Record<string, string>>
): Promise<void> => {
  const common = {
    bundle: true,
    platform: "node" as const,
    target: "node22",
    external: ["better-sqlite3", "pg", "pg-native"],
    logLevel: "warning" as const,
    nodePaths: [path.join(root, "node_modules")]
  }
  await build({
    ...common,
    entryPoints: { child },
    outdir: out,
    format: "esm",
    outExtension: { ".js": ".mjs" },
    plugins: [sourcesOf(tree)],
    banner: { js: "import { createRequire as __wsCreateRequire } from 'node:module'; const require = __wsCreateRequire(import.meta.url);" }
  })
  for (const [name, source] of Object.entries(threads)) {
    const file = path.join(tree, source)
    if (!fs.existsSync(file)) continue
    await build({
      ...common,
      entryPoints: { [name]: file },
      outdir: out,
      format: "cjs",
      outExtension: { ".js": ".cjs" },
      define: { "import.meta.url": "__wsModuleUrl" },
      banner: { js: "var __wsModuleUrl = require('node:url').pathToFileURL(__filename).href;" }
    })
  }
  // Packages (better-sqlite3) resolve from the bundle's directory upwards.
  fs.symlinkSync(path.join(root, "node_modules"), path.join(out, "node_modules"))
}
