/**
 * Planning a CSV import: read, validate and plan into the journal; nothing is sent
 * (import.ts replays the plan).
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
 *
 * A journal whose earlier passes created records makes this a delta pass (delta.ts): rows
 * with a key of their own are compared with what the journal last wrote for them, and
 * those that changed get an update (and a move) after their last op; the rows it created
 * that the export no longer has are counted, and deleted with `deleteMissing`.
 *
 * With `dryRun` nothing is written to the service or the journal: the plan is counted
 * (and its first rows kept) against the journal's current state, read-only
 * (store/journal/read-only.ts, dry-run.ts); `planReport` adds the contract's `--plan`
 * report (plan-report.ts).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as fs from "node:fs"
import { isNotFound } from "../../client/errors.ts"
import type { RestClientApi, RestError } from "../../client/rest-client.ts"
import { type JournalApi, JournalError, type JournalStateError, type PlannedOp, type PlanOp } from "../../store/journal.ts"
import { toPromise } from "../../store/journal/to-promise.ts"
import { type JournalView, openJournalStates, openJournalView } from "../../store/journal/read-only.ts"
import { scratchRecords } from "../../store/scratch-records.ts"
import { scratchRowNames } from "../../store/scratch-row-names.ts"
import { listsNotMade } from "../../sync/capabilities.ts"
import { mappingsOf } from "../../sync/mapping-files.ts"
import type { Kept } from "../../sync/pass-plan.ts"
import { listEnsureKey, OP_KINDS, TARGET_WORKSPACE_META } from "../../sync/plan.ts"
import { type ReferenceCounts, referencesOf } from "../../sync/references.ts"
import { TOOL_PRESETS } from "../presets/index.ts"
import type { PresetRow } from "../presets/model.ts"
import {
  type DeltaBatch,
  deltaKey,
  type DeltaOptions,
  earlierRows,
  itemOf,
  PASSES_META,
  planChanges,
  readHistories,
  type Written,
  writtenByCreate
} from "./delta.ts"
import { loadDirectory } from "./directory.ts"
import { dryAssigner } from "./dry-run.ts"
import { ImportFailed, ImportUsageError } from "./errors.ts"
import { journalAssigner, PLAN_THREAD_MIN_BYTES } from "./key-assigner.ts"
import type { ImportOptions } from "./options.ts"
import { planReportOf, targetTitles, titleConflict } from "./plan-report.ts"
import { makePresetPlanner, toolReport } from "./preset-plan.ts"
import type { CsvRecord } from "./read.ts"
import { rejectsWriter } from "./rejects.ts"
import type { ImportResult, PlanPreviewRow } from "./result.ts"
import type { CsvRow } from "./row.ts"
import { makeRowPlanner } from "./row-plan.ts"
import type { ExtractedRow } from "./rows.ts"
import { openRowSource } from "./source.ts"

/**
 * Rows read, validated and planned together: one journal transaction each (a few
 * multi-row inserts). 500 measured faster than 2000 or 1000 at a million rows: the commit
 * is cheap (no fsync while planning), while rows kept alive across a young-generation
 * collection are copied and promoted, which costs more than the extra commits.
 */
const PLAN_BATCH_ROWS = 500

/** The journal keys of rows (explicit `k:`, content `h:`), as the record id map holds them. */
const ROW_KEY = /^[kh]:/

/** Rows gone from the export, looked up in the journal and planned this many at a time. */
const GONE_PAGE = 500

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
    const batchRows = options.batchSize ?? PLAN_BATCH_ROWS
    const source = yield* openRowSource(options, batchRows)
    const { reader } = source

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
    const dir = yield* loadDirectory(client, ws, { lists: true, ...source.needs }).pipe(
      Effect.tapError(() => Effect.sync(() => reader.close())),
      Effect.catchIf(
        (e) => isNotFound(e) || e._tag === "Forbidden",
        (e) => Effect.fail(new ImportUsageError({ message: `--workspace ${ws}: ${e.message}` }))
      )
    )
    // A tool's row: read by its preset, people resolved against the workspace's users.
    const tool = source.tool === undefined ? undefined : makePresetPlanner({
      workspaceId: ws,
      label: TOOL_PRESETS[source.tool.name].label,
      tool: source.tool.name,
      reader: source.tool.reader,
      people: { byEmail: dir.users, byName: dir.names, file: options.people },
      names: yield* scratchRowNames("import-names").pipe(
        Effect.tapError(() => Effect.sync(() => reader.close())),
        Effect.mapError((e) => new ImportFailed({ message: e.message }))
      )
    })
    /** The tool row of the record just extracted (tool presets only). */
    let toolRow: PresetRow | undefined
    const extract = source.tool === undefined ? source.extract : (record: CsvRecord): ExtractedRow => {
      const { e, row } = tool!.extract(record)
      toolRow = row
      return e
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
    const scratchFailed = (e: { readonly message: string }) => new ImportFailed({ message: e.message })
    /** Every row an earlier pass created, with its record on the target (none on a first pass). */
    const earlier = yield* earlierRows(view, ws, options.planReport === true).pipe(
      Effect.tapError(() => Effect.sync(() => reader.close())),
      Effect.mapError((e) => (e._tag === "StoreOpenError" ? scratchFailed(e) : e))
    )
    const delta = earlier !== undefined
    /**
     * Delta passes: the keys of this export's rows (a row of an earlier pass not among
     * them is gone from it), each with its last op of this pass when the pass updates it.
     * A scratch file, like the rows of earlier passes.
     */
    const seen = delta
      ? yield* scratchRecords("import-seen").pipe(Effect.tapError(() => Effect.sync(() => reader.close())), Effect.mapError(scratchFailed))
      : undefined
    const notMadeLists = new Set(yield* listsNotMade(view, ws))
    const firstListTitle = dir.lists.keys().next().value
    const listTitleById = new Map([...dir.lists].map(([title, id]) => [id, title] as const))
    const tagTitleById = new Map([...(dir.tags ?? new Map<string, string>())].map(([title, id]) => [id, title] as const))
    const services = yield* Effect.context<never>()
    const runEffect = <A, E>(effect: Effect.Effect<A, E>): Promise<A> =>
      toPromise(services, effect).catch((e: unknown) => {
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
      recordOf: (k) => earlier?.recordOf(k),
      overwriteTargetEdits: options.overwriteTargetEdits === true,
      concurrency: options.concurrency ?? 8
    }
    // `--plan`: records of the target by list and title (those of this journal left out), for conflicts.
    const existingTitles = options.planReport === true
      ? yield* targetTitles(client, ws, (id) => earlier?.ours(id) ?? false).pipe(
        Effect.tapError(() => Effect.sync(() => reader.close())),
        Effect.mapError((e) => (e._tag === "StoreOpenError" ? scratchFailed(e) : e))
      )
      : undefined
    const firstListId = dir.lists.values().next().value

    const assigner = real !== undefined
      ? journalAssigner(yield* real.planner(), options.planThread ?? fs.statSync(options.csv.file).size >= PLAN_THREAD_MIN_BYTES)
      : dryAssigner(yield* openJournalStates(dryJournalFile))
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
    const ensurePlanned = new Set<string>()
    const planRow = makeRowPlanner(ws, dir, options.titles)
    /** The delta batches' plan calls, in file order: each batch's calls wait for the one before. */
    let called: Promise<unknown> = Promise.resolve()
    const planBatch = (batch: ReadonlyArray<CsvRecord>) => {
      const creates: Array<PlanOp> = []
      // Parallel to `creates` (no object per row): the row each create came from.
      const createRows: Array<ExtractedRow> = []
      const createValid: Array<CsvRow> = []
      const createTool: Array<PresetRow | undefined> = []
      const ensures: Array<PlanOp> = []
      /** Rows with a key of their own that an earlier pass may have written (delta passes). */
      const keyed: Array<{ readonly key: string; readonly line: number; readonly next: Written }> = []
      /** Delta passes: the keys of the batch's rows first seen in this batch (kept in `seen` after it). */
      const seenHere = new Set<string>()
      for (const record of batch) {
        rows++
        const e = extract(record)
        // A row of the export, valid or not, is not gone from it; a key repeated in the
        // file is compared once (its repeat is rejected when planned).
        const firstOfKey = seen !== undefined && !e.occurrence && !seenHere.has(e.key) && !seen.has(e.key)
        if (firstOfKey) seenHere.add(e.key)
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
      seen?.putAll([...seenHere].map((id) => ({ id })))
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
          // A row's references are written after this pass's last write of it (kept with its key).
          if (changes !== undefined && changes.ops.length > 0) {
            const last = new Map<string, string>()
            for (const op of changes.ops) last.set((op.payload as { recordRef: string }).recordRef, op.key)
            seen!.putAll([...last].map(([id, key]) => ({ id, last: key })))
          }
          /** Occurrence keys of the batch's rows (delta passes), kept in `seen`. */
          const occurrences: Array<{ readonly id: string }> = []
          const settle = (p: PlannedOp, i: number) => {
            const e = createRows[i]!
            const row = createValid[i]!
            if (p.duplicate) {
              rejects.write(e.values, e.line, `key ${p.key.slice(2)} repeats an earlier row of this file`)
              return
            }
            // Keyed under the create's key as the journal assigned it (occurrences included).
            const extra = createTool[i]
            if (tool !== undefined && extra !== undefined) for (const op of tool.followUps(p.key, extra, e.line)) followUps.push(op)
            if (delta && e.occurrence) occurrences.push({ id: p.key })
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
          }
          // A tool's rows keep their names in the scratch file: one transaction a batch.
          if (tool !== undefined) tool.inBatch(() => results.forEach(settle))
          else results.forEach(settle)
          if (occurrences.length > 0) seen!.putAll(occurrences)
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
    /** A row updated (or moved) by this pass: its last op, which its references op follows. */
    const lastWrite = (k: string): string | undefined => {
      const text = seen?.get(k)
      return text === undefined ? undefined : (JSON.parse(text) as { last?: string }).last
    }
    let references: ReferenceCounts | undefined
    /** References between rows: resolved once every row is read (presets/references.ts). */
    const planReferences = async () => {
      if (tool === undefined) return
      const left = new Set(kept.filter((k) => k.what === "record" || k.what === "description").map((k) => k.item))
      const refs = tool.referenceOps({ after: (k) => lastWrite(k) ?? k, skip: (k) => left.has(itemOf(k)) })
      let rewritten = 0
      for (const ops of refs.pages) {
        if (ops.length === 0) continue
        const planned = await assigner.plan(ops)
        countNew(ops, planned)
        planned.forEach((p, i) => {
          if (p.state !== "done" && !p.duplicate) rewritten += referencesOf(ops[i]!.payload)
        })
      }
      // Present only when there are references: the plan's shape is the contract's otherwise.
      if (rewritten + refs.outside() > 0) references = { rewritten, outside: refs.outside() }
    }
    /** Delta passes: the rows an earlier pass created that this export no longer has. */
    const planGone = async () => {
      if (earlier === undefined || seen === undefined) return
      /** A page of the rows gone: their deletes not planned yet are counted, or planned (`deleteMissing`). */
      const gonePage = async (gone: ReadonlyArray<string>) => {
        const done = new Set((await runEffect(view.getMany(gone.map(deltaKey.delete)))).map((op) => op.key))
        const left = gone.filter((k) => !done.has(deltaKey.delete(k)))
        if (options.deleteMissing !== true) {
          missing += left.length
          return
        }
        const ops: Array<PlanOp> = left.map((k) => ({
          key: deltaKey.delete(k),
          kind: OP_KINDS.recordDelete,
          payload: { workspaceId: ws, recordRef: k, origin: `row ${itemOf(k)}, gone from the export` },
          dependsOn: k
        }))
        if (ops.length === 0) return
        const planned = await assigner.plan(ops)
        countNew(ops, planned)
        deletes += planned.filter((p) => p.state !== "done").length
      }
      // The id map's row keys in its order, a page at a time: the same ops in the same order as one call.
      let gone: Array<string> = []
      for (const k of earlier.rowKeys()) {
        if (!ROW_KEY.test(k) || seen.has(k)) continue
        gone.push(k)
        if (gone.length === GONE_PAGE) {
          await gonePage(gone)
          gone = []
        }
      }
      if (gone.length > 0) await gonePage(gone)
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
        if (!stop && tool !== undefined) for (const links of tool.subtaskOps()) countNew(links, await assigner.plan(links))
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
    const planReport = options.planReport !== true ? undefined : planReportOf({
      rows,
      rejected,
      toCreate,
      updated,
      deletes,
      missing,
      tagsChanged,
      newLists,
      newTags,
      unresolved: report?.people.unresolved ?? [],
      notCarried: report?.census.notCarried ?? [],
      references,
      listsNotMade: [...notMadeLists].filter((t) => ensurePlanned.has(listEnsureKey(ws, t)) || dir.lists.has(t)),
      conflicts,
      kept,
      mappings
    })
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
