/**
 * The files of a local directory tree, in a stable order, optionally filtered by glob.
 *
 * Symbolic links are not followed (a link could lead outside the tree or into a
 * loop); only regular files are listed. Relative paths use `/` on every platform,
 * since they become server names and glob subjects.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import picomatch from "picomatch"
import { TEMP_DIR } from "./safe-name.ts"

export interface LocalFile {
  /** Path relative to the root, `/`-separated, NFC. */
  readonly relPath: string
  readonly absPath: string
  readonly size: number
  readonly mtimeMs: number
}

export interface WalkOptions {
  /** Keep files matching any of these globs (matched against `relPath`); none keeps all. */
  readonly include?: ReadonlyArray<string> | undefined
  /** Then drop files matching any of these. */
  readonly exclude?: ReadonlyArray<string> | undefined
}

/** A predicate for relative paths from include/exclude globs (dotfiles match `*` too). */
export const globFilter = (options: WalkOptions): ((relPath: string) => boolean) => {
  const include = options.include && options.include.length > 0 ? picomatch([...options.include], { dot: true }) : null
  const exclude = options.exclude && options.exclude.length > 0 ? picomatch([...options.exclude], { dot: true }) : null
  return (relPath) => (include === null || include(relPath)) && (exclude === null || !exclude(relPath))
}

const byCodePoint = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Every regular file under `root`, by relative path, yielded as the walk finds it: a tree
 * of any size is walked holding only the names of the directories on the way down (each
 * one's entries while it is walked), not a list of its files.
 */
export async function* walkFiles(root: string, options: WalkOptions = {}): AsyncGenerator<LocalFile> {
  const keep = globFilter(options)
  async function* visit(dir: string, prefix: string): AsyncGenerator<LocalFile> {
    const entries = await fs.promises.readdir(dir, { withFileTypes: true })
    entries.sort((a, b) => byCodePoint(a.name, b.name))
    for (const entry of entries) {
      const abs = path.join(dir, entry.name)
      const rel = prefix === "" ? entry.name.normalize("NFC") : `${prefix}/${entry.name.normalize("NFC")}`
      if (entry.isDirectory()) {
        // Our own scratch space from an interrupted copy into this tree.
        if (prefix === "" && entry.name === TEMP_DIR) continue
        yield* visit(abs, rel)
      } else if (entry.isFile() && keep(rel)) {
        const stat = await fs.promises.stat(abs)
        yield { relPath: rel, absPath: abs, size: stat.size, mtimeMs: stat.mtimeMs }
      }
    }
  }
  yield* visit(path.resolve(root), "")
}

/** Every regular file under `root`, sorted by relative path. */
export const walkDirectory = async (root: string, options: WalkOptions = {}): Promise<ReadonlyArray<LocalFile>> => {
  const out: Array<LocalFile> = []
  for await (const file of walkFiles(root, options)) out.push(file)
  return out
}
