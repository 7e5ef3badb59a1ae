/**
 * For benchmarks that compare source trees (AGAINST=DIR): an esbuild plugin that takes
 * this tree's src/ imports from another tree (a `git worktree` of another commit) instead,
 * so one entry file bundles either tree's code.
 */
import type { Plugin } from "esbuild"
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
