import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { readManifest } from "../../../src/connectors/files/manifest.ts"
import {
  credentialLog,
  downloadSha,
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

// One demo-seeded emulator and client for the file. The copies talk to it over real HTTP
// with real retry waits: the tests run on the live clock (`excludeTestServices`).
layer(emulatorWithClient({ seed: "demo" }), { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("copy-files workspace to dir", () => {
    it.effect("R-FILE-SERVE-01/02/07, R-FILE-STATUS-07: downloads every CONFIRMED file byte for byte, reports PENDING ones, writes safe names and the manifest; a rerun copies nothing", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const client = yield* FilesClient
        const ws = emu.workspaces[0]!
        yield* uploadBytes(client, ws, "../../escape attempt.txt", Buffer.from("stay inside"))
        const out = yield* tempDir()
        const journalFile = path.join(yield* tempDir(), "journal.sqlite")
        const pendingSeen: Array<string> = []
        const summary = yield* runCopy({
          from: { kind: "workspace", workspaceId: ws },
          to: { kind: "dir", path: out },
          source: client.files,
          journalFile,
          reporter: { planned: (p) => pendingSeen.push(...p.pendingSource) }
        })
        const items = yield* listFiles(client, ws)
        const confirmed = items.filter((f) => f.status === "CONFIRMED")
        expect(pendingSeen).toEqual(items.filter((f) => f.status === "PENDING").map((f) => f.name))
        expect(pendingSeen.length).toBeGreaterThan(0)
        expect(summary.failures).toEqual([])
        expect(summary).toMatchObject({ files: confirmed.length, copied: confirmed.length, skipped: 0, failed: 0 })
        expect(summary.bytes).toBe(confirmed.reduce((n, f) => n + f.size, 0))

        const manifest = readManifest(out)
        expect(manifest).toHaveLength(confirmed.length)
        for (const file of confirmed) {
          const line = manifest.find((l) => l.uid === file.uid)!
          expect(line).toMatchObject({ id: file.id, name: file.name, size: file.size })
          const local = path.join(out, line.path)
          expect(path.dirname(local)).toBe(out)
          const bytes = fs.readFileSync(local)
          expect(sha256(bytes)).toBe(line.sha256)
          expect(line.sha256).toBe(yield* storedSha(emu, file.uid))
        }
        const paths = manifest.map((l) => l.path)
        expect(new Set(paths.map((p) => p.toLowerCase())).size).toBe(paths.length)
        expect(paths).toEqual(expect.arrayContaining(["notes.txt", "notes (2).txt", "100% done #1_.csv", "résumé – ünïcödé 日本語.txt", ".._.._escape attempt.txt"]))
        expect(fs.readdirSync(path.dirname(out)).filter((n) => n.includes("escape"))).toEqual([])

        const again = yield* runCopy({
          from: { kind: "workspace", workspaceId: ws },
          to: { kind: "dir", path: out },
          source: client.files,
          journalFile
        })
        expect(again).toMatchObject({ files: confirmed.length, copied: 0, skipped: confirmed.length, failed: 0, bytes: 0 })
        expect(readManifest(out)).toHaveLength(confirmed.length)
        expect(credentialLog(emu)).toEqual([])
      }))
  })

  describe("copy-files dir to workspace", () => {
    it.effect("R-UPLOAD-PRESIGN-11/12/13/16, R-FILE-STATUS-04: uploads 0 B, 1 B, 5 MB and 64 MB files and awkward names byte-identical, CONFIRMED, with no credential at storage", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const client = yield* FilesClient
        const target = emu.workspaces[1]!
        const before = new Set((yield* listFiles(client, target)).map((f) => f.uid))
        const src = yield* tempDir()
        fs.mkdirSync(path.join(src, "sub dir"))
        const files: Record<string, Buffer> = {
          "zero.txt": Buffer.alloc(0),
          "one.bin": Buffer.from([0xff]),
          "five MB.bin": patternBytes("five", 5 * 1024 * 1024),
          "large.bin": patternBytes("large", 64 * 1024 * 1024),
          "sub dir/ünï 100% #2?.txt": Buffer.from("unicode, spaces, percent, hash, question"),
          "Makefile": Buffer.from("all:\n")
        }
        for (const [rel, bytes] of Object.entries(files)) fs.writeFileSync(path.join(src, rel), bytes)

        const summary = yield* runCopy({
          from: { kind: "dir", path: src },
          to: { kind: "workspace", workspaceId: target },
          target: client.files,
          journalFile: path.join(yield* tempDir(), "j.sqlite"),
          concurrency: 3
        })
        expect(summary).toMatchObject({ files: 6, copied: 6, failed: 0 })

        const added = (yield* listFiles(client, target)).filter((f) => !before.has(f.uid))
        expect(added.map((f) => f.name).sort()).toEqual(
          ["zero.txt", "one.bin", "five MB.bin", "large.bin", "sub dir/ünï 100% #2?.txt", "Makefile.bin"].sort()
        )
        for (const file of added) {
          expect(file.status).toBe("CONFIRMED")
          const rel = file.name === "Makefile.bin" ? "Makefile" : file.name
          const expected = files[rel]!
          expect(file.size).toBe(expected.length)
          expect(yield* storedSha(emu, file.uid)).toBe(sha256(expected))
        }
        // The awkward name round-trips through the serving URL too (R-FILE-SERVE-07).
        const awkward = added.find((f) => f.name.startsWith("sub dir/"))!
        expect((yield* downloadSha(client.files, awkward.uid, awkward.name)).sha256).toBe(
          sha256(files["sub dir/ünï 100% #2?.txt"]!)
        )
        expect(credentialLog(emu)).toEqual([])
      }))

    it.effect("R-LIMIT-04, R-UPLOAD-PRESIGN-21: a file over 4.8 GB is refused before any request, naming the file", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const client = yield* FilesClient
        const src = yield* tempDir()
        const big = path.join(src, "huge video.mp4")
        fs.closeSync(fs.openSync(big, "w"))
        fs.truncateSync(big, 5 * 1024 ** 3) // sparse: no disk used
        fs.writeFileSync(path.join(src, "small.txt"), "ok")
        emu.resetStats()
        const summary = yield* runCopy({
          from: { kind: "dir", path: src },
          to: { kind: "workspace", workspaceId: emu.workspaces[1]! },
          target: client.files,
          journalFile: path.join(yield* tempDir(), "j.sqlite")
        })
        expect(summary).toMatchObject({ files: 2, copied: 1, failed: 1 })
        expect(summary.failures[0]!.name).toBe("huge video.mp4")
        expect(summary.failures[0]!.reason).toMatch(/huge video\.mp4.*4\.8 GB/)
        const presigns = Object.entries(emu.stats().byRoute).filter(([r]) => r.includes("/uploads")).reduce((n, [, c]) => n + c, 0)
        // Only the small file's presign and confirm.
        expect(presigns).toBe(2)
      }))
  })
})
