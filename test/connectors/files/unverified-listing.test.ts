/**
 * copy-files over a source listing that cannot be verified complete: files created (with
 * timestamps older than every other) and deleted at the head of the listing while it is
 * read, so every verification pass finds files older than the pass before it. The copy
 * still copies every file it read, fails naming the listing, and the rerun completes.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as path from "node:path"
import { ListingUnverified } from "../../../src/connectors/files/copy.ts"
import { readManifest } from "../../../src/connectors/files/manifest.ts"
import type { EmulatorHandle } from "../../../src/emulator/index.ts"
import { Emulator, emulatorWithClient, FilesClient, runCopy, seedConfirmedFiles, tempDir } from "./_helpers.ts"

/** The issue's size: 258 files, three pages of list-files at its maximum page size. */
const FILES = 258

const uidsAt = (emu: EmulatorHandle, workspaceId: string) =>
  emu.ctx.db.prepare("SELECT uid FROM files WHERE workspace_id = ?").pluck().all(workspaceId) as Array<string>

// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorWithClient({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("copy-files over a listing that cannot be verified", (it) => {
  // Two copies of 258 files: the timeout leaves room for a loaded machine.
  it.effect("R-REST-PAGE-08 R-FILE-STATUS-07: files created under older timestamps and deleted at the head of the listing while it is read: the first run copies every file it read and fails naming the listing; the rerun completes; no file is copied twice", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const client = yield* FilesClient
      const ws = emu.workspaces[0]!
      const before = seedConfirmedFiles(emu, ws, FILES)
      const out = yield* tempDir()
      const journalFile = path.join(yield* tempDir(), "journal.sqlite")
      const copy = runCopy({ from: { kind: "workspace", workspaceId: ws }, to: { kind: "dir", path: out }, source: client.files, journalFile })

      // After every list-files request: the file at the head of the listing is deleted and
      // two are created with timestamps older than every other file.
      emu.faults.configure({ fileChurn: { insertsPerPage: 2, deletesPerPage: 1, backdated: true } })
      const first = yield* Effect.flip(copy)
      emu.faults.reset()
      expect(first).toBeInstanceOf(ListingUnverified)
      if (!(first instanceof ListingUnverified)) return
      expect(first.workspaceId).toBe(ws)
      expect(first.message).toMatch(new RegExp(`^the file listing of workspace ${ws} could not be verified complete \\(verification budget exceeded: `))
      expect(first.message.split("\n")).toHaveLength(1)

      // Every file the first run read was copied, unless it was deleted at the source
      // before its turn (the churn deletes at the head).
      const afterFirst = new Set(uidsAt(emu, ws))
      const copiedFirst = readManifest(out).map((l) => l.uid!)
      const s1 = first.summary
      expect(s1.skipped).toBe(0)
      expect(s1.copied).toBe(copiedFirst.length)
      expect(s1.copied + s1.failed + s1.deleted).toBe(s1.files)
      // A file deleted before its turn is said deleted only when a listing verified
      // complete no longer holds it: the listing read to confirm it kept changing too, so
      // such a file is failed, and the line says what those failures are.
      const notFound = s1.failures.filter((f) => f.notFoundAtSource === true)
      expect(notFound.length + s1.deleted).toBeGreaterThan(0)
      for (const f of notFound) expect(f.reason).toMatch(/: not found at the source \(.*\); the listing could not be verified complete to confirm it was deleted \(/)
      expect(first.message).toContain(
        `${s1.failed} failed${notFound.length > 0 ? ` (${notFound.length} of them not found at the source, perhaps deleted meanwhile: no listing verified complete confirms it)` : ""}` +
          `${s1.deleted > 0 ? `, ${s1.deleted} deleted at the source meanwhile` : ""}; rerun with the same journal to copy any it missed${s1.failed > 0 ? " and retry those that failed" : ""}`
      )
      expect(s1.files).toBeGreaterThanOrEqual(FILES - 1)
      const copiedSet = new Set(copiedFirst)
      // Every file that stayed throughout the first run (the stable ones) is copied by it.
      const stable = before.filter((uid) => afterFirst.has(uid))
      // Each list-files page deletes one file: the planning read and the read at the end
      // (confirming files the copy found gone) leave most of them in place.
      expect(stable.length).toBeGreaterThan((FILES * 3) / 4)
      expect(stable.filter((uid) => !copiedSet.has(uid)).slice(0, 5)).toEqual([])

      // The rerun, the listing still: it completes, copying only what the first missed.
      const second = yield* copy
      const manifest = readManifest(out).map((l) => l.uid!)
      expect(new Set(manifest).size).toBe(manifest.length)
      const present = uidsAt(emu, ws)
      const inManifest = new Set(manifest)
      expect(present.filter((uid) => !inManifest.has(uid)).slice(0, 5)).toEqual([])
      expect(second.failed).toBe(0)
      expect(second.copied).toBe(present.filter((uid) => !copiedSet.has(uid)).length)
      expect(second.skipped).toBe(present.length - second.copied)
      if (process.env["COPY_CHURN_REPORT"] !== undefined) {
        console.log(JSON.stringify({
          variant: emu.variant,
          firstRun: { read: s1.files, copied: s1.copied, failed: s1.failed, notFoundAtSource: notFound.length, deleted: s1.deleted, stable: stable.length, stableCopied: stable.filter((u) => copiedSet.has(u)).length },
          secondRun: { files: second.files, copied: second.copied, skipped: second.skipped, failed: second.failed }
        }))
      }
    }), 120_000)
})
