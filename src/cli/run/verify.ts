/** `worksync verify`: the work behind the definition in ../commands/verify.ts. */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as fs from "node:fs"
import { RestClient } from "../../client/rest-client.ts"
import { StoreBusy } from "../../store/file-lock.ts"
import { SnapshotStore } from "../../store/snapshot.ts"
import { type CheckResult, verifyAndRecord, type VerifyResult } from "../../sync/verify.ts"
import type { VerifyFlags } from "../commands/verify.ts"
import { verbosityOf } from "../common-options.ts"
import { clientLayerFromFlags } from "../connection.ts"
import { CliExit, ExitCode, usageError } from "../exit.ts"
import { withNotify } from "../notify.ts"
import { logLine, printJson } from "../output.ts"
import { shownLocation, snapshotFailure } from "./snapshot-failure.ts"

const checkLine = (c: CheckResult): string =>
  c.ok
    ? `verify: ${c.name}: ok (${c.checked} checked)`
    : `verify: ${c.name}: ${c.failed} of ${c.checked} failed; first: ${c.first ?? "(none named)"}`

const summary = (r: VerifyResult): string =>
  `verify: run ${r.runId}: every check holds (${r.checks.map((c) => c.name).join(", ")})`

/** The one line of a failed verification: the first failed check and its first failure. */
const failureLine = (r: VerifyResult): string => {
  const failed = r.checks.filter((c) => !c.ok)
  const first = failed[0]!
  const more = failed.length > 1 ? ` (and ${failed.length - 1} more failed check${failed.length > 2 ? "s" : ""})` : ""
  return `verify: run ${r.runId}: ${first.name} failed: ${first.first ?? `${first.failed} of ${first.checked}`}${more}`
}

/** `--files DIR` must be a directory; `--sample` a percentage, with `--files`. */
const checkFlags = (flags: VerifyFlags) =>
  Effect.gen(function*() {
    const dir = Option.getOrUndefined(flags.files)
    if (dir !== undefined && !(fs.existsSync(dir) && fs.statSync(dir).isDirectory())) {
      return yield* Effect.fail(usageError(`--files ${dir}: no such directory; give the DIR backup --files wrote`))
    }
    const sample = Option.getOrUndefined(flags.sample)
    if (sample !== undefined) {
      if (!(sample > 0 && sample <= 100)) return yield* Effect.fail(usageError(`--sample ${sample}: a percentage above 0 and at most 100`))
      if (dir === undefined) return yield* Effect.fail(usageError("--sample reads a share of the stored objects: give --files DIR too"))
    }
    return { dir, sample }
  })

export const verifyRun = (flags: VerifyFlags) =>
  Effect.gen(function*() {
    const verbosity = verbosityOf(flags)
    const { dir, sample } = yield* checkFlags(flags)
    const connection = flags.againstService ? yield* clientLayerFromFlags(flags, { rest: true }) : undefined
    const result = yield* Effect.scoped(Effect.gen(function*() {
      // The live service only when asked: verify alone needs no connection at all.
      const service = connection === undefined ? undefined : Context.get(yield* Layer.build(connection), RestClient)
      const outcome = yield* verifyAndRecord(yield* SnapshotStore, {
        run: Option.getOrUndefined(flags.run),
        filesDir: dir,
        samplePercent: sample,
        rehearse: flags.rehearse,
        service,
        log: (line) => logLine(verbosity, line)
      })
      if (outcome === undefined) {
        return yield* Effect.fail(usageError(`--snapshot ${shownLocation(flags.snapshot)}: no complete run to verify; run worksync backup first`))
      }
      return outcome
    })).pipe(
      Effect.provide(SnapshotStore.layer(flags.snapshot, { mustExist: true })),
      Effect.catch((e): Effect.Effect<never, unknown> => {
        if (e instanceof CliExit) return Effect.fail(e)
        if (e instanceof StoreBusy) return Effect.fail(new CliExit({ code: ExitCode.failed, message: e.message }))
        const mapped = snapshotFailure(e, flags.snapshot)
        if (mapped !== undefined) return Effect.fail(mapped)
        return Effect.fail(e)
      })
    )
    for (const c of result.checks) yield* logLine(verbosity, checkLine(c))
    for (const n of result.notCarried) yield* logLine(verbosity, `verify: a restore would not carry ${n.count} ${n.what} (${n.why})`)
    if (flags.json) yield* printJson({ runId: result.runId, ok: result.ok, checks: result.checks })
    if (!result.ok) return yield* Effect.fail(new CliExit({ code: ExitCode.failed, message: failureLine(result) }))
    yield* logLine(verbosity, summary(result))
    return summary(result)
  }).pipe(withNotify("verify", flags, (line) => line))
