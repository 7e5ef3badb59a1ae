/**
 * `worksync undo` as scripts call it (the contract's `undo` section): after an import-csv
 * the workspace is as it was, but for a record edited on the target in between, which
 * stays and is reported; a dry run writes nothing; a rerun sends nothing; a journal in use
 * or missing is refused with one line; a SIGKILLed undo resumes and ends exactly once.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { GraphqlClient } from "../../src/client/graphql-client.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { insertList } from "../../src/emulator/core/lists.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { connectionEnv } from "../support/cli.ts"
import { lockHolder } from "../support/lock-holder.ts"
import { testClient } from "../sync/replay-helpers.ts"
import { cli } from "./cli-effect.ts"

const titles = (handle: EmulatorHandle, ws: string): Array<string> =>
  (handle.ctx.db.prepare("SELECT title FROM records WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY title").all(ws) as Array<{ title: string }>)
    .map((r) => r.title)

const deletedCount = (handle: EmulatorHandle, ws: string): number =>
  (handle.ctx.db.prepare("SELECT COUNT(*) AS n FROM records WHERE workspace_id = ? AND deleted_at IS NOT NULL").get(ws) as { n: number }).n

const idOf = (handle: EmulatorHandle, ws: string, title: string): string =>
  (handle.ctx.db.prepare("SELECT id FROM records WHERE workspace_id = ? AND title = ? AND deleted_at IS NULL").get(ws, title) as { id: string }).id

const writes = (handle: EmulatorHandle): number =>
  ["delete-record", "update-record", "move-record", "create-record", "delete-comment"].reduce((n, r) => n + (handle.stats().byRoute[r] ?? 0), 0)

const csvOf = (rows: number, prefix: string, keyBase = 0): string => {
  const lines = ["key,title,list,description,due,done"]
  for (let i = 0; i < rows; i++) {
    const description = i % 2 === 0 ? `"first line\nsecond line of ${i}"` : ""
    const due = i % 3 === 0 ? "2026-01-05" : i % 3 === 1 ? "2026-02-01T10:30:00Z" : ""
    lines.push(`${keyBase + i},${prefix} ${i},${["A", "B"][i % 2]},${description},${due},${i % 4 === 0 ? "yes" : "no"}`)
  }
  return lines.join("\n") + "\n"
}

/** Imports `rows` rows into `ws` with its own journal; returns the journal. */
const imported = (handle: EmulatorHandle, dir: string, ws: string, name: string, rows: number, prefix: string, keyBase = 0) =>
  Effect.gen(function*() {
    const csv = path.join(dir, `${name}.csv`)
    fs.writeFileSync(csv, csvOf(rows, prefix, keyBase))
    const journal = path.join(dir, `${name}.sqlite`)
    const r = yield* cli(["import-csv", "--workspace", ws, "--csv", csv, "--journal", journal, "--json", "--quiet"], { env: connectionEnv(handle) })
    expect(r.code).toBe(0)
    expect(JSON.parse(r.stdout).created).toBe(rows)
    return journal
  })

const undoJson = (handle: EmulatorHandle, journal: string, ...extra: Array<string>) =>
  Effect.map(cli(["undo", "--journal", journal, "--json", ...extra], { env: connectionEnv(handle) }), (r) => ({
    ...r,
    out: r.stdout === "" ? undefined : JSON.parse(r.stdout) as { deleted: number; reverted: number; kept: Array<{ what: string; id: string; why: string }>; failed: number }
  }))

const recordsKept = (kept: ReadonlyArray<{ what: string }>) => kept.filter((k) => k.what === "record")

// The CLI runs as a child process against the emulator: real time (`excludeTestServices`).
layer(emulatorLayer({ seed: "empty" }), { timeout: 60_000, excludeTestServices: true })("worksync undo", (it) => {
  it.effect("R-REST-RECORD-53: undo after an import-csv leaves the workspace as it was, except a record edited on the target since, which is kept and reported", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "undo-import" }).id
      const dir = yield* tempDir("ws-undo-cli-")
      // Records the undone journal did not make: they stay.
      yield* imported(handle, dir, ws, "earlier", 3, "Earlier", 1000)
      const before = titles(handle, ws)
      const journal = yield* imported(handle, dir, ws, "import", 20, "Undo task")
      expect(titles(handle, ws)).toHaveLength(23)
      // Someone edits one imported record on the target.
      const edited = idOf(handle, ws, "Undo task 3")
      yield* Effect.flatMap(RestClient, (c) => c.updateRecord({ workspaceId: ws, recordId: edited, title: "Edited on the target" })).pipe(
        Effect.provide(testClient(handle))
      )

      handle.resetStats()
      const dry = yield* undoJson(handle, journal, "--dry-run")
      expect(dry.code).toBe(0)
      expect(writes(handle)).toBe(0)
      expect(dry.out).toMatchObject({ deleted: 19, reverted: 0, failed: 0 })
      expect(recordsKept(dry.out!.kept)).toEqual([{ what: "record", id: edited, why: expect.stringContaining("(title)") }])
      expect(titles(handle, ws)).toHaveLength(23)

      const first = yield* undoJson(handle, journal)
      expect(first.stderr).not.toContain(handle.token)
      expect(first.code).toBe(0)
      expect(first.out).toMatchObject({ deleted: 19, reverted: 0, failed: 0 })
      expect(recordsKept(first.out!.kept)).toEqual([{ what: "record", id: edited, why: expect.stringContaining("changed on the target") }])
      expect(titles(handle, ws)).toEqual([...before, "Edited on the target"].sort())
      expect(handle.stats().byRouteStatus["delete-record 200"]).toBe(19)

      // A rerun sends nothing and reports the same.
      handle.resetStats()
      const again = yield* undoJson(handle, journal)
      expect(again.code).toBe(0)
      expect(again.out).toEqual(first.out)
      expect(writes(handle)).toBe(0)
    }))

  it.effect("undo after a migrate leaves the target as it was (its records and their comments gone), except a migrated record edited on the target since", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const env = connectionEnv(handle, { app: true })
      const dir = yield* tempDir("ws-undo-cli-")
      const source = handle.admin.createWorkspace({ name: "undo-migrate-source" }).id
      const backlog = insertList(handle.ctx, source, "Backlog")
      const target = handle.admin.createWorkspace({ name: "undo-migrate-target" }).id
      insertList(handle.ctx, target, "Backlog")
      yield* Effect.gen(function*() {
        const rest = yield* RestClient
        const graphql = yield* GraphqlClient
        const made: Record<string, string> = {}
        for (const title of ["Plain", "Done one", "Due all day", "Described", "Edited later"]) {
          made[title] = (yield* rest.createRecord({
            workspaceId: source,
            listId: backlog.id,
            title,
            ...(title === "Due all day" ? { duedAt: "2026-04-01" } : {}),
            ...(title === "Described" ? { descriptionHtml: "<p>Hello <strong>there</strong></p>" } : {})
          })).id
        }
        yield* rest.updateRecord({ workspaceId: source, recordId: made["Done one"]!, done: true })
        yield* graphql.createComment({ html: "<p>See this</p>", text: "See this", category: "TODO", categoryId: made["Described"]!, attachments: [] })
        yield* rest.createRecord({ workspaceId: target, title: "The target's own" })
      }).pipe(Effect.provide(testClient(handle)))
      const before = titles(handle, target)
      const journal = path.join(dir, "migrate.sqlite")
      const migrated = yield* cli(
        ["migrate", "--from", `workspace:${source}`, "--to", `workspace:${target}`, "--journal", journal, "--people", "skip", "--json"],
        { env }
      )
      expect(migrated.code, migrated.stderr).toBe(0)
      expect(titles(handle, target)).toHaveLength(6)
      const comments = () =>
        (handle.ctx.db.prepare("SELECT COUNT(*) AS n FROM activity WHERE workspace_id = ? AND kind = 'COMMENT' AND deleted_at IS NULL").get(target) as { n: number }).n
      expect(comments()).toBe(1)
      const edited = idOf(handle, target, "Edited later")
      yield* Effect.flatMap(RestClient, (c) => c.updateRecord({ workspaceId: target, recordId: edited, done: true })).pipe(Effect.provide(testClient(handle)))

      const undone = yield* undoJson(handle, journal)
      expect(undone.code, undone.stderr).toBe(0)
      expect(undone.out).toMatchObject({ deleted: 4, reverted: 0, failed: 0 })
      // Nothing else to keep: the list existed, no file, role or invitation was made.
      expect(undone.out!.kept).toEqual([{ what: "record", id: edited, why: expect.stringContaining("(done)") }])
      expect(titles(handle, target)).toEqual([...before, "Edited later"].sort())
      // The source is untouched.
      expect(titles(handle, source)).toHaveLength(5)
    }), 120_000)

  it.effect("a journal that does not exist, or a connection that does not reach its workspace, is a bad invocation (64); a journal another process holds is refused with one line (1)", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-undo-cli-")
      const missing = yield* undoJson(handle, path.join(dir, "nope.sqlite"))
      expect(missing.code).toBe(64)
      expect(missing.stderr.trim().split("\n")).toHaveLength(1)
      expect(missing.stderr).toContain("nope.sqlite: no such file")
      expect(fs.existsSync(path.join(dir, "nope.sqlite"))).toBe(false)

      const ws = handle.admin.createWorkspace({ name: "undo-held" }).id
      const journal = yield* imported(handle, dir, ws, "held", 2, "Held")
      const holder = yield* Effect.promise(() => lockHolder(journal))
      try {
        handle.resetStats()
        const held = yield* undoJson(handle, journal)
        expect(held.code).toBe(1)
        expect(held.stdout).toBe("")
        const lines = held.stderr.trim().split("\n").filter((l) => l.startsWith("worksync:"))
        expect(lines).toEqual([`worksync: journal ${journal} is in use by another worksync run; wait for it to finish or stop it`])
        expect(writes(handle)).toBe(0)
      } finally {
        yield* Effect.promise(() => kill(holder))
      }
      expect(titles(handle, ws)).toEqual(["Held 0", "Held 1"])

      // Another account reaches none of the journal's records: refused, rather than every
      // record taken for "already gone".
      const org = handle.admin.createOrganization({ name: "Elsewhere", slug: `elsewhere-${process.pid}` })
      const other = handle.admin.createUser({ email: `owner-${org}@elsewhere.example`, firstName: "Else", lastName: "Where", orgLevel: "OWNER", orgId: org })
      handle.resetStats()
      const wrong = yield* cli(["undo", "--journal", journal, "--json"], { env: { ...connectionEnv(handle), WORKSYNC_TOKEN: other.token, WORKSYNC_ORG: org } })
      expect(wrong.code).toBe(64)
      expect(wrong.stdout).toBe("")
      expect(wrong.stderr.trim().split("\n")).toEqual([expect.stringContaining(`its runs wrote to workspace ${ws}, which this connection does not reach`)])
      expect(writes(handle)).toBe(0)
      expect(titles(handle, ws)).toEqual(["Held 0", "Held 1"])
    }))

  it.effect("an undo SIGKILLed midway, then rerun, deletes each record exactly once and nothing else", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "undo-kill" }).id
      const dir = yield* tempDir("ws-undo-cli-")
      yield* imported(handle, dir, ws, "earlier", 2, "Kept", 1000)
      const journal = yield* imported(handle, dir, ws, "kill", 120, "Kill")
      handle.resetStats()
      const args = ["undo", "--journal", journal, "--json", "--quiet"]
      let kills = 0
      // Latency keeps deletes in flight when the kill lands; the kill lands by progress.
      handle.faults.configure({ latencyMs: 10 })
      try {
        for (const at of [15, 50, 90]) {
          const end = yield* cli(args, { env: connectionEnv(handle), stop: { when: () => deletedCount(handle, ws) >= at, signal: "SIGKILL" } })
          if (end.signal === "SIGKILL") kills++
        }
      } finally {
        handle.faults.reset()
      }
      expect(kills).toBeGreaterThan(0)
      const last = yield* undoJson(handle, journal)
      expect(last.code).toBe(0)
      expect(last.out).toMatchObject({ deleted: 120, reverted: 0, failed: 0 })
      expect(titles(handle, ws)).toEqual(["Kept 0", "Kept 1"])
      expect(deletedCount(handle, ws)).toBe(120)
      // Each record was deleted by one request: none was sent a second delete.
      expect(handle.stats().byRouteStatus["delete-record 200"]).toBe(120)
      const repeats = handle.stats().byRouteStatus["delete-record 404"] ?? 0
      expect(repeats).toBeLessThanOrEqual(kills)
    }), 180_000)
})

const kill = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    child.once("exit", () => resolve())
    child.kill("SIGKILL")
  })
