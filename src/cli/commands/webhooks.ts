/**
 * `worksync webhooks list|create|update|disable|delete [--json]`: the caller's webhooks
 * (`create --url URL [--event E]... [--workspace ID]...`,
 * `update ID [--url URL] [--event E]... [--workspace ID]... [--enable|--disable]`,
 * `disable ID`, `delete ID`). `create` shows the signing secret once, on stdout, and
 * nowhere else.
 *
 * Exit: 0 done; 1 the service refused or could not be reached, or no webhook of the
 * caller has the ID; 64 bad invocation (unknown subcommand or flag, bad URL, unknown
 * event, unknown workspace).
 *
 * The definitions only; the work is in ../run/webhooks.ts, loaded when a subcommand runs.
 * The event names are checked there too: the schema module that lists them is not for
 * the start-up graph.
 */
import * as Argument from "effect/cli/Argument"
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { booleanFlag, connectionOptions, jsonOption, verbosityOptions } from "../common-options.ts"
import { usageError } from "../exit.ts"
import { withExamples } from "../help-doc.ts"

const run = () => Effect.promise(() => import("../run/webhooks.ts"))

// Every subcommand takes the connection flags itself, so they may follow its name
// (`worksync webhooks list --base-url ...`), as they follow every other command's.
const common = {
  ...connectionOptions,
  json: jsonOption,
  ...verbosityOptions
}

const eventOption = Flag.String("event").pipe(
  Flag.withDescription("a WebhookEvent to deliver, e.g. TODO_CREATED (repeatable; none: every event)"),
  Flag.atLeast(0)
)
const workspaceOption = Flag.String("workspace").pipe(
  Flag.withDescription("deliver only events of this workspace id or slug (repeatable; none: every workspace)"),
  Flag.atLeast(0)
)
const idArg = Argument.String("ID").pipe(Argument.withDescription("the webhook's id (see worksync webhooks list)"))

export const listOptions = common
export const createOptions = {
  ...common,
  // Optional to the parser so that a missing --url is reported in the house's one line.
  url: Flag.String("url").pipe(Flag.withDescription("http(s) URL the deliveries are POSTed to"), Flag.optional),
  event: eventOption,
  workspace: workspaceOption
}
export const updateOptions = {
  ...common,
  id: idArg,
  url: Flag.String("url").pipe(Flag.withDescription("new delivery URL"), Flag.optional),
  event: eventOption.pipe(Flag.withDescription("replace the events with these (repeatable)")),
  workspace: workspaceOption.pipe(Flag.withDescription("replace the workspaces with these ids or slugs (repeatable)")),
  enable: booleanFlag("enable").pipe(Flag.withDescription("enable the webhook (a health check is delivered)")),
  disable: booleanFlag("disable").pipe(Flag.withDescription("disable the webhook (it is kept)"))
}
export const idOptions = { ...common, id: idArg }

export type ListFlags = Command.Command.Config.Infer<typeof listOptions>
export type CreateFlags = Command.Command.Config.Infer<typeof createOptions>
export type UpdateFlags = Command.Command.Config.Infer<typeof updateOptions>
export type IdFlags = Command.Command.Config.Infer<typeof idOptions>

const CONNECTION = "Connects with --base-url, --token-id and --token-secret (or their profile keys or WORKSYNC_* variables)."

const listCommand = Command.make("list", listOptions, (flags) => Effect.flatMap(run(), (r) => r.listRun(flags))).pipe(
  Command.withDescription(
    withExamples("list your webhooks (never their secrets)", [
      "worksync webhooks list",
      "worksync webhooks list --json"
    ], [CONNECTION])
  )
)

const createCommand = Command.make("create", createOptions, (flags) => Effect.flatMap(run(), (r) => r.createRun(flags))).pipe(
  Command.withDescription(
    withExamples("create a webhook and print its signing secret, once", [
      "worksync webhooks create --url https://hooks.example.com/worksync --org acme",
      "worksync webhooks create --url https://hooks.example.com/done --event TODO_DONE_STATUS_UPDATED --workspace website --json"
    ], [
      CONNECTION + " Creating needs the organization too (--org).",
      "The secret is printed on stdout now and never again: store it where the receiver checks X-Signature."
    ])
  )
)

const updateCommand = Command.make("update", updateOptions, (flags) => Effect.flatMap(run(), (r) => r.updateRun(flags))).pipe(
  Command.withDescription(
    withExamples("change a webhook's URL, events, workspaces or enabled state", [
      "worksync webhooks update WEBHOOK_ID --url https://hooks.example.com/v2",
      "worksync webhooks update WEBHOOK_ID --event TODO_CREATED --event TODO_DELETED",
      "worksync webhooks update WEBHOOK_ID --enable"
    ], [CONNECTION])
  )
)

const disableCommand = Command.make("disable", idOptions, (flags) => Effect.flatMap(run(), (r) => r.disableRun(flags))).pipe(
  Command.withDescription(
    withExamples("stop deliveries to a webhook; it is kept (re-enable with update --enable)", [
      "worksync webhooks disable WEBHOOK_ID"
    ], [CONNECTION])
  )
)

const deleteCommand = Command.make("delete", idOptions, (flags) => Effect.flatMap(run(), (r) => r.deleteRun(flags))).pipe(
  Command.withDescription(
    withExamples("delete a webhook permanently", ["worksync webhooks delete WEBHOOK_ID --json"], [CONNECTION])
  )
)

export const webhooksCommand = Command.make("webhooks", {}, () =>
  // Reached only without a subcommand: say which ones there are, as a bad invocation.
  Effect.fail(usageError("webhooks: name a subcommand: list, create, update, disable or delete (see worksync webhooks --help)"))
).pipe(
  Command.withDescription(
    withExamples("manage your webhooks: list, create, update, disable, delete", [
      "worksync webhooks list --json",
      "worksync webhooks create --url https://hooks.example.com/worksync --event TODO_CREATED",
      "worksync webhooks delete WEBHOOK_ID"
    ])
  ),
  Command.withSubcommands([listCommand, createCommand, updateCommand, disableCommand, deleteCommand])
)
