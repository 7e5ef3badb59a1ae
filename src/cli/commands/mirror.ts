/**
 * `worksync mirror --snapshot FILE --listen HOST:PORT --public-url URL [--workspace ID]...
 *  [--reconcile-every SECONDS] [--json]`: keeps the snapshot current from the service's
 * signed webhooks until SIGINT/SIGTERM (exit 0).
 *
 * The definition only; the work is in ../run/mirror.ts, loaded when the command runs.
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { connectionOptions, jsonOption, verbosityOptions } from "../common-options.ts"
import { withExamples } from "../help-doc.ts"

export const DEFAULT_RECONCILE_EVERY = 3600

export const options = {
  ...connectionOptions,
  snapshot: Flag.String("snapshot").pipe(Flag.withDescription("SQLite snapshot file (created if missing) kept current")),
  listen: Flag.String("listen").pipe(Flag.withDescription("HOST:PORT the webhook receiver listens on")),
  publicUrl: Flag.String("public-url").pipe(
    Flag.withDescription("URL the service delivers to (reaches the receiver, e.g. through a proxy)")
  ),
  workspace: Flag.String("workspace").pipe(
    Flag.withDescription("mirror only this workspace id or slug (repeatable); default every workspace"),
    Flag.atLeast(0)
  ),
  reconcileEvery: Flag.Int("reconcile-every").pipe(
    Flag.withDescription(`seconds between reconciliations (incremental backups); default ${DEFAULT_RECONCILE_EVERY}`),
    Flag.optional
  ),
  json: jsonOption,
  ...verbosityOptions
}

export type MirrorFlags = Command.Command.Config.Infer<typeof options>

export const mirrorCommand = Command.make("mirror", options, (flags) =>
  Effect.flatMap(Effect.promise(() => import("../run/mirror.ts")), (run) => run.mirrorRun(flags))).pipe(
    Command.withDescription(
      withExamples("keep a snapshot current from the service's webhooks (runs until stopped)", [
        "worksync mirror --snapshot backup.sqlite --listen 0.0.0.0:8080 --public-url https://hooks.example.com/worksync",
        "worksync mirror --snapshot backup.sqlite --listen 127.0.0.1:8080 --public-url https://hooks.example.com/w --workspace website --json"
      ], ["export and diff of the same snapshot work while it runs. The webhook secret is kept in FILE.webhook.json (owner-only)."])
    )
  )
