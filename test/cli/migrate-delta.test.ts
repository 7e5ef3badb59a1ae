/**
 * `worksync migrate` as delta passes (contract: "Delta passes and plans"): `--plan` reads
 * the source, the target and the journal, writes none of them, and the run that follows
 * does what it said; a rerun with the same journal carries what changed at the source
 * (`pass`, `updated`), keeps and reports a field edited on the target since the last pass
 * (unless `--overwrite-target-edits`), and deletes a record gone from the source only with
 * `--delete-missing` (else `missing`). Two organizations of the emulator, the real CLI.
 */
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import { insertList } from "../../src/emulator/core/lists.ts"
import { insertComment } from "../../src/emulator/core/writes.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { connectionEnv, runCli, targetConnectionEnv } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { rpcAs } from "../support/mirror-cli.ts"

const BIN = new URL("../../bin/worksync.js", import.meta.url).pathname
const until = (condition: () => boolean) =>
  new Promise<void>((resolve) => {
    const check = () => (condition() ? resolve() : setTimeout(check, 5))
    check()
  })

let seq = 0
const fresh = (name: string) => `${name}-${++seq}-${process.pid}`

const q = <A>(handle: EmulatorHandle, sql: string, ...args: Array<unknown>) => handle.ctx.db.prepare(sql).all(...args) as Array<A>

/** The records of a workspace by title: id, done. */
const records = (handle: EmulatorHandle, ws: string) =>
  new Map(
    q<{ id: string; title: string; done: number }>(handle, "SELECT id, title, done FROM records WHERE workspace_id = ? AND deleted_at IS NULL", ws)
      .map((r) => [r.title, { id: r.id, done: r.done === 1 }] as const)
  )

const seed = async (handle: EmulatorHandle) => {
  const source = { token: handle.token, org: handle.org }
  const ws = handle.admin.createWorkspace({ name: fresh("source") }).id
  // Made directly: the alt reading's list create makes no list (CREATE_LIST_READING).
  const backlog = insertList(handle.ctx, ws, "Backlog")
  const ids: Record<string, string> = {}
  for (const title of ["Alpha", "Bravo", "Charlie", "Delta"]) {
    ids[title] = (await rpcAs(handle, source, "create-record", { workspaceId: ws, title, listId: backlog.id })).id
  }
  const org = handle.admin.createOrganization({ name: "Target", slug: fresh("target") })
  const owner = handle.admin.createUser({ email: `owner-${org}@target.example`, firstName: "Tara", lastName: "Owner", orgLevel: "OWNER", orgId: org })
  const target = { ws: handle.admin.createWorkspace({ name: fresh("target"), orgId: org }).id, auth: { token: owner.token, org } }
  const env = { ...connectionEnv(handle, { app: true }), ...targetConnectionEnv(owner, org) }
  return { ws, ids, source, target, env }
}

/** What a file holds now (absent: null), to show a plan wrote nothing. */
const fingerprint = (file: string) => (fs.existsSync(file) ? createHash("sha256").update(fs.readFileSync(file)).digest("hex") : null)

/** The REST writes (GraphQL answers reads too: roles, members and comments are not compared by route). */
const WRITES = ["create-record", "update-record", "move-record", "delete-record", "create-list", "/rest/uploads"]

const PLAN_KEYS = ["create", "update", "unchanged", "delete", "lists", "tags", "invite", "unresolved", "notCarried", "conflicts"]

layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("worksync migrate: delta passes and plans", (it) => {
  it.effect("--plan writes nothing and the run that follows does what it said; a rerun carries source edits, keeps target edits, deletes only with --delete-missing", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const s = yield* Effect.promise(() => seed(handle))
      const dir = yield* tempDir("ws-migrate-delta-")
      const journal = path.join(dir, "m.sqlite")
      const args = ["migrate", "--from", `workspace:${s.ws}`, "--to", `workspace:${s.target.ws}`, "--journal", journal, "--people", "skip", "--json"]
      const cli = (extra: ReadonlyArray<string> = []) => Effect.promise(() => runCli([...args, ...extra], { env: s.env }))
      /** A plan: exactly the contract's shape; nothing written to the target, the journal or the source snapshot. */
      const plan = (extra: ReadonlyArray<string> = []) =>
        Effect.gen(function*() {
          const files = [journal, journal.replace(/\.sqlite$/, "-source.sqlite")]
          const before = files.map(fingerprint)
          handle.resetStats()
          const r = yield* cli(["--plan", ...extra])
          expect(r.code, r.stderr).toBe(0)
          const out = JSON.parse(r.stdout)
          expect(Object.keys(out)).toEqual(["plan"])
          expect(Object.keys(out.plan).sort()).toEqual([...PLAN_KEYS].sort())
          expect(WRITES.map((w) => handle.stats().byRoute[w] ?? 0)).toEqual(WRITES.map(() => 0))
          expect(files.map(fingerprint)).toEqual(before)
          return out.plan
        })

      // The first pass: planned on no journal at all (none is made), then run.
      const first = yield* plan()
      expect(fs.existsSync(journal)).toBe(false)
      expect(first).toMatchObject({ create: 4, update: 0, unchanged: 0, delete: 0, conflicts: [] })
      const one = yield* cli()
      expect(one.code, one.stderr).toBe(0)
      const r1 = JSON.parse(one.stdout)
      expect(r1).toMatchObject({ verified: true, pass: 1, updated: 0, records: { created: first.create, updated: first.update } })

      // Between passes: the source renames Alpha, marks Bravo done, describes Delta, deletes
      // Charlie and adds Echo; the target renames its Alpha and its Delta.
      yield* Effect.promise(async () => {
        await rpcAs(handle, s.source, "update-record", { workspaceId: s.ws, recordId: s.ids.Alpha, title: "Alpha at the source" })
        await rpcAs(handle, s.source, "update-record", { workspaceId: s.ws, recordId: s.ids.Bravo, done: true })
        await rpcAs(handle, s.source, "update-record", { workspaceId: s.ws, recordId: s.ids.Delta, descriptionHtml: "<p>Described at the source</p>" })
        await rpcAs(handle, s.source, "delete-record", { workspaceId: s.ws, recordId: s.ids.Charlie })
        await rpcAs(handle, s.source, "create-record", { workspaceId: s.ws, title: "Echo" })
        const t = records(handle, s.target.ws)
        await rpcAs(handle, s.target.auth, "update-record", { workspaceId: s.target.ws, recordId: t.get("Alpha")!.id, title: "Alpha on the target" })
        await rpcAs(handle, s.target.auth, "update-record", { workspaceId: s.target.ws, recordId: t.get("Delta")!.id, title: "Delta on the target" })
      })

      const second = yield* plan()
      // Bravo and Delta updated (Delta's description only: its title is the target's), Alpha left.
      expect(second).toMatchObject({ create: 1, update: 2, unchanged: 1, delete: 0 })
      expect(second.conflicts.map((c: { what: string; item: string }) => [c.what, c.item]).sort()).toEqual([["title", s.ids.Alpha], ["title", s.ids.Delta]].sort())
      expect(second.notCarried).toContainEqual(expect.objectContaining({ what: "records gone from the source", count: 1 }))
      // A dry run counts the same updates and names the same pass.
      const dry = yield* cli(["--dry-run"])
      expect(dry.code, dry.stderr).toBe(0)
      expect(JSON.parse(dry.stdout)).toMatchObject({ pass: 2, updated: second.update })
      const two = yield* cli()
      expect(two.code, two.stderr).toBe(0)
      const r2 = JSON.parse(two.stdout)
      expect(r2).toMatchObject({
        verified: true,
        pass: 2,
        updated: second.update,
        missing: 1,
        records: { created: second.create, updated: second.update, skipped: second.unchanged }
      })
      expect(r2.kept.map((k: { what: string; item: string }) => [k.what, k.item]).sort()).toEqual([["title", s.ids.Alpha], ["title", s.ids.Delta]].sort())
      expect(r2.deleted).toBeUndefined()
      let t = records(handle, s.target.ws)
      // Kept: the target's own titles; carried: Bravo done, Echo; Charlie stays.
      expect([...t.keys()].sort()).toEqual(["Alpha on the target", "Bravo", "Charlie", "Delta on the target", "Echo"])
      expect(t.get("Bravo")!.done).toBe(true)
      const described = q<{ html: string }>(handle, "SELECT html FROM records WHERE id = ?", t.get("Delta on the target")!.id)[0]!
      expect(described.html).toContain("Described at the source")

      // --delete-missing: planned, then done.
      const third = yield* plan(["--delete-missing"])
      expect(third).toMatchObject({ create: 0, update: 0, delete: 1 })
      const three = yield* cli(["--delete-missing"])
      expect(three.code, three.stderr).toBe(0)
      expect(JSON.parse(three.stdout)).toMatchObject({ verified: true, pass: 3, updated: 0, deleted: third.delete })
      expect(records(handle, s.target.ws).has("Charlie")).toBe(false)

      // --overwrite-target-edits: the source's values replace the target's edits.
      const fourth = yield* plan(["--overwrite-target-edits"])
      expect(fourth).toMatchObject({ create: 0, update: 2, delete: 0, conflicts: [] })
      const four = yield* cli(["--overwrite-target-edits"])
      expect(four.code, four.stderr).toBe(0)
      const r4 = JSON.parse(four.stdout)
      expect(r4).toMatchObject({ verified: true, pass: 4, updated: fourth.update })
      expect(r4.kept).toBeUndefined()
      t = records(handle, s.target.ws)
      expect([...t.keys()].sort()).toEqual(["Alpha at the source", "Bravo", "Delta", "Echo"])

      // Nothing left to do: the plan says so and the run sends nothing.
      const fifth = yield* plan()
      expect(fifth).toMatchObject({ create: 0, update: 0, unchanged: 4, delete: 0, conflicts: [] })
    }), 180_000)

  it.effect("a record deleted on the target since the last pass stays deleted and is reported (plan: a conflict); --overwrite-target-edits makes it again", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const s = yield* Effect.promise(() => seed(handle))
      const dir = yield* tempDir("ws-migrate-delta-")
      const args = ["migrate", "--from", `workspace:${s.ws}`, "--to", `workspace:${s.target.ws}`, "--journal", path.join(dir, "m.sqlite"), "--people", "skip", "--json"]
      const cli = (extra: ReadonlyArray<string> = []) => Effect.promise(() => runCli([...args, ...extra], { env: s.env }))
      const json = (extra: ReadonlyArray<string> = []) =>
        Effect.map(cli(extra), (r) => {
          expect(r.code, r.stderr).toBe(0)
          return JSON.parse(r.stdout)
        })
      expect(yield* json()).toMatchObject({ verified: true, pass: 1, records: { created: 4 } })

      // The target deletes its Alpha; the source then renames Alpha and comments on it.
      const deleted = records(handle, s.target.ws).get("Alpha")!.id
      handle.admin.deleteRecords([deleted], s.target.ws)
      yield* Effect.promise(() => rpcAs(handle, s.source, "update-record", { workspaceId: s.ws, recordId: s.ids.Alpha, title: "Alpha at the source" }))
      insertComment(handle.ctx, { workspaceId: s.ws, recordId: s.ids.Alpha!, userId: handle.ownerUserId, html: "<p>Still needed?</p>", text: "Still needed?" })

      const isDeletion = (k: { what: string; item: string; why: string }) => k.what === "record" && k.item === s.ids.Alpha && k.why.includes("deleted on the target")
      const plan = (yield* json(["--plan"])).plan
      expect(plan).toMatchObject({ create: 0, update: 0, unchanged: 4, delete: 0 })
      expect(plan.conflicts).toHaveLength(1)
      expect(isDeletion(plan.conflicts[0])).toBe(true)
      expect(plan.notCarried).toContainEqual(expect.objectContaining({ what: "comments", count: 1 }))

      // The pass keeps it deleted, says so, skips its new comment, and verifies.
      const two = yield* json()
      expect(two).toMatchObject({ verified: true, pass: 2, updated: 0, records: { created: 0, failed: 0 }, comments: { failed: 0 } })
      expect(two.kept).toHaveLength(1)
      expect(isDeletion(two.kept[0])).toBe(true)
      expect(two.notCarried).toContainEqual(expect.objectContaining({ what: "comments", count: 1 }))
      expect([...records(handle, s.target.ws).keys()].sort()).toEqual(["Bravo", "Charlie", "Delta"])

      // --overwrite-target-edits: planned as a create, then made again with its comment.
      const again = (yield* json(["--plan", "--overwrite-target-edits"])).plan
      expect(again).toMatchObject({ create: 1, update: 0, conflicts: [] })
      const three = yield* json(["--overwrite-target-edits"])
      expect(three).toMatchObject({ verified: true, pass: 3, records: { created: 1, failed: 0 }, comments: { failed: 0 } })
      expect(three.kept).toBeUndefined()
      const made = records(handle, s.target.ws).get("Alpha at the source")
      expect(made).toBeDefined()
      expect(q<{ n: number }>(handle, "SELECT count(*) AS n FROM activity WHERE record_id = ? AND kind = 'COMMENT'", made!.id)[0]!.n).toBe(1)
    }), 180_000)

  it.effect("--plan after a migrate killed while a create was in flight: the resumed creates are planned, and the run that follows makes that many", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const s = yield* Effect.promise(() => seed(handle))
      const dir = yield* tempDir("ws-migrate-delta-")
      const args = ["migrate", "--from", `workspace:${s.ws}`, "--to", `workspace:${s.target.ws}`, "--journal", path.join(dir, "m.sqlite"), "--people", "skip", "--json"]
      handle.faults.inject({ route: "create-record", kind: "latency", latencyMs: 2000 })
      const before = handle.stats().byRoute["create-record"] ?? 0
      const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...s.env }, stdio: ["ignore", "pipe", "pipe"] })
      const closed = new Promise<NodeJS.Signals | null>((resolve) => child.on("close", (_code, signal) => resolve(signal)))
      yield* Effect.promise(() => until(() => (handle.stats().byRoute["create-record"] ?? 0) > before))
      child.kill("SIGKILL")
      expect(yield* Effect.promise(() => closed)).toBe("SIGKILL")
      handle.faults.reset()
      // The create in flight (landed or not) is planned as a create, like those not sent
      // yet; one the killed run finished (the kill may come just after) is unchanged.
      const planned = yield* Effect.promise(() => runCli([...args, "--plan"], { env: s.env }))
      expect(planned.code, planned.stderr).toBe(0)
      const plan = JSON.parse(planned.stdout).plan
      expect(plan).toMatchObject({ update: 0, delete: 0 })
      expect(plan.create).toBeGreaterThanOrEqual(3)
      expect(plan.create + plan.unchanged).toBe(4)
      const run = yield* Effect.promise(() => runCli(args, { env: s.env }))
      expect(run.code, run.stderr).toBe(0)
      expect(JSON.parse(run.stdout)).toMatchObject({ verified: true, pass: 1, records: { created: plan.create } })
      expect(records(handle, s.target.ws).size).toBe(4)
    }), 120_000)

  it.effect("--plan without --json: a short summary on stderr (a PostgreSQL journal's: plan-postgres.test.ts)", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const s = yield* Effect.promise(() => seed(handle))
      const dir = yield* tempDir("ws-migrate-delta-")
      const base = ["migrate", "--from", `workspace:${s.ws}`, "--to", `workspace:${s.target.ws}`, "--people", "skip", "--plan"]
      const r = yield* Effect.promise(() => runCli([...base, "--journal", path.join(dir, "m.sqlite")], { env: s.env }))
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toBe("")
      expect(r.stderr).toContain("migrate: plan: 4 to create, 0 to update, 0 unchanged, 0 to delete")
    }), 120_000)
})
