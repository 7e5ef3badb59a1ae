/**
 * One contract, every pair of endpoints (as one conformance suite runs over every
 * backend): whatever the source and the target, a copy carries every file byte for
 * byte under its name, and a rerun with the same journal copies nothing.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import type { Endpoint } from "../../../src/connectors/files/spec.ts"
import { downloadSha, Emulator, emulatorWithClient, FilesClient, listFiles, runCopy, sha256, tempDir, uploadBytes } from "./_helpers.ts"

const FILES: Record<string, Buffer> = {
  "notes.txt": Buffer.from("plain text\n"),
  "one byte.bin": Buffer.from([7]),
  "naïve 100%.md": Buffer.from("# unicode and percent\n"),
  "block.dat": Buffer.alloc(70_000, 3)
}
const expected = Object.fromEntries(Object.entries(FILES).map(([name, bytes]) => [name, sha256(bytes)]))

type Kind = "dir" | "workspace"
const PAIRS: ReadonlyArray<readonly [Kind, Kind]> = [["dir", "dir"], ["dir", "workspace"], ["workspace", "dir"], ["workspace", "workspace"]]

// Copies talk real HTTP and write real files: the real clock (no TestClock).
layer(emulatorWithClient({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("copy-files: one contract over every pair of endpoints", (it) => {
  /** A fresh endpoint of `kind` holding FILES (a source) or nothing (a target). */
  const endpoint = (kind: Kind, filled: boolean) =>
    Effect.gen(function*() {
      if (kind === "dir") {
        const dir = yield* tempDir("ws-endpoints-")
        if (filled) for (const [name, bytes] of Object.entries(FILES)) fs.writeFileSync(path.join(dir, name), bytes)
        return { kind: "dir", path: dir } satisfies Endpoint
      }
      const emu = yield* Emulator
      const client = yield* FilesClient
      const workspaceId = emu.admin.createWorkspace({ name: filled ? "endpoints source" : "endpoints target" }).id
      if (filled) for (const [name, bytes] of Object.entries(FILES)) yield* uploadBytes(client, workspaceId, name, bytes)
      return { kind: "workspace", workspaceId } satisfies Endpoint
    })

  /** What an endpoint holds: name -> sha256 (a directory's manifest is the copy's own record). */
  const contents = (end: Endpoint) =>
    Effect.gen(function*() {
      if (end.kind === "dir") {
        return Object.fromEntries(
          fs.readdirSync(end.path).filter((n) => n !== "manifest.ndjson").map((n) => [n, sha256(fs.readFileSync(path.join(end.path, n)))])
        )
      }
      const client = yield* FilesClient
      const out: Record<string, string> = {}
      for (const f of yield* listFiles(client, end.workspaceId)) out[f.name] = (yield* downloadSha(client.files, f.uid, f.name)).sha256
      return out
    })

  for (const [from, to] of PAIRS) {
    it.effect(`${from} -> ${to}: every file byte for byte under its name; a rerun copies nothing`, () =>
      Effect.gen(function*() {
        const client = yield* FilesClient
        const source = yield* endpoint(from, true)
        const target = yield* endpoint(to, false)
        const journalFile = path.join(yield* tempDir("ws-endpoints-journal-"), "j.sqlite")
        const ports = { source: client.files, target: client.files }
        const first = yield* runCopy({ from: source, to: target, ...ports, journalFile, concurrency: 2 })
        expect(first).toMatchObject({ files: 4, copied: 4, failed: 0 })
        expect(yield* contents(target)).toEqual(expected)
        const again = yield* runCopy({ from: source, to: target, ...ports, journalFile, concurrency: 2 })
        expect(again).toMatchObject({ files: 4, copied: 0, skipped: 4, failed: 0 })
        expect(yield* contents(target)).toEqual(expected)
      }))
  }
})
