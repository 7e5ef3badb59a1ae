/**
 * The source side of a restore: the record details a snapshot run holds, read from the
 * store a batch at a time; the restorable part of each; and the census of what the run
 * holds that no restore can carry.
 *
 * Read tolerantly: a snapshot is data written by any earlier version, not code.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { createHash } from "node:crypto"
import type { SnapshotError, SnapshotStoreService } from "../store/snapshot.ts"

/** A record detail as the snapshot stores it (JSON, parsed). */
export type StoredDetail = Record<string, unknown>

/**
 * Every record detail run `runId` holds of the workspace, as a stream in list order (each
 * list's records by position: the store's `runRecordDetails`), so a restore plans, and
 * creates, a list's records in the order the run has them. The store hands them over a
 * batch at a time (one read, so one consistent view of the run), and a restore of any
 * size holds only the batch it is planning.
 */
export const runDetails = (
  store: SnapshotStoreService,
  runId: number,
  workspaceId: string
): Stream.Stream<StoredDetail, SnapshotError> =>
  store.runRecordDetails(runId, workspaceId).pipe(Stream.map((detail) => JSON.parse(detail) as StoredDetail))

/** The details of the named records that run `runId` holds of the workspace (those it lacks are left out). */
export const namedDetails = (
  store: SnapshotStoreService,
  runId: number,
  workspaceId: string,
  ids: ReadonlyArray<string>
): Effect.Effect<Array<StoredDetail>, SnapshotError> =>
  Effect.map(store.namedRecordDetails(runId, workspaceId, ids), (details) => details.map((d) => JSON.parse(d) as StoredDetail))

/** Whether run `runId` holds any record of the workspace. */
export const holdsRecords = (
  store: SnapshotStoreService,
  runId: number,
  workspaceId: string
): Effect.Effect<boolean, SnapshotError> => store.holdsRecords(runId, workspaceId)

/** The restorable part of a stored record detail. */
export interface SourceRecord {
  readonly id: string
  readonly updatedAt: string | null
  readonly title: string
  readonly html: string
  readonly text: string
  readonly listTitle: string | null
  readonly startedAt: string | null
  readonly duedAt: string | null
  readonly done: boolean
  readonly archived: boolean
  readonly color: string | null
  /** Assignee e-mails, lower case, sorted. */
  readonly emails: ReadonlyArray<string>
  /** Tag titles, sorted. */
  readonly tags: ReadonlyArray<string>
}

const str = (v: unknown): string | null => (typeof v === "string" ? v : null)
const count = (v: unknown): number => (Array.isArray(v) ? v.length : 0)

export const readSource = (detail: StoredDetail): SourceRecord => {
  const list = detail.todoList as { title?: unknown } | null | undefined
  const users = Array.isArray(detail.users) ? (detail.users as Array<{ email?: unknown }>) : []
  const tags = Array.isArray(detail.tags) ? (detail.tags as Array<{ title?: unknown }>) : []
  return {
    id: String(detail.id),
    updatedAt: str(detail.updatedAt),
    title: str(detail.title) ?? "",
    html: str(detail.html) ?? "",
    text: str(detail.text) ?? "",
    listTitle: str(list?.title),
    startedAt: str(detail.startedAt),
    duedAt: str(detail.duedAt),
    done: detail.done === true,
    archived: detail.archived === true,
    color: str(detail.color),
    emails: users.map((u) => str(u.email)).filter((e): e is string => e !== null).map((e) => e.toLowerCase()).sort(),
    tags: tags.map((t) => str(t.title)).filter((t): t is string => t !== null).sort()
  }
}

/**
 * All-day dates come back as midnight UTC (or, in the other reading, as a zoneless
 * midnight); send them as bare dates so they stay all-day. Another zoneless time is
 * sent as UTC (inputs need a zone, assumptions.ts DATE_INPUT_FORMS).
 */
export const restoreDate = (value: string | null): string | undefined => {
  if (value === null) return undefined
  const m = /^(\d{4}-\d{2}-\d{2})T00:00(?::00(?:\.0+)?)?Z?$/.exec(value)
  if (m) return m[1]!
  return /T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/.test(value) ? `${value}Z` : value
}

/** Whether two dates as read back name the same instant (zoneless read as UTC). */
export const sameDate = (a: string | null, b: string | null): boolean => {
  if (a === null || b === null) return a === b
  const instant = (v: string) => Date.parse(/T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?$/.test(v) ? `${v}Z` : v)
  const x = instant(a)
  const y = instant(b)
  return Number.isNaN(x) || Number.isNaN(y) ? a === b : x === y
}

/** What a restore sends for a record, hashed: equal hashes, nothing to send again. */
export const contentHash = (r: SourceRecord): string =>
  createHash("sha1")
    .update(JSON.stringify([r.title, r.html, r.text, r.listTitle, r.startedAt, r.duedAt, r.done, r.archived, r.color, r.emails]))
    .digest("hex")
    .slice(0, 16)

/** One kind of content a restore leaves behind, as the contract's `notRestored` lists it. */
export interface NotRestored {
  readonly what: string
  readonly count: number
  readonly why: string
}

/**
 * What the run's records hold that the documented record writes cannot set: counted from
 * the details as they pass (`add`), so the user sees exactly how much stays behind.
 */
export const makeCensus = () => {
  let checklists = 0
  let customFields = 0
  let fileValues = 0
  let comments = 0
  let covers = 0
  let repeating = 0
  let archived = 0
  let tagged = 0
  return {
    add: (d: StoredDetail): void => {
      if (d.archived === true) archived++
      if (count(d.tags) > 0) tagged++
      checklists += count(d.checklists)
      const fields = Array.isArray(d.customFields) ? (d.customFields as Array<Record<string, unknown>>) : []
      fileValues += fields.filter((f) => f.type === "FILE" && typeof f.text === "string" && f.text !== "" && f.text !== "[]").length
      customFields += fields.filter((f) => f.type !== "FILE").filter((f) =>
        (typeof f.text === "string" && f.text !== "") || typeof f.number === "number" || f.checked === true ||
        count(f.customFieldOptions) > 0 || count(f.tableRows) > 0
      ).length
      comments += typeof d.commentCount === "number" ? d.commentCount : 0
      if (typeof d.cover === "string" && d.cover !== "") covers++
      if (d.isRepeating === true) repeating++
    },
    /** Records archived in the run, and records with tags: what a service without those capabilities leaves behind. */
    archived: (): number => archived,
    tagged: (): number => tagged,
    /** The kinds counted so far that are not zero. */
    result: (): Array<NotRestored> => {
      const out: Array<NotRestored> = [
        { what: "checklists", count: checklists, why: "the documented record writes take no checklists" },
        { what: "custom field values", count: customFields, why: "the documented record writes take no custom field values" },
        { what: "file custom field values", count: fileValues, why: "a restore writes records; file values move with `migrate`" },
        { what: "comments", count: comments, why: "a restore writes records; comments move with `migrate`" },
        { what: "covers", count: covers, why: "the documented record writes take no cover" },
        { what: "repeat settings", count: repeating, why: "the documented record writes take no repeat settings" }
      ]
      return out.filter((n) => n.count > 0)
    }
  }
}

export type Census = ReturnType<typeof makeCensus>
