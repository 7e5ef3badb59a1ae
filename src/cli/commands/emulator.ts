/**
 * `worksync emulator`: the local service, until SIGINT/SIGTERM. Prints one JSON line on
 * stdout once listening (URLs and the OWNER's tokens), as the contract says.
 *
 * The definition only; the work is in ../run/emulator.ts, loaded when the command runs.
 */
import * as Command from "effect/cli/Command"
import * as Flag from "effect/cli/Flag"
import * as Effect from "effect/Effect"
import { withExamples } from "../help-doc.ts"

export const options = {
  port: Flag.Int("port").pipe(Flag.withDescription("port of the REST/app server; 0 picks a free one"), Flag.withDefault(0)),
  storagePort: Flag.Int("storage-port").pipe(Flag.withDescription("port of the storage server; 0 picks a free one"), Flag.withDefault(0)),
  host: Flag.String("host").pipe(Flag.withDescription("address to listen on"), Flag.withDefault("127.0.0.1")),
  seed: Flag.String("seed").pipe(Flag.withDescription("data to start with: empty, demo, N (3 workspaces of N records) or WxN"), Flag.withDefault("empty")),
  // The path as given (effect/cli's Flag.File would make it absolute and stat it while parsing).
  db: Flag.String("db").pipe(Flag.withMetavar("file"), Flag.withDescription("keep the state in this SQLite file (default: in memory)"), Flag.optional),
  rateLimit: Flag.Finite("rate-limit").pipe(Flag.withDescription("requests per second per token; 429 with Retry-After beyond"), Flag.optional),
  latency: Flag.Int("latency").pipe(Flag.withDescription("milliseconds added to every answer"), Flag.optional),
  failRate: Flag.Finite("fail-rate").pipe(Flag.withDescription("fraction of requests answered 500"), Flag.optional),
  dropRate: Flag.Finite("drop-rate").pipe(Flag.withDescription("fraction of connections dropped without an answer"), Flag.optional),
  ambiguousRate: Flag.Finite("ambiguous-rate").pipe(Flag.withDescription("fraction of writes that commit and then lose their answer"), Flag.optional),
  churn: Flag.String("churn").pipe(
    Flag.withDescription("on each list-records call insert I records before the first one and delete D from the front (I or I:D), so offset paging drifts"),
    Flag.optional
  ),
  timeScale: Flag.Finite("time-scale").pipe(Flag.withDescription("multiplies the documented delays (webhooks, reconciliation)"), Flag.optional),
  headerPrefix: Flag.String("header-prefix").pipe(Flag.withDescription("header prefix, default svc"), Flag.optional),
  variant: Flag.Literals("variant", ["reference", "alt"] as const).pipe(
    Flag.withDescription(
      "which reading of the documents to serve where they are silent: reference (ours) or alt (the other plausible one, documented fields only); default WORKSYNC_EMULATOR_VARIANT, else reference"
    ),
    Flag.optional
  )
}

export type EmulatorFlags = Command.Command.Config.Infer<typeof options>

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
