/**
 * `verify --against-service`: the run compared with the live service, reading only
 * (count-records and get-record; no write is ever sent).
 *
 * - `service.counts`: per workspace of the run, the records the run holds and the records
 *   the service counts now (archived or not, both filters sent explicitly, as backup
 *   reads them). A difference fails: a record deleted or created since, or one the
 *   backup missed ("exports that silently held 52 of 4,000 items").
 * - `service.records`: a sample of the run's records read back one by one. One the
 *   service no longer has fails; one changed since the run (another `updatedAt`) is
 *   counted as checked; one with the run's `updatedAt` must hold restore's fields as
 *   the run does, else the snapshot does not hold what the service held.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { isNotFound } from "../client/errors.ts"
import { RestClient, type RestClientApi } from "../client/rest-client.ts"
import type { RecordDetail } from "../schema/records.ts"
import { countRecords } from "../streams/records.ts"
import type { SnapshotError, SnapshotStoreService } from "../store/snapshot.ts"
import { readSource } from "./restore-source.ts"
import { brokenCheck, type CheckResult, Tally } from "./verify-check.ts"
import { clip, firstDifference } from "./verify-compare.ts"
import { sample } from "./verify-objects.ts"

/** Records read back when no size is asked for. */
export const DEFAULT_SERVICE_SAMPLE = 50

const NOTHING_DECLARED: ReadonlySet<string> = new Set()

const messageOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)

/** `service.counts`: records per workspace, the run's against the service's now. */
const checkCounts = (store: SnapshotStoreService, client: RestClientApi, runId: number) =>
  Effect.gen(function*() {
    const tally = new Tally("service.counts")
    const held = yield* store.recordsPerWorkspace(runId)
    for (const ws of held) {
      const counted = yield* Effect.forEach([false, true], (archived) => countRecords({ workspaceId: ws.id, archived })).pipe(
        Effect.provideService(RestClient, client),
        Effect.map((counts) => counts.reduce<number | null>((sum, c) => (sum === null || c === null ? null : sum + c), 0)),
        Effect.map(Option.some<number | null>),
        Effect.catchIf((e) => isNotFound(e) || isNotFound(e.cause), () => Effect.succeed(Option.none<number | null>()))
      )
      if (Option.isNone(counted)) tally.fail(`workspace ${ws.id}: the run holds ${ws.n} records, the service has no such workspace now`)
      else if (counted.value === null) tally.fail(`workspace ${ws.id}: the service gave no count of its records`)
      else if (counted.value !== ws.n) {
        tally.fail(`workspace ${ws.id}: the run holds ${ws.n} records, the service counts ${counted.value} now`)
      } else tally.pass()
    }
    return tally.result()
  })

/** `service.records`: a sample of the run's records read back from the service. */
const checkRecords = (store: SnapshotStoreService, client: RestClientApi, runId: number, size: number) =>
  Effect.gen(function*() {
    const tally = new Tally("service.records")
    const ids = yield* store.runRecordRefs(runId)
    const picked = ids.length === 0 ? [] : sample(ids, Math.min(100, (size / ids.length) * 100))
    for (const ref of picked) {
      const stored = yield* store.memberDetail(runId, ref.id)
      if (stored === undefined) continue
      const s = readSource(JSON.parse(stored) as Record<string, unknown>)
      const where = `record ${s.id} (${clip(s.title)}) of workspace ${ref.workspaceId}`
      const live = yield* client.getRecord({ workspaceId: ref.workspaceId, recordId: ref.id }).pipe(
        Effect.map(Option.some<RecordDetail>),
        Effect.catchIf(isNotFound, () => Effect.succeed(Option.none<RecordDetail>()))
      )
      if (Option.isNone(live)) {
        tally.fail(`${where}: the service no longer has it`)
        continue
      }
      // Changed since the run: the snapshot held an earlier state, rightly.
      if (s.updatedAt === null || live.value.updatedAt !== s.updatedAt) {
        tally.pass()
        continue
      }
      const difference = firstDifference(s, live.value, s.emails, NOTHING_DECLARED)
      if (difference === undefined) tally.pass()
      else tally.fail(`${where}: unchanged on the service since the run, yet ${difference.replace(" came back as ", " is ")} there`)
    }
    return tally.result()
  })

/** Both checks; a check the service keeps from finishing (refused token, network) fails with why. */
export const compareWithService = (
  store: SnapshotStoreService,
  client: RestClientApi,
  runId: number,
  size: number = DEFAULT_SERVICE_SAMPLE
): Effect.Effect<ReadonlyArray<CheckResult>, SnapshotError> =>
  Effect.gen(function*() {
    const counts = yield* checkCounts(store, client, runId).pipe(
      Effect.catchIf((e) => e._tag !== "SnapshotError", (e) => Effect.succeed(brokenCheck("service.counts", { message: messageOf(e) })))
    )
    const records = yield* checkRecords(store, client, runId, size).pipe(
      Effect.catchIf((e) => e._tag !== "SnapshotError", (e) => Effect.succeed(brokenCheck("service.records", { message: messageOf(e) })))
    )
    return [counts, records]
  })
