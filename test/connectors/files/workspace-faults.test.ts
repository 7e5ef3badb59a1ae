import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import type { WorkspaceFiles } from "../../../src/connectors/files/ports.ts"
import { escapeAttribute, relinkCommentHtml } from "../../../src/connectors/files/relink.ts"
import { fileUidLookup } from "../../../src/connectors/files/uid-map.ts"
import { openJournal } from "../../../src/store/journal.ts"
import {
  type ClientCtx,
  credentialLog,
  Emulator,
  emulatorWithClient,
  FilesClient,
  listFiles,
  patternBytes,
  runCopy,
  sha256,
  storedSha,
  tempDir,
  uploadBytes
} from "./_helpers.ts"

/** CONFIRMED files of a workspace by uid. */
const confirmedOf = (client: ClientCtx, ws: string) =>
  Effect.map(listFiles(client, ws), (files) => files.filter((f) => f.status === "CONFIRMED"))

// One demo-seeded emulator and client for the file. Faults cost real retry waits over real
// HTTP: the tests run on the live clock (`excludeTestServices`).
layer(emulatorWithClient({ seed: "demo" }), { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("copy-files workspace to workspace under faults", () => {
    it.effect("R-UPLOAD-PRESIGN-07/13/14/15, R-FILE-STATUS-04: ambiguous confirms, dropped storage PUTs and a 500 still give exactly one byte-identical CONFIRMED copy per file; the uid map re-links comments", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const client = yield* FilesClient
        const [from, to] = [emu.workspaces[0]!, emu.workspaces[1]!]
        yield* uploadBytes(client, from, "three MB.bin", patternBytes("3mb", 3 * 1024 * 1024))
        const sources = yield* confirmedOf(client, from)
        const before = new Set((yield* confirmedOf(client, to)).map((f) => f.uid))

        emu.faults.inject({ route: /^\/uploads\/[^/]+\/confirm$/, kind: "ambiguous", times: 3 })
        emu.faults.inject({ route: /^\/o\//, kind: "drop", times: 3 })
        emu.faults.inject({ route: "/uploads", kind: "500" })
        const journalFile = path.join(yield* tempDir(), "j.sqlite")
        const summary = yield* runCopy({
          from: { kind: "workspace", workspaceId: from },
          to: { kind: "workspace", workspaceId: to },
          source: client.files,
          target: client.files,
          journalFile,
          concurrency: 4,
          uploadStrategy: "presign"
        })
        expect(emu.faults.pending()).toBe(0)
        expect(summary.failures).toEqual([])
        expect(summary).toMatchObject({ files: sources.length, copied: sources.length, failed: 0 })

        const added = (yield* confirmedOf(client, to)).filter((f) => !before.has(f.uid))
        expect(added).toHaveLength(sources.length)
        const lookup = (yield* Effect.scoped(Effect.flatMap(openJournal(journalFile), fileUidLookup))) as ReadonlyMap<string, string>
        {
          for (const s of sources) {
            const targetUid = lookup.get(s.uid)!
            const copy = added.find((f) => f.uid === targetUid)!
            expect(copy).toMatchObject({ name: s.name, size: s.size, status: "CONFIRMED" })
            expect(yield* storedSha(emu, copy.uid)).toBe(yield* storedSha(emu, s.uid))
          }
          // R-COMMENT-07: an attachment pointing at a source file now points at its copy.
          const s0 = sources[0]!
          const file = JSON.stringify({ uid: s0.uid, name: s0.name, size: s0.size, type: s0.type, extension: s0.extension })
          const html = `<p>x</p><div class="attachment" file="${escapeAttribute(file)}"></div>`
          const relinked = relinkCommentHtml(html, lookup)
          expect(relinked.relinked).toEqual([s0.uid])
          expect(relinked.value).toContain(escapeAttribute(`"uid":"${lookup.get(s0.uid)}"`))
        }
        expect(credentialLog(emu)).toEqual([])

        // A rerun copies nothing.
        const again = yield* runCopy({
          from: { kind: "workspace", workspaceId: from },
          to: { kind: "workspace", workspaceId: to },
          source: client.files,
          target: client.files,
          journalFile
        })
        expect(again).toMatchObject({ copied: 0, skipped: sources.length, failed: 0 })
        expect((yield* confirmedOf(client, to)).filter((f) => !before.has(f.uid))).toHaveLength(sources.length)
      }))

    it.effect("R-UPLOAD-MULTIPART-09/11, R-FILE-STATUS-02: small files go in uploadFiles batches; a batch whose answer is lost is found in the workspace, a failed one falls back to presign: one copy each", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const client = yield* FilesClient
        const from = emu.admin.createWorkspace({ name: "batch source" }).id
        const to = emu.admin.createWorkspace({ name: "batch target" }).id
        const contents = new Map<string, Buffer>()
        for (let i = 0; i < 25; i++) {
          const bytes = patternBytes(`small ${i}`, 1000 + i)
          contents.set(`small ${i}.txt`, bytes)
          yield* uploadBytes(client, from, `small ${i}.txt`, bytes)
        }
        emu.resetStats()
        emu.faults.inject({ route: "/graphql", kind: "ambiguous" })
        emu.faults.inject({ route: "/graphql", kind: "500" })
        const summary = yield* runCopy({
          from: { kind: "workspace", workspaceId: from },
          to: { kind: "workspace", workspaceId: to },
          source: client.files,
          target: client.files,
          journalFile: path.join(yield* tempDir(), "j.sqlite"),
          concurrency: 1
        })
        expect(emu.faults.pending()).toBe(0)
        expect(summary).toMatchObject({ files: 25, copied: 25, failed: 0 })
        const copies = yield* confirmedOf(client, to)
        expect(copies.map((f) => f.name).sort()).toEqual([...contents.keys()].sort())
        for (const c of copies) expect(yield* storedSha(emu, c.uid)).toBe(sha256(contents.get(c.name)!))
        const byRoute = emu.stats().byRoute
        // 3 batches (10, 10, 5): the first lost its answer (adopted), the second failed (presigned), the third went through.
        expect(byRoute["/graphql"]).toBe(3)
        expect(byRoute["/uploads"]).toBe(10)
      }))

    it.effect("R-UPLOAD-MULTIPART-09: a batch whose answer is lost while the workspace cannot be listed stays unknown, says why the check failed, and a rerun settles it: one copy each", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const client = yield* FilesClient
        const to = emu.admin.createWorkspace({ name: "unlistable target" }).id
        const src = yield* tempDir()
        const contents = new Map<string, Buffer>()
        for (let i = 0; i < 3; i++) {
          const bytes = patternBytes(`unlistable ${i}`, 2000 + i)
          contents.set(`unlistable ${i}.txt`, bytes)
          fs.writeFileSync(path.join(src, `unlistable ${i}.txt`), bytes)
        }
        const journalFile = path.join(yield* tempDir(), "j.sqlite")
        const copy = () =>
          runCopy({ from: { kind: "dir", path: src }, to: { kind: "workspace", workspaceId: to }, target: client.files, journalFile, concurrency: 1 })
        // The batch lands but its answer is lost; listing the target then keeps failing.
        emu.faults.inject({ route: "/graphql", kind: "ambiguous" })
        emu.faults.inject({ route: "list-files", kind: "500", times: 50 })
        const first = yield* copy()
        emu.faults.reset()
        expect(first).toMatchObject({ files: 3, copied: 0, failed: 3 })
        for (const f of first.failures) {
          expect(f.reason).toMatch(/outcome unknown .*checking what landed failed: .*500/)
        }
        // Nothing was sent twice: the rerun finds the batch's files instead of uploading again.
        const again = yield* copy()
        expect(again).toMatchObject({ copied: 3, failed: 0 })
        const copies = yield* confirmedOf(client, to)
        expect(copies.map((f) => f.name).sort()).toEqual([...contents.keys()].sort())
        for (const c of copies) expect(yield* storedSha(emu, c.uid)).toBe(sha256(contents.get(c.name)!))
      }))

    it.effect("R-FILE-STATUS-05: a confirm answering 400 (stored size differs from declared) leads to a fresh upload", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const client = yield* FilesClient
        const to = emu.workspaces[1]!
        const src = yield* tempDir()
        const bytes = patternBytes("mismatch", 100_000)
        fs.writeFileSync(path.join(src, "mismatch.bin"), bytes)
        let presigns = 0
        // The first presign declares one byte too many, so storage holds fewer bytes than declared.
        const skewed: WorkspaceFiles = {
          ...client.files,
          presign: (ws, name, size) => client.files.presign(ws, name, presigns++ === 0 ? size + 1 : size)
        }
        let retried = ""
        const before = new Set((yield* confirmedOf(client, to)).map((f) => f.uid))
        const summary = yield* runCopy({
          from: { kind: "dir", path: src },
          to: { kind: "workspace", workspaceId: to },
          target: skewed,
          journalFile: path.join(yield* tempDir(), "j.sqlite"),
          reporter: { retrying: (_name, reason) => (retried = reason) }
        })
        expect(summary).toMatchObject({ copied: 1, failed: 0 })
        expect(presigns).toBe(2)
        expect(retried).toMatch(/400|size/i)
        const added = (yield* confirmedOf(client, to)).filter((f) => !before.has(f.uid))
        expect(added.map((f) => [f.name, f.size])).toEqual([["mismatch.bin", bytes.length]])
        expect(yield* storedSha(emu, added[0]!.uid)).toBe(sha256(bytes))
      }))

    it.effect("R-UPLOAD-PRESIGN-07: a storage PUT that keeps being dropped is sent again with a fresh presign", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const client = yield* FilesClient
        const to = emu.workspaces[1]!
        const src = yield* tempDir()
        const bytes = patternBytes("dropped", 300_000)
        fs.writeFileSync(path.join(src, "dropped.bin"), bytes)
        let presigns = 0
        const counting: WorkspaceFiles = {
          ...client.files,
          presign: (ws, name, size) => {
            presigns++
            return client.files.presign(ws, name, size)
          }
        }
        const before = new Set((yield* confirmedOf(client, to)).map((f) => f.uid))
        // A presigned URL is single-use: every dropped PUT costs a fresh presign.
        emu.faults.inject({ route: /^\/o\//, kind: "drop", times: 3 })
        const summary = yield* runCopy({
          from: { kind: "dir", path: src },
          to: { kind: "workspace", workspaceId: to },
          target: counting,
          journalFile: path.join(yield* tempDir(), "j.sqlite")
        })
        expect(emu.faults.pending()).toBe(0)
        expect(summary).toMatchObject({ copied: 1, failed: 0 })
        expect(presigns).toBe(4)
        const added = (yield* confirmedOf(client, to)).filter((f) => !before.has(f.uid))
        expect(added).toHaveLength(1)
        expect(yield* storedSha(emu, added[0]!.uid)).toBe(sha256(bytes))
        expect(credentialLog(emu)).toEqual([])
      }))
  })
})
