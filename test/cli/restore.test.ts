/**
 * `worksync restore` per the contract: in place after deletions and edits (nothing
 * duplicated), single records, another account, dry run, rerun, --delete-missing.
 */
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { Readable } from "node:stream"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { insertList } from "../../src/emulator/core/lists.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { deleteFile, insertFile, storageKeyFor } from "../../src/emulator/uploads/files.ts"
import { connectionEnv, runCli } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"

const BIN = new URL("../../bin/worksync.js", import.meta.url).pathname
const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex")

/** A CONFIRMED file holding `bytes`, stored as the service stores an upload. */
const seedFile = async (handle: EmulatorHandle, workspaceId: string, name: string, bytes: Buffer) => {
  const row = insertFile(handle.ctx, {
    name,
    size: bytes.length,
    type: "application/octet-stream",
    extension: path.extname(name).slice(1) || "bin",
    orgId: handle.org,
    workspaceId,
    status: "CONFIRMED"
  })
  await handle.ctx.objects.put(storageKeyFor(row.uid), Readable.from([bytes]))
  return row
}

/** The bytes the service holds for a file. */
const storedBytes = async (handle: EmulatorHandle, uid: string) => {
  const parts: Array<Buffer> = []
  for await (const chunk of handle.ctx.objects.read(storageKeyFor(uid))) parts.push(chunk as Buffer)
  return Buffer.concat(parts)
}

/** Upload confirms the service answered (`PUT /uploads/{uid}/confirm`). */
const confirms = (handle: EmulatorHandle) =>
  Object.entries(handle.stats().byRoute).filter(([route]) => route.endsWith("/confirm")).reduce((n, [, count]) => n + count, 0)

const confirmedIn = (handle: EmulatorHandle, ws: string) =>
  handle.ctx.db.prepare("SELECT uid, name, size FROM files WHERE workspace_id = ? AND status = 'CONFIRMED' ORDER BY name")
    .all(ws) as Array<{ uid: string; name: string; size: number }>
const WRITES = ["create-record", "update-record", "move-record", "delete-record", "create-list", "create-tag"]
const writesSent = (handle: EmulatorHandle) => WRITES.reduce((n, r) => n + (handle.stats().byRoute[r] ?? 0), 0)

const env = (handle: EmulatorHandle) => ({ WORKSYNC_REST_URL: handle.restUrl, WORKSYNC_TOKEN: handle.token, WORKSYNC_ORG: handle.org })

interface Row {
  id: string
  title: string
  done: number
  list: string
  dued_at: string | null
}
const rows = (handle: EmulatorHandle, ws: string): Array<Row> =>
  handle.ctx.db
    .prepare(
      `SELECT r.id, r.title, r.done, l.title AS list, r.dued_at FROM records r JOIN lists l ON l.id = r.list_id
       WHERE r.workspace_id = ? AND r.deleted_at IS NULL ORDER BY r.title`
    )
    .all(ws) as Array<Row>
const shape = (handle: EmulatorHandle, ws: string) => rows(handle, ws).map(({ id: _, ...r }) => r)

const rpc = async (handle: EmulatorHandle, op: string, body: Record<string, unknown>, token = handle.token): Promise<any> => {
  const res = await fetch(`${handle.restUrl}/v1/${op}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "svc-org-id": handle.org },
    body: JSON.stringify(body)
  })
  expect(res.status, `${op}: ${res.status}`).toBeLessThan(300)
  return res.json()
}

/**
 * A workspace with two lists and four records, one done, one due, one moved to "Later".
 * The lists are made directly: the alt reading's list create makes none (CREATE_LIST_READING).
 */
const seedWorkspace = async (handle: EmulatorHandle, name: string) => {
  const ws = handle.admin.createWorkspace({ name }).id
  const [now, later] = ["Now", "Later"].map((title) => insertList(handle.ctx, ws, title))
  const ids: Record<string, string> = {}
  for (const title of ["Alpha", "Bravo", "Charlie", "Delta"]) {
    ids[title] = (await rpc(handle, "create-record", { workspaceId: ws, title, listId: now!.id })).id
  }
  await rpc(handle, "update-record", { workspaceId: ws, recordId: ids.Bravo, done: true })
  await rpc(handle, "update-record", { workspaceId: ws, recordId: ids.Charlie, duedAt: "2026-03-01" })
  await rpc(handle, "move-record", { workspaceId: ws, recordId: ids.Delta, listId: later!.id })
  return { ws, ids, listIds: { now: now!.id, later: later!.id } }
}

/**
 * A target restored from another workspace holds its records; where the list create makes
 * no list (the alt reading, CREATE_LIST_READING) they are all in the target's first list.
 */
const expectSameRecords = (handle: EmulatorHandle, target: string, source: string) => {
  const wanted = shape(handle, source)
  expect(shape(handle, target)).toEqual(handle.variant === "alt" ? wanted.map((r) => ({ ...r, list: "To do" })) : wanted)
}

// The CLI runs as a child process against the emulator: real time (`excludeTestServices`).
// Each test runs the CLI several times (a bundle start each): a loaded machine needs a
// while, and no assertion is on time.
const CLI_TEST_TIMEOUT = 120_000

layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("worksync restore", () => {
    it.effect("R-REST-RECORD-29: in place: a deleted record comes back once, edits are undone, the rest untouched; a rerun sends nothing", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const { ws, ids, listIds } = yield* Effect.promise(() => seedWorkspace(handle, "in place"))
        const dir = yield* tempDir("ws-restore-cli-")
        const snapshot = path.join(dir, "snap.sqlite")
        const journal = path.join(dir, "restore.sqlite")
        expect((yield* Effect.promise(() => runCli(["backup", "--snapshot", snapshot, "--workspace", ws], { env: env(handle) }))).code).toBe(0)
        const before = shape(handle, ws)

        // Since the backup: Alpha deleted, Bravo renamed and reopened, Delta moved back, Echo new.
        yield* Effect.promise(() => rpc(handle, "delete-record", { workspaceId: ws, recordId: ids.Alpha }))
        yield* Effect.promise(() => rpc(handle, "update-record", { workspaceId: ws, recordId: ids.Bravo, title: "Bravo (edited)", done: false }))
        yield* Effect.promise(() => rpc(handle, "move-record", { workspaceId: ws, recordId: ids.Delta, listId: listIds.now }))
        const echo = (yield* Effect.promise(() => rpc(handle, "create-record", { workspaceId: ws, title: "Echo", listId: listIds.now }))).id as string

        const args = ["restore", "--snapshot", snapshot, "--to", `workspace:${ws}`, "--journal", journal, "--json"]
        handle.resetStats()
        const dry = yield* Effect.promise(() => runCli([...args, "--dry-run"], { env: env(handle) }))
        expect(dry.code, dry.stderr).toBe(0)
        expect(JSON.parse(dry.stdout)).toMatchObject({ records: 4, planned: { creates: 1, updates: 2, moves: 1, deletes: 0 }, unchanged: 1 })
        expect(dry.stderr).toContain("nothing was sent")
        expect(writesSent(handle)).toBe(0)

        const first = yield* Effect.promise(() => runCli(args, { env: env(handle) }))
        expect(first.code, first.stderr).toBe(0)
        expect(JSON.parse(first.stdout)).toMatchObject({ records: 4, created: 1, updated: 2, unchanged: 1, deleted: 0, failed: 0 })
        // Echo (created after the run) stays without --delete-missing.
        expect(shape(handle, ws)).toEqual([...before, { title: "Echo", done: 0, list: "Now", dued_at: null }].sort((a, b) => a.title.localeCompare(b.title)))
        // Updated in place: same ids; only Alpha has a new one.
        const after = new Map(rows(handle, ws).map((r) => [r.title, r.id]))
        expect(after.get("Bravo")).toBe(ids.Bravo)
        expect(after.get("Delta")).toBe(ids.Delta)
        expect(after.get("Alpha")).not.toBe(ids.Alpha)

        handle.resetStats()
        const again = yield* Effect.promise(() => runCli(args, { env: env(handle) }))
        expect(again.code, again.stderr).toBe(0)
        expect(JSON.parse(again.stdout)).toMatchObject({ records: 4, created: 0, updated: 0, unchanged: 4 })
        expect(writesSent(handle)).toBe(0)

        // --delete-missing: the record created after the run goes, once.
        const del = yield* Effect.promise(() => runCli([...args, "--delete-missing"], { env: env(handle) }))
        expect(del.code, del.stderr).toBe(0)
        expect(JSON.parse(del.stdout)).toMatchObject({ deleted: 1, created: 0, updated: 0 })
        expect(rows(handle, ws).map((r) => r.id)).not.toContain(echo)
        expect(shape(handle, ws)).toEqual(before)
        // Six runs of the binary: a loaded machine makes them slow, not failed (no assertion is on time).
      }), CLI_TEST_TIMEOUT)

    it.effect("--record: only the named records are restored; an id not in the run is exit 64", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const { ws, ids } = yield* Effect.promise(() => seedWorkspace(handle, "single"))
        const dir = yield* tempDir("ws-restore-cli-")
        const snapshot = path.join(dir, "snap.sqlite")
        expect((yield* Effect.promise(() => runCli(["backup", "--snapshot", snapshot, "--workspace", ws], { env: env(handle) }))).code).toBe(0)
        yield* Effect.promise(() => rpc(handle, "update-record", { workspaceId: ws, recordId: ids.Alpha, title: "Alpha (edited)" }))
        yield* Effect.promise(() => rpc(handle, "update-record", { workspaceId: ws, recordId: ids.Charlie, title: "Charlie (edited)" }))
        const args = ["restore", "--snapshot", snapshot, "--to", `workspace:${ws}`, "--journal", path.join(dir, "j.sqlite"), "--json"]
        const one = yield* Effect.promise(() => runCli([...args, "--record", ids.Alpha!], { env: env(handle) }))
        expect(one.code, one.stderr).toBe(0)
        expect(JSON.parse(one.stdout)).toMatchObject({ records: 1, updated: 1, created: 0 })
        expect(rows(handle, ws).map((r) => r.title)).toEqual(["Alpha", "Bravo", "Charlie (edited)", "Delta"])

        const unknown = yield* Effect.promise(() => runCli([...args, "--record", "no-such-record"], { env: env(handle) }))
        expect(unknown.code).toBe(64)
        expect(unknown.stderr.trim().split("\n")).toHaveLength(1)
        expect(unknown.stderr).toMatch(/record no-such-record is not in run \d+ of workspace/)
        const both = yield* Effect.promise(() => runCli([...args, "--record", ids.Alpha!, "--delete-missing"], { env: env(handle) }))
        expect(both.code).toBe(64)
      }), CLI_TEST_TIMEOUT)

    it.effect("into another account (WORKSYNC_TARGET_*): created once, then updated; the source is untouched", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const { ws } = yield* Effect.promise(() => seedWorkspace(handle, "to other account"))
        const org = handle.admin.createOrganization({ name: "Target Co", slug: `target-co-${Date.now()}` })
        const owner = handle.admin.createUser({ email: `owner-${org}@target.example`, firstName: "Tara", lastName: "Get", orgLevel: "OWNER", orgId: org })
        const target = handle.admin.createWorkspace({ name: "restored here", orgId: org }).id
        const dir = yield* tempDir("ws-restore-cli-")
        const snapshot = path.join(dir, "snap.sqlite")
        expect((yield* Effect.promise(() => runCli(["backup", "--snapshot", snapshot, "--workspace", ws], { env: env(handle) }))).code).toBe(0)
        const targetEnv = { ...env(handle), WORKSYNC_TARGET_TOKEN: owner.token, WORKSYNC_TARGET_ORG: org }
        const args = ["restore", "--snapshot", snapshot, "--to", `workspace:${target}`, "--journal", path.join(dir, "j.sqlite"), "--json"]
        const first = yield* Effect.promise(() => runCli(args, { env: targetEnv }))
        expect(first.code, first.stderr).toBe(0)
        expect(JSON.parse(first.stdout)).toMatchObject({ records: 4, created: 4, failed: 0 })
        expectSameRecords(handle, target, ws)

        // Edited at the source and backed up again: the next restore updates, creates nothing.
        const bravo = rows(handle, ws).find((r) => r.title === "Bravo")!
        yield* Effect.promise(() => rpc(handle, "update-record", { workspaceId: ws, recordId: bravo.id, title: "Bravo v2" }))
        expect((yield* Effect.promise(() => runCli(["backup", "--snapshot", snapshot, "--workspace", ws], { env: env(handle) }))).code).toBe(0)
        handle.resetStats()
        const second = yield* Effect.promise(() => runCli(args, { env: targetEnv }))
        expect(second.code, second.stderr).toBe(0)
        expect(JSON.parse(second.stdout)).toMatchObject({ records: 4, created: 0, updated: 1, unchanged: 3 })
        expectSameRecords(handle, target, ws)
        // The target's own token did the writes: the wrong account would have been refused.
        expect(handle.stats().byRoute["create-record"] ?? 0).toBe(0)
      }), CLI_TEST_TIMEOUT)

    it.effect("bad invocations are one line and exit 64: --to without workspace:, an unknown target, a run holding several workspaces", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const a = yield* Effect.promise(() => seedWorkspace(handle, "multi a"))
        const b = yield* Effect.promise(() => seedWorkspace(handle, "multi b"))
        const dir = yield* tempDir("ws-restore-cli-")
        const snapshot = path.join(dir, "snap.sqlite")
        expect((yield* Effect.promise(() => runCli(["backup", "--snapshot", snapshot, "--workspace", a.ws, "--workspace", b.ws], { env: env(handle) }))).code).toBe(0)
        const base = ["restore", "--snapshot", snapshot, "--journal", path.join(dir, "j.sqlite")]
        const cases: Array<[Array<string>, RegExp]> = [
          [[...base, "--to", a.ws], /--to .*expected workspace:ID/],
          [[...base, "--to", "workspace:no-such-ws", "--from-workspace", a.ws], /--to workspace:no-such-ws: workspace no-such-ws not found/],
          [[...base, "--to", `workspace:${a.ws}`], /holds workspaces .* name one with --from-workspace/],
          [["restore", "--snapshot", path.join(dir, "missing.sqlite"), "--journal", path.join(dir, "j.sqlite"), "--to", `workspace:${a.ws}`], /file not found/]
        ]
        for (const [args, message] of cases) {
          const r = yield* Effect.promise(() => runCli(args, { env: env(handle) }))
          expect(r.code, r.stderr).toBe(64)
          expect(r.stderr.trim().split("\n"), r.stderr).toHaveLength(1)
          expect(r.stderr).toMatch(message)
        }
      }), CLI_TEST_TIMEOUT)
  })

  describe("worksync restore --files", () => {
    it.effect("R-UPLOAD-PRESIGN-15 R-FILE-STATUS-07: a file deleted on the service is put back byte-identical from backup --files; a rerun sends nothing; a missing object is exit 1 naming the file", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const { ws } = yield* Effect.promise(() => seedWorkspace(handle, "files"))
        const report = Buffer.from(Array.from({ length: 300_000 }, (_, i) => (i * 7919) % 251))
        const notes = Buffer.from("notes kept in the workspace\n".repeat(50))
        const kept = yield* Effect.promise(() => seedFile(handle, ws, "report.bin", report))
        const gone = yield* Effect.promise(() => seedFile(handle, ws, "notes.txt", notes))
        const dir = yield* tempDir("ws-restore-cli-files-")
        const snapshot = path.join(dir, "snap.sqlite")
        const filesDir = path.join(dir, "files")
        const fullEnv = connectionEnv(handle)
        const backup = yield* Effect.promise(() => runCli(["backup", "--snapshot", snapshot, "--workspace", ws, "--files", filesDir], { env: fullEnv }))
        expect(backup.code, backup.stderr).toBe(0)

        // Deleted on the service since the backup.
        deleteFile(handle.ctx.db, gone.uid)
        const args = ["restore", "--snapshot", snapshot, "--to", `workspace:${ws}`, "--journal", path.join(dir, "j.sqlite"), "--files", filesDir, "--json"]
        handle.resetStats()
        const first = yield* Effect.promise(() => runCli(args, { env: fullEnv }))
        expect(first.code, first.stderr).toBe(0)
        expect(JSON.parse(first.stdout).files).toEqual({ files: 2, uploaded: 1, present: 1, failed: 0, bytes: notes.length })
        const now = confirmedIn(handle, ws)
        expect(now.map((f) => f.name).sort()).toEqual(["notes.txt", "report.bin"])
        const back = now.find((f) => f.name === "notes.txt")!
        expect(back.uid).not.toBe(gone.uid)
        expect(sha(yield* Effect.promise(() => storedBytes(handle, back.uid)))).toBe(sha(notes))
        expect(now.find((f) => f.name === "report.bin")!.uid).toBe(kept.uid)
        // Through the presigned flow: confirmed once.
        expect(confirms(handle)).toBe(1)

        handle.resetStats()
        const again = yield* Effect.promise(() => runCli(args, { env: fullEnv }))
        expect(again.code, again.stderr).toBe(0)
        expect(JSON.parse(again.stdout).files).toMatchObject({ files: 2, uploaded: 0, present: 2, failed: 0 })
        expect(confirmedIn(handle, ws)).toHaveLength(2)
        expect(confirms(handle)).toBe(0)

        // The object of a deleted file removed from DIR: named, exit 1 in one line, the rest restored.
        deleteFile(handle.ctx.db, back.uid)
        deleteFile(handle.ctx.db, kept.uid)
        fs.rmSync(path.join(filesDir, "objects", sha(notes).slice(0, 2), sha(notes)))
        const missing = yield* Effect.promise(() => runCli(args, { env: fullEnv }))
        expect(missing.code).toBe(1)
        expect(JSON.parse(missing.stdout).files).toMatchObject({ files: 2, uploaded: 1, failed: 1 })
        const lines = missing.stderr.trim().split("\n").filter((l) => l.startsWith("worksync:"))
        expect(lines).toHaveLength(1)
        expect(lines[0]).toMatch(new RegExp(`file notes\\.txt not restored: .*object ${sha(notes)} is missing`))
        const restored = confirmedIn(handle, ws).find((f) => f.name === "report.bin")!
        expect(sha(yield* Effect.promise(() => storedBytes(handle, restored.uid)))).toBe(sha(report))
      }), CLI_TEST_TIMEOUT)
  })

  describe("worksync restore, killed and resumed", () => {
    it.effect("SIGKILL while a create is in flight, then a rerun: every record restored exactly once, and a third run sends nothing", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const { ws } = yield* Effect.promise(() => seedWorkspace(handle, "kill source"))
        const target = handle.admin.createWorkspace({ name: "kill target" }).id
        const dir = yield* tempDir("ws-restore-cli-")
        const snapshot = path.join(dir, "snap.sqlite")
        expect((yield* Effect.promise(() => runCli(["backup", "--snapshot", snapshot, "--workspace", ws], { env: env(handle) }))).code).toBe(0)
        const args = ["restore", "--snapshot", snapshot, "--to", `workspace:${target}`, "--journal", path.join(dir, "j.sqlite"), "--json"]
        // The second create is held by the emulator; the process dies meanwhile (its answer never read).
        handle.faults.inject({ route: "create-record", kind: "latency", latencyMs: 5 })
        handle.faults.inject({ route: "create-record", kind: "latency", latencyMs: 3000 })
        const before = handle.stats().byRoute["create-record"] ?? 0
        const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env(handle) }, stdio: "ignore" })
        const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on("exit", (_c, signal) => resolve(signal)))
        while ((handle.stats().byRoute["create-record"] ?? 0) < before + 2) yield* Effect.promise(() => new Promise((r) => setTimeout(r, 5)))
        child.kill("SIGKILL")
        expect(yield* Effect.promise(() => exited)).toBe("SIGKILL")
        handle.faults.reset()

        const resumed = yield* Effect.promise(() => runCli(args, { env: env(handle) }))
        expect(resumed.code, resumed.stderr).toBe(0)
        expect(JSON.parse(resumed.stdout)).toMatchObject({ records: 4, failed: 0 })
        expectSameRecords(handle, target, ws)
        handle.resetStats()
        const again = yield* Effect.promise(() => runCli(args, { env: env(handle) }))
        expect(JSON.parse(again.stdout)).toMatchObject({ records: 4, created: 0, updated: 0, unchanged: 4 })
        expect(writesSent(handle)).toBe(0)
      }), CLI_TEST_TIMEOUT)
  })
})
