/**
 * The file bytes of `backup --files DIR`: content-addressed objects, one per distinct
 * content, named by the sha256 of their bytes.
 *
 *   DIR/objects/<first 2 hex>/<sha256 hex>   an object (never written in place)
 *   DIR/tmp/<random>.part                    a write in progress
 *
 * An object is streamed into a temporary file while its sha256 and size are computed,
 * flushed to disk, checked against the size the file declares, and only then renamed to
 * its name: a name always holds whole, verified bytes, and a write cut short (even by
 * SIGKILL) leaves at most a temporary file, which never becomes an object. Reading an
 * object verifies it again: its bytes must hash to its name.
 *
 * Nothing under DIR names a token, a URL or a server-supplied name; paths are built only
 * from sha256 names this module checked (64 lower-case hex digits).
 */
import * as NodeSink from "@effect/platform-node/NodeSink"
import * as NodeStream from "@effect/platform-node/NodeStream"
import * as Context from "effect/Context"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Stream from "effect/Stream"
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import type * as Scope from "effect/Scope"
import { lockStore, type StoreBusy, type StoreLockError } from "./file-lock.ts"

/** A local operation on DIR failed (permissions, disk full, not a directory). */
export class ObjectStoreError extends Data.TaggedError("ObjectStoreError")<{
  readonly dir: string
  readonly operation: string
  readonly detail: string
}> {
  override get message(): string {
    return `files directory ${this.dir}: ${this.operation} failed: ${this.detail}`
  }
}

/** The bytes written were not as many as the file declares: nothing was stored. */
export class ObjectSizeMismatch extends Data.TaggedError("ObjectSizeMismatch")<{
  readonly expected: number
  readonly actual: number
}> {
  override get message(): string {
    return `received ${this.actual} bytes, the file declares ${this.expected}`
  }
}

/** An object's bytes do not hash to its name, or it is missing: it cannot be used. */
export class ObjectCorrupt extends Data.TaggedError("ObjectCorrupt")<{
  readonly dir: string
  readonly sha256: string
  readonly detail: string
}> {
  override get message(): string {
    return `files directory ${this.dir}: object ${this.sha256} ${this.detail}`
  }
}

export interface StoredObject {
  readonly sha256: string
  readonly size: number
}

export interface PutResult extends StoredObject {
  /** False when an object of that content was there already (its bytes are not written twice). */
  readonly stored: boolean
}

export interface ObjectStoreApi {
  readonly dir: string
  /** Where the object of `sha256` lives (a checked name, or a failure). */
  readonly pathOf: (sha256: string) => string | undefined
  /** Whether the object exists, and (when given) has `size` bytes: a cheap check, no read. */
  readonly has: (sha256: string, size?: number) => Effect.Effect<boolean, ObjectStoreError>
  /**
   * Streams `body` into a new object, computing its sha256 on the way. With
   * `expectedSize`, a body of another length fails with ObjectSizeMismatch and stores
   * nothing. A body whose content is stored already is dropped (`stored: false`).
   */
  readonly put: <E, R>(
    body: Stream.Stream<Uint8Array, E, R>,
    options?: { readonly expectedSize?: number | undefined; readonly onBytes?: ((n: number) => void) | undefined }
  ) => Effect.Effect<PutResult, E | ObjectStoreError | ObjectSizeMismatch, R>
  /** The object's bytes, verified on the way: the stream fails with ObjectCorrupt at its end when they do not hash to `sha256`. */
  readonly open: (sha256: string) => Stream.Stream<Uint8Array, ObjectStoreError | ObjectCorrupt>
  /** Removes the object; false when it was not there. */
  readonly remove: (sha256: string) => Effect.Effect<boolean, ObjectStoreError>
  /** Every object under DIR (names that are not sha256 names are not objects and are left alone). */
  readonly list: Effect.Effect<Array<StoredObject>, ObjectStoreError>
  /** Removes writes a killed process left in DIR/tmp; the caller holds `lock`. Returns how many. */
  readonly clearTemp: Effect.Effect<number, ObjectStoreError>
  /**
   * One writer per DIR for the life of the scope (a backup storing bytes, a prune removing
   * them), across processes and snapshots: a second one waits briefly, then fails with StoreBusy.
   */
  readonly lock: Effect.Effect<void, StoreBusy | StoreLockError, Scope.Scope>
}

export class ObjectStore extends Context.Service<ObjectStore, ObjectStoreApi>()("worksync/ObjectStore") {
  static readonly layer = (dir: string) => Layer.effect(ObjectStore, openObjectStore(dir))
}

const SHA256 = /^[0-9a-f]{64}$/
export const isSha256 = (name: string): boolean => SHA256.test(name)

/** The subdirectories of DIR this module owns. */
export const OBJECTS_DIR = "objects"
export const TEMP_DIR = "tmp"

/** Where the object of `sha256` lives under `dir` (the layout above); undefined for a name that is not a sha256. */
export const objectPathIn = (dir: string, sha256: string): string | undefined =>
  isSha256(sha256) ? path.join(dir, OBJECTS_DIR, sha256.slice(0, 2), sha256) : undefined

const codeOf = (e: unknown): string => (e as { code?: unknown }).code as string ?? ""

/** Opens (creating when missing) DIR with its `objects` and `tmp` directories. */
export const openObjectStore = (root: string): Effect.Effect<ObjectStoreApi, ObjectStoreError> =>
  Effect.gen(function*() {
    const dir = path.resolve(root)
    const objects = path.join(dir, OBJECTS_DIR)
    const temp = path.join(dir, TEMP_DIR)
    const attempt = <A>(operation: string, f: () => A): Effect.Effect<A, ObjectStoreError> =>
      Effect.try({
        try: f,
        catch: (e) => new ObjectStoreError({ dir: root, operation, detail: e instanceof Error ? e.message : String(e) })
      })
    yield* attempt("open", () => {
      for (const d of [dir, objects, temp]) {
        fs.mkdirSync(d, { recursive: true, mode: 0o700 })
        if (!fs.lstatSync(d).isDirectory()) throw new Error(`${d} is not a directory`)
      }
    })

    const pathOf = (sha256: string) => objectPathIn(dir, sha256)

    const has: ObjectStoreApi["has"] = (sha256, size) =>
      attempt("look up an object", () => {
        const file = pathOf(sha256)
        if (file === undefined) return false
        const stat = fs.statSync(file, { throwIfNoEntry: false })
        return stat !== undefined && stat.isFile() && (size === undefined || stat.size === size)
      })

    const put: ObjectStoreApi["put"] = (body, options = {}) =>
      Effect.gen(function*() {
        const part = path.join(temp, `${randomBytes(12).toString("hex")}.part`)
        const cleanup = Effect.sync(() => fs.rmSync(part, { force: true }))
        // The digest describes the latest run of the stream (a retried request reads its body again).
        let hash = createHash("sha256")
        let size = 0
        const hashed = Stream.suspend(() => {
          hash = createHash("sha256")
          size = 0
          return Stream.mapArray(body, (chunk) => {
            for (const bytes of chunk) {
              hash.update(bytes)
              size += bytes.length
              options.onBytes?.(bytes.length)
            }
            return chunk
          })
        })
        // `flush`: the bytes reach the disk before the rename gives them their name.
        yield* Stream.run(
          hashed,
          NodeSink.fromWritable({
            evaluate: () => fs.createWriteStream(part, { mode: 0o600, flush: true }),
            onError: (e) => new ObjectStoreError({ dir: root, operation: "write an object", detail: String(e) })
          })
        ).pipe(Effect.onError(() => cleanup))
        const sha256 = hash.digest("hex")
        if (options.expectedSize !== undefined && size !== options.expectedSize) {
          yield* cleanup
          return yield* new ObjectSizeMismatch({ expected: options.expectedSize, actual: size })
        }
        const final = pathOf(sha256)!
        // Check and rename in one synchronous step: no other write of this process comes between.
        const stored = yield* attempt("store an object", () => {
          const existing = fs.statSync(final, { throwIfNoEntry: false })
          if (existing !== undefined && existing.isFile() && existing.size === size) {
            fs.rmSync(part, { force: true })
            return false
          }
          fs.mkdirSync(path.dirname(final), { recursive: true, mode: 0o700 })
          // Replaces an object of the wrong size (cut short outside our writes): the new bytes are verified.
          fs.renameSync(part, final)
          return true
        }).pipe(Effect.onError(() => cleanup))
        return { sha256, size, stored }
      })

    const open: ObjectStoreApi["open"] = (sha256) => {
      const file = pathOf(sha256)
      if (file === undefined) return Stream.fail(new ObjectCorrupt({ dir: root, sha256, detail: "is not a sha256 name" }))
      return Stream.suspend(() => {
        const hash = createHash("sha256")
        const bytes = NodeStream.fromReadable({
          evaluate: () => fs.createReadStream(file, { highWaterMark: 256 * 1024 }),
          onError: (e): ObjectStoreError | ObjectCorrupt =>
            codeOf(e) === "ENOENT"
              ? new ObjectCorrupt({ dir: root, sha256, detail: "is missing" })
              : new ObjectStoreError({ dir: root, operation: "read an object", detail: String(e) })
        }).pipe(Stream.mapArray((chunk) => {
          for (const b of chunk) hash.update(b)
          return chunk
        }))
        const check = Stream.fromEffectDrain(Effect.suspend(() => {
          const actual = hash.digest("hex")
          return actual === sha256
            ? Effect.void
            : Effect.fail(new ObjectCorrupt({ dir: root, sha256, detail: `is corrupt: its bytes hash to ${actual}` }))
        }))
        return Stream.concat(bytes, check)
      })
    }

    const remove: ObjectStoreApi["remove"] = (sha256) =>
      attempt("remove an object", () => {
        const file = pathOf(sha256)
        if (file === undefined) return false
        try {
          fs.unlinkSync(file)
          return true
        } catch (e) {
          if (codeOf(e) === "ENOENT") return false
          throw e
        }
      })

    const list = attempt("list objects", () => {
      const out: Array<StoredObject> = []
      for (const prefix of fs.readdirSync(objects).sort()) {
        if (!/^[0-9a-f]{2}$/.test(prefix)) continue
        const sub = path.join(objects, prefix)
        if (!fs.lstatSync(sub).isDirectory()) continue
        for (const name of fs.readdirSync(sub).sort()) {
          if (!isSha256(name) || !name.startsWith(prefix)) continue
          const stat = fs.lstatSync(path.join(sub, name))
          if (stat.isFile()) out.push({ sha256: name, size: stat.size })
        }
      }
      return out
    })

    const clearTemp = attempt("clear unfinished writes", () => {
      let removed = 0
      for (const name of fs.readdirSync(temp)) {
        if (!name.endsWith(".part")) continue
        fs.rmSync(path.join(temp, name), { force: true })
        removed++
      }
      return removed
    })

    const lock = lockStore("files directory", objects)

    return { dir: root, pathOf, has, put, open, remove, list, clearTemp, lock } satisfies ObjectStoreApi
  })
