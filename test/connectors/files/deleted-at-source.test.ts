/**
 * copy-files when source files are deleted during the copy (the contract: reported, not
 * counted as failed). The emulator deletes them as the copy's own download requests
 * arrive (file-deletes.ts), so where the deletion falls depends on the copy's progress,
 * never on a clock. A file is only said deleted when one fresh listing, read at the end,
 * no longer holds it: a download that answers 404 for a file still listed stays failed.
 */
import { describe, expect, it, layer } from "@effect/vitest"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { CopyReporter } from "../../../src/connectors/files/copy.ts"
import { readManifest } from "../../../src/connectors/files/manifest.ts"
import { saysNotThere } from "../../../src/connectors/files/source.ts"
import { UnexpectedStatus, UploadRejected } from "../../../src/client/errors.ts"
import type { EmulatorHandle } from "../../../src/emulator/index.ts"
import { storageKeyFor } from "../../../src/emulator/uploads/files.ts"
import { isDiskObjectStore } from "../../../src/emulator/uploads/object-store.ts"
import { Emulator, emulatorWithClient, FilesClient, runCopy, seedConfirmedFiles, tempDir } from "./_helpers.ts"

interface OpRow {
  readonly key: string
  readonly state: string
  readonly result: string | null
  readonly error: string | null
}
const opsOf = (journalFile: string): Array<OpRow> => {
  const db = new Database(journalFile, { readonly: true })
  try {
    return db.prepare("SELECT key, state, result, error FROM ops WHERE kind = 'file.copy' ORDER BY key").all() as Array<OpRow>
  } finally {
    db.close()
  }
}
const opOf = (journalFile: string, uid: string): OpRow => opsOf(journalFile).find((op) => op.key.endsWith(`:uid:${uid}`))!

const listFilesCalls = (emu: EmulatorHandle): number => emu.stats().byRoute["list-files"] ?? 0

/** A workspace of its own holding `n` small CONFIRMED files f0.txt...; their uids. */
const workspaceWith = (emu: EmulatorHandle, n: number) => {
  const ws = emu.admin.createWorkspace({ name: `deleted at source ${Math.random()}` }).id
  return { ws, uids: seedConfirmedFiles(emu, ws, n) }
}

// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorWithClient({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("copy-files: source files deleted during the copy", (it) => {
  it.effect("R-FILE-SERVE-01: files deleted while a workspace is copied to a directory (answered 404 by the serving URL, or by storage after the redirect) are reported deleted, done in the journal, not failed; one fresh listing confirms them; a rerun does nothing", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const client = yield* FilesClient
      const { uids, ws } = workspaceWith(emu, 6)
      const [, b, c, , e] = uids as [string, string, string, string, string, string]
      // When the first download reaches the serving URL, f1 and f2 are deleted (whichever
      // file it is: the deletion comes before its answer); f4 is deleted when its own
      // download reaches storage, after the serving URL redirected it.
      emu.faults.fileDeletes.script({ on: "serve", uids: [b, c] })
      emu.faults.fileDeletes.script({ on: "storage", uid: e, uids: [e] })
      const out = yield* tempDir()
      const journalFile = path.join(yield* tempDir(), "j.sqlite")
      const copy = runCopy({ from: { kind: "workspace", workspaceId: ws }, to: { kind: "dir", path: out }, source: client.files, journalFile, concurrency: 2 })

      const reported: Array<string> = []
      const failedLines: Array<string> = []
      const listsBefore = listFilesCalls(emu)
      const first = yield* runCopy({
        from: { kind: "workspace", workspaceId: ws },
        to: { kind: "dir", path: out },
        source: client.files,
        journalFile,
        concurrency: 2,
        reporter: { fileDeleted: (name) => reported.push(name), fileFailed: (name) => failedLines.push(name) }
      })
      const firstLists = listFilesCalls(emu) - listsBefore
      expect(emu.faults.fileDeletes.size).toBe(0)
      expect(first.failures).toEqual([])
      expect(first).toMatchObject({ files: 6, copied: 3, skipped: 0, failed: 0, deleted: 3 })
      expect([...first.deletedAtSource].sort()).toEqual(["f1.txt", "f2.txt", "f4.txt"])
      expect(reported.sort()).toEqual(["f1.txt", "f2.txt", "f4.txt"])
      expect(failedLines).toEqual([])
      expect(readManifest(out).map((l) => l.name).sort()).toEqual(["f0.txt", "f3.txt", "f5.txt"])
      for (const uid of [b, c, e]) {
        const op = opOf(journalFile, uid)
        expect(op.state).toBe("done")
        expect(JSON.parse(op.result!)).toMatchObject({ deletedAtSource: true, detail: expect.stringMatching(/not found at the source/) })
      }

      // The rerun: nothing to copy, nothing deleted again, nothing failed.
      const listsBeforeRerun = listFilesCalls(emu)
      const again = yield* copy
      const rerunLists = listFilesCalls(emu) - listsBeforeRerun
      expect(again).toMatchObject({ files: 3, copied: 0, skipped: 3, failed: 0, deleted: 0 })
      // The first run read the listing twice (its plan, then one read for all three
      // deleted files); the rerun, with nothing to confirm, once.
      expect(firstLists).toBe(2 * rerunLists)
    }))

  it.effect("R-FILE-SERVE-01: a file whose download answers 404 but which is still listed stays failed (the object lost by storage), and a rerun retries it", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const client = yield* FilesClient
      const { uids, ws } = workspaceWith(emu, 3)
      const lost = uids[1]!
      const bytes = Buffer.from("file 1\n")
      emu.faults.fileDeletes.script({ on: "serve", uid: lost, uids: [lost], what: "object" })
      const out = yield* tempDir()
      const journalFile = path.join(yield* tempDir(), "j.sqlite")
      const copy = runCopy({ from: { kind: "workspace", workspaceId: ws }, to: { kind: "dir", path: out }, source: client.files, journalFile })

      const first = yield* copy
      expect(first).toMatchObject({ files: 3, copied: 2, failed: 1, deleted: 0, deletedAtSource: [] })
      expect(first.failures).toEqual([
        { name: "f1.txt", reason: expect.stringMatching(/^f1\.txt: not found at the source \(.*404.*\); the file is still listed at the source$/) }
      ])
      expect(opOf(journalFile, lost).state).toBe("failed")

      // Storage has the object again: the rerun retries the file and copies it.
      const store = emu.ctx.objects
      if (!isDiskObjectStore(store)) throw new Error("the emulator's object store is not on disk")
      store.putBytes(storageKeyFor(lost), bytes)
      const again = yield* copy
      expect(again).toMatchObject({ files: 3, copied: 1, skipped: 2, failed: 0, deleted: 0 })
      expect(fs.readFileSync(path.join(out, "f1.txt"), "utf8")).toBe("file 1\n")
    }))

  for (const uploadStrategy of ["auto", "presign"] as const) {
    it.effect(`R-UPLOAD-PRESIGN-07: workspace to workspace (${uploadStrategy === "auto" ? "uploadFiles batches" : "presigned uploads"}): a file deleted during the copy is reported deleted, not failed, and not uploaded; a rerun does nothing`, () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const client = yield* FilesClient
        const { uids, ws } = workspaceWith(emu, 4)
        const target = emu.admin.createWorkspace({ name: `deleted at source target ${uploadStrategy}` }).id
        emu.faults.fileDeletes.script({ on: "serve", uids: [uids[2]!] })
        const journalFile = path.join(yield* tempDir(), "j.sqlite")
        const copy = runCopy({
          from: { kind: "workspace", workspaceId: ws },
          to: { kind: "workspace", workspaceId: target },
          source: client.files,
          target: client.files,
          journalFile,
          uploadStrategy
        })
        const first = yield* copy
        expect(first.failures).toEqual([])
        expect(first).toMatchObject({ files: 4, copied: 3, failed: 0, deleted: 1, deletedAtSource: ["f2.txt"] })
        const copies = emu.ctx.db.prepare("SELECT name FROM files WHERE workspace_id = ? AND status = 'CONFIRMED'").pluck().all(target)
        expect((copies as Array<string>).sort()).toEqual(["f0.txt", "f1.txt", "f3.txt"])
        // Its upload was not tried again and again: at most one presign, left PENDING.
        const pending = emu.ctx.db.prepare("SELECT count(*) FROM files WHERE workspace_id = ? AND status = 'PENDING'").pluck().get(target)
        expect(pending).toBeLessThanOrEqual(1)
        const again = yield* copy
        expect(again).toMatchObject({ files: 3, copied: 0, skipped: 3, failed: 0, deleted: 0 })
      }))
  }

  it.effect("a directory's file removed from disk during the copy is reported deleted, not failed; a rerun does nothing", () =>
    Effect.gen(function*() {
      const src = yield* tempDir()
      for (const name of ["a.txt", "b.txt", "c.txt"]) fs.writeFileSync(path.join(src, name), name)
      const out = yield* tempDir()
      const journalFile = path.join(yield* tempDir(), "j.sqlite")
      const copy = (reporter: CopyReporter = {}) => runCopy({ from: { kind: "dir", path: src }, to: { kind: "dir", path: out }, journalFile, concurrency: 1, reporter })
      // Files go in path order, one at a time: c.txt is removed once a.txt is copied.
      const first = yield* copy({ fileDone: (name) => name === "a.txt" && fs.rmSync(path.join(src, "c.txt")) })
      expect(first.failures).toEqual([])
      expect(first).toMatchObject({ files: 3, copied: 2, failed: 0, deleted: 1, deletedAtSource: ["c.txt"] })
      expect(fs.readdirSync(out).sort()).toEqual(["a.txt", "b.txt", "manifest.ndjson"])
      const again = yield* copy()
      expect(again).toMatchObject({ files: 2, copied: 0, skipped: 2, failed: 0, deleted: 0 })
    }))
})

describe("what a download's failure says", () => {
  it("the download answers that may say a file is not there, whatever the service's reading: 404 and 410 from the serving URL, 404 (or 403) from storage; not a 400 or a 5xx", () => {
    const rejected = (status: number) => new UploadRejected({ operation: "download \"x\"", status, code: null, detail: "" })
    const unexpected = (status: number) => new UnexpectedStatus({ operation: "download \"x\"", status, detail: "" })
    expect([rejected(404), rejected(403), unexpected(410)].map(saysNotThere)).toEqual([true, true, true])
    expect([rejected(400), rejected(401), unexpected(500), unexpected(302)].map(saysNotThere)).toEqual([false, false, false, false])
  })
})
