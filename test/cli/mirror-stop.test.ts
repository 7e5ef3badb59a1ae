/**
 * `worksync mirror` stopped while a delivery's record is still to be read again (a new
 * checklist: a delivery that does not carry the record, so the mirror reads it from the
 * service, about a second later). The read is held by the emulator ("hold" fault) so the
 * stop always falls inside that window, with no clock involved.
 *
 * - The line says `queued`, and `applied` only once the change is in the snapshot.
 * - SIGTERM reads what is queued before exiting.
 * - A read the service never answers does not hold the exit: what is left is named, kept
 *   in the snapshot, and read at the next start, without waiting for a reconciliation.
 * - SIGKILL loses nothing either: the next start reads it, and prints its line.
 */
import Database from "better-sqlite3"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { freePort, type MirrorChild, rpc, startMirror, until } from "../support/mirror-cli.ts"

/** The checklists of a record in the snapshot's latest complete run (the mirror's run), sorted. */
const checklists = (snapshot: string, recordId: string): Array<string> => {
  const db = new Database(snapshot, { readonly: true, fileMustExist: true })
  try {
    const detail = db.prepare(
      `SELECT r.detail FROM run_records rr JOIN records r ON r.vid = rr.vid
       WHERE rr.run_id = (SELECT max(id) FROM runs WHERE status = 'complete') AND rr.id = ?`
    ).pluck().get(recordId) as string | undefined
    if (detail === undefined) return []
    return (JSON.parse(detail) as { checklists: Array<{ title: string }> }).checklists.map((c) => c.title).sort()
  } finally {
    db.close()
  }
}

const lines = (m: MirrorChild, recordId: string) => m.events().filter((e) => e.event === "TODO_CHECKLIST_CREATED" && e.recordId === recordId)

// Deliveries 50 ms after a change. The CLI runs as a child process: real time.
layer(emulatorLayer({ seed: "empty", timeScale: 0.01 }), { timeout: 60_000, excludeTestServices: true })("worksync mirror, stopped", (it) => {
  it.effect("a change queued to be read again is told applied only once in the snapshot; SIGTERM reads it first, a stuck read and a SIGKILL leave it for the next start", () =>
    Effect.gen(function*() {
      const handle: EmulatorHandle = yield* Emulator
      yield* Effect.addFinalizer(() => Effect.sync(() => handle.faults.reset()))
      const ws = handle.admin.createWorkspace({ name: "stopped" }).id
      const record = (yield* Effect.promise(() => rpc(handle, "create-record", { workspaceId: ws, title: "Noted" }))).id as string
      const checklist = (title: string) => Effect.promise(() => rpc(handle, "create-checklist", { workspaceId: ws, recordId: record, title }))
      const dir = yield* tempDir("ws-mirror-stop-")
      const snapshot = path.join(dir, "snap.sqlite")
      const port = yield* Effect.promise(() => freePort())
      let current: MirrorChild | undefined
      const start = () => Effect.promise(() => startMirror(handle, snapshot, port, ws).then((m) => (current = m)))
      // A wait the test's timeout cuts short logs what the mirror at hand printed.
      const wait = (condition: () => boolean, what: string) =>
        until(condition, what).pipe(
          Effect.onInterrupt(() => Effect.logError(`the mirror printed:\n${current?.stdout()}\n${current?.stderr()}`))
        )
      /** The next read of a record is held unanswered; resolves once the mirror's read is waiting. */
      const holdRead = (times = 1) => Effect.sync(() => handle.faults.inject({ route: "get-record", kind: "hold", times }))
      const readHeld = wait(() => handle.faults.heldRequests.size > 0, "the mirror's read of the record")

      // 1. SIGTERM while the read is in flight: it is finished before the exit.
      const first = yield* start()
      yield* holdRead()
      yield* checklist("step 1")
      yield* wait(() => lines(first, record).some((e) => e.queued === true), "the delivery to be queued")
      yield* readHeld
      expect(lines(first, record).filter((e) => e.applied)).toEqual([])
      expect(checklists(snapshot, record)).toEqual([])
      first.child.kill("SIGTERM")
      yield* wait(() => /stopping: reading 1 record\(s\) again first/.test(first.stderr()), "the stop to wait for the read")
      handle.faults.heldRequests.releaseAll()
      expect((yield* Effect.promise(() => first.exited)).code, first.stderr()).toBe(0)
      expect(checklists(snapshot, record)).toEqual(["step 1"])
      expect(lines(first, record).map((e) => e.applied)).toEqual([false, true])
      expect(first.stderr()).toMatch(/stopped; every change received is in the snapshot/)

      // 2. A read the service never answers: the exit is not held; the rest is named and kept.
      const second = yield* start()
      yield* holdRead(100)
      yield* checklist("step 2")
      yield* wait(() => lines(second, record).some((e) => e.queued === true), "the delivery to be queued")
      yield* readHeld
      second.child.kill("SIGTERM")
      expect((yield* Effect.promise(() => second.exited)).code, second.stderr()).toBe(0)
      expect(second.stderr()).toMatch(/stopped with 1 record\(s\) still to read again: kept in the snapshot, read at the next start/)
      expect(lines(second, record).filter((e) => e.applied)).toEqual([])
      expect(checklists(snapshot, record)).toEqual(["step 1"])
      handle.faults.reset()

      // The next start reads it (no reconciliation timer: --reconcile-every is an hour) and says so.
      const third = yield* start()
      yield* wait(() => lines(third, record).some((e) => e.applied), "the kept read to be applied")
      expect(checklists(snapshot, record)).toEqual(["step 1", "step 2"])

      // 3. SIGKILL while the read is in flight: nothing is lost either.
      yield* holdRead()
      yield* checklist("step 3")
      yield* wait(() => lines(third, record).some((e) => e.queued === true), "the delivery to be queued")
      yield* readHeld
      third.child.kill("SIGKILL")
      yield* Effect.promise(() => third.exited)
      handle.faults.reset()
      expect(checklists(snapshot, record)).toEqual(["step 1", "step 2"])
      const fourth = yield* start()
      yield* wait(() => lines(fourth, record).some((e) => e.applied), "the read a kill cut to be applied")
      expect(checklists(snapshot, record)).toEqual(["step 1", "step 2", "step 3"])
      fourth.child.kill("SIGTERM")
      expect((yield* Effect.promise(() => fourth.exited)).code, fourth.stderr()).toBe(0)
    }), 120_000)
})
