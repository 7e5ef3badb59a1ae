/**
 * `worksync migrate --from workspace:ID --to workspace:ID --journal FILE [--dry-run] [--plan]
 *  [--delete-missing] [--overwrite-target-edits] [--people invite|skip|FILE]
 *  [--title-map FILE.json] [--no-attribution] [--json]`: a whole workspace into another one, usually of another account
 * (`--to-rest-url`, `--to-token`, ...), exactly once and resumable, then verified. A rerun
 * with the same journal is a delta pass: it carries what changed at the source since.
 *
 * `--people FILE` (CSV `name,email`) invites a member it names under another e-mail, or
 * leaves them out (`skip`), and maps assignees the same way; `--title-map` carries lists
 * and tags under other titles (sync/mapping-files.ts).
 *
 * Exit: 0 everything that can move did and verification holds; 2 finished, but the
 * service refused some items (listed in the report); 1 could not finish (a rerun with
 * the same journal resumes); 64 bad invocation.
 *
 * The definition only; the work is in ../run/migrate.ts, loaded when the command runs.
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { booleanFlag, connectionOptions, jsonOption, passOptions, targetConnectionOptions, verbosityOptions } from "../common-options.ts"
import { engineOption, onEngineOr } from "../engine-option.ts"
import { withExamples } from "../help-doc.ts"

export const options = {
  ...connectionOptions,
  to_: targetConnectionOptions,
  from: Flag.String("from").pipe(Flag.withDescription("source: workspace:ID")),
  to: Flag.String("to").pipe(Flag.withDescription("target: workspace:ID")),
  journal: Flag.String("journal").pipe(
    Flag.withDescription("journal: a SQLite file or a PostgreSQL URL, created if missing (the source is read into FILE-source.sqlite beside a file, or schema NAME_source beside a schema); rerun with the same journal to resume")
  ),
  dryRun: booleanFlag("dry-run").pipe(Flag.withDescription("read the source and plan; send nothing")),
  plan: booleanFlag("plan").pipe(
    Flag.withDescription(
      "read the source, the target and the journal and print what the run would do (records to create, update, leave and delete, lists and tags to create, people to invite, assignees not found, what is not carried, target edits kept); writes nothing to the target nor to the journal"
    )
  ),
  deleteMissing: booleanFlag("delete-missing").pipe(
    Flag.withDescription("on a rerun with the same journal: delete on the target the records gone from the source since the last pass (default: report them)")
  ),
  people: Flag.String("people").pipe(
    Flag.withDescription(
      "invite the source's members to the target workspace at their level (invite, the default), leave people out (skip), or invite them through a CSV FILE with columns name,email mapping a member (display name or e-mail) to a target e-mail or to skip; assignees are mapped the same way"
    ),
    Flag.withDefault("invite")
  ),
  noAttribution: booleanFlag("no-attribution").pipe(
    Flag.withDescription("do not open each comment with a line naming its original author and date")
  ),
  ...passOptions,
  json: jsonOption,
  ...engineOption,
  ...verbosityOptions
}

export type MigrateFlags = Command.Command.Config.Infer<typeof options>

export const migrateCommand = Command.make("migrate", options, (flags) =>
  onEngineOr("migrate", flags, () => Effect.flatMap(Effect.promise(() => import("../run/migrate.ts")), (run) => run.migrateRun(flags)))).pipe(
    Command.withDescription(
      withExamples("move a whole workspace into another one (lists, records, files, comments, roles, people), then verify", [
        "worksync migrate --from workspace:website --to workspace:website --to-profile new-account --journal move.sqlite --dry-run",
        "worksync migrate --from workspace:website --to workspace:website --to-profile new-account --journal move.sqlite --json",
        "worksync migrate --from workspace:website --to workspace:website --to-profile new-account --journal move.sqlite --plan",
        "worksync migrate --from workspace:website --to workspace:website --to-profile new-account --journal move.sqlite --delete-missing",
        "worksync migrate --from workspace:website --to workspace:website --to-profile new-account --journal move.sqlite --people people.csv --title-map titles.json --plan"
      ], [
        "Rerun with the same --journal to resume: nothing is sent twice.",
        "A later rerun with the same --journal is the next pass: it carries what changed at the source since the last one."
      ])
    )
  )
