/**
 * `worksync import-csv --workspace ID --csv FILE --journal FILE [mapping] [--dry-run]
 *  [--plan] [--delete-missing] [--overwrite-target-edits] [--rejects FILE] [--json]`: one
 *  record per valid row, exactly once across reruns. A rerun on a newer export with the
 *  same journal is a delta pass: new rows created, changed ones updated, gone ones
 *  reported (connectors/csv/delta.ts).
 *  `--title-map FILE.json` puts rows' lists and tags under other titles.
 *  With `--preset` of another tool, `--attachment-hosts HOST[:PORT][,...]` names the only
 *  hosts its attachment URLs are fetched from (connectors/presets/attachment-hosts.ts).
 *
 * Exit: 0 every row imported (now or before); 2 finished, some rows rejected (see the
 * rejects file); 1 could not finish (a rerun resumes from the journal); 64 bad invocation
 * (unknown column in the mapping, unreadable CSV, journal of another workspace, a bad
 * `--attachment-hosts`).
 *
 * The definition only; the work is in ../run/import-csv.ts, loaded when the command runs.
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { booleanFlag, connectionOptions, jsonOption, passOptions, verbosityOptions } from "../common-options.ts"
import { engineOption, onEngineOr } from "../engine-option.ts"
import { withExamples } from "../help-doc.ts"

/**
 * The names of the CSV presets (connectors/csv/presets.ts), listed here so that help does
 * not load the CSV connector; run/import-csv.ts fails to compile if the two lists differ.
 */
export const PRESET_CHOICES = ["generic", "trello", "asana", "jira", "clickup"] as const

export const options = {
  ...connectionOptions,
  workspace: Flag.String("workspace").pipe(Flag.withDescription("target workspace id or slug")),
  csv: Flag.String("csv").pipe(Flag.withDescription("the CSV file to import")),
  journal: Flag.String("journal").pipe(
    Flag.withDescription("journal: a SQLite file or a PostgreSQL URL, created if missing; rerun with the same journal to resume")
  ),
  map: Flag.String("map").pipe(
    Flag.withDescription("FIELD=COLUMN (repeatable); fields: title, description, descriptionHtml, list, startedAt, duedAt, assignees, tags, done, key"),
    Flag.atLeast(0)
  ),
  mapping: Flag.String("mapping").pipe(Flag.withDescription("JSON file {\"FIELD\": \"COLUMN\", ...}"), Flag.optional),
  preset: Flag.Literals("preset", PRESET_CHOICES).pipe(
    Flag.withDescription(
      "read a tool's own export (trello: board CSV or JSON; asana, jira, clickup: CSV) with comments, attachments, checklists and people; generic: our field names"
    ),
    Flag.optional
  ),
  attachments: Flag.String("attachments").pipe(
    Flag.withDescription("directory where attachments named in the export are found by file name (when their URL needs credentials)"),
    Flag.optional
  ),
  attachmentHosts: Flag.String("attachment-hosts").pipe(
    Flag.withDescription(
      "HOST[:PORT][,...]: the only hosts attachment URLs are fetched from (default: the exporting tool's own, e.g. *.atlassian.net); a loopback, private or link-local address only when its host is named here (an on-premises Jira: --attachment-hosts jira.example.com:8080)"
    ),
    Flag.optional
  ),
  attachmentMaxMb: Flag.Int("attachment-max-mb").pipe(
    Flag.withDescription("attachments larger than this many MB are not fetched (default 25)"),
    Flag.optional
  ),
  people: Flag.String("people").pipe(
    Flag.withDescription("CSV file with columns name,email: people the export names by display name or e-mail, each to a user's e-mail or to skip (left out)"),
    Flag.optional
  ),
  dryRun: booleanFlag("dry-run").pipe(Flag.withDescription("print the plan; send nothing, write no journal")),
  plan: booleanFlag("plan").pipe(
    Flag.withDescription(
      "read the CSV, the journal and the target and print what the run would do (records to create, update, leave and delete, lists and tags to create, people not found, what is not carried, conflicts); writes nothing"
    )
  ),
  deleteMissing: booleanFlag("delete-missing").pipe(
    Flag.withDescription("on a rerun with the same journal: delete on the target the records of rows gone from the export (default: report them)")
  ),
  rejects: Flag.String("rejects").pipe(
    Flag.withDescription("rejected rows (original columns plus row and error); default <csv>.rejects.csv"),
    Flag.optional
  ),
  delimiter: Flag.String("delimiter").pipe(Flag.withDescription("field delimiter; guessed from the header by default"), Flag.optional),
  encoding: Flag.String("encoding").pipe(Flag.withDescription("text encoding of the CSV (default utf-8), e.g. windows-1252"), Flag.optional),
  concurrency: Flag.Int("concurrency").pipe(Flag.withDescription("records created at once (default 8)"), Flag.optional),
  adoptionWindow: Flag.Int("adoption-window").pipe(
    Flag.withDescription(
      "seconds before a create of unknown outcome within which a record of the same title is taken as its result (default 300; 0: only records made after it)"
    ),
    Flag.optional
  ),
  ...passOptions,
  json: jsonOption,
  ...engineOption,
  ...verbosityOptions
}

export type ImportCsvFlags = Command.Command.Config.Infer<typeof options>

export const importCsvCommand = Command.make("import-csv", options, (flags) =>
  onEngineOr("import-csv", flags, () => Effect.flatMap(Effect.promise(() => import("../run/import-csv.ts")), (run) => run.importCsvRun(flags)))).pipe(
    Command.withDescription(
      withExamples("create one record per valid CSV row, exactly once across reruns (journal)", [
        "worksync import-csv --workspace website --csv trello.csv --preset trello --journal import.sqlite --dry-run",
        "worksync import-csv --workspace website --csv trello.csv --preset trello --journal import.sqlite",
        "worksync import-csv --workspace website --csv jira-newer.csv --preset jira --journal import.sqlite --plan",
        "worksync import-csv --workspace website --csv jira-newer.csv --preset jira --journal import.sqlite --delete-missing",
        "worksync import-csv --workspace website --csv jira.csv --preset jira --attachments ./jira-files --people people.csv --journal import.sqlite",
        "worksync import-csv --workspace website --csv jira.csv --preset jira --attachment-hosts jira.example.com:8080 --journal import.sqlite",
        "worksync import-csv --workspace website --csv tasks.csv --map title=Name --map duedAt=\"Due date\" --journal import.sqlite"
      ], ["Exit 2 when rows were rejected (see --rejects); rerun with the same --journal to resume after exit 1."])
    )
  )
