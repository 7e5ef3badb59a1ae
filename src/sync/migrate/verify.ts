/**
 * The verification pass of a migration, and its report (the contract's `--json`): the
 * target is read again and compared with the source run, item by item: lists, records
 * (title, done, dates, assignees, list, tags), comment counts per record, files (present,
 * CONFIRMED, same size; content was checked by sha256 while copying), file custom field
 * values, roles and members (or a pending invitation, or a refusal reported).
 * What the target service showed it cannot hold (a list it cannot make, `archived` it
 * ignores: capabilities.ts) and the order of records within each list (no documented
 * write sets a position) are reported, each list's order kept or not, and never make the
 * verification fail: no rerun could change them.
 *
 * The source side is read from the run a batch at a time, a list at a time by position
 * (the store's `runRecordDetails`), with each batch's comments and file values; the source
 * id -> target id of each record is looked up in the journal. Held: a batch, and for
 * each list title, the last target record read (the order check). The target side is its state as a restore reads it (restore-target.ts `readTarget`: every
 * record's summary, by id).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import { RestClient } from "../../client/rest-client.ts"
import type { UidLookup } from "../../connectors/files/relink.ts"
import type { CopySummary } from "../../connectors/files/copy.ts"
import { fileUidLookup } from "../../connectors/files/uid-map.ts"
import { stableFileScan } from "../../streams/stable-scan.ts"
import { scratchRecords } from "../../store/scratch-records.ts"
import type { RunRow, SnapshotStoreService } from "../../store/snapshot.ts"
import type { JournalApi } from "../../store/journal.ts"
import { recordNamespace } from "../plan.ts"
import type { ReplayReport } from "../replay.ts"
import type { RestoreResult } from "../restore.ts"
import { type NotRestored, readSource } from "../restore-source.ts"
import { SKIP } from "../mapping-files.ts"
import type { SourceMapping } from "./mapped-source.ts"
import { CAPABILITY, type Capability, listsNotMade, missingCapabilities } from "../capabilities.ts"
import { compareSummary, readTarget } from "../restore-target.ts"
import { commentsOf, detailBatches } from "./source-run.ts"
import { type OrderCheck, orderCheckAdd, orderCheckKept, orderCheckOf } from "./list-order.ts"
import { planCustomFieldFiles } from "./custom-field-files.ts"
import type { MigrateEnd } from "./migrate.ts"
import { type InviteOutcome, membersOf } from "./people.ts"

export interface Tally {
  readonly source: number
  readonly created: number
  readonly skipped: number
  readonly failed: number
}

export interface MigrationReport {
  readonly verified: boolean
  readonly dryRun: boolean
  /**
   * `notMade`: source lists the target service could not make (their records are in its
   * first list). `orderKept` / `orderNotKept`: the other lists, by whether their records
   * are in the source's order on the target (no documented write sets a position, so the
   * order is where the service put them); empty in a dry run.
   */
  readonly lists: Tally & {
    readonly notMade: ReadonlyArray<string>
    readonly orderKept: ReadonlyArray<string>
    readonly orderNotKept: ReadonlyArray<string>
  }
  readonly records: Tally & { readonly updated: number }
  readonly comments: Tally
  readonly files: { readonly source: number; readonly copied: number; readonly skipped: number; readonly failed: number }
  readonly customFieldFiles: Tally
  readonly roles: Tally & { readonly refused: ReadonlyArray<{ readonly name: string; readonly code: string }> }
  readonly people: {
    readonly source: number
    readonly invited: number
    readonly alreadyMember: number
    readonly refused: ReadonlyArray<{ readonly email: string; readonly code: string; readonly current?: number; readonly limit?: number }>
    /**
     * Members invited at their access level although they may hold a custom role at the
     * source: the source has custom roles (or cannot list them), and the documents show
     * no member's custom role (also in `notCarried`).
     */
    readonly customRoleUnknown: ReadonlyArray<string>
  }
  readonly notCarried: ReadonlyArray<NotRestored>
  /** What verification found different, one line each (first 50). */
  readonly mismatches: ReadonlyArray<string>
}

interface StepCounts {
  readonly source: number
  readonly planned?: number
  readonly skipped?: number
  readonly report: ReplayReport
}

export interface VerifyInput {
  readonly source: MigrateEnd
  readonly target: MigrateEnd
  readonly journal: JournalApi
  readonly store: SnapshotStoreService
  readonly dryRun: boolean
  readonly run: RunRow
  /** The source run's list titles, in the source's order (as the title map names them on the target). */
  readonly lists: ReadonlyArray<string>
  /** The mapping files: records and members compared as they were carried (mapped-source.ts). */
  readonly mapping?: SourceMapping | undefined
  /** Records of the source run that are archived. */
  readonly sourceArchived: number
  readonly records: RestoreResult
  /** Source records with a field edited on the target and kept (delta passes): not a difference. */
  readonly keptRecords?: ReadonlySet<string>
  readonly files: CopySummary | undefined
  /** Files the source run holds (the count a dry run reports). */
  readonly sourceFiles: number
  readonly notCarried: ReadonlyArray<NotRestored>
  readonly counts: {
    readonly roles: StepCounts & {
      readonly skipped: number
      readonly planned: number
      readonly refused: ReadonlyArray<{ readonly name: string; readonly code: string }>
    }
    readonly lists: StepCounts
    readonly comments: StepCounts & { readonly planned: number }
    readonly customFieldFiles: StepCounts & {
      readonly planned: number
      /**
       * The target's FILE fields by name, as planned with: the values to check are planned
       * again from each batch of the source (custom-field-files.ts, the same plan).
       */
      readonly fields: ReadonlyMap<string, string>
    }
    readonly people: {
      readonly source: number
      readonly alreadyMember: number
      readonly planned: number
      readonly refusedBeforeSending: ReadonlyArray<{ readonly email: string; readonly code: string }>
      readonly outcomes: ReadonlyArray<{ readonly email: string; readonly outcome: InviteOutcome }>
      readonly customRoleUnknown: ReadonlyArray<string>
    }
  }
}

/** Record reads of the verification in flight at once (the client's limiter still bounds the rate). */
const VERIFY_CONCURRENCY = 8
/** The target's files kept in the scratch file per transaction. */
const FILES_BATCH = 500

const sumDone = (r: ReplayReport) => Object.values(r.doneByKind).reduce((a, b) => a + b, 0)

/** created = done by this run; skipped = done before; failed = what is left failed or unknown. */
const tally = (source: number, planned: number, report: ReplayReport, dryRun: boolean, skippedBefore = 0): Tally => {
  const created = sumDone(report)
  const failed = report.failed + report.unknown
  return {
    source,
    created,
    skipped: skippedBefore + (dryRun ? 0 : Math.max(0, planned - created - failed - report.deferred)),
    failed
  }
}

/**
 * File custom field values of a batch of source records: the target record's field holds
 * the copied file. The values are the batch's plan (custom-field-files.ts), made again.
 */
const checkFileValues = (
  batch: ReadonlyArray<Record<string, unknown>>,
  input: VerifyInput,
  uids: UidLookup,
  mappedOf: (sourceId: string) => Effect.Effect<string | undefined, unknown>,
  getRecord: (recordId: string) => ReturnType<MigrateEnd["rest"]["getRecord"]>,
  miss: (line: string) => void
) =>
  Effect.gen(function*() {
    const { ops } = planCustomFieldFiles(batch, input.target.workspaceId, input.counts.customFieldFiles.fields, uids)
    const byRecord = new Map<string, Array<{ customFieldId: string; fileUid: string }>>()
    for (const op of ops) {
      const v = op.payload as { recordRef: string; customFieldId: string; fileUid: string }
      // Kept deleted on the target (a delta pass): its values were not carried.
      if (input.records.deletedOnTarget.has(v.recordRef)) continue
      byRecord.set(v.recordRef, [...(byRecord.get(v.recordRef) ?? []), v])
    }
    yield* Effect.forEach(byRecord, ([recordRef, values]) =>
      Effect.flatMap(mappedOf(recordRef), (id) =>
        id === undefined ? Effect.void : Effect.map(getRecord(id), (detail) => {
          for (const v of values) {
            const field = detail.customFields.find((f) => f.id === v.customFieldId)
            const text = typeof field?.text === "string" ? field.text : ""
            if (!text.includes(v.fileUid)) miss(`record ${recordRef}: file ${v.fileUid} is not in its custom field on the target`)
          }
        })), { concurrency: VERIFY_CONCURRENCY, discard: true })
  })

export const verify = (input: VerifyInput): Effect.Effect<MigrationReport, unknown> =>
  // Scoped: the target's records are read into a scratch file for the comparison (restore-target.ts).
  Effect.scoped(Effect.gen(function*() {
    const { counts, dryRun, journal, records, source, target } = input
    const mismatches: Array<string> = []
    const miss = (line: string) => {
      if (mismatches.length < 50) mismatches.push(line)
    }
    const people = counts.people
    const refused = [
      ...people.refusedBeforeSending,
      ...people.outcomes.flatMap(({ email, outcome }) =>
        "refused" in outcome
          ? [{ email, code: outcome.refused, ...(outcome.current !== undefined ? { current: outcome.current } : {}), ...(outcome.limit !== undefined ? { limit: outcome.limit } : {}) }]
          : []
      )
    ]
    // What the target service showed it cannot do (capabilities.ts), this run or an earlier one.
    const missing = yield* missingCapabilities(journal)
    const notMade = yield* listsNotMade(journal, target.workspaceId)
    const notMadeSet = new Set(notMade)
    const archivedSettable = !missing.has(CAPABILITY.archived)
    const orderKept: Array<string> = []
    const orderNotKept: Array<string> = []
    // Built with the report, once the order has been compared.
    const notCarried = (): Array<NotRestored> => {
      // Said here with the names and counts of this migration, instead of the restore's line.
      const replaced = new Set(["lists", "archived", "record order"])
      const out = input.notCarried.filter((n) => !replaced.has(n.what))
      const add = (entry: NotRestored) => {
        if (entry.count > 0) out.push(entry)
      }
      const why = (name: Capability, fallback: string) => missing.get(name) ?? fallback
      add({ what: "lists", count: notMade.length, why: `${why(CAPABILITY.lists, "lists: not made on this service")}: ${notMade.map((t) => JSON.stringify(t)).join(", ")}` })
      if (!archivedSettable) {
        add({ what: "archived", count: input.sourceArchived, why: why(CAPABILITY.archived, "archived: not settable on this service") })
      }
      add({
        what: "record order",
        count: orderNotKept.length,
        why: `no documented write sets a record's position: on the target the records are in another order than at the source in ${orderNotKept.map((t) => JSON.stringify(t)).join(", ")}`
      })
      return out
    }
    const report = (verified: boolean): MigrationReport => ({
      verified,
      dryRun,
      lists: { ...tally(counts.lists.source, counts.lists.source, counts.lists.report, dryRun), notMade, orderKept, orderNotKept },
      records: {
        source: records.records,
        created: records.created,
        updated: records.updated,
        skipped: records.unchanged,
        failed: records.failed + records.unknown
      },
      comments: tally(counts.comments.source, counts.comments.planned, counts.comments.report, dryRun),
      files: {
        source: input.files?.files ?? input.sourceFiles,
        copied: input.files?.copied ?? 0,
        skipped: input.files?.skipped ?? 0,
        failed: input.files?.failed ?? 0
      },
      customFieldFiles: tally(counts.customFieldFiles.source, counts.customFieldFiles.planned, counts.customFieldFiles.report, dryRun),
      roles: (() => {
        const t = tally(counts.roles.source, counts.roles.planned, counts.roles.report, dryRun, counts.roles.skipped)
        return { ...t, created: Math.max(0, t.created - counts.roles.refused.length), refused: counts.roles.refused }
      })(),
      people: {
        source: people.source,
        invited: people.outcomes.filter(({ outcome }) => "invited" in outcome).length,
        alreadyMember: people.alreadyMember + people.outcomes.filter(({ outcome }) => "alreadyMember" in outcome).length,
        refused,
        customRoleUnknown: people.customRoleUnknown
      },
      notCarried: notCarried(),
      mismatches
    })
    if (dryRun) return report(false)

    // Lists and records: what the target cannot hold (a list it cannot make, `archived` it
    // ignores) is reported in notCarried, not found different again on every run.
    const now = yield* readTarget(target.rest, target.workspaceId)
    for (const title of input.lists) {
      if (!now.lists.has(title) && !notMadeSet.has(title)) miss(`list "${title}" is missing on the target`)
    }
    const uids = yield* fileUidLookup(journal)
    const recordNs = recordNamespace(target.workspaceId)
    const mappedOf = (sourceId: string) => Effect.map(journal.lookup(recordNs, sourceId), Option.getOrUndefined)
    const getRecord = (recordId: string) => target.rest.getRecord({ workspaceId: target.workspaceId, recordId })

    // The order within each list the target could make (and holds records of): the
    // target's positions against the source's. The run is read a list at a time by
    // position, which is the order the target's records are to be in: a list's order is
    // kept when each target record read sorts after the one read before it (`byPosition`),
    // so only the last one is held per title, not the list's pairs. A list is judged once
    // the read has passed it (a title two source lists share, once the read is done).
    const titleCount = new Map<string, number>()
    for (const title of input.lists) titleCount.set(title, (titleCount.get(title) ?? 0) + 1)
    const open = new Map<string, OrderCheck>()
    const orderOf = new Map<string, boolean>()
    const compareOrder = (title: string) => {
      const check = open.get(title)
      open.delete(title)
      if (check === undefined || !titleCount.has(title) || notMadeSet.has(title)) return
      orderOf.set(title, orderCheckKept(check))
    }
    let list: unknown = undefined
    let listsRead = 0

    const details = detailBatches(input.store, input.run.id, source.workspaceId)
    yield* Stream.runForEach(details, (batch) =>
      Effect.gen(function*() {
        const comments = yield* commentsOf(input.store, input.run.id, source.workspaceId, batch.map((d) => String(d.id)))
        const commented: Array<{ readonly sourceId: string; readonly targetId: string; readonly want: number }> = []
        for (const d of batch) {
          const listId = (d.todoList as { id?: unknown } | null | undefined)?.id
          if (listId !== list) {
            for (const title of [...open.keys()]) if ((titleCount.get(title) ?? 0) <= 1) compareOrder(title)
            list = listId
            listsRead++
          }
          const r = input.mapping === undefined ? readSource(d) : input.mapping.record(readSource(d))
          const id = yield* mappedOf(r.id)
          const t = id === undefined ? undefined : now.records.get(id)
          if (t === undefined) {
            // Deleted on the target since the last pass and kept deleted: reported in kept, not a difference.
            if (input.records.deletedOnTarget.has(r.id)) continue
            miss(`record ${r.id} "${r.title}" is missing on the target`)
            continue
          }
          if (r.listTitle !== null) {
            const pair = { list: listsRead, source: { position: d.position, id: d.id }, target: { position: t.position, id: t.id } }
            const check = open.get(r.listTitle)
            if (check === undefined) open.set(r.listTitle, orderCheckOf(pair))
            else orderCheckAdd(check, pair)
          }
          const emails = r.emails.filter((e) => now.users.has(e))
          const diff = compareSummary(r, t, emails, archivedSettable, notMadeSet)
          if ((diff.fields || diff.list) && input.keptRecords?.has(r.id) !== true) miss(`record ${r.id} "${r.title}" differs on the target (record ${t.id})`)
          // Tags are carried on create; a record that existed before keeps its own (reported in notCarried).
          const want = comments.get(r.id)?.length ?? 0
          if (want > 0) commented.push({ sourceId: r.id, targetId: t.id, want })
        }
        // The comment count is only in the detail: one read per commented record, several at once.
        yield* Effect.forEach(commented, ({ sourceId, targetId, want }) =>
          Effect.map(getRecord(targetId), (detail) => {
            if (detail.commentCount < want) miss(`record ${sourceId}: ${want} comments at the source, ${detail.commentCount} on the target`)
          }), { concurrency: VERIFY_CONCURRENCY, discard: true })
        yield* checkFileValues(batch, input, uids, mappedOf, getRecord, miss)
      }))
    for (const title of [...open.keys()]) compareOrder(title)
    // A title two source lists merge into (the title map) is reported once.
    for (const title of new Set(input.lists)) {
      const kept = orderOf.get(title)
      if (kept !== undefined) (kept ? orderKept : orderNotKept).push(title)
    }

    // Files: every source file mapped to a CONFIRMED target file of the same size. The
    // target's files are kept by uid in a scratch file, as its records are, not in the heap.
    const targetFiles = yield* scratchRecords("verify-files")
    const scan = yield* stableFileScan(target.workspaceId).pipe(Effect.provideService(RestClient, target.rest))
    yield* Stream.runForEach(
      Stream.grouped(scan.records, FILES_BATCH),
      (page) => Effect.sync(() => targetFiles.putAll(page.map((f) => ({ id: f.uid, size: f.size, status: f.status }))))
    ).pipe(Effect.provideService(RestClient, target.rest))
    yield* Stream.runForEach(input.store.runItems("files", input.run.id, source.workspaceId), (item) =>
      Effect.sync(() => {
        const f = JSON.parse(item) as { uid: string; name: string; size: number; status?: string }
        if (f.status !== undefined && f.status !== "CONFIRMED") return
        const to = typeof uids === "function" ? uids(f.uid) : uids.get(f.uid)
        const kept = to === undefined ? undefined : targetFiles.get(to)
        const t = kept === undefined ? undefined : (JSON.parse(kept) as { size: number; status: string })
        if (t === undefined) miss(`file ${f.name} (${f.uid}) is missing on the target`)
        else if (t.size !== f.size || t.status !== "CONFIRMED") miss(`file ${f.name}: ${t.size} bytes ${t.status} on the target, ${f.size} at the source`)
      }))

    // Roles and members.
    const sourceRoles = Option.getOrElse(yield* source.graphql.workspaceUserRoles(source.workspaceId), () => [])
    const targetRoles = new Set(Option.getOrElse(yield* target.graphql.workspaceUserRoles(target.workspaceId), () => []).map((r) => r.name))
    const refusedRoles = new Set(counts.roles.refused.map((r) => r.name))
    for (const r of sourceRoles) {
      if (!targetRoles.has(r.name) && !refusedRoles.has(r.name)) miss(`role "${r.name}" is missing on the target`)
    }
    if (people.source > 0) {
      const members = new Set((yield* membersOf(target.graphql, target.workspaceId)).map((u) => u.email.toLowerCase()))
      const pending = new Set((yield* target.graphql.invitations({ projectId: target.workspaceId, pending: true })).map((i) => i.email.toLowerCase()))
      const refusedEmails = new Set(refused.map((r) => r.email))
      for (const u of yield* membersOf(source.graphql, source.workspaceId)) {
        const email = input.mapping?.email(u.email.toLowerCase()) ?? u.email.toLowerCase()
        if (email === SKIP) continue
        if (!members.has(email) && !pending.has(email) && !refusedEmails.has(email)) miss(`member ${email} is neither a member of the target nor invited`)
      }
    }
    const r = report(false)
    const failed = r.lists.failed + r.records.failed + r.comments.failed + r.files.failed + r.customFieldFiles.failed + r.roles.failed
    return { ...r, verified: failed === 0 && mismatches.length === 0 }
  }))
