/**
 * import-csv: a create whose answer is lost is reconciled by title, and the record taken
 * (adopted) is reported: `adopted` in --json, one line with --verbose. The adoption window
 * is a flag.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"

const BIN = "bin/worksync.js"

const run = (handle: EmulatorHandle, args: ReadonlyArray<string>) =>
  Effect.promise(() => new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, WORKSYNC_REST_URL: handle.restUrl, WORKSYNC_TOKEN: handle.token, WORKSYNC_ORG: handle.org },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code) => resolve({ code, stdout, stderr }))
  }))

const titles = (handle: EmulatorHandle, ws: string) =>
  (handle.ctx.db.prepare("SELECT id, title FROM records WHERE workspace_id = ? AND deleted_at IS NULL").all(ws) as Array<{ id: string; title: string }>)

// The CLI runs as a child process against the emulator: real time, so the layer's tests
// run on the live clock (`excludeTestServices`).
layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("import-csv: adoptions reported", (it) => {
  it.effect("a create that committed but lost its answer: the record is adopted once, listed in --json and in a --verbose line", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "adopt" }).id
      const dir = yield* tempDir("ws-adopt-cli-")
      const csv = path.join(dir, "in.csv")
      fs.writeFileSync(csv, "title\nFirst task\nSecond task\n")
      handle.faults.inject({ route: "create-record", kind: "ambiguous" })
      const r = yield* run(handle, ["import-csv", "--workspace", ws, "--csv", csv, "--journal", path.join(dir, "j.sqlite"), "--adoption-window", "60", "--json", "--verbose"])
      handle.faults.reset()
      expect(r.code).toBe(0)
      const out = JSON.parse(r.stdout)
      expect(out).toMatchObject({ rows: 2, created: 2, rejected: 0 })
      const records = titles(handle, ws)
      expect(records.map((x) => x.title).sort()).toEqual(["First task", "Second task"])
      expect(out.adopted).toHaveLength(1)
      const [adopted] = out.adopted as Array<{ key: string; recordId: string; found: string }>
      expect(records.map((x) => x.id)).toContain(adopted!.recordId)
      expect(r.stderr).toContain(`import: adopted record ${adopted!.recordId} for ${adopted!.key} (found by ${adopted!.found})`)
    }))

  it.effect("--adoption-window must be 0 or more seconds: exit 64, one line", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "adopt bad" }).id
      const dir = yield* tempDir("ws-adopt-cli-")
      const csv = path.join(dir, "in.csv")
      fs.writeFileSync(csv, "title\nOne\n")
      const r = yield* run(handle, ["import-csv", "--workspace", ws, "--csv", csv, "--journal", path.join(dir, "j.sqlite"), "--adoption-window=-5"])
      expect(r.code).toBe(64)
      expect(r.stderr).toContain("--adoption-window -5: must be 0 or more seconds")
    }))
})
