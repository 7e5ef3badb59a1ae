/**
 * The target side of a restore: what the target workspace holds now (lists, tags, users,
 * and every record, archived or not), and how a record there compares with its source.
 *
 * A restore makes the target hold the run's records, so "unchanged" is judged against the
 * target as it is, not against what an earlier restore sent: an edit made on the target
 * since is undone by the next restore. (A migration's next pass keeps it instead, judged
 * against what its last pass wrote: restore-plan.ts `delta`.)
 *
 * The records are kept in a scratch SQLite file of the caller's scope, not in the heap:
 * about 1.1 KB a record there (measured on the emulator's records), so 110 MB at 100,000
 * records and past a gigabyte at a million, where the file costs a lookup per record
 * (store/scratch-records.ts; a scan hands a record that moved during the read twice, and
 * it keeps the last summary). So are the ids the scans have emitted (store/scratch-keys.ts,
 * about 100 bytes a record in the heap otherwise): nothing is held per record.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type * as Scope from "effect/Scope"
import * as Stream from "effect/Stream"
import { notAvailableLine } from "../client/errors.ts"
import { RestClient, type RestClientApi, type RestError } from "../client/rest-client.ts"
import { PAGE_MAX_LIMIT } from "../schema/limits.ts"
import { scratchKeys } from "../store/scratch-keys.ts"
import { scratchRecords } from "../store/scratch-records.ts"
import type { StoreOpenError } from "../store/sqlite.ts"
import type { RecordSummary } from "../schema/records.ts"
import { restUserEmail } from "../schema/users.ts"
import { allPages, Paging } from "../streams/paging.ts"
import type { PageError } from "../streams/paging.ts"
import { type ScanUnstable, stableRecordScan } from "../streams/stable-scan.ts"
import type { SourceRecord } from "./restore-source.ts"
import { summaryDifferences } from "./restore-written.ts"

export interface TargetState {
  /** List id by title. */
  readonly lists: Map<string, string>
  /** Tag id by title; none when the service has no tag operations (beyond the documents). */
  readonly tags: Option.Option<Map<string, string>>
  /** User id by lower-case e-mail. */
  readonly users: Map<string, string>
  /** Every record of the workspace now, archived or not, by id. */
  readonly records: TargetRecords
  /** What the service lacks, one line each. */
  readonly notices: ReadonlyArray<string>
}

/** The target's records by id, read from the scratch file (see the top). */
export interface TargetRecords {
  readonly size: number
  readonly has: (id: string) => boolean
  readonly get: (id: string) => RecordSummary | undefined
  /** Every id, read a page at a time (nothing held open between pages). */
  readonly ids: () => Iterable<string>
  /**
   * Marks a record a run record maps to (a restore's `--delete-missing` never deletes it);
   * kept in the file beside its summary, so the marks of a million records cost no heap.
   */
  readonly match: (id: string) => void
  /** The ids of the records not marked, a page at a time like `ids`. */
  readonly unmatchedIds: () => Iterable<string>
}

/** Summaries written a page at a time: one transaction per batch, not per record. */
const WRITE_BATCH = 500

/** Reads the target workspace as it is now; its records stay readable for the scope. */
export const readTarget = (
  client: RestClientApi,
  workspaceId: string
): Effect.Effect<TargetState, RestError | PageError | ScanUnstable | StoreOpenError, Scope.Scope> =>
  Effect.gen(function*() {
    const notices: Array<string> = []
    const lists = new Map((yield* client.listLists({ workspaceId })).map((l) => [l.title, l.id] as const))
    const tags = yield* client.listTags({ workspaceId }).pipe(
      Effect.map((all) => Option.some(new Map(all.map((t) => [t.title, t.id] as const)))),
      Effect.catchTag("NotAvailable", (e) => {
        notices.push(`${notAvailableLine("tags", e)}; records are restored without their tags`)
        return Effect.succeed(Option.none<Map<string, string>>())
      })
    )
    const users = new Map<string, string>()
    const listed = yield* allPages(
      (skip, limit) => Effect.map(client.listUsers({ workspaceId, skip, limit }), (p) => Paging.totalCount(p.users, p.totalCount, skip)),
      PAGE_MAX_LIMIT
    )
    for (const u of listed) {
      // A user the service lists without an e-mail cannot be matched by one.
      const email = restUserEmail(u)
      if (email !== undefined) users.set(email, u.id)
    }
    const file = yield* scratchRecords("target")
    // The ids each scan has emitted, in a file of their own (the records' file is written
    // a batch behind the scan), emptied for each scan.
    const seen = yield* scratchKeys("target-ids")
    const seenIds = () => {
      seen.clear()
      return seen
    }
    // Both `archived` values, sent explicitly: either reading of the default gives all.
    for (const archived of [false, true]) {
      const scan = yield* stableRecordScan(workspaceId, { archived, seenIds })
      yield* Stream.runForEach(Stream.grouped(scan.records, WRITE_BATCH), (rs) => Effect.sync(() => file.putAll(rs)))
    }
    const records: TargetRecords = {
      size: file.count(),
      has: file.has,
      get: (id) => {
        const summary = file.get(id)
        return summary === undefined ? undefined : (JSON.parse(summary) as RecordSummary)
      },
      ids: file.ids,
      match: file.match,
      unmatchedIds: file.unmatchedIds
    }
    return { lists, tags, users, records, notices }
  }).pipe(Effect.provideService(RestClient, client))

/**
 * Records of one list in their order: by `position` (a documented field of summaries and
 * details; the documents have no write that sets it), then by id. Anything without a
 * number sorts last.
 */
export const byPosition = (a: { readonly position?: unknown; readonly id?: unknown }, b: { readonly position?: unknown; readonly id?: unknown }): number => {
  const p = (x: unknown) => (typeof x === "number" && Number.isFinite(x) ? x : Number.POSITIVE_INFINITY)
  return p(a.position) - p(b.position) || String(a.id).localeCompare(String(b.id))
}

/** How a target record differs from its source, field by field (what update and move can set). */
export interface Difference {
  /** Fields update-record sets differ (title, done, archived, dates, color, assignees). */
  readonly fields: boolean
  /** The list differs (move-record). */
  readonly list: boolean
  /** The tags differ: no documented write sets the tags of an existing record. */
  readonly tags: boolean
}

/**
 * Compares what the list-records summary shows. The description is not in the summary:
 * callers judge it by `updatedAt` or by the journal (see restore.ts).
 * `archivedSettable` false: the service cannot set `archived`, so it is not a difference
 * (an update could not remove it). A source list in `listsNotMade` (the service could not
 * make it: its records are in the first list) is not a difference either.
 */
export const compareSummary = (
  source: SourceRecord,
  target: RecordSummary,
  assigneeEmails: ReadonlyArray<string>,
  archivedSettable: boolean,
  listsNotMade: ReadonlySet<string> = new Set()
): Difference => {
  const differ = summaryDifferences(source, assigneeEmails, target, archivedSettable, listsNotMade)
  const tags = source.tags.join("\n") !== target.tags.map((t) => t.title).sort().join("\n")
  return { fields: differ.some((f) => f !== "list"), list: differ.includes("list"), tags }
}
