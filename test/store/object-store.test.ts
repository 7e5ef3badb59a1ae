/**
 * The object store of `backup --files DIR` (src/store/object-store.ts) on a real
 * directory: content-addressed names, verification while writing and while reading, and
 * nothing half-written ever under an object's name.
 */
import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { objectPathIn, openObjectStore } from "../../src/store/object-store.ts"
import { tempDir } from "../support/effect.ts"

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")
const bytes = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) % 251))
const chunks = (b: Buffer, size = 1000) => Stream.fromIterable(Array.from({ length: Math.ceil(b.length / size) }, (_, i) => b.subarray(i * size, (i + 1) * size)))
const tmpEntries = (dir: string) => fs.readdirSync(path.join(dir, "tmp"))
const readAll = <E>(s: Stream.Stream<Uint8Array, E>) =>
  Effect.map(Stream.runCollect(s), (c) => Buffer.concat([...c]))

describe("object store", () => {
  it.effect("stores bytes under objects/<2 hex>/<sha256>; the same content again is not written twice", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("ws-objects-")
      const store = yield* openObjectStore(dir)
      const b = bytes(10_000, 1)
      const first = yield* store.put(chunks(b), { expectedSize: b.length })
      expect(first).toEqual({ sha256: sha(b), size: b.length, stored: true })
      const file = path.join(dir, "objects", sha(b).slice(0, 2), sha(b))
      expect(fs.readFileSync(file).equals(b)).toBe(true)
      const again = yield* store.put(chunks(b, 333))
      expect(again).toEqual({ sha256: sha(b), size: b.length, stored: false })
      expect(tmpEntries(dir)).toEqual([])
      expect(yield* store.has(sha(b))).toBe(true)
      expect(yield* store.has(sha(b), b.length)).toBe(true)
      expect(yield* store.has(sha(b), b.length + 1)).toBe(false)
      const empty = yield* store.put(Stream.empty, { expectedSize: 0 })
      expect(empty).toMatchObject({ sha256: sha(Buffer.alloc(0)), size: 0, stored: true })
      expect((yield* store.list).map((o) => o.sha256).sort()).toEqual([sha(b), sha(Buffer.alloc(0))].sort())
    }))

  it.effect("a body of another size than declared, or one that fails midway, stores nothing and leaves no temporary file", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("ws-objects-")
      const store = yield* openObjectStore(dir)
      const b = bytes(5000, 2)
      const short = yield* Effect.flip(store.put(chunks(b), { expectedSize: 6000 }))
      expect(short._tag).toBe("ObjectSizeMismatch")
      const broken = Stream.concat(chunks(b), Stream.fail(new Error("connection reset")))
      const failed = yield* Effect.flip(store.put(broken, { expectedSize: 10_000 }))
      expect((failed as Error).message).toBe("connection reset")
      expect(yield* store.list).toEqual([])
      expect(tmpEntries(dir)).toEqual([])
    }))

  it.effect("reading verifies: a corrupt object fails at the end of its stream, a missing one at once", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("ws-objects-")
      const store = yield* openObjectStore(dir)
      const b = bytes(4096, 3)
      const { sha256 } = yield* store.put(chunks(b))
      expect((yield* readAll(store.open(sha256))).equals(b)).toBe(true)
      const file = objectPathIn(dir, sha256)!
      const flipped = Buffer.from(b)
      flipped[100] = flipped[100]! ^ 0xff
      fs.writeFileSync(file, flipped)
      const corrupt = yield* Effect.flip(readAll(store.open(sha256)))
      expect(corrupt._tag).toBe("ObjectCorrupt")
      expect(corrupt.message).toContain(`object ${sha256} is corrupt`)
      // Still the declared size: only reading finds it.
      expect(yield* store.has(sha256, b.length)).toBe(true)
      fs.rmSync(file)
      const missing = yield* Effect.flip(readAll(store.open(sha256)))
      expect(missing.message).toContain("is missing")
    }))

  it.effect("a name that is not a sha256 is never a path; foreign files are not objects; unfinished writes are cleared", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("ws-objects-")
      const store = yield* openObjectStore(dir)
      expect(store.pathOf("../../etc/passwd")).toBeUndefined()
      expect(yield* store.has("../x")).toBe(false)
      expect(yield* store.remove("../x")).toBe(false)
      const bad = yield* Effect.flip(readAll(store.open("..")))
      expect(bad._tag).toBe("ObjectCorrupt")
      fs.mkdirSync(path.join(dir, "objects", "zz"))
      fs.writeFileSync(path.join(dir, "objects", "zz", "notes.txt"), "x")
      fs.writeFileSync(path.join(dir, "tmp", "abc.part"), "half")
      expect(yield* store.list).toEqual([])
      expect(yield* store.clearTemp).toBe(1)
      expect(tmpEntries(dir)).toEqual([])
      const { sha256 } = yield* store.put(Stream.make(Buffer.from("x")))
      expect(yield* store.remove(sha256)).toBe(true)
      expect(yield* store.remove(sha256)).toBe(false)
    }))
})
