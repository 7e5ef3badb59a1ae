/**
 * `manifest.ndjson` of a directory target: one line per copied file,
 * `{"id", "uid", "name", "path", "size", "sha256"}` with `path` relative to the directory.
 *
 * Appends survive interruption: a torn last line (the process killed mid-write) is cut
 * off when the manifest is opened again, and a file copied twice (killed after its line
 * was written but before the journal recorded it) does not get a second line.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import * as Schema from "effect/Schema"
import { MANIFEST_FILE } from "./safe-name.ts"

export const ManifestLine = Schema.Struct({
  /** Source file id; null when the source is a directory. */
  id: Schema.NullOr(Schema.String),
  /** Source file uid; null when the source is a directory. */
  uid: Schema.NullOr(Schema.String),
  /** The server name (or, from a directory source, the relative source path). */
  name: Schema.String,
  /** Local path relative to the target directory, `/`-separated. */
  path: Schema.String,
  size: Schema.Number,
  sha256: Schema.String
})
export type ManifestLine = typeof ManifestLine.Type

const decodeLine = Schema.decodeUnknownOption(Schema.fromJsonString(ManifestLine))

export interface Manifest {
  readonly file: string
  /** Lines already in the manifest, by local path. */
  readonly lines: ReadonlyMap<string, ManifestLine>
  /** Appends a line unless the same file is already listed with the same content. */
  append(line: ManifestLine): void
  close(): void
}

const sameLine = (a: ManifestLine, b: ManifestLine): boolean =>
  a.id === b.id && a.uid === b.uid && a.name === b.name && a.path === b.path && a.size === b.size &&
  a.sha256 === b.sha256

/** Cuts a trailing partial line left by an interrupted write. */
const dropTornTail = (file: string): void => {
  const size = fs.statSync(file).size
  if (size === 0) return
  const fd = fs.openSync(file, "r+")
  try {
    const last = Buffer.alloc(1)
    fs.readSync(fd, last, 0, 1, size - 1)
    if (last[0] === 0x0a) return
    // Scan back in blocks for the last newline.
    const block = Buffer.alloc(64 * 1024)
    let end = size
    while (end > 0) {
      const start = Math.max(0, end - block.length)
      const n = fs.readSync(fd, block, 0, end - start, start)
      const idx = block.subarray(0, n).lastIndexOf(0x0a)
      if (idx >= 0) {
        fs.ftruncateSync(fd, start + idx + 1)
        return
      }
      end = start
    }
    fs.ftruncateSync(fd, 0)
  } finally {
    fs.closeSync(fd)
  }
}

/** Opens (creating if needed) `dir/manifest.ndjson` for appending. */
export const openManifest = (dir: string): Manifest => {
  const file = path.join(dir, MANIFEST_FILE)
  const lines = new Map<string, ManifestLine>()
  if (fs.existsSync(file)) {
    dropTornTail(file)
    for (const text of fs.readFileSync(file, "utf8").split("\n")) {
      if (text.trim() === "") continue
      const decoded = decodeLine(text)
      if (decoded._tag === "Some") lines.set(decoded.value.path, decoded.value)
    }
  }
  const fd = fs.openSync(file, "a")
  let closed = false
  return {
    file,
    lines,
    append(line) {
      const known = lines.get(line.path)
      if (known !== undefined && sameLine(known, line)) return
      // Key order fixed by the contract.
      const text = JSON.stringify({
        id: line.id,
        uid: line.uid,
        name: line.name,
        path: line.path,
        size: line.size,
        sha256: line.sha256
      })
      fs.writeSync(fd, text + "\n")
      lines.set(line.path, line)
    },
    close() {
      if (closed) return
      closed = true
      fs.closeSync(fd)
    }
  }
}

/** Every line of a manifest file (for checks and tests). */
export const readManifest = (dir: string): ReadonlyArray<ManifestLine> => {
  const file = path.join(dir, MANIFEST_FILE)
  if (!fs.existsSync(file)) return []
  const out: Array<ManifestLine> = []
  for (const text of fs.readFileSync(file, "utf8").split("\n")) {
    if (text.trim() === "") continue
    const decoded = decodeLine(text)
    if (decoded._tag === "Some") out.push(decoded.value)
  }
  return out
}
