/**
 * `worksync emulator`: the local service, until SIGINT/SIGTERM. Prints one JSON line on
 * stdout once listening (URLs and the OWNER's tokens), as the contract says.
 *
 * The definition only; the work is in ../run/emulator.ts, loaded when the command runs.
 */
import * as Command from "@effect/cli/Command"
import * as Options from "@effect/cli/Options"
import * as Effect from "effect/Effect"
import { withExamples } from "../help-doc.ts"

export const options = {
  port: Options.integer("port").pipe(Options.withDescription("port of the REST/app server; 0 picks a free one"), Options.withDefault(0)),
  storagePort: Options.integer("storage-port").pipe(Options.withDescription("port of the storage server; 0 picks a free one"), Options.withDefault(0)),
  host: Options.text("host").pipe(Options.withDescription("address to listen on"), Options.withDefault("127.0.0.1")),
  seed: Options.text("seed").pipe(Options.withDescription("data to start with: empty, demo, N (3 workspaces of N records) or WxN"), Options.withDefault("empty")),
  db: Options.file("db").pipe(Options.withDescription("keep the state in this SQLite file (default: in memory)"), Options.optional),
  rateLimit: Options.float("rate-limit").pipe(Options.withDescription("requests per second per token; 429 with Retry-After beyond"), Options.optional),
  latency: Options.integer("latency").pipe(Options.withDescription("milliseconds added to every answer"), Options.optional),
  failRate: Options.float("fail-rate").pipe(Options.withDescription("fraction of requests answered 500"), Options.optional),
  dropRate: Options.float("drop-rate").pipe(Options.withDescription("fraction of connections dropped without an answer"), Options.optional),
  ambiguousRate: Options.float("ambiguous-rate").pipe(Options.withDescription("fraction of writes that commit and then lose their answer"), Options.optional),
  churn: Options.text("churn").pipe(
    Options.withDescription("on each list-records call insert I records before the first one and delete D from the front (I or I:D), so offset paging drifts"),
    Options.optional
  ),
  timeScale: Options.float("time-scale").pipe(Options.withDescription("multiplies the documented delays (webhooks, reconciliation)"), Options.optional),
  headerPrefix: Options.text("header-prefix").pipe(Options.withDescription("header prefix, default svc"), Options.optional),
  variant: Options.choice("variant", ["reference", "alt"] as const).pipe(
    Options.withDescription(
      "which reading of the documents to serve where they are silent: reference (ours) or alt (the other plausible one, documented fields only); default WORKSYNC_EMULATOR_VARIANT, else reference"
    ),
    Options.optional
  )
}

export type EmulatorFlags = Command.Command.ParseConfig<typeof options>

export const emulatorCommand = Command.make("emulator", options, (flags) =>
  Effect.flatMap(Effect.promise(() => import("../run/emulator.ts")), (run) => run.emulatorRun(flags))
).pipe(
  Command.withDescription(
    withExamples(
      "Start the local emulator of the service; prints one JSON line with its URLs and an OWNER's tokens, runs until SIGINT/SIGTERM",
      [
        "worksync emulator --seed demo --port 0",
        "worksync emulator --seed 3x20000 --rate-limit 50 --fail-rate 0.01 --db emulator.sqlite",
        "worksync emulator --seed demo --variant alt"
      ]
    )
  )
)
