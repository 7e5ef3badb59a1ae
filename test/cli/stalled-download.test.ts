/**
 * copy-files workspace -> dir when storage stalls mid-body: a download that stalls once is
 * retried and every file lands byte-identical; one that always stalls is reported by name
 * and the run still finishes (exit 1, a rerun resumes). `--body-idle-timeout` keeps the
 * stall short; a CLI without an idle timeout would hang and miss the test timeout.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { storageKeyFor } from "../../src/emulator/uploads/files.ts"
import { objectPath } from "../../src/emulator/uploads/signing.ts"
import { type CliResult, runCli, connectionEnv } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"

const QUICK = { timeout: 30_000 }

const wsOf = (emu: EmulatorHandle) => emu.workspaces[0]!

const tmp = () => tempDir("ws-stall-cli-")

const sha = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")
const storedSha = (emu: EmulatorHandle, uid: string) =>
  Effect.promise(async () => {
    const hash = createHash("sha256")
    for await (const chunk of emu.ctx.objects.read(storageKeyFor(uid))) hash.update(chunk as Buffer)
    return hash.digest("hex")
  })

interface Row {
  readonly uid: string
  readonly name: string
  readonly size: number
}
/** The workspace's CONFIRMED files, the largest first (a body to stall in). */
const confirmed = (emu: EmulatorHandle): Array<Row> =>
  emu.ctx.db
    .prepare("SELECT uid, name, size FROM files WHERE workspace_id = ? AND status = 'CONFIRMED' ORDER BY size DESC, uid")
    .all(wsOf(emu)) as Array<Row>
/** The storage route of a file's bytes, to stall that one. */
const storageRoute = (f: Row) => objectPath(storageKeyFor(f.uid))

const copy = (emu: EmulatorHandle, out: string, journal: string): Effect.Effect<CliResult> =>
  Effect.promise(() =>
    runCli(
      ["copy-files", "--from", `workspace:${wsOf(emu)}`, "--to", `dir:${out}`, "--journal", journal, "--body-idle-timeout", "0.3", "--json", "-q"],
      { env: connectionEnv(emu) }
    )
  )

// The CLI runs as a child process against the emulator: real time (`excludeTestServices`).
layer(emulatorLayer({ variant: "reference", seed: "demo" }), { timeout: 30_000, excludeTestServices: true })("copy-files under stalled download bodies", (it) => {
  it.effect("R-FILE-SERVE-02: a download that stalls once is retried; every file lands byte-identical", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const files = confirmed(emu)
      expect(files[0]!.size).toBeGreaterThan(1)
      const dir = yield* tmp()
      const out = path.join(dir, "out")
      emu.faults.inject({ route: storageRoute(files[0]!), kind: "stall-body" })
      const r = yield* copy(emu, out, path.join(dir, "j.sqlite"))
      expect(r.code).toBe(0)
      expect(emu.faults.pending()).toBe(0)
      expect(JSON.parse(r.stdout)).toMatchObject({ failed: 0 })
      const manifest = fs.readFileSync(path.join(out, "manifest.ndjson"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
      for (const f of files) {
        const line = manifest.find((m) => m.uid === f.uid)
        expect(line).toBeDefined()
        const written = fs.readFileSync(path.join(out, line.path))
        expect(written.length).toBe(f.size)
        expect(sha(written)).toBe(yield* storedSha(emu, f.uid))
      }
    }), QUICK)

  it.effect("R-FILE-SERVE-02: a download that always stalls is reported by name; the other files are copied and the run ends (exit 1)", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const files = confirmed(emu)
      const stuck = files[0]!
      const dir = yield* tmp()
      const out = path.join(dir, "out")
      const journal = path.join(dir, "j.sqlite")
      emu.faults.inject({ route: storageRoute(stuck), kind: "stall-body", times: 1000 })
      yield* Effect.gen(function*() {
        const r = yield* copy(emu, out, journal)
        expect(r.code).toBe(1)
        expect(JSON.parse(r.stdout)).toMatchObject({ failed: 1 })
        expect(r.stderr.trim().split("\n")).toEqual([
          `worksync: copy-files: 1 of ${JSON.parse(r.stdout).files} file(s) failed (first: download ${
            JSON.stringify(stuck.name)
          }: the answer stalled: no bytes for 300 ms); rerun with the same --journal to retry them`
        ])
        const manifest = fs.readFileSync(path.join(out, "manifest.ndjson"), "utf8").trim().split("\n").map((l) => JSON.parse(l))
        expect(manifest.map((m) => m.uid).sort()).toEqual(files.slice(1).map((f) => f.uid).sort())
      }).pipe(Effect.ensuring(Effect.sync(() => emu.faults.reset())))
      // Storage serves it again: the rerun copies just that file.
      const again = yield* copy(emu, out, journal)
      expect(again.code).toBe(0)
      expect(JSON.parse(again.stdout)).toMatchObject({ copied: 1, failed: 0 })
    }), QUICK)
})
