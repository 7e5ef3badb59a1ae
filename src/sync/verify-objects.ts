/**
 * `verify --files DIR`'s object check: the file bytes `backup --files DIR` stored.
 *
 * - Every CONFIRMED file of the run has an object recorded for it (a file without one
 *   could not be restored), and the object's size is the file's declared size.
 * - Every object the snapshot records (every run's, they are shared), or a sample of them
 *   (`--sample PCT`), is read whole: it exists under DIR, has the recorded size, and its
 *   sha256 is its name.
 *
 * Objects live where object-store.ts puts them (`DIR/objects/<first 2 hex>/<sha256>`);
 * a recorded name that is not a sha256 is a failure, never a path (the snapshot's text
 * never builds a path outside DIR). Each object is hashed here rather than through the
 * object store's verified read, so a failure can say which way it is wrong (missing,
 * another size, other bytes), and verify creates nothing under DIR.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { createHash, randomInt } from "node:crypto"
import * as fs from "node:fs"
import { objectPathIn } from "../store/object-store.ts"
import type { SnapshotError, SnapshotStoreService } from "../store/snapshot.ts"
import { type CheckResult, Tally } from "./verify-check.ts"

/** The sha256 and size of a file's bytes, streamed; undefined when it is missing. */
const digestOf = (file: string): Effect.Effect<{ sha256: string; size: number } | undefined, Error> =>
  Effect.tryPromise({
    try: async () => {
      const hash = createHash("sha256")
      let size = 0
      try {
        for await (const chunk of fs.createReadStream(file) as AsyncIterable<Buffer>) {
          size += chunk.length
          hash.update(chunk)
        }
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined
        throw e
      }
      return { sha256: hash.digest("hex"), size }
    },
    catch: (e) => (e instanceof Error ? e : new Error(String(e)))
  })

/** `pct` percent of `items`, at least one when there is any, picked at random. */
export const sample = <A>(items: ReadonlyArray<A>, pct: number): Array<A> => {
  if (pct >= 100) return [...items]
  const want = Math.min(items.length, Math.max(1, Math.ceil((items.length * pct) / 100)))
  const pool = [...items]
  // A partial Fisher-Yates shuffle: the first `want` are a uniform sample.
  for (let i = 0; i < want; i++) {
    const j = i + randomInt(pool.length - i)
    ;[pool[i], pool[j]] = [pool[j]!, pool[i]!]
  }
  return pool.slice(0, want)
}

const fileLabel = (id: string, item: Record<string, unknown>) =>
  typeof item.name === "string" ? `file ${id} (${JSON.stringify(item.name)})` : `file ${id}`

/** The `objects` check of one run. */
export const checkObjects = (
  store: SnapshotStoreService,
  runId: number,
  dir: string,
  samplePercent: number
): Effect.Effect<CheckResult, SnapshotError | Error> =>
  Effect.gen(function*() {
    const tally = new Tally("objects")
    yield* store.runFileObjects(runId, "id").pipe(Stream.runForEach((f) =>
      Effect.sync(() => {
        const item = JSON.parse(f.item) as Record<string, unknown>
        if (item.status !== undefined && item.status !== "CONFIRMED") return
        const label = fileLabel(f.id, item)
        if (f.sha256 === null) tally.fail(`${label}: the run holds no bytes for it (backed up without --files, or skipped)`)
        else if (f.size === null) tally.fail(`${label}: its object ${f.sha256} is not recorded in file_objects`)
        else if (typeof item.size === "number" && item.size !== f.size) {
          tally.fail(`${label}: declared ${item.size} bytes, its object holds ${f.size}`)
        } else tally.pass()
      })
    ))
    const objects = yield* store.storedObjects
    for (const o of sample(objects, samplePercent)) {
      const label = `object ${o.sha256}`
      const file = objectPathIn(dir, o.sha256)
      if (file === undefined) {
        tally.fail(`${label}: not a sha256 name`)
        continue
      }
      const seen = yield* digestOf(file)
      if (seen === undefined) tally.fail(`${label}: missing from ${dir}`)
      else if (seen.size !== o.size) tally.fail(`${label}: ${seen.size} bytes under ${dir}, the snapshot recorded ${o.size}`)
      else if (seen.sha256 !== o.sha256) tally.fail(`${label}: its bytes under ${dir} hash to ${seen.sha256}`)
      else tally.pass()
    }
    return tally.result()
  })
