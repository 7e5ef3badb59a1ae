/**
 * What a complete backup run skipped: the run is kept (what it holds is consistent), but
 * whoever ran it must not hear that everything was done. Read from the run's notes.
 */
import * as Effect from "effect/Effect"
import { type RunNote, type SnapshotError, SnapshotStore } from "../store/snapshot.ts"

/** Run notes that say the run lacks something it was asked for (a record, a file, a workspace). */
export const isSkipNote = (kind: string): boolean => kind === "vanished" || kind === "skipped" || kind.endsWith("-skipped")

/** The notes of run `runId` that name what it skipped, in the order they were written. */
export const runSkips = (runId: string | number): Effect.Effect<Array<RunNote & { readonly detail: unknown }>, SnapshotError, SnapshotStore> =>
  Effect.flatMap(SnapshotStore, (store) => Effect.map(store.notes(Number(runId)), (notes) => notes.filter((n) => isSkipNote(n.kind))))
