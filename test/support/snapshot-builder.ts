/**
 * A synthetic backup history in a real SQLite snapshot (and files directory), for the
 * prune tests and benchmark: one complete run a day, each changing a share of the
 * records (a new version with its activity) and of the files (a new object), the rest
 * carried over as a backup carries an unchanged record. Written through the store's own
 * API; membership is copied run to run as the mirror does (copyMembership), so a year of
 * daily runs builds in seconds.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { ObjectStoreApi } from "../../src/store/object-store.ts"
import { type RecordEntry, scopeOf, type SnapshotStoreService } from "../../src/store/snapshot.ts"
import { activityOf, detailOf, fileOf, summaryOf } from "../store/snapshot-fixtures.ts"
import { sqliteOf } from "./sqlite-store.ts"

export interface HistoryOptions {
  readonly runs: number
  readonly records: number
  /** Records given a new version in each run after the first. */
  readonly changedPerRun: number
  readonly activityPerVersion?: number
  readonly files?: number
  /** Files given new bytes in each run after the first. */
  readonly changedFilesPerRun?: number
  /** Where the files' bytes go; without it the history has no file bytes. */
  readonly objects?: ObjectStoreApi
  /** Start of the first run (each next run a day later). */
  readonly firstDay?: string
}

const DAY_MS = 86_400_000

const recordId = (i: number) => `r${String(i).padStart(6, "0")}`
const fileId = (i: number) => `f${String(i).padStart(5, "0")}`

const recordVersion = (i: number, v: number, activity: number): RecordEntry => {
  const detail = detailOf(recordId(i), v)
  return { kind: "version", workspaceId: "w1", summary: summaryOf(detail), detail, activity: activityOf(recordId(i), activity) }
}

/** The object of file `i` at version `v`: a few KB, distinct per (file, version). */
const fileBytes = (i: number, v: number) => Buffer.from(`file ${i} version ${v}\n`.repeat(100))

/** Writes the history; returns the run ids, oldest first. */
export const buildHistory = (store: SnapshotStoreService, options: HistoryOptions) =>
  Effect.gen(function*() {
    const db = sqliteOf(store)
    const activity = options.activityPerVersion ?? 2
    const files = options.files ?? 0
    const first = Date.parse(options.firstDay ?? "2025-01-01T02:00:00.000Z")
    const setStarted = db.prepare("UPDATE runs SET started = ?, finished = ? WHERE id = ?")
    const carryObjects = db.prepare("INSERT INTO run_file_objects (run_id, file_id, sha256) SELECT ?, file_id, sha256 FROM run_file_objects WHERE run_id = ?")
    const storeFile = (i: number, v: number) =>
      options.objects === undefined
        ? Effect.succeed(undefined)
        : Effect.map(options.objects.put(Stream.make(fileBytes(i, v))), (o) => ({ fileId: fileId(i), sha256: o.sha256, size: o.size }))
    const ids: Array<number> = []
    for (let r = 0; r < options.runs; r++) {
      const run = yield* store.beginRun(scopeOf([]), false)
      const previous = ids.at(-1)
      yield* store.putWorkspaces(run, [{ id: "w1" }])
      const changedRecords = previous === undefined
        ? Array.from({ length: options.records }, (_, i) => i)
        : Array.from({ length: options.changedPerRun }, (_, k) => (r * options.changedPerRun + k) % options.records)
      const changedFiles = previous === undefined
        ? Array.from({ length: files }, (_, i) => i)
        : Array.from({ length: options.changedFilesPerRun ?? 0 }, (_, k) => (r * (options.changedFilesPerRun ?? 0) + k) % Math.max(1, files))
      if (previous !== undefined) {
        yield* store.copyMembership(previous, run)
        carryObjects.run(run, previous)
      }
      for (let at = 0; at < changedRecords.length; at += 1000) {
        yield* store.putRecords(run, changedRecords.slice(at, at + 1000).map((i) => recordVersion(i, r, activity)))
      }
      if (changedFiles.length > 0) {
        const updatedAt = new Date(first + r * DAY_MS).toISOString()
        yield* store.putFiles(run, "w1", changedFiles.map((i) => ({ ...fileOf(fileId(i), r), size: fileBytes(i, r).length, updatedAt })))
        const refs = []
        for (const i of changedFiles) {
          const ref = yield* storeFile(i, r)
          if (ref !== undefined) refs.push(ref)
        }
        yield* store.putFileObjects(run, refs)
      }
      yield* store.completeRun(run, {})
      const started = new Date(first + r * DAY_MS)
      setStarted.run(started.toISOString(), new Date(started.getTime() + 60_000).toISOString(), run)
      ids.push(run)
    }
    return ids
  })
