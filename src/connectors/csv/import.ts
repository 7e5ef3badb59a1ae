/**
 * CSV import: read, validate, plan into the journal, then replay exactly once.
 *
 * 1. The header is read and the mapping checked against it before any row.
 * 2. The workspace's lists, tags and users are read once (lists and tags by title, users
 *    by e-mail) to resolve rows; an unknown assignee e-mail rejects the row, a list or
 *    tag missing on the service gets one `list.ensure` / `tag.ensure` op. Tags need
 *    operations beyond the documents: a service without them gets the records without
 *    their tags, and the result's `notices` say so in one line.
 * 3. Rows stream through in batches (constant memory): each is validated with Schema and
 *    either goes to the rejects file (with its line and error) or becomes a
 *    `record.create` op keyed by the row's identity (`done` rides in it: replay sets it
 *    right after the create, in the same op).
 *    Every op is in the journal before anything is sent.
 * 4. Replay sends what is not done yet (see src/sync/replay.ts).
 *
 * A journal whose earlier passes created records makes this a delta pass (delta.ts): rows
 * with a key of their own are compared with what the journal last wrote for them, and
 * those that changed get an update (and a move) after their last op; the rows it created
 * that the export no longer has are counted, and deleted with `deleteMissing`.
 *
 * With `dryRun` nothing is written to the service or the journal: the plan is counted
 * (and its first rows kept) against the journal's current state, read-only
 * (store/journal/read-only.ts); `planReport` adds the contract's `--plan` report.
 */
import Database from "better-sqlite3"
import { stringify } from "csv-stringify"
import * as Cause from "effect/Cause"
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import type * as Scope from "effect/Scope"
import * as fs from "node:fs"
import { isNotFound, notAvailableLine } from "../../client/errors.ts"
import type { GraphqlClientApi } from "../../client/graphql-client.ts"
import type { RestClientApi, RestError } from "../../client/rest-client.ts"
import { restUserEmail } from "../../schema/users.ts"
import { attachmentPolicy } from "../presets/attachment-hosts.ts"
import { AttachmentFetchPolicy } from "../presets/attachments.ts"
import { isJsonFile, isToolPreset, readTrelloBoardFile, tabularReader, TOOL_PRESETS } from "../presets/index.ts"
import type { Census, PresetRow } from "../presets/model.ts"
import { nameKey } from "../presets/people.ts"
import { CAPABILITY, listsNotMade, missingCapabilities } from "../../sync/capabilities.ts"
import { EXTRA_KINDS, EXTRA_PHASES } from "../../sync/plan-extras.ts"
import { makeExtraExecutors } from "../../sync/replay-extras.ts"
import { allPages, Paging } from "../../streams/paging.ts"
import { PAGE_MAX_LIMIT } from "../../schema/limits.ts"
import {
  type Adoption,
  type JournalApi,
  JournalError,
  type JournalStateError,
  openPostgresJournalStates,
  type OpState,
  type PlannedOp,
  type Planner,
  type PlanOp
} from "../../store/journal.ts"
import {
  listEnsureKey,
  OP_KINDS,
  originOf,
  PACKED_CREATE_INDEX as P,
  PHASES,
  recordNamespace,
  tagEnsureKey,
  TARGET_WORKSPACE_META
} from "../../sync/plan.ts"
import { openPlanWriter } from "../../store/plan-writer.ts"
import { openScratch } from "../../store/scratch.ts"
import { isPostgresUrl } from "../../store/postgres.ts"
import { type OpEnd, replay, type ReplayAborted, type ReplayReport } from "../../sync/replay.ts"
import { makeRecordExecutors } from "../../sync/replay-records.ts"
import { type ReferenceCounts, referencesOf } from "../../sync/references.ts"
import { makeReferencesExecutor } from "../../sync/replay-references.ts"
import {
  type DeltaBatch,
  deltaKey,
  type DeltaOptions,
  itemOf,
  PASSES_META,
  planChanges,
  readHistories,
  type Written,
  writtenByCreate
} from "./delta.ts"
import { type JournalView, openJournalView } from "../../store/journal/read-only.ts"
import { planAttachmentRetries } from "./attachment-retries.ts"
import { mappingsOf, type PeopleMap, type TitleMap } from "../../sync/mapping-files.ts"
import type { Kept, Mappings, PlanReport } from "../../sync/pass-plan.ts"
import { type MappingInput, resolveMapping } from "./mapping.ts"
import { makePresetPlanner } from "./preset-plan.ts"
import { type CsvSourceOptions, openCsv } from "./read.ts"
import type { CsvRow } from "./row.ts"
import { type ExtractedRow, makeExtractor } from "./rows.ts"

/**
 * Rows read, validated and planned together: one journal transaction each (a few
 * multi-row inserts). 500 measured faster than 2000 or 1000 at a million rows: the commit
 * is cheap (no fsync while planning), while rows kept alive across a young-generation
 * collection are copied and promoted, which costs more than the extra commits.
 */
const PLAN_BATCH_ROWS = 500

export class ImportUsageError extends Data.TaggedError("ImportUsageError")<{ readonly message: string }> {}

export class ImportFailed extends Data.TaggedError("ImportFailed")<{ readonly message: string }> {}

export interface ImportOptions {
  readonly workspaceId: string
  readonly csv: CsvSourceOptions
  readonly mapping: MappingInput
  readonly dryRun?: boolean
  /** Rejected rows go here (original columns plus `row` and `error`). */
  readonly rejectsFile?: string | undefined
  readonly concurrency?: number
  readonly batchSize?: number
  /** Progress hooks (all optional). */
  readonly onRowsRead?: (n: number) => Effect.Effect<void>
  readonly onReplayStart?: (total: number) => Effect.Effect<void>
  readonly onOpEnd?: (end: OpEnd) => Effect.Effect<void>
  /** Reconciliation clock-skew margin, ms. */
  readonly skewMs?: number
  /**
   * How long after sending a create whose outcome is unknown reconciliation keeps looking
   * before it sends again (see `ReplayOptions.settleWindowMs`); default: the client's
   * request timeout.
   */
  readonly settleWindowMs?: number
  /**
   * Plan the journal's inserts on a second thread while this one reads the next rows;
   * by default for CSV files of 4 MiB or more. Same journal either way.
   */
  readonly planThread?: boolean
  /**
   * The GraphQL client: comments and attachments of a tool's export are written through
   * it (createComment, uploadFile). Without it they are planned but not sent (each such
   * op fails naming what is missing, and a rerun with it sends them).
   */
  readonly graphql?: GraphqlClientApi | undefined
  /** Where attachments named in a tool's export are found by file name (`--attachments`). */
  readonly attachmentsDir?: string | undefined
  /**
   * The only hosts attachment URLs are fetched from, each `HOST[:PORT]` (comma-separated
   * lists too): a loopback, private or link-local address only for a host named here.
   * Default: the exporting tool's own hosts (presets/attachment-hosts.ts).
   */
  readonly attachmentHosts?: ReadonlyArray<string> | undefined
  /** Attachments larger than this many bytes are not fetched; default 25 MB. */
  readonly attachmentMaxBytes?: number | undefined
  /** `--people FILE`: people of a tool's export by display name or e-mail (sync/mapping-files.ts). */
  readonly people?: PeopleMap | undefined
  /** `--title-map FILE.json`: each row's list and tags under the titles it maps them to (two may merge). */
  readonly titles?: TitleMap | undefined
  /** Delta passes: the records of rows gone from the export are deleted on the target. */
  readonly deleteMissing?: boolean
  /** Delta passes: fields edited on the target since the last pass are replaced, not kept. */
  readonly overwriteTargetEdits?: boolean
  /**
   * `--plan` (with `dryRun`): also read what the run would meet on the target (records of
   * the same title in a row's list) and report the plan (`ImportResult.planReport`).
   */
  readonly planReport?: boolean
}

export interface PlanPreviewRow {
  readonly row: number
  readonly key: string
  readonly title: string
  readonly list: string | null
  readonly done: boolean
}

export interface ImportResult {
  /** Data rows read. */
  readonly rows: number
  /** Records created by this run (including ones found created by an interrupted attempt). */
  readonly created: number
  /** Rows already imported by an earlier run. */
  readonly skipped: number
  /** Rows that failed validation or resolution, or repeat a key of the file. */
  readonly rejected: number
  /** Ops that failed in this run; a rerun retries them. */
  readonly failed: number
  /** Ops whose outcome could not be settled; a rerun reconciles them. */
  readonly unknown: number
  /** Ops still pending: waiting on an op that failed, or behind an unknown one. */
  readonly blocked: number
  /** The first failures, one line each. */
  readonly failures: ReadonlyArray<string>
  /**
   * What was left out because the service lacks an operation beyond the documents, or
   * answered a write with success and did not carry it out, one line each. Lists the
   * service could not make are named in the line about lists.
   */
  readonly notices: ReadonlyArray<string>
  /** Titles of the lists the service could not make (this run or an earlier one): their rows' records are in the first list. */
  readonly listsNotMade?: ReadonlyArray<string>
  /**
   * Records found on the service by title and taken as the ones this run's creates of
   * unknown outcome made (reconciliation; the journal's `adoptions`). Such a record may
   * be someone else's (docs/journal.md, "Limits"): each is reported.
   */
  readonly adopted: ReadonlyArray<Adoption>
  readonly rejectsFile: string | null
  /** A tool preset's census: every column carried (to which field) or left behind (and why). */
  readonly census?: Census
  /** Tool presets: comments created by this run (planned, for a dry run), attachments uploaded. */
  readonly comments?: number
  readonly attachments?: number
  /**
   * Attachments that could not be fetched this run, with the reason (each has a comment
   * naming it), and those an earlier run refused for a host this run does not allow either.
   */
  readonly attachmentsNotFetched?: ReadonlyArray<{ readonly name: string; readonly reason: string }>
  /** People of the export the workspace does not know: records were created without them. */
  readonly people?: { readonly unresolved: ReadonlyArray<string> }
  /** Cells of the export that could not be read (rows imported without them), the first ones. */
  readonly problems?: ReadonlyArray<string>
  /** Dry run only: new ops per kind and the first planned rows. */
  readonly plan?: { readonly ops: Readonly<Record<string, number>>; readonly first: ReadonlyArray<PlanPreviewRow> }
  /** Which pass of the journal this is: 1 for the first (a resumed pass keeps its number). */
  readonly pass: number
  /** Rows whose record this run updated (planned to, for a dry run). */
  readonly updated: number
  /** Rows gone from the export whose records stay on the target (no `deleteMissing`). */
  readonly missing: number
  /** Records of rows gone from the export deleted by this run (planned to, for a dry run). */
  readonly deleted: number
  /** Fields edited on the target since the last pass and kept, and records no longer there. */
  readonly kept: ReadonlyArray<Kept>
  /** `planReport` only: what the run would do. */
  readonly planReport?: PlanReport
  /** Tool presets: references between rows rewritten to name target records, and those naming items outside the export. */
  readonly references?: ReferenceCounts
  /** With `people` or `titles`: which of their entries the rows used. */
  readonly mappings?: Mappings
}

interface Directory {
  readonly lists: Map<string, string>
  /** Null when the service has no tags (list-tags is not available): rows are planned without them. */
  readonly tags: Map<string, string> | null
  readonly users: Map<string, string>
  /** Folded full name -> e-mail (null when several users share it), for tool presets. */
  readonly names: Map<string, string | null>
  readonly notices: ReadonlyArray<string>
}

const loadDirectory = (
  client: RestClientApi,
  workspaceId: string,
  need: { lists: boolean; tags: boolean; users: boolean }
) =>
  Effect.gen(function*() {
    const lists = new Map<string, string>()
    let tags: Map<string, string> | null = new Map<string, string>()
    const users = new Map<string, string>()
    const names = new Map<string, string | null>()
    const notices: Array<string> = []
    if (need.lists) for (const l of yield* client.listLists({ workspaceId })) if (!lists.has(l.title)) lists.set(l.title, l.id)
    if (need.tags) {
      const found = yield* client.listTags({ workspaceId }).pipe(
        Effect.catchTag("NotAvailable", (e) => {
          notices.push(`${notAvailableLine("tags", e)}; records are imported without their tags`)
          return Effect.succeed(null)
        })
      )
      if (found === null) tags = null
      else for (const t of found) if (!tags.has(t.title)) tags.set(t.title, t.id)
    }
    if (need.users) {
      const listed = yield* allPages(
        (skip, limit) => Effect.map(client.listUsers({ workspaceId, skip, limit }), (p) => Paging.totalCount(p.users, p.totalCount, skip)),
        PAGE_MAX_LIMIT
      )
      for (const u of listed) {
        // A user the service lists without an e-mail cannot be matched by one.
        const email = restUserEmail(u)
        if (email !== undefined) {
          users.set(email, u.id)
          const full = typeof u.fullName === "string" ? nameKey(u.fullName) : ""
          if (full !== "") names.set(full, names.has(full) ? null : email)
        }
      }
    }
    return { lists, tags, users, names, notices } satisfies Directory
  })

/** Finds a title exactly, else case-insensitively (one match only). */
const byTitle = (map: Map<string, string>, title: string): string | undefined => {
  const exact = map.get(title)
  if (exact !== undefined) return exact
  const lower = title.toLowerCase()
  let found: string | undefined
  for (const [t, id] of map) {
    if (t.toLowerCase() === lower) {
      if (found !== undefined) return undefined
      found = id
    }
  }
  return found
}

/** A list or tag title resolved: its id on the service, or the op that ensures it. */
type Resolved = { readonly id: string; readonly ensure?: undefined } | { readonly id?: undefined; readonly ensure: PlanOp }

/**
 * Title resolution, remembered per title: rows repeat a few lists and tags, and a miss in
 * `byTitle` scans the whole directory. Bounded, so a file of distinct titles cannot grow it.
 */
const titleResolver = (
  map: Map<string, string>,
  ensure: (title: string) => PlanOp
) => {
  const memo = new Map<string, Resolved>()
  return (title: string): Resolved => {
    let r = memo.get(title)
    if (r === undefined) {
      const id = byTitle(map, title)
      r = id !== undefined ? { id } : { ensure: ensure(title) }
      if (memo.size < 10_000) memo.set(title, r)
    }
    return r
  }
}

interface PlannedRow {
  readonly ensures: ReadonlyArray<PlanOp>
  readonly create: PlanOp
  readonly done: boolean
}

/** What a valid row becomes: its ops, or a rejection (the message). */
const makeRowPlanner = (workspaceId: string, dir: Directory, titles: TitleMap | undefined) => {
  const list = titleResolver(dir.lists, (title) => ({
    key: listEnsureKey(workspaceId, title),
    kind: OP_KINDS.listEnsure,
    payload: { workspaceId, title }
  }))
  const tag = titleResolver(dir.tags ?? new Map(), (title) => ({
    key: tagEnsureKey(workspaceId, title),
    kind: OP_KINDS.tagEnsure,
    payload: { workspaceId, title }
  }))
  const none: ReadonlyArray<PlanOp> = []
  const noTags: ReadonlyArray<string> = []
  return (e: ExtractedRow, row: CsvRow): PlannedRow | string => {
    let ensures = none
    let assigneeIds: Array<string> | undefined
    for (const email of row.assignees) {
      const id = dir.users.get(email)
      if (id === undefined) return `assignees: ${email} is not a user of the workspace`
      ;(assigneeIds ??= []).push(id)
    }
    let listId: string | undefined
    let listTitle: string | undefined
    if (row.list !== undefined && row.list !== "") {
      const title = titles === undefined ? row.list : titles.list(row.list)
      const r = list(title)
      if (r.id !== undefined) listId = r.id
      else {
        listTitle = title
        ensures = [r.ensure]
      }
    }
    let tagIds: Array<string> | undefined
    let tagTitles: Array<string> | undefined
    // Without tags on the service (dir.tags null), rows are planned without them.
    const rowTags = dir.tags === null ? noTags : titles === undefined ? row.tags : [...new Set(row.tags.map(titles.tag))]
    for (const t of rowTags) {
      const r = tag(t)
      if (r.id !== undefined) (tagIds ??= []).push(r.id)
      else {
        ;(tagTitles ??= []).push(t)
        if (ensures === none) ensures = []
        ;(ensures as Array<PlanOp>).push(r.ensure)
      }
    }
    // Packed in place, as `packRecordCreate` would pack the object (a test holds them
    // equal): this runs once per row of files of millions, and the object in between cost
    // about 0.2 CPU s a million rows. No workspaceId: the journal holds it once.
    const packed: Array<unknown> = [row.title, `line ${e.line}`, null, null, null, null, null, null, null, null, null, null]
    if (listId !== undefined) packed[P.listId] = listId
    if (listTitle !== undefined) packed[P.listTitle] = listTitle
    if (row.description !== undefined) packed[P.description] = row.description
    if (row.descriptionHtml !== undefined) packed[P.descriptionHtml] = row.descriptionHtml
    if (row.startedAt !== undefined) packed[P.startedAt] = row.startedAt
    if (row.duedAt !== undefined) packed[P.duedAt] = row.duedAt
    if (assigneeIds !== undefined) packed[P.assigneeIds] = assigneeIds
    if (tagIds !== undefined) packed[P.tagIds] = tagIds
    if (tagTitles !== undefined) packed[P.tagTitles] = tagTitles
    if (row.done) packed[P.then] = true
    let n = packed.length
    while (n > 2 && packed[n - 1] === null) n--
    packed.length = n
    return { ensures, create: { key: e.key, kind: OP_KINDS.recordCreate, payload: packed, occurrence: e.occurrence }, done: row.done }
  }
}

/**
 * Assigns journal keys: the real journal, or (dry run) an in-memory count over a read-only
 * view. Answers come in the order of the calls.
 */
interface KeyAssigner {
  readonly plan: (ops: ReadonlyArray<PlanOp>) => Promise<Array<PlannedOp>>
  readonly close: () => Promise<void>
}

/**
 * CSV files from this size on are planned with the journal's inserts on a second thread
 * (plan-writer.ts); for smaller ones, starting the thread costs more than it saves.
 */
const PLAN_THREAD_MIN_BYTES = 4 * 1024 * 1024

const journalAssigner = (planner: Planner, thread: boolean): KeyAssigner => {
  // The thread opens the journal file a second time: a SQLite journal only.
  const writer = thread && planner.backend === "sqlite" ? openPlanWriter(planner.file, planner.run) : undefined
  // A failure to store the plan is the journal's, whichever thread met it.
  const journalError = (e: unknown) =>
    new JournalError({ file: planner.file, operation: "planning", detail: e instanceof Error ? e.message : String(e) })
  // Ending the run makes it durable; with a thread, only once the thread's connection is closed.
  const close = async () => {
    try {
      await writer?.close()
      await planner.end()
    } catch (e) {
      throw journalError(e)
    }
  }
  if (writer === undefined) {
    return {
      plan: async (ops) => {
        try {
          return await planner.planOps(ops)
        } catch (e) {
          throw journalError(e)
        }
      },
      close
    }
  }
  return {
    plan: (ops) =>
      writer.plan(ops).catch((e: unknown) => {
        throw journalError(e)
      }),
    close
  }
}

/**
 * The journal a dry run plans against, read only: a key's state, or nothing when the key
 * (or the whole journal) does not exist. A SQLite file answers key by key, synchronously;
 * a PostgreSQL journal answers a batch's keys in one query.
 */
interface DryJournal {
  readonly stateOf?: (key: string) => OpState | undefined
  readonly statesOf?: (keys: ReadonlyArray<string>) => Promise<ReadonlyMap<string, OpState>>
}

/**
 * Opens the journal at `location` for a dry run (for the scope): nothing is created, so a
 * journal that does not exist yet is planned against as empty.
 */
const openDryJournal = (location: string | undefined): Effect.Effect<DryJournal, JournalError, Scope.Scope> => {
  if (location === undefined) return Effect.succeed({})
  if (isPostgresUrl(location)) {
    return Effect.gen(function*() {
      const states = yield* openPostgresJournalStates(location)
      if (states === undefined) return {}
      const services = yield* Effect.context<never>()
      return {
        statesOf: (keys) =>
          Effect.runPromiseExitWith(services)(states(keys)).then((exit) => {
            if (Exit.isSuccess(exit)) return exit.value
            throw Cause.squash(exit.cause)
          })
      } satisfies DryJournal
    })
  }
  if (!fs.existsSync(location)) return Effect.succeed({})
  return Effect.map(
    Effect.acquireRelease(
      Effect.try({
        try: () => new Database(location, { readonly: true, fileMustExist: true }),
        catch: (e) => new JournalError({ file: location, operation: "open", detail: e instanceof Error ? e.message : String(e) })
      }),
      (db) => Effect.sync(() => db.close())
    ),
    (db) => {
      const stateOf = db.prepare<[string], { state: OpState }>("SELECT state FROM ops WHERE key = ?")
      return { stateOf: (key) => stateOf.get(key)?.state } satisfies DryJournal
    }
  )
}

/**
 * The dry run's key assigner: what planning would do, against a read-only view of the
 * journal (if there is one). The keys seen so far are kept in a scratch SQLite file, not
 * in memory, so a dry run of any file runs in constant memory like the plan itself; the
 * file is removed at the end.
 */
const dryAssigner = (journal: DryJournal): KeyAssigner => {
  const stateOf = journal.stateOf
  const { db: scratch, remove } = openScratch("dry-run")
  scratch.exec("CREATE TABLE seen (key TEXT PRIMARY KEY) WITHOUT ROWID")
  const see = scratch.prepare<[string]>("INSERT OR IGNORE INTO seen (key) VALUES (?)")
  /** Keys first seen in this file whose state the journal tells later (PostgreSQL), by index. */
  let toLookUp: Array<number> = []
  const planBatch = scratch.transaction((ops: ReadonlyArray<PlanOp>): Array<PlannedOp> =>
    ops.map((op, i) => {
      for (let n = 0;; n++) {
        const key = n === 0 ? op.key : `${op.key}#${n}`
        // Seen before in this file: the next occurrence key, or a duplicate.
        if (see.run(key).changes === 0) {
          if (op.occurrence === true) continue
          return { key, isNew: false, duplicate: true, state: "pending" as const }
        }
        if (stateOf === undefined && journal.statesOf !== undefined) toLookUp.push(i)
        const state = stateOf?.(key)
        return state === undefined
          ? { key, isNew: true, duplicate: false, state: "pending" as const }
          : { key, isNew: false, duplicate: false, state }
      }
    })
  )
  return {
    plan: async (ops) => {
      // The keys are settled now, in the order of the calls; only the states are read later.
      toLookUp = []
      const out = planBatch(ops)
      const indices = toLookUp
      if (indices.length === 0 || journal.statesOf === undefined) return out
      const states = await journal.statesOf(indices.map((i) => out[i]!.key))
      for (const i of indices) {
        const key = out[i]!.key
        const state = states.get(key)
        if (state !== undefined) out[i] = { key, isNew: false, duplicate: false, state }
      }
      return out
    },
    close: async () => remove()
  }
}

/** A pass's update of a row (delta.ts `deltaKey.update`), not the `done` of a create in older journals. */
const DELTA_UPDATE_KEY = /\/update\/\d+$/

/** The journal keys of rows (explicit `k:`, content `h:`), as the record id map holds them. */
const ROW_KEY = /^[kh]:/

/** A record already on the target, by `listId NUL title` (see `targetTitles`). */
type TitlesOnTarget = ReadonlyMap<string, { readonly recordId: string; readonly list: string }>

/**
 * `--plan`: the records of the workspace by list and title, those of this journal's rows
 * (`ours`) left out: a row created with the same title in the same list is a conflict.
 */
const targetTitles = (client: RestClientApi, workspaceId: string, ours: ReadonlySet<string>) =>
  Effect.gen(function*() {
    const out = new Map<string, { recordId: string; list: string }>()
    for (let skip = 0;; skip += PAGE_MAX_LIMIT) {
      const page = yield* client.listRecords({ workspaceId, skip, limit: PAGE_MAX_LIMIT })
      for (const r of page.items) {
        if (!ours.has(r.id)) out.set(`${r.todoList.id}\u0000${r.title}`, { recordId: r.id, list: r.todoList.title })
      }
      if (!page.pageInfo.hasNextPage || page.items.length < PAGE_MAX_LIMIT) break
    }
    return out as TitlesOnTarget
  })

/** The conflict of a row to create whose title a record of its list already has. */
const titleConflict = (existing: TitlesOnTarget, create: PlanOp, title: string, firstListId: string | undefined): Kept | undefined => {
  const packed = create.payload as ReadonlyArray<unknown>
  // A list still to be made holds nothing yet.
  if (typeof packed[P.listTitle] === "string") return undefined
  const listId = typeof packed[P.listId] === "string" ? packed[P.listId] as string : firstListId
  const found = listId === undefined ? undefined : existing.get(`${listId}\u0000${title}`)
  return found === undefined
    ? undefined
    : { what: "record", item: title, why: `a record of this title is already in list ${JSON.stringify(found.list)} (record ${found.recordId}); the run adds another` }
}

/** A writer of the rejects file, opened on the first reject. */
const rejectsWriter = (file: string | undefined, header: ReadonlyArray<string>) => {
  let stream: ReturnType<typeof stringify> | undefined
  let out: fs.WriteStream | undefined
  let count = 0
  const columns = [...header, "row", "error"]
  const open = () => {
    if (file === undefined || stream !== undefined) return
    out = fs.createWriteStream(file, { mode: 0o600 })
    stream = stringify({ header: true, columns })
    stream.pipe(out)
  }
  return {
    write: (values: ReadonlyArray<string>, line: number, error: string) => {
      count++
      open()
      if (stream === undefined) return
      const rec = header.map((_, i) => values[i] ?? "")
      // Extra unnamed fields are kept at the end so nothing of the row is lost.
      const extra = values.slice(header.length)
      stream.write([...rec, String(line), extra.length > 0 ? `${error} (extra fields: ${extra.join(" | ")})` : error])
    },
    /** Waits while the file is behind (millions of rejects must not pile up in memory). */
    drain: (): Promise<void> =>
      stream === undefined || !stream.writableNeedDrain
        ? Promise.resolve()
        : new Promise((resolve) => stream!.once("drain", () => resolve())),
    /** Writes a header-only file when asked explicitly and nothing was rejected. */
    finish: (always: boolean): Promise<void> =>
      new Promise((resolve, reject) => {
        if (always) open()
        if (stream === undefined || out === undefined) return resolve()
        out.on("finish", () => resolve())
        out.on("error", reject)
        stream.end()
      }),
    get count() {
      return count
    }
  }
}

/** What a tool preset adds to the result of planning (a dry run's figures are the planned ones). */
const toolReport = (tool: ReturnType<typeof makePresetPlanner>, newOps: Readonly<Record<string, number>>) => {
  const report = tool.report()
  return {
    census: tool.census(),
    // Each attachment is carried by a comment of its own: those are not the export's comments.
    comments: (newOps[EXTRA_KINDS.commentCreate] ?? 0) - (newOps[EXTRA_KINDS.fileUpload] ?? 0),
    attachments: newOps[EXTRA_KINDS.fileUpload] ?? 0,
    people: { unresolved: report.unresolved },
    problems: report.problems
  }
}

/**
 * Reads, validates and plans a CSV import into the journal (or, for a dry run, counts the
 * plan against a read-only view of an existing journal, file or PostgreSQL). Sends no write.
 */
export const planCsvImport = (
  client: RestClientApi,
  journal: JournalApi | { readonly dryRunJournalFile: string | undefined },
  options: ImportOptions
): Effect.Effect<ImportResult, ImportUsageError | ImportFailed | JournalError | JournalStateError | RestError> =>
  Effect.gen(function*() {
    const ws = options.workspaceId
    const dryRun = options.dryRun === true
    // Another tool's export is read by its own reader (src/connectors/presets), not mapped.
    const toolName = isToolPreset(options.mapping.preset) ? options.mapping.preset : undefined
    if (toolName !== undefined && ((options.mapping.flags?.length ?? 0) > 0 || options.mapping.file !== undefined)) {
      return yield* Effect.fail(
        new ImportUsageError({
          message: `--preset ${toolName} reads the export's own columns; --map and --mapping go with --preset generic or no preset`
        })
      )
    }
    const batchRows = options.batchSize ?? PLAN_BATCH_ROWS
    const reader = yield* Effect.tryPromise({
      try: async () => {
        if (toolName !== "trello" || !isJsonFile(options.csv.file)) return openCsv(options.csv, batchRows)
        const board = readTrelloBoardFile(options.csv.file)
        if ("error" in board) throw new Error(board.error)
        return tabularReader(board, batchRows)
      },
      catch: (e) => new ImportUsageError({ message: (e as Error).message })
    })
    let extract: (record: import("./read.ts").CsvRecord) => ExtractedRow
    let needs: { readonly tags: boolean; readonly users: boolean }
    const toolReader = toolName === undefined ? undefined : TOOL_PRESETS[toolName].open(reader.header)
    if (toolReader !== undefined) {
      if ("error" in toolReader) {
        reader.close()
        return yield* Effect.fail(new ImportUsageError({ message: `--csv ${options.csv.file}: ${toolReader.error}` }))
      }
      // Set once the directory is read (people are resolved against it).
      extract = () => {
        throw new Error("the preset reader is not ready")
      }
      needs = { tags: true, users: true }
    } else {
      const resolved = resolveMapping(reader.header, options.mapping)
      if (Result.isFailure(resolved)) {
        reader.close()
        return yield* Effect.fail(new ImportUsageError({ message: resolved.failure.message }))
      }
      const { mapping, transforms } = resolved.success
      extract = makeExtractor(reader.header, mapping, transforms)
      needs = { tags: mapping.tags !== undefined, users: mapping.assignees !== undefined }
    }

    const real = "dryRunJournalFile" in journal ? undefined : journal
    const owner = real === undefined ? undefined : Option.getOrUndefined(yield* real.getMeta(TARGET_WORKSPACE_META))
    if (real !== undefined && owner !== undefined && owner !== ws) {
      reader.close()
      return yield* Effect.fail(
        new ImportUsageError({
          message: `--journal ${real.file} belongs to an import into workspace ${owner}, not ${ws}; use another journal file`
        })
      )
    }
    const kind = real === undefined ? undefined : Option.getOrUndefined(yield* real.getMeta("kind"))
    if (real !== undefined && kind !== undefined && kind !== "import-csv") {
      reader.close()
      return yield* Effect.fail(
        new ImportUsageError({ message: `--journal ${real.file} was planned by ${kind}, not by import-csv; use another journal file` })
      )
    }
    // Lists are always read: it also proves the workspace exists before anything is planned.
    const dir = yield* loadDirectory(client, ws, { lists: true, ...needs }).pipe(
      Effect.tapError(() => Effect.sync(() => reader.close())),
      Effect.catchIf(
        (e) => isNotFound(e) || e._tag === "Forbidden",
        (e) => Effect.fail(new ImportUsageError({ message: `--workspace ${ws}: ${e.message}` }))
      )
    )
    // A tool's row: read by its preset, people resolved against the workspace's users.
    const tool = toolReader !== undefined && !("error" in toolReader)
      ? makePresetPlanner({
        workspaceId: ws,
        label: TOOL_PRESETS[toolName!].label,
        tool: toolName!,
        reader: toolReader,
        people: { byEmail: dir.users, byName: dir.names, file: options.people }
      })
      : undefined
    /** The tool row of the record just extracted (tool presets only). */
    let toolRow: PresetRow | undefined
    if (tool !== undefined) {
      extract = (record) => {
        const { e, row } = tool.extract(record)
        toolRow = row
        return e
      }
    }
    if (real !== undefined) {
      yield* real.setMeta(TARGET_WORKSPACE_META, ws)
      yield* real.setMeta("kind", "import-csv")
    }

    // Delta passes: what the journal's earlier passes wrote, read from the journal planned
    // into, or (a dry run, a plan) from a read-only view of the journal, which creates nothing.
    const dryJournalFile = real === undefined ? (journal as { dryRunJournalFile: string | undefined }).dryRunJournalFile : undefined
    const view: JournalView = real ?? (yield* openJournalView(dryJournalFile))
    const notices = [...dir.notices]
    const viewOwner = real === undefined ? Option.getOrUndefined(yield* view.getMeta(TARGET_WORKSPACE_META)) : undefined
    if (viewOwner !== undefined && viewOwner !== ws) {
      reader.close()
      return yield* Effect.fail(
        new ImportUsageError({
          message: `--journal ${dryJournalFile}: belongs to an import into workspace ${viewOwner}, not ${ws}; use another journal file`
        })
      )
    }
    const passesDone = Number(Option.getOrElse(yield* view.getMeta(PASSES_META), () => "0")) || 0
    /** Row key -> its record on the target, for every row an earlier pass created. */
    const mapped = new Map<string, string>()
    for (const m of yield* view.mappings(recordNamespace(ws))) mapped.set(m.sourceKey, m.targetId)
    const delta = mapped.size > 0
    const notMadeLists = new Set(yield* listsNotMade(view, ws))
    const firstListTitle = dir.lists.keys().next().value
    const listTitleById = new Map([...dir.lists].map(([title, id]) => [id, title] as const))
    const tagTitleById = new Map([...(dir.tags ?? new Map<string, string>())].map(([title, id]) => [id, title] as const))
    const services = yield* Effect.context<never>()
    const runEffect = <A, E>(effect: Effect.Effect<A, E>): Promise<A> =>
      Effect.runPromiseExitWith(services)(effect).then((exit) => {
        if (Exit.isSuccess(exit)) return exit.value
        const e = Cause.squash(exit.cause)
        throw e instanceof JournalError ? e : new Error(`reading the target workspace: ${(e as { message?: string }).message ?? String(e)}`)
      })
    const deltaOptions: DeltaOptions = {
      client,
      workspaceId: ws,
      titles: {
        list: (id) => listTitleById.get(id),
        tag: (id) => tagTitleById.get(id),
        placed: (title) => (notMadeLists.has(title) && firstListTitle !== undefined ? firstListTitle : title)
      },
      recordOf: (k) => mapped.get(k),
      overwriteTargetEdits: options.overwriteTargetEdits === true,
      concurrency: options.concurrency ?? 8
    }
    // `--plan`: records of the target by list and title (those of this journal left out), for conflicts.
    const existingTitles = options.planReport === true ? yield* targetTitles(client, ws, new Set(mapped.values())) : undefined
    const firstListId = dir.lists.values().next().value

    const assigner = real !== undefined
      ? journalAssigner(yield* real.planner(), options.planThread ?? fs.statSync(options.csv.file).size >= PLAN_THREAD_MIN_BYTES)
      : dryAssigner(yield* openDryJournal(dryJournalFile))
    const rejects = rejectsWriter(dryRun ? undefined : options.rejectsFile, reader.header)
    const newOps: Record<string, number> = {}
    const first: Array<PlanPreviewRow> = []
    let rows = 0
    let skipped = 0
    let updated = 0
    /** Rows whose create is still to be sent (new, or left by an interrupted run). */
    let toCreate = 0
    let tagsChanged = 0
    const kept: Array<Kept> = []
    const conflicts: Array<Kept> = []
    const newLists: Array<string> = []
    const newTags: Array<string> = []
    /** Keys of the rows of this export (a delta pass's rows gone from it are the others). */
    const seen = new Set<string>()

    const ensurePlanned = new Set<string>()
    const planRow = makeRowPlanner(ws, dir, options.titles)
    /** The delta batches' plan calls, in file order: each batch's calls wait for the one before. */
    let called: Promise<unknown> = Promise.resolve()
    const planBatch = (batch: ReadonlyArray<import("./read.ts").CsvRecord>) => {
      const creates: Array<PlanOp> = []
      // Parallel to `creates` (no object per row): the row each create came from.
      const createRows: Array<ExtractedRow> = []
      const createValid: Array<CsvRow> = []
      const createTool: Array<PresetRow | undefined> = []
      const ensures: Array<PlanOp> = []
      /** Rows with a key of their own that an earlier pass may have written (delta passes). */
      const keyed: Array<{ readonly key: string; readonly line: number; readonly next: Written }> = []
      for (const record of batch) {
        rows++
        const e = extract(record)
        // A row of the export, valid or not, is not gone from it; a key repeated in the
        // file is compared once (its repeat is rejected when planned).
        const firstOfKey = delta && !e.occurrence && !seen.has(e.key)
        if (firstOfKey) seen.add(e.key)
        if (Result.isFailure(e.row)) {
          rejects.write(e.values, e.line, e.row.failure)
          continue
        }
        const planned = planRow(e, e.row.success)
        if (typeof planned === "string") {
          rejects.write(e.values, e.line, planned)
          continue
        }
        for (const op of planned.ensures) {
          // Few distinct lists and tags: plan each once per run.
          if (!ensurePlanned.has(op.key)) {
            ensurePlanned.add(op.key)
            ensures.push(op)
          }
        }
        if (firstOfKey) {
          keyed.push({ key: e.key, line: e.line, next: writtenByCreate(planned.create.payload) })
        }
        creates.push(planned.create)
        createRows.push(e)
        createValid.push(e.row.success)
        createTool.push(toolRow)
      }
      const issue = (changes: DeltaBatch | undefined) => {
        // The calls are made now (the journal keeps their order); their answers are
        // settled when they come, while the next batches are read.
        const ensured = assigner.plan(ensures)
        const planned = assigner.plan(creates)
        const versions = changes === undefined || changes.ops.length === 0 ? undefined : assigner.plan(changes.ops)
        if (changes !== undefined) {
          updated += changes.updated
          tagsChanged += changes.tagsChanged
          kept.push(...changes.kept)
        }
        return Promise.all([ensured, planned, versions]).then(([ensuredOps, results, versioned]): Promise<void> | undefined => {
          const followUps: Array<PlanOp> = []
          ensuredOps.forEach((p, i) => {
            if (p.isNew) {
              const op = ensures[i]!
              newOps[op.kind] = (newOps[op.kind] ?? 0) + 1
              const title = (op.payload as { title: string }).title
              if (op.kind === OP_KINDS.listEnsure) newLists.push(title)
              else newTags.push(title)
            }
          })
          if (versioned !== undefined && changes !== undefined) countNew(changes.ops, versioned)
          // A row's references are written after this pass's last write of it.
          if (changes !== undefined) for (const op of changes.ops) lastWrite.set((op.payload as { recordRef: string }).recordRef, op.key)
          results.forEach((p, i) => {
            const e = createRows[i]!
            const row = createValid[i]!
            if (p.duplicate) {
              rejects.write(e.values, e.line, `key ${p.key.slice(2)} repeats an earlier row of this file`)
              return
            }
            // Keyed under the create's key as the journal assigned it (occurrences included).
            const extra = createTool[i]
            if (tool !== undefined && extra !== undefined) for (const op of tool.followUps(p.key, extra, e.line)) followUps.push(op)
            if (delta && e.occurrence) seen.add(p.key)
            if (p.state === "done") skipped++
            else toCreate++
            if (p.isNew) {
              newOps[OP_KINDS.recordCreate] = (newOps[OP_KINDS.recordCreate] ?? 0) + 1
              // `done` is set by update-record in the create's own op (payload `then`): counted
              // here so the preview says how many records will be marked done.
              if (row.done) newOps[OP_KINDS.recordUpdate] = (newOps[OP_KINDS.recordUpdate] ?? 0) + 1
              if (first.length < 10) first.push({ row: e.line, key: p.key, title: row.title, list: row.list ?? null, done: row.done })
              if (existingTitles !== undefined) {
                const c = titleConflict(existingTitles, creates[i]!, row.title, firstListId)
                if (c !== undefined) conflicts.push(c)
              }
            }
          })
          return followUps.length === 0 ? undefined : assigner.plan(followUps).then((planned) => countNew(followUps, planned))
        })
      }
      // A first pass compares nothing: planned as it always was, without waiting.
      if (!delta) return issue(undefined)
      const changes = keyed.length === 0
        ? Promise.resolve(undefined)
        : runEffect(Effect.flatMap(readHistories(view, keyed.map((k) => k.key)), (histories) =>
          planChanges(
            keyed.flatMap((k) => {
              const history = histories.get(k.key)
              if (history === undefined) return []
              if (history.deleted) {
                kept.push({ what: "record", item: itemOf(k.key), why: "deleted by an earlier pass (--delete-missing); not created again" })
                return []
              }
              return [{ ...k, history }]
            }),
            deltaOptions
          )))
      const turn = called.then(() => changes)
      const issued = turn.then((d) => ({ settled: issue(d) }))
      called = issued.then(() => undefined, () => undefined)
      return issued.then((i) => i.settled)
    }
    const countNew = (ops: ReadonlyArray<PlanOp>, planned: ReadonlyArray<PlannedOp>) =>
      planned.forEach((p, i) => {
        if (p.isNew) newOps[ops[i]!.kind] = (newOps[ops[i]!.kind] ?? 0) + 1
      })
    let missing = 0
    let deletes = 0
    /** Rows updated (or moved) by this pass: their last op, which their references op follows. */
    const lastWrite = new Map<string, string>()
    let references: ReferenceCounts | undefined
    /** References between rows: resolved once every row is read (presets/references.ts). */
    const planReferences = async () => {
      if (tool === undefined) return
      const left = new Set(kept.filter((k) => k.what === "record" || k.what === "description").map((k) => k.item))
      const refs = tool.referenceOps({ after: (k) => lastWrite.get(k) ?? k, skip: (k) => left.has(itemOf(k)) })
      let rewritten = 0
      if (refs.ops.length > 0) {
        const planned = await assigner.plan(refs.ops)
        countNew(refs.ops, planned)
        planned.forEach((p, i) => {
          if (p.state !== "done" && !p.duplicate) rewritten += referencesOf(refs.ops[i]!.payload)
        })
      }
      // Present only when there are references: the plan's shape is the contract's otherwise.
      if (rewritten + refs.outside > 0) references = { rewritten, outside: refs.outside }
    }
    /** Delta passes: the rows an earlier pass created that this export no longer has. */
    const planGone = async () => {
      if (!delta) return
      const gone: Array<string> = []
      for (const k of mapped.keys()) if (ROW_KEY.test(k) && !seen.has(k)) gone.push(k)
      if (gone.length === 0) return
      const done = new Set((await runEffect(view.getMany(gone.map(deltaKey.delete)))).map((op) => op.key))
      const left = gone.filter((k) => !done.has(deltaKey.delete(k)))
      if (options.deleteMissing !== true) {
        missing = left.length
        return
      }
      const ops: Array<PlanOp> = left.map((k) => ({
        key: deltaKey.delete(k),
        kind: OP_KINDS.recordDelete,
        payload: { workspaceId: ws, recordRef: k, origin: `row ${itemOf(k)}, gone from the export` },
        dependsOn: k
      }))
      const planned = await assigner.plan(ops)
      countNew(ops, planned)
      deletes = planned.filter((p) => p.state !== "done").length
    }

    /** Batches sent but not settled, oldest first: each resolves to its error, if any. */
    const unsettled: Array<Promise<unknown>> = []
    const settleOldest = async () => {
      const error = await unsettled.shift()
      if (error !== undefined) throw error
    }
    const toImportError = (e: unknown): ImportUsageError | ImportFailed | JournalError =>
      e instanceof JournalError
        ? e
        : e instanceof Error && "_tag" in e && (e as { usage?: boolean }).usage === true
        ? new ImportUsageError({ message: e.message })
        : new ImportFailed({ message: `reading ${options.csv.file}: ${(e as Error).message}` })
    let stop = false
    const planAll = async () => {
      try {
        for await (const batch of reader.batches) {
          // A handler now, so a failure waiting in the queue is never an unhandled rejection.
          unsettled.push(planBatch(batch).then(() => undefined, (e: unknown) => e ?? new Error("planning failed")))
          // Two batches in flight: one being inserted while the next is read.
          if (unsettled.length > 1) await settleOldest()
          await rejects.drain()
          if (options.onRowsRead) await Effect.runPromise(options.onRowsRead(batch.length))
          if (stop) break
        }
        while (unsettled.length > 0) await settleOldest()
        // Sub-tasks link to parents anywhere in the file: planned once every row is read.
        const links = stop || tool === undefined ? [] : tool.subtaskOps()
        if (links.length > 0) countNew(links, await assigner.plan(links))
        if (!stop) await planReferences()
        // Rows gone from the export: known only once every row is read.
        if (!stop) await planGone()
      } finally {
        await Promise.all(unsettled)
        await rejects.finish(options.rejectsFile !== undefined && !dryRun)
        await assigner.close()
      }
    }
    yield* Effect.callback<void, ImportUsageError | ImportFailed | JournalError>((resume) => {
      const planning = planAll()
      planning.then(() => resume(Effect.void), (e: unknown) => resume(Effect.fail(toImportError(e))))
      // Interrupted (Ctrl-C): reading stops after the batch at hand, and the interruption
      // waits until the batches sent are planned, the rejects file is complete and the
      // plan run is ended, so the journal is left as tidy as after a finished plan (and
      // the planning thread is never stopped inside a SQLite call).
      return Effect.promise(() => {
        stop = true
        return planning.then(() => undefined, () => undefined)
      })
    })

    const report = tool !== undefined ? toolReport(tool, newOps) : undefined
    const rejected = rejects.count
    const mappings = mappingsOf(options.people, options.titles)
    const planReport: PlanReport | undefined = options.planReport !== true ? undefined : {
      create: toCreate,
      update: updated,
      unchanged: rows - rejected - toCreate - updated,
      delete: deletes,
      lists: newLists,
      tags: newTags,
      // import-csv invites nobody: people the workspace does not know are reported.
      invite: [],
      unresolved: report?.people.unresolved ?? [],
      ...(references !== undefined ? { references } : {}),
      notCarried: [
        ...(report?.census.notCarried ?? []).map((c) => ({ what: `column ${c.column}`, count: c.count, why: c.reason })),
        ...(rejected > 0 ? [{ what: "rows", count: rejected, why: "rejected: they fail validation (the run writes them to the rejects file)" }] : []),
        ...(tagsChanged > 0
          ? [{ what: "tag changes", count: tagsChanged, why: "update-record takes no tags: records already imported keep their tags" }]
          : []),
        ...(missing > 0
          ? [{ what: "rows gone from the export", count: missing, why: "their records stay on the target (--delete-missing deletes them)" }]
          : [])
      ],
      conflicts: [
        ...[...notMadeLists].filter((t) => ensurePlanned.has(listEnsureKey(ws, t)) || dir.lists.has(t)).map((t) => ({
          what: "list",
          item: t,
          why: "this service could not create it on an earlier pass: its records go to the first list"
        })),
        ...conflicts,
        ...kept
      ],
      ...(mappings !== undefined ? { mappings } : {})
    }
    return {
      rows,
      created: 0,
      skipped,
      rejected,
      failed: 0,
      unknown: 0,
      blocked: 0,
      failures: [],
      notices,
      adopted: [],
      rejectsFile: rejected > 0 || (options.rejectsFile !== undefined && !dryRun) ? options.rejectsFile ?? null : null,
      ...(report ?? {}),
      plan: { ops: newOps, first },
      pass: passesDone + 1,
      updated,
      missing,
      deleted: deletes,
      kept,
      ...(planReport !== undefined ? { planReport } : {}),
      ...(references !== undefined ? { references } : {}),
      ...(mappings !== undefined ? { mappings } : {})
    } satisfies ImportResult
  }).pipe(Effect.scoped)

/**
 * Runs a CSV import: plan, then (unless `dryRun`) replay. `journal` is required unless
 * `dryRun` (then it may name an existing journal file, read only, or be undefined).
 */
export const importCsv = (
  client: RestClientApi,
  journal: JournalApi | { readonly dryRunJournalFile: string | undefined },
  options: ImportOptions
): Effect.Effect<ImportResult, ImportUsageError | ImportFailed | JournalError | JournalStateError | RestError | ReplayAborted> =>
  Effect.gen(function*() {
    const policy = attachmentPolicy(isToolPreset(options.mapping.preset) ? options.mapping.preset : undefined, {
      hosts: options.attachmentHosts,
      maxBytes: options.attachmentMaxBytes
    })
    if (Result.isFailure(policy)) return yield* Effect.fail(new ImportUsageError({ message: policy.failure }))
    const planned = yield* planCsvImport(client, journal, options)
    if (options.dryRun === true || "dryRunJournalFile" in journal) return planned
    const j = journal
    // A rerun retries what failed before (uncertain ones are reconciled first).
    yield* j.retryFailed()
    // Attachments refused for their host before: planned again if it is allowed now, else reported again.
    const refusedBefore = planned.census !== undefined ? (yield* planAttachmentRetries(j, policy.success)).stillRefused : []
    const counts = yield* j.counts()
    if (options.onReplayStart) yield* options.onReplayStart(counts.pending + counts.in_flight)
    const notices = [...planned.notices]
    const onNotice = (line: string) => {
      if (!notices.includes(line)) notices.push(line)
    }
    const notFetched: Array<{ name: string; reason: string }> = [...refusedBefore]
    let attachments = 0
    /** References this run wrote into descriptions and comments. */
    let rewritten = 0
    const onRewritten = (n: number) => {
      rewritten += n
    }
    const executors = [
      ...makeRecordExecutors(client, { ...(options.skewMs !== undefined ? { skewMs: options.skewMs } : {}), onNotice }),
      makeReferencesExecutor(client, { onNotice, onRewritten }),
      ...(options.graphql !== undefined
        ? makeExtraExecutors(client, options.graphql, {
          attachmentsDir: options.attachmentsDir,
          onNotice,
          onReferences: onRewritten,
          onAttachment: (a) => {
            if (a.reason === undefined) attachments++
            else notFetched.push({ name: a.name, reason: a.reason })
          }
        })
        : withoutGraphql(client, onNotice))
    ]
    const adoptedBefore = yield* j.lastAdoptionId()
    let comments = 0
    /** Rows of an earlier pass updated by this run: their pass's update op (see delta.ts). */
    let updated = 0
    const report: ReplayReport = yield* replay(j, executors, {
      phases: [...PHASES, ...EXTRA_PHASES],
      concurrency: options.concurrency ?? 8,
      ...(options.settleWindowMs !== undefined ? { settleWindowMs: options.settleWindowMs } : {}),
      onOpEnd: (op, end) =>
        Effect.suspend(() => {
          if (end === "sent" || end === "reconciled") {
            const fromFile = typeof op.payload === "object" && op.payload !== null && "fileRef" in op.payload
            if (op.kind === EXTRA_KINDS.commentCreate && !fromFile) comments++
            if (op.kind === OP_KINDS.recordUpdate && DELTA_UPDATE_KEY.test(op.key)) updated++
          }
          return options.onOpEnd ? options.onOpEnd(end) : Effect.void
        })
    }).pipe(Effect.provideService(AttachmentFetchPolicy, policy.success))
    // Still pending: waiting on a failed op, or deferred behind an unknown one.
    const after = yield* j.counts()
    const failures = (yield* j.failed(5)).map((op) => {
      const origin = originOf(op.kind, op.payload)
      return `${origin !== undefined ? `${origin}: ` : ""}${op.kind} ${op.key}: ${op.error ?? "failed"}`
    })
    // Every list the journal's runs could not make, named in one line with the reason.
    const notMade = yield* listsNotMade(j, options.workspaceId)
    if (notMade.length > 0) {
      const why = (yield* missingCapabilities(j)).get(CAPABILITY.lists) ?? "lists: not made on this service; records go to the first list"
      const line = `${why}: ${notMade.map((t) => JSON.stringify(t)).join(", ")}`
      notices.splice(0, notices.length, ...notices.filter((n) => !n.startsWith("lists:")), line)
    }
    // A pass is finished when nothing of it is left: the next run is the next pass.
    if (report.failed + report.unknown + after.pending + after.in_flight === 0) {
      yield* j.setMeta(PASSES_META, String(planned.pass))
    }
    return {
      ...planned,
      created: report.doneByKind[OP_KINDS.recordCreate] ?? 0,
      updated,
      deleted: report.doneByKind[OP_KINDS.recordDelete] ?? 0,
      failed: report.failed,
      unknown: report.unknown,
      blocked: after.pending + after.in_flight,
      failures,
      notices,
      ...(notMade.length > 0 ? { listsNotMade: notMade } : {}),
      adopted: (yield* j.adoptions(adoptedBefore)).map(({ detail, namespace, opKey, sourceKey, targetId }) => ({
        opKey,
        namespace,
        sourceKey,
        targetId,
        detail
      })),
      ...(planned.census !== undefined ? { comments, attachments, attachmentsNotFetched: notFetched } : {}),
      ...(planned.census !== undefined ? { references: { rewritten, outside: planned.references?.outside ?? 0 } } : {})
    } satisfies ImportResult
  })

/**
 * Without a GraphQL client, comments and attachments cannot be written: their ops fail
 * naming what is missing (a rerun with the app connection sends them); checklists and the
 * archive still go through REST.
 */
const withoutGraphql = (client: RestClientApi, onNotice: (line: string) => void) => {
  const missing = (kind: string) => ({
    kind,
    execute: () =>
      Effect.fail({
        _tag: "NotConfigured",
        message: "comments and attachments are written through GraphQL: give the app connection (--base-url, --token-id, --token-secret) and rerun"
      })
  })
  // Without the client, makeExtraExecutors leaves out the comment and upload executors.
  return [...makeExtraExecutors(client, undefined, { onNotice }), missing(EXTRA_KINDS.commentCreate), missing(EXTRA_KINDS.fileUpload)]
}
