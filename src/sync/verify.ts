/**
 * `verify`: evidence that a run of the snapshot is sound and restores, check by check
 * (the command-line contract's `verify`).
 *
 * Always:
 * - `integrity` (verify-integrity.ts): the backend's own check and the snapshot's rules;
 * - `hashes` (verify-hashes.ts): every stored version hashed again.
 * Asked for:
 * - `objects` (`--files DIR`, verify-objects.ts): the run's file bytes, read and hashed;
 * - `rehearse.*` (`--rehearse`, verify-rehearse.ts): the run restored into a fresh
 *   emulator with the real restore, and compared;
 * - `service.*` (`--against-service`, verify-service.ts): counts and a sample of records
 *   compared with the live service, reading only.
 *
 * A check that cannot finish (an unreadable object directory, a refused token) fails with
 * the reason; the others still run. The outcome is recorded in the snapshot
 * (`verifications`, shown by `runs_summary`).
 */
import * as Effect from "effect/Effect"
import type { RestClientApi } from "../client/rest-client.ts"
import type { StoreBusy, StoreLockError } from "../store/file-lock.ts"
import { resolveRun, type RunNotFound, type RunRow, type SnapshotError, type SnapshotStoreService } from "../store/snapshot.ts"
import { brokenCheck, type CheckResult, type NotCarried } from "./verify-check.ts"
import { checkHashes } from "./verify-hashes.ts"
import { checkIntegrity } from "./verify-integrity.ts"
import { checkObjects } from "./verify-objects.ts"
import { rehearse } from "./verify-rehearse.ts"
import { compareWithService, DEFAULT_SERVICE_SAMPLE } from "./verify-service.ts"

export type { CheckResult, NotCarried } from "./verify-check.ts"

export interface VerifyOptions {
  readonly run: RunRow
  /** `--files DIR`: check the run's file bytes stored there. */
  readonly filesDir?: string | undefined
  /** `--sample PCT`: read this percentage of the objects (default all). */
  readonly samplePercent?: number | undefined
  /** `--rehearse`. */
  readonly rehearse?: boolean | undefined
  /** `--against-service`: the live service, read only. */
  readonly service?: RestClientApi | undefined
  /** Records read back from the service (default 50). */
  readonly serviceSample?: number | undefined
  /** One line of progress for people. */
  readonly log?: ((line: string) => Effect.Effect<void>) | undefined
}

/** The contract's `verify --json` object, and what a restore would not carry (reported besides). */
export interface VerifyResult {
  readonly runId: string
  readonly ok: boolean
  readonly checks: ReadonlyArray<CheckResult>
  readonly notCarried: ReadonlyArray<NotCarried>
}

/**
 * A check that cannot finish ends as a failed check saying why, and the others still run:
 * a failure, or a defect (a stored text so damaged that it does not parse, which the
 * hashes check names anyway).
 */
const contained = <A, E>(check: Effect.Effect<A, E>, broken: (e: unknown) => A): Effect.Effect<A> =>
  check.pipe(
    Effect.catch((e) => Effect.succeed(broken(e))),
    Effect.catchDefect((d) => Effect.succeed(broken(d)))
  )

const guarded = <E>(name: string, check: Effect.Effect<CheckResult, E>): Effect.Effect<CheckResult> =>
  contained(check, (e) => brokenCheck(name, e))

/** Runs the checks asked for on one run. Reads only: recording the outcome is the caller's. */
export const verify = (store: SnapshotStoreService, options: VerifyOptions): Effect.Effect<VerifyResult> =>
  Effect.gen(function*() {
    const log = options.log ?? (() => Effect.void)
    const runId = options.run.id
    const checks: Array<CheckResult> = []
    const notCarried: Array<NotCarried> = []

    yield* log("verify: checking the snapshot's integrity")
    checks.push(yield* guarded("integrity", checkIntegrity(store)))
    yield* log("verify: hashing every stored version")
    checks.push(yield* guarded("hashes", checkHashes(store)))
    if (options.filesDir !== undefined) {
      yield* log(`verify: reading the stored objects under ${options.filesDir}`)
      checks.push(yield* guarded("objects", checkObjects(store, runId, options.filesDir, options.samplePercent ?? 100)))
    }
    if (options.rehearse === true) {
      const rehearsal = yield* contained(
        rehearse(store, { run: options.run, filesDir: options.filesDir, log }),
        (e) => ({ checks: [brokenCheck("rehearse.records", e)], notCarried: [] })
      )
      checks.push(...rehearsal.checks)
      notCarried.push(...rehearsal.notCarried)
    }
    if (options.service !== undefined) {
      yield* log("verify: comparing with the live service (reading only)")
      const compared = compareWithService(store, options.service, runId, options.serviceSample ?? DEFAULT_SERVICE_SAMPLE)
      checks.push(...(yield* contained(compared, (e) => [brokenCheck("service.counts", e)])))
    }
    return { runId: String(runId), ok: checks.every((c) => c.ok), checks, notCarried }
  })

/**
 * `worksync verify` as a library call: under the snapshot's writer lock (a prune cannot
 * forget the run while it is checked), `verify` of the run (`run` given, or the latest
 * complete one), then the outcome recorded in the snapshot (`verifications`, shown by
 * `runs_summary`). Undefined when the snapshot has no complete run.
 */
export const verifyAndRecord = (
  store: SnapshotStoreService,
  options: Omit<VerifyOptions, "run"> & { readonly run?: string | undefined }
): Effect.Effect<VerifyResult | undefined, SnapshotError | RunNotFound | StoreBusy | StoreLockError> =>
  Effect.scoped(Effect.gen(function*() {
    yield* store.lockWriter
    const run = yield* resolveRun(store, options.run, { allowIncomplete: true })
    if (run === undefined) return undefined
    const outcome = yield* verify(store, { ...options, run })
    yield* store.addVerification({ runId: run.id, verifiedAt: new Date().toISOString(), ok: outcome.ok, checks: outcome.checks })
    return outcome
  }))

