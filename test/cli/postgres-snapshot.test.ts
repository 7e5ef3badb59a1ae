/**
 * `--snapshot postgres://...`: backup, diff, export and restore through the real binary
 * with the snapshot in a PostgreSQL schema, compared with the same commands on a SQLite
 * file against the same service state. The two backends must give the same answers.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { connectionEnv } from "../support/cli.ts"
import { freshSchema } from "../support/postgres.ts"
import { cli, WorkDir, workDirLayer } from "./cli-effect.ts"

const deleteRecord = (emu: EmulatorHandle, workspaceId: string, recordId: string) =>
  Effect.promise(() =>
    fetch(`${emu.restUrl}/v1/delete-record`, {
      method: "POST",
      headers: { authorization: `Bearer ${emu.token}`, "content-type": "application/json" },
      body: JSON.stringify({ workspaceId, recordId })
    })
  )

const liveIds = (emu: EmulatorHandle, workspaceId: string) =>
  emu.ctx.db.prepare("SELECT id FROM records WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY id").pluck().all(workspaceId) as Array<string>

layer(Layer.merge(emulatorLayer({ seed: "demo" }), workDirLayer("ws-cli-pg-")), { timeout: 60_000, excludeTestServices: true })(
  "worksync with the snapshot on PostgreSQL",
  (it) => {
    it.effect("backup, diff and export answer the same on PostgreSQL as on a SQLite file", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const dir = yield* WorkDir
        const pg = yield* freshSchema
        const file = path.join(dir, "same.sqlite")
        const both = (args: (snapshot: string) => ReadonlyArray<string>) =>
          Effect.all([cli(args(file), { env: connectionEnv(emu) }), cli(args(pg), { env: connectionEnv(emu) })])

        const [f1, p1] = yield* both((s) => ["backup", "--snapshot", s, "--json"])
        expect(p1.code, p1.stderr).toBe(0)
        expect(JSON.parse(p1.stdout)).toEqual(JSON.parse(f1.stdout))

        const ws = emu.workspaces[0]!
        const victim = liveIds(emu, ws)[0]!
        expect((yield* deleteRecord(emu, ws, victim)).status).toBe(200)
        const [f2, p2] = yield* both((s) => ["backup", "--snapshot", s, "--json"])
        expect(p2.code, p2.stderr).toBe(0)
        expect(JSON.parse(p2.stdout)).toEqual(JSON.parse(f2.stdout))
        expect(JSON.parse(p2.stdout)).toMatchObject({ runId: "2", changes: { created: 0, updated: 0, deleted: 1 } })

        const [fd, pd] = yield* both((s) => ["diff", "--snapshot", s, "--json"])
        expect(pd.code, pd.stderr).toBe(0)
        expect(JSON.parse(pd.stdout)).toEqual(JSON.parse(fd.stdout))
        expect(JSON.parse(pd.stdout).records.deleted).toEqual([victim])

        for (const format of ["ndjson", "csv"]) {
          const fOut = path.join(dir, `file-${format}`)
          const pOut = path.join(dir, `pg-${format}`)
          const [fe, pe] = yield* Effect.all([
            cli(["export", "--snapshot", file, "--out", fOut, "--format", format, "--run", "1"]),
            cli(["export", "--snapshot", pg, "--out", pOut, "--format", format, "--run", "1"])
          ])
          expect(fe.code).toBe(0)
          expect(pe.code, pe.stderr).toBe(0)
          for (const name of ["records", "activity", "files", "workspaces"]) {
            const a = fs.readFileSync(path.join(fOut, `${name}.${format}`), "utf8")
            expect(a.length).toBeGreaterThan(0)
            expect(fs.readFileSync(path.join(pOut, `${name}.${format}`), "utf8")).toBe(a)
          }
        }
      }))

    it.effect("restore reads its run from PostgreSQL and brings a deleted record back", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const dir = yield* WorkDir
        const pg = yield* freshSchema
        const ws = emu.workspaces[1]!
        const backup = yield* cli(["backup", "--snapshot", pg, "--workspace", ws, "--json"], { env: connectionEnv(emu) })
        expect(backup.code, backup.stderr).toBe(0)
        const before = liveIds(emu, ws)
        const victim = before[before.length - 1]!
        expect((yield* deleteRecord(emu, ws, victim)).status).toBe(200)
        const restore = yield* cli(
          ["restore", "--snapshot", pg, "--to", `workspace:${ws}`, "--journal", path.join(dir, "restore.sqlite"), "--json"],
          { env: connectionEnv(emu) }
        )
        expect(restore.code, restore.stderr).toBe(0)
        expect(liveIds(emu, ws)).toHaveLength(before.length)
      }))

    it.effect("an empty schema is no snapshot for readers, and a password never reaches output", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const pg = yield* freshSchema
        const diff = yield* cli(["diff", "--snapshot", pg, "--json"])
        expect(diff.code).toBe(64)
        expect(diff.stderr.trim().split("\n")).toHaveLength(1)
        expect(diff.stderr).toMatch(/no snapshot in that database schema; run worksync backup first/)

        const secret = "hunter2-must-never-leak"
        const url = new URL(pg)
        url.username = "nobody"
        url.password = secret
        const denied = yield* cli(["backup", "--snapshot", url.toString(), "--json"], { env: connectionEnv(emu) })
        expect(denied.code).toBe(1)
        expect(denied.stdout).toBe("")
        // One line says what failed (a progress line may precede it).
        expect(denied.stderr.split("\n").filter((l) => l.startsWith("worksync:"))).toHaveLength(1)
        expect(denied.stderr).toContain("nobody:***@")
        expect(denied.stderr + denied.stdout).not.toContain(secret)
      }))
  }
)
