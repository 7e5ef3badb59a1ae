/** `worksync import-csv`: the work behind the definition in ../commands/import-csv.ts. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as fs from "node:fs"
import { Connection } from "../../client/config.ts"
import { GraphqlClient } from "../../client/graphql-client.ts"
import { RestClient } from "../../client/rest-client.ts"
import { ImportFailed, ImportUsageError } from "../../connectors/csv/errors.ts"
import { importCsv } from "../../connectors/csv/import.ts"
import type { ImportResult } from "../../connectors/csv/result.ts"
import { type Field, MappingError, parseMapFlag, parseMappingFile } from "../../connectors/csv/mapping.ts"
import type { PresetName } from "../../connectors/csv/presets.ts"
import { censusLines } from "../../connectors/presets/census.ts"
import { isToolPreset } from "../../connectors/presets/index.ts"
import { StoreBusy } from "../../store/file-lock.ts"
import { describeJournalError, Journal } from "../../store/journal.ts"
import { ReplayAborted } from "../../sync/replay.ts"
import type { ImportCsvFlags, PRESET_CHOICES } from "../commands/import-csv.ts"
import { verbosityOf } from "../common-options.ts"
import { clientLayerFromFlags } from "../connection.ts"
import { CliExit, ExitCode, registerDescriber, usageError } from "../exit.ts"
import { logLine, printJson } from "../output.ts"
import { mappingLines, planLines } from "../plan-lines.ts"
import { makeProgress } from "../progress.ts"
import { attachmentFetchOptions } from "./attachment-flags.ts"
import { peopleFile, titleMapFile } from "./mapping-flags.ts"

registerDescriber(describeJournalError)

// The definition's preset names must be the connector's, both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const presetsAgree: Same<(typeof PRESET_CHOICES)[number], PresetName> = true
void presetsAgree

const defaultRejects = (csv: string) => `${csv.replace(/\.csv$/i, "")}.rejects.csv`

const mappingFrom = (flags: ImportCsvFlags) =>
  Effect.gen(function*() {
    const pairs: Array<readonly [Field, string]> = []
    for (const m of flags.map) {
      const parsed = parseMapFlag(m)
      if (Result.isFailure(parsed)) return yield* Effect.fail(usageError(parsed.failure.message))
      pairs.push(parsed.success)
    }
    let file: Partial<Record<Field, string>> | undefined
    if (Option.isSome(flags.mapping)) {
      const name = flags.mapping.value
      let text: string
      try {
        text = fs.readFileSync(name, "utf8")
      } catch {
        return yield* Effect.fail(usageError(`--mapping ${name}: file not found`))
      }
      const parsed = parseMappingFile(name, text)
      if (Result.isFailure(parsed)) return yield* Effect.fail(usageError(parsed.failure.message))
      file = parsed.success
    }
    const preset = Option.getOrUndefined(flags.preset)
    if (pairs.length === 0 && file === undefined && preset === undefined) {
      return { preset: "generic" as const }
    }
    return { flags: pairs, ...(file !== undefined ? { file } : {}), ...(preset !== undefined ? { preset } : {}) }
  })

/** What a pass after the first did to rows already imported (nothing on a first pass). */
const deltaSummary = (r: ImportResult, dryRun: boolean): string =>
  r.pass === 1 && r.updated === 0 && r.deleted === 0
    ? ""
    : `; pass ${r.pass}: ${r.updated} ${dryRun ? "to update" : "updated"}, ${r.deleted} ${dryRun ? "to delete" : "deleted"}`

const summary = (r: ImportResult, dryRun: boolean): string =>
  (dryRun
    ? `dry run: ${r.rows} rows, ${r.plan?.ops[`record.create`] ?? 0} records to create, ${r.skipped} already imported, ${r.rejected} rejected`
    : `import: ${r.rows} rows, ${r.created} created, ${r.skipped} already imported, ${r.rejected} rejected`) + deltaSummary(r, dryRun)


export const importCsvRun = (flags: ImportCsvFlags) =>
  Effect.gen(function*() {
    const verbosity = verbosityOf(flags)
    const mapping = yield* mappingFrom(flags)
    if (!fs.existsSync(flags.csv)) {
      return yield* Effect.fail(usageError(`--csv ${flags.csv}: file not found`))
    }
    const tool = isToolPreset(mapping.preset)
    const attachmentsDir = Option.getOrUndefined(flags.attachments)
    if (attachmentsDir !== undefined && !(fs.existsSync(attachmentsDir) && fs.statSync(attachmentsDir).isDirectory())) {
      return yield* Effect.fail(usageError(`--attachments ${attachmentsDir}: not a directory`))
    }
    if ((attachmentsDir !== undefined || Option.isSome(flags.people)) && !tool) {
      return yield* Effect.fail(usageError("--attachments and --people go with --preset trello, asana, jira or clickup"))
    }
    const attachmentFetch = yield* attachmentFetchOptions(flags, tool)
    const people = Option.isSome(flags.people) ? yield* peopleFile(flags.people.value) : undefined
    const titles = yield* titleMapFile(Option.getOrUndefined(flags.titleMap))
    const adoptionWindow = Option.getOrUndefined(flags.adoptionWindow)
    if (adoptionWindow !== undefined && adoptionWindow < 0) {
      return yield* Effect.fail(usageError(`--adoption-window ${adoptionWindow}: must be 0 or more seconds`))
    }
    const concurrency = Option.getOrElse(flags.concurrency, () => 8)
    if (concurrency < 1) return yield* Effect.fail(usageError(`--concurrency ${concurrency}: must be at least 1`))
    // `--plan` is a dry run that also reads the target for conflicts and reports the plan.
    const dryRun = flags.dryRun || flags.plan
    const client = yield* clientLayerFromFlags(flags, { rest: true, app: tool && !dryRun })
    const rejectsFile = Option.getOrElse(flags.rejects, () => defaultRejects(flags.csv))
    const reading = yield* makeProgress({ label: "rows read", unit: "items", verbosity })
    const sending = yield* makeProgress({ label: "operations", unit: "items", verbosity })
    const base = {
      workspaceId: flags.workspace,
      csv: {
        file: flags.csv,
        delimiter: Option.getOrUndefined(flags.delimiter),
        encoding: Option.getOrUndefined(flags.encoding)
      },
      mapping,
      concurrency,
      attachmentsDir,
      ...attachmentFetch,
      people,
      titles,
      deleteMissing: flags.deleteMissing,
      overwriteTargetEdits: flags.overwriteTargetEdits,
      planReport: flags.plan,
      ...(adoptionWindow !== undefined ? { skewMs: adoptionWindow * 1000 } : {}),
      onRowsRead: (n: number) => reading.advance(n),
      // Reading ends where sending starts (a dry run never sends: its reading ends below).
      onReplayStart: (total: number) => Effect.andThen(reading.done(), sending.setTotal(total)),
      onOpEnd: () => sending.advance(1)
    }
    const run: Effect.Effect<ImportResult, unknown> = dryRun
      ? Effect.flatMap(RestClient, (rest) =>
        importCsv(rest, { dryRunJournalFile: flags.journal }, { ...base, dryRun: true })).pipe(Effect.provide(client))
      : Effect.gen(function*() {
        const journal = yield* Journal
        const rest = yield* RestClient
        // Comments and attachments of a tool's export go through GraphQL.
        const graphql = tool ? yield* GraphqlClient : undefined
        // Reconciliation looks for a late write as long as the client itself would wait for one.
        const { requestTimeoutMs } = yield* Connection
        return yield* importCsv(rest, journal, { ...base, rejectsFile, settleWindowMs: requestTimeoutMs, graphql })
      }).pipe(Effect.provide(Layer.merge(Journal.layer(flags.journal), client)))

    const result = yield* run.pipe(
      Effect.catch((e): Effect.Effect<never, CliExit | unknown> => {
        if (e instanceof ImportUsageError || e instanceof MappingError) return Effect.fail(usageError(e.message))
        if (e instanceof ImportFailed || e instanceof ReplayAborted) {
          return Effect.fail(new CliExit({ code: ExitCode.failed, message: `${e.message}; rerun with the same --journal to resume` }))
        }
        if (e instanceof StoreBusy) return Effect.fail(new CliExit({ code: ExitCode.failed, message: e.message }))
        return Effect.fail(e)
      })
    )
    if (!dryRun) yield* sending.done()
    else yield* reading.done()

    if (flags.plan) {
      // The contract's shape, exactly: what the run would do.
      if (flags.json) yield* printJson({ plan: result.planReport })
      else if (result.planReport !== undefined) for (const line of planLines(result.planReport)) yield* logLine(verbosity, line)
      for (const notice of result.notices) yield* logLine(verbosity, `import: ${notice}`)
      return
    }
    if (flags.json) {
      yield* printJson({
        rows: result.rows,
        created: result.created,
        skipped: result.skipped,
        rejected: result.rejected,
        updated: result.updated,
        pass: result.pass,
        // Delta passes: present only when there is one, like notices.
        ...(result.missing > 0 ? { missing: result.missing } : {}),
        ...(result.deleted > 0 ? { deleted: result.deleted } : {}),
        ...(result.kept.length > 0 ? { kept: result.kept } : {}),
        ...(result.notices.length > 0 ? { notices: result.notices } : {}),
        ...(result.listsNotMade !== undefined ? { listsNotMade: result.listsNotMade } : {}),
        // Like notices, present only when there is one (the contract's fields stay as they are).
        ...(result.adopted.length > 0
          ? { adopted: result.adopted.map((a) => ({ key: a.opKey, recordId: a.targetId, found: a.detail })) }
          : {}),
        ...(result.census !== undefined
          ? {
            comments: result.comments ?? 0,
            attachments: result.attachments ?? 0,
            unmapped: result.census.notCarried.map((c) => c.column),
            notCarried: Object.fromEntries(result.census.notCarried.map((c) => [c.column, { count: c.count, reason: c.reason }])),
            people: { unresolved: result.people?.unresolved ?? [] },
            references: result.references ?? { rewritten: 0, outside: 0 },
            ...(result.attachmentsNotFetched !== undefined && result.attachmentsNotFetched.length > 0
              ? { attachmentsNotFetched: result.attachmentsNotFetched }
              : {}),
            ...(result.problems !== undefined && result.problems.length > 0 ? { problems: result.problems } : {}),
            carried: Object.fromEntries(result.census.carried.map((c) => [c.column, { field: c.field, count: c.count }]))
          }
          : {}),
        ...(result.mappings !== undefined ? { mappings: result.mappings } : {}),
        ...(flags.dryRun ? { dryRun: true, plan: result.plan } : {})
      })
    }
    // The census first: what the export holds and where each column goes, before the rest.
    if (result.census !== undefined && verbosity !== "quiet" && (flags.dryRun || verbosity === "verbose")) {
      for (const line of censusLines(result.census)) yield* logLine(verbosity, `census: ${line}`)
    }
    yield* logLine(verbosity, summary(result, flags.dryRun))
    // What this service could not take (operations beyond the documents), one line each.
    for (const notice of result.notices) yield* logLine(verbosity, `import: ${notice}`)
    if (result.people !== undefined && result.people.unresolved.length > 0) {
      yield* logLine(verbosity, `import: not in the workspace, records created without them (map them with --people to its users): ${result.people.unresolved.join(", ")}`)
    }
    for (const a of result.attachmentsNotFetched ?? []) yield* logLine(verbosity, `import: attachment ${a.name} not fetched: ${a.reason}`)
    if (result.references !== undefined && result.references.outside > 0) {
      yield* logLine(verbosity, `import: ${result.references.outside} reference${result.references.outside === 1 ? "" : "s"} to items not in the export left as written`)
    }
    for (const p of result.problems ?? []) yield* logLine(verbosity, `import: ${p}`, "detail")
    if (result.missing > 0) {
      yield* logLine(verbosity, `import: ${result.missing} row${result.missing === 1 ? "" : "s"} gone from the export; their records stay on the target (--delete-missing deletes them)`)
    }
    for (const k of result.kept) yield* logLine(verbosity, `import: kept ${k.what} of ${k.item}: ${k.why}`)
    if (result.mappings !== undefined) for (const l of mappingLines(result.mappings)) yield* logLine(verbosity, `import: ${l}`)
    // Records taken as ours after an unknown outcome, found by title: possibly someone else's.
    for (const a of result.adopted) {
      yield* logLine(verbosity, `import: adopted record ${a.targetId} for ${a.opKey} (found by ${a.detail})`, "detail")
    }
    if (flags.dryRun && result.plan !== undefined && verbosity !== "quiet") {
      for (const [kind, n] of Object.entries(result.plan.ops)) yield* logLine(verbosity, `  ${kind}: ${n}`)
      for (const r of result.plan.first) {
        yield* logLine(verbosity, `  row ${r.row}: ${JSON.stringify(r.title)}${r.list ? ` in ${JSON.stringify(r.list)}` : ""}${r.done ? " (done)" : ""}`)
      }
    }
    const unfinished = result.failed + result.unknown + result.blocked
    if (unfinished > 0) {
      const first = result.failures[0] ?? `${unfinished} operations could not finish`
      return yield* Effect.fail(
        new CliExit({
          code: ExitCode.failed,
          message: `${unfinished} operation${unfinished === 1 ? "" : "s"} not finished, first: ${first}; rerun with the same --journal to resume`
        })
      )
    }
    if (result.rejected > 0) {
      return yield* Effect.fail(
        new CliExit({
          code: ExitCode.rejected,
          message: `${result.rejected} row${result.rejected === 1 ? "" : "s"} rejected${flags.dryRun ? "" : `; see ${rejectsFile}`}`
        })
      )
    }
  })
