/** `worksync emulator`: the work behind the definition in ../commands/emulator.ts. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { EmulatorFlags } from "../commands/emulator.ts"
import { treatInterruptAsSuccess, usageError } from "../exit.ts"
import { printJson } from "../output.ts"

const fraction = (name: string, value: Option.Option<number>) =>
  Option.isSome(value) && (value.value < 0 || value.value > 1)
    ? Effect.fail(usageError(`--${name} ${value.value}: must be a fraction between 0 and 1`))
    : Effect.void

/** `--churn I` or `--churn I:D`: records inserted and deleted at the front per page. */
const parseChurn = (value: Option.Option<string>) =>
  Option.match(value, {
    onNone: () => Effect.succeed({}),
    onSome: (text) => {
      const m = /^(\d+)(?::(\d+))?$/.exec(text.trim())
      return m === null
        ? Effect.fail(usageError(`--churn ${text}: expected INSERTS or INSERTS:DELETES, whole numbers (e.g. 2 or 2:1)`))
        : Effect.succeed({ churn: { insertsPerPage: Number(m[1]), deletesPerPage: Number(m[2] ?? m[1]) } })
    }
  })

export const emulatorRun = (flags: EmulatorFlags) =>
  Effect.gen(function*() {
    yield* fraction("fail-rate", flags.failRate)
    yield* fraction("drop-rate", flags.dropRate)
    yield* fraction("ambiguous-rate", flags.ambiguousRate)
    const emulator = yield* Effect.promise(() => import("../../emulator/index.ts"))
    const seed = yield* Effect.try({
      try: () => emulator.parseSeed(flags.seed),
      catch: (e) => usageError(`--seed ${flags.seed}: ${e instanceof Error ? e.message : String(e)}`)
    })
    const churn = yield* parseChurn(flags.churn)
    // Resolved here (flag, else the environment) so a bad value is a usage error, not a failed start.
    const variant = yield* Effect.try({
      try: () => emulator.resolveVariant(Option.getOrUndefined(flags.variant)),
      catch: (e) => usageError(e instanceof Error ? e.message : String(e))
    })
    const faults = {
      ...churn,
      ...Option.match(flags.rateLimit, { onNone: () => ({}), onSome: (rateLimit) => ({ rateLimit }) }),
      ...Option.match(flags.latency, { onNone: () => ({}), onSome: (latencyMs) => ({ latencyMs }) }),
      ...Option.match(flags.failRate, { onNone: () => ({}), onSome: (failRate) => ({ failRate }) }),
      ...Option.match(flags.dropRate, { onNone: () => ({}), onSome: (dropRate) => ({ dropRate }) }),
      ...Option.match(flags.ambiguousRate, { onNone: () => ({}), onSome: (ambiguousWriteRate) => ({ ambiguousWriteRate }) })
    }
    const handle = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          emulator.startEmulator({
            host: flags.host,
            port: flags.port,
            storagePort: flags.storagePort,
            seed: seed.kind === "sized" ? { workspaces: seed.workspaces, recordsPerWorkspace: seed.recordsPerWorkspace } : seed.kind,
            faults,
            variant,
            ...Option.match(flags.db, { onNone: () => ({}), onSome: (dbFile) => ({ dbFile }) }),
            ...Option.match(flags.timeScale, { onNone: () => ({}), onSome: (timeScale) => ({ timeScale }) }),
            ...Option.match(flags.headerPrefix, { onNone: () => ({}), onSome: (headerPrefix) => ({ headerPrefix }) })
          }),
        catch: (e) => usageError(`emulator could not start on ${flags.host}:${flags.port}: ${e instanceof Error ? e.message : String(e)}`)
      }),
      (h) => Effect.promise(() => h.close())
    )
    yield* printJson(emulator.describe(handle))
    treatInterruptAsSuccess()
    return yield* Effect.never
  }).pipe(Effect.scoped)
