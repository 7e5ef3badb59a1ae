/**
 * The emulator's object storage: one file on disk per storage key, so large uploads
 * cost no memory. Either a temporary directory (removed on close) or a directory
 * beside the database file (kept, so a persistent emulator keeps its bytes).
 */
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Transform } from "node:stream"
import { pipeline } from "node:stream/promises"
import type { ObjectStore } from "../context.ts"

/** The disk store adds synchronous seeding and a close that cleans up a temporary dir. */
export interface DiskObjectStore extends ObjectStore {
  readonly dir: string
  /** Writes a whole object at once (seeding). */
  putBytes(key: string, bytes: Uint8Array): { size: number; sha256: string }
  /** Removes the directory when it was created as a temporary one. */
  close(): void
}

/** Where a persistent emulator keeps its objects: beside its database file. */
export const objectDirForDb = (dbFile: string): string => `${dbFile}.objects`

export const isDiskObjectStore = (store: ObjectStore): store is DiskObjectStore =>
  typeof (store as Partial<DiskObjectStore>).putBytes === "function"

/**
 * Opens a store in `dir` (created if missing, kept on close), or in a fresh temporary
 * directory removed on close when `dir` is omitted.
 */
export const createObjectStore = (dir?: string): DiskObjectStore => {
  const temporary = dir === undefined
  const root = dir ?? fs.mkdtempSync(path.join(os.tmpdir(), "worksync-objects-"))
  fs.mkdirSync(root, { recursive: true })

  // Keys are arbitrary strings; hashing them gives flat, safe file names.
  const fileFor = (key: string): string =>
    path.join(root, createHash("sha256").update(key).digest("hex"))

  const put: ObjectStore["put"] = async (key, body) => {
    const final = fileFor(key)
    const partial = `${final}.part-${randomBytes(6).toString("hex")}`
    const hash = createHash("sha256")
    let size = 0
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length
        hash.update(chunk)
        done(null, chunk)
      }
    })
    try {
      await pipeline(body, meter, fs.createWriteStream(partial))
      // Rename so a reader never sees a half-written object.
      fs.renameSync(partial, final)
    } catch (error) {
      fs.rmSync(partial, { force: true })
      throw error
    }
    return { size, sha256: hash.digest("hex") }
  }

  const putBytes: DiskObjectStore["putBytes"] = (key, bytes) => {
    const final = fileFor(key)
    const partial = `${final}.part-${randomBytes(6).toString("hex")}`
    fs.writeFileSync(partial, bytes)
    fs.renameSync(partial, final)
    return { size: bytes.byteLength, sha256: createHash("sha256").update(bytes).digest("hex") }
  }

  const stat: ObjectStore["stat"] = (key) => {
    try {
      return { size: fs.statSync(fileFor(key)).size }
    } catch {
      return null
    }
  }

  /** `range` is inclusive at both ends, as in HTTP byte ranges. */
  const read: ObjectStore["read"] = (key, range) => {
    const file = fileFor(key)
    if (!fs.existsSync(file)) throw new Error("object not found")
    return range === undefined
      ? fs.createReadStream(file)
      : fs.createReadStream(file, { start: range.start, end: range.end })
  }

  const remove: ObjectStore["remove"] = (key) => {
    fs.rmSync(fileFor(key), { force: true })
  }

  const close = () => {
    if (temporary) fs.rmSync(root, { recursive: true, force: true })
  }

  return { dir: root, put, putBytes, stat, read, remove, close }
}
