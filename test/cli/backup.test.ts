/**
 * `worksync backup`, `diff` and `export` as cron and scripts run them: the real binary
 * against an emulator, asserting stdout JSON, the stderr line and the exit code.
 */
import { parse } from "csv-parse/sync"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { spawn } from "node:child_process"
import Database from "better-sqlite3"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { connectionEnv } from "../support/cli.ts"
import { cli, WorkDir, workDirLayer } from "./cli-effect.ts"

const liveCount = (emu: EmulatorHandle) => emu.ctx.db.prepare("SELECT count(*) FROM records WHERE deleted_at IS NULL").pluck().get() as number

// The CLI runs as a child process against the emulator: real time, so the layer's tests
// run on the live clock (`excludeTestServices`). The directory is shared: later tests read
// the snapshot the first one wrote.
layer(Layer.merge(emulatorLayer({ seed: "demo" }), workDirLayer("ws-cli-backup-")), { timeout: 30_000, excludeTestServices: true })("worksync backup / diff / export", (it) => {
  it.effect("backup --json prints the contract object; a second run reports the changes; diff and export read the snapshot", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* WorkDir
      const snapshot = path.join(dir, "main.sqlite")
      const first = yield* cli(["backup", "--snapshot", snapshot, "--json"], { env: connectionEnv(emu) })
      expect(first.code).toBe(0)
      const r1 = JSON.parse(first.stdout)
      expect(Object.keys(r1).sort()).toEqual(["activities", "changes", "files", "records", "runId", "workspaces"])
      expect(r1).toMatchObject({ workspaces: 2, records: liveCount(emu), changes: { created: liveCount(emu), updated: 0, deleted: 0 } })
      expect(typeof r1.runId).toBe("string")
      expect(first.stderr).toMatch(/backup: run 1 complete/)
      expect(fs.statSync(snapshot).mode & 0o777).toBe(0o600)

      // One record deleted through the service, then a second run and a diff.
      const ws = emu.workspaces[0]!
      const victim = emu.ctx.db.prepare("SELECT id FROM records WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY id LIMIT 1").pluck().get(ws) as string
      const del = yield* Effect.promise(() => fetch(`${emu.restUrl}/v1/delete-record`, {
        method: "POST",
        headers: { authorization: `Bearer ${emu.token}`, "content-type": "application/json" },
        body: JSON.stringify({ workspaceId: ws, recordId: victim })
      }))
      expect(del.status).toBe(200)
      const second = yield* cli(["backup", "--snapshot", snapshot, "--json"], { env: connectionEnv(emu) })
      expect(second.code).toBe(0)
      expect(JSON.parse(second.stdout)).toMatchObject({ runId: "2", changes: { created: 0, updated: 0, deleted: 1 } })

      const d = yield* cli(["diff", "--snapshot", snapshot, "--json"])
      expect(d.code).toBe(0)
      expect(JSON.parse(d.stdout)).toEqual({
        records: { created: [], updated: [], deleted: [victim] },
        files: { created: [], updated: [], deleted: [] }
      })
      const explicit = yield* cli(["diff", "--snapshot", snapshot, "--from", "2", "--to", "2", "--json"])
      expect(JSON.parse(explicit.stdout).records).toEqual({ created: [], updated: [], deleted: [] })

      const out = path.join(dir, "out")
      const ex = yield* cli(["export", "--snapshot", snapshot, "--out", out, "--format", "csv", "--run", "1"])
      expect(ex.code).toBe(0)
      expect(ex.stdout).toBe("")
      const rows = parse(fs.readFileSync(path.join(out, "records.csv")), { columns: true }) as Array<Record<string, string>>
      expect(rows).toHaveLength(r1.records)
      expect(rows.some((r) => r.id === victim)).toBe(true)
      const nd = yield* cli(["export", "--snapshot", snapshot, "--out", path.join(dir, "nd")])
      expect(nd.code).toBe(0)
      const lines = fs.readFileSync(path.join(dir, "nd", "records.ndjson"), "utf8").trimEnd().split("\n").map((l) => JSON.parse(l))
      expect(lines).toHaveLength(r1.records - 1)
      expect(lines.every((l) => typeof l.workspaceId === "string" && typeof l.commentCount === "number")).toBe(true)
      for (const name of ["activity", "files", "workspaces"]) expect(fs.existsSync(path.join(dir, "nd", `${name}.ndjson`))).toBe(true)
    }), 120_000)

  it.effect("a token never reaches output or the snapshot, even when the service rejects it", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* WorkDir
      const snapshot = path.join(dir, "bad-token.sqlite")
      const token = "pat_this-token-must-never-leak-0123456789"
      const r = yield* cli(["backup", "--snapshot", snapshot, "--json"], { env: { ...connectionEnv(emu), WORKSYNC_TOKEN: token } })
      expect(r.code).toBe(1)
      expect(r.stdout).toBe("")
      expect(r.stderr).toMatch(/HTTP 401/)
      expect(r.stderr.trim().split("\n").filter((l) => l.startsWith("worksync:"))).toHaveLength(1)
      expect(r.stderr).not.toContain(token)
      const files = fs.readdirSync(dir).filter((f) => f.startsWith("bad-token"))
      for (const f of files) expect(fs.readFileSync(path.join(dir, f)).includes(Buffer.from(token))).toBe(false)
    }))

  it.effect("exit 64 with one clear line: missing snapshot, unknown run, unknown workspace", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* WorkDir
      const missing = yield* cli(["diff", "--snapshot", path.join(dir, "nope.sqlite"), "--json"])
      expect(missing.code).toBe(64)
      expect(missing.stderr).toMatch(/--snapshot: file not found: .*nope\.sqlite; run worksync backup first/)
      expect(fs.existsSync(path.join(dir, "nope.sqlite"))).toBe(false)

      const snapshot = path.join(dir, "main.sqlite")
      const run = yield* cli(["export", "--snapshot", snapshot, "--out", path.join(dir, "x"), "--run", "99"])
      expect(run.code).toBe(64)
      expect(run.stderr).toMatch(/run 99 does not exist/)

      const ws = yield* cli(["backup", "--snapshot", snapshot, "--workspace", "no-such-workspace"], { env: connectionEnv(emu) })
      expect(ws.code).toBe(64)
      expect(ws.stderr).toMatch(/--workspace no-such-workspace/)
      expect(ws.stderr).not.toMatch(/\n\s+at /)
    }))

  it.effect("SIGINT during a backup: exit 130, the run is marked failed (interrupted), nothing deleted; the next run completes", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* WorkDir
      const snapshot = path.join(dir, "interrupted.sqlite")
      const first = yield* cli(["backup", "--snapshot", snapshot, "--json"], { env: connectionEnv(emu) })
      expect(first.code).toBe(0)
      // get-record answers slowly, so the second run (--full: every record needs one) is
      // surely mid-way when interrupted.
      emu.faults.inject({ route: "get-record", kind: "latency", latencyMs: 2000, times: 1000 })
      const child = spawn(process.execPath, ["bin/worksync.js", "backup", "--snapshot", snapshot, "--full", "--json"], {
        env: { ...process.env, ...connectionEnv(emu) },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stderr = ""
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
      // Interrupt once the second run has started.
      for (let i = 0; i < 200; i++) {
        yield* Effect.sleep("50 millis")
        const db = new Database(snapshot, { readonly: true })
        const started = db.prepare("SELECT count(*) FROM runs WHERE id = 2").pluck().get() as number
        db.close()
        if (started > 0) break
      }
      yield* Effect.sleep("300 millis")
      child.kill("SIGINT")
      const code = yield* Effect.promise(() => new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c))))
      emu.faults.reset()
      expect(code).toBe(130)
      expect(stderr).toMatch(/interrupted/)
      const db = new Database(snapshot, { readonly: true })
      const runs = db.prepare("SELECT id, status, error FROM runs ORDER BY id").all()
      db.close()
      expect(runs).toEqual([
        { id: 1, status: "complete", error: null },
        { id: 2, status: "failed", error: "interrupted" }
      ])
      const d = yield* cli(["diff", "--snapshot", snapshot, "--json"])
      expect(JSON.parse(d.stdout).records.deleted).toEqual([])
      const next = yield* cli(["backup", "--snapshot", snapshot, "--json"], { env: connectionEnv(emu) })
      expect(next.code).toBe(0)
      expect(JSON.parse(next.stdout)).toMatchObject({ runId: "3", changes: { deleted: 0 } })
    }))
})
