/**
 * `verify`'s hash check: every stored version's content hashed again with the function
 * the store hashed it with when it was written (snapshot-hash.ts), compared with the hash
 * stored beside it. A version whose text changed after it was written (a bit flip, an
 * edit by hand, a restore of a damaged copy) no longer matches.
 *
 * What each hash covers is what the backends hash on write (snapshot-sqlite.ts,
 * snapshot-postgres.ts): a record version its detail (with `workspaceId`) and its activity
 * items in order, and its summary under `summary_hash`; a workspace, list, user or file
 * version its item as stored (lists and files with their `workspaceId`).
 *
 * Read in batches of vids (keyset paging), so memory stays flat on any size of snapshot.
 */
import * as Effect from "effect/Effect"
import { contentHash } from "../store/snapshot-hash.ts"
import type { PlainEntity } from "../store/snapshot-schema.ts"
import type { SnapshotError, SnapshotStoreService } from "../store/snapshot.ts"
import { type CheckResult, Tally } from "./verify-check.ts"

const BATCH = 500

const PLAIN: ReadonlyArray<PlainEntity> = ["workspaces", "lists", "users", "files"]

/** The singular of a table name, for messages ("record 12"). */
const singular = (table: string) => table.replace(/s$/, "")

const parse = (text: string): { value: unknown } | { error: string } => {
  try {
    return { value: JSON.parse(text) as unknown }
  } catch (e) {
    return { error: e instanceof Error ? e.message : String(e) }
  }
}

const shortHash = (h: string) => h.slice(0, 12)

/** Every record version of the snapshot with its activity, hashed again. */
const recordVersions = (store: SnapshotStoreService, tally: Tally): Effect.Effect<void, SnapshotError> =>
  Effect.gen(function*() {
    for (let after = 0;;) {
      const rows = yield* store.recordVersionsAfter(after, BATCH)
      if (rows.length === 0) return
      const last = rows[rows.length - 1]!.vid
      const items = yield* store.activityOfVersions(after, last)
      const activityOf = new Map<number, Array<string>>()
      for (const a of items) {
        const list = activityOf.get(a.vid) ?? []
        list.push(a.item)
        activityOf.set(a.vid, list)
      }
      for (const row of rows) {
        const where = `record ${row.id} (version ${row.vid})`
        const detail = parse(row.detail)
        const summary = parse(row.summary)
        const activity = (activityOf.get(row.vid) ?? []).map(parse)
        const broken = [detail, summary, ...activity].find((p) => "error" in p)
        if (broken !== undefined && "error" in broken) {
          tally.fail(`${where}: stored JSON does not parse (${broken.error})`)
          continue
        }
        const values = (ps: ReadonlyArray<{ value: unknown } | { error: string }>) => ps.map((p) => ("value" in p ? p.value : null))
        const [d, s] = values([detail, summary])
        const hash = contentHash({ detail: d, activity: values(activity) })
        if (hash !== row.hash) {
          tally.fail(`${where}: its content hashes to ${shortHash(hash)}, the snapshot stored ${shortHash(row.hash)}`)
          continue
        }
        const summaryHash = contentHash(s)
        if (summaryHash !== row.summary_hash) {
          tally.fail(`${where}: its summary hashes to ${shortHash(summaryHash)}, the snapshot stored ${shortHash(row.summary_hash)}`)
          continue
        }
        tally.pass()
      }
      after = last
    }
  })

/** Every version of a plain entity table, hashed again. */
const plainVersions = (store: SnapshotStoreService, table: PlainEntity, tally: Tally): Effect.Effect<void, SnapshotError> =>
  Effect.gen(function*() {
    for (let after = 0;;) {
      const rows = yield* store.plainVersionsAfter(table, after, BATCH)
      if (rows.length === 0) return
      for (const row of rows) {
        const where = `${singular(table)} ${row.id} (version ${row.vid})`
        const item = parse(row.item)
        if ("error" in item) {
          tally.fail(`${where}: stored JSON does not parse (${item.error})`)
          continue
        }
        const hash = contentHash(item.value)
        if (hash !== row.hash) tally.fail(`${where}: its content hashes to ${shortHash(hash)}, the snapshot stored ${shortHash(row.hash)}`)
        else tally.pass()
      }
      after = rows[rows.length - 1]!.vid
    }
  })

/** The `hashes` check over every version the snapshot stores (all runs share them). */
export const checkHashes = (store: SnapshotStoreService): Effect.Effect<CheckResult, SnapshotError> =>
  Effect.gen(function*() {
    const tally = new Tally("hashes")
    yield* recordVersions(store, tally)
    for (const table of PLAIN) yield* plainVersions(store, table, tally)
    return tally.result()
  })
