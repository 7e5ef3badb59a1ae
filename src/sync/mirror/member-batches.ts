/**
 * The mirror's reads of records again look up and write the snapshot together: the
 * lookups asked in one turn of the event loop are one read (`memberVersions`), the
 * changes one commit (`changeMembers`), as the receiver keeps the deliveries of one turn
 * in one. The reads of records due at the same time start in the same turn, and their
 * answers arrive a few at a time. On SQLite a statement on its own takes and releases the
 * file's locks (40-120 us here, against 4 us in a transaction), and a commit of its own
 * cost each read again about as much as all the rest of its writing.
 *
 * A caller waits for the read or the commit that holds its ask; one that fails fails each
 * of its asks (their reads are asked again, rereads.ts).
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import type { MemberChangeAsk, MemberVersion, SnapshotError, SnapshotStoreService } from "../../store/snapshot.ts"

export interface MemberBatches {
  /** The version a run holds of a record (`memberVersion`). */
  readonly version: (runId: number, id: string) => Effect.Effect<MemberVersion | undefined, SnapshotError>
  /** Changes one record of a run (`changeMembers`). */
  readonly change: (runId: number, ask: MemberChangeAsk) => Effect.Effect<void, SnapshotError>
}

/** Each lookup and change a transaction of its own. */
export const unbatched = (store: SnapshotStoreService): MemberBatches => ({
  version: store.memberVersion,
  change: (runId, ask) => store.changeMembers(runId, [ask])
})

/**
 * The calls of one turn, by run (a reconciliation between two of them makes a second
 * run), handed to `batch` together; each caller gets its own answer, in order.
 */
const byTurn = <I, O>(batch: (runId: number, inputs: ReadonlyArray<I>) => Effect.Effect<ReadonlyArray<O>, SnapshotError>) => {
  let waiting: Array<{ readonly runId: number; readonly input: I; readonly settle: (exit: Exit.Exit<O, SnapshotError>) => void }> = []
  const flush = () => {
    const turn = waiting
    waiting = []
    for (const runId of new Set(turn.map((w) => w.runId))) {
      const mine = turn.filter((w) => w.runId === runId)
      Effect.runPromiseExit(batch(runId, mine.map((w) => w.input))).then((exit) =>
        mine.forEach((w, i) => w.settle(Exit.isSuccess(exit) ? Exit.succeed(exit.value[i] as O) : Exit.failCause(exit.cause)))
      )
    }
  }
  return (runId: number, input: I) =>
    Effect.callback<O, SnapshotError>((resume) => {
      // After the poll phase: every call of this turn joins the batch.
      if (waiting.length === 0) setImmediate(flush)
      waiting.push({ runId, input, settle: resume })
    })
}

export const makeMemberBatches = (store: SnapshotStoreService): MemberBatches => ({
  version: byTurn((runId, ids: ReadonlyArray<string>) =>
    Effect.map(store.memberVersions(runId, [...new Set(ids)]), (found) => ids.map((id) => found.get(id)))),
  change: byTurn((runId, asks: ReadonlyArray<MemberChangeAsk>) => Effect.as(store.changeMembers(runId, asks), asks.map(() => undefined)))
})
