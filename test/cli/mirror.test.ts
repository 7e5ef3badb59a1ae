/**
 * `worksync mirror` against the emulator's real webhook deliveries (time scale shortened):
 * every event type applied equals what the service holds; duplicated and reordered
 * deliveries; the receiver down long enough for the webhook to be disabled, then
 * restarted: re-enabled, reconciled, the snapshot exact; the secret never printed.
 */
import Database from "better-sqlite3"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { insertList } from "../../src/emulator/core/lists.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { runCli } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { freePort, mirrorEnv as env, rpc, startMirror, until } from "../support/mirror-cli.ts"

/** The records of the snapshot's latest complete run, as the service shows them. */
const mirrored = (snapshot: string) => {
  const db = new Database(snapshot, { readonly: true, fileMustExist: true })
  try {
    const run = db.prepare("SELECT id FROM runs WHERE status = 'complete' ORDER BY id DESC LIMIT 1").get() as { id: number } | undefined
    if (run === undefined) return []
    return (db
      .prepare(
        `SELECT r.id, r.detail, r.activity_count AS activities FROM run_records rr JOIN records r ON r.vid = rr.vid WHERE rr.run_id = ? ORDER BY r.id`
      )
      .all(run.id) as Array<{ id: string; detail: string; activities: number }>).map((row) => {
      const d = JSON.parse(row.detail)
      return {
        id: row.id,
        title: d.title as string,
        done: d.done as boolean,
        list: d.todoList?.title as string,
        duedAt: d.duedAt === null ? null : Date.parse(d.duedAt),
        assignees: (d.users as Array<{ email: string }>).map((u) => u.email).sort(),
        checklists: (d.checklists as Array<unknown>).length,
        comments: d.commentCount as number
      }
    })
  } finally {
    db.close()
  }
}

/** The same, from the service's own tables. */
const live = (handle: EmulatorHandle, ws: string) =>
  (handle.ctx.db
    .prepare(
      `SELECT r.id, r.title, r.done, l.title AS list, r.dued_at AS duedAt,
        (SELECT count(*) FROM checklists c WHERE c.record_id = r.id AND c.deleted_at IS NULL) AS checklists,
        (SELECT count(*) FROM activity a WHERE a.record_id = r.id AND a.kind = 'COMMENT' AND a.deleted_at IS NULL) AS comments
       FROM records r JOIN lists l ON l.id = r.list_id WHERE r.workspace_id = ? AND r.deleted_at IS NULL ORDER BY r.id`
    )
    .all(ws) as Array<Record<string, unknown>>).map((r) => ({
      id: r.id,
      title: r.title,
      done: r.done === 1,
      list: r.list,
      duedAt: r.duedAt === null ? null : Date.parse(String(r.duedAt)),
      assignees: (handle.ctx.db
        .prepare("SELECT u.email FROM record_assignees ra JOIN users u ON u.id = ra.user_id WHERE ra.record_id = ? ORDER BY u.email")
        .all(r.id) as Array<{ email: string }>).map((u) => u.email),
      checklists: r.checklists,
      comments: r.comments
    }))

const same = (handle: EmulatorHandle, snapshot: string, ws: string) => JSON.stringify(mirrored(snapshot)) === JSON.stringify(live(handle, ws))

/** One change of every kind the mirror applies. */
const changeEverything = async (handle: EmulatorHandle, ws: string, tag: string) => {
  const lists = await rpc(handle, "list-lists", { workspaceId: ws })
  const listIds = ((lists.items ?? lists) as Array<{ id: string }>).map((l) => l.id)
  const a = (await rpc(handle, "create-record", { workspaceId: ws, title: `${tag} created`, listId: listIds[0] })).id
  const b = (await rpc(handle, "create-record", { workspaceId: ws, title: `${tag} to change`, listId: listIds[0] })).id
  const gone = (await rpc(handle, "create-record", { workspaceId: ws, title: `${tag} to delete`, listId: listIds[0] })).id
  await rpc(handle, "update-record", { workspaceId: ws, recordId: b, title: `${tag} renamed` })
  await rpc(handle, "update-record", { workspaceId: ws, recordId: b, done: true })
  await rpc(handle, "update-record", { workspaceId: ws, recordId: a, duedAt: "2026-06-01" })
  await rpc(handle, "update-record", { workspaceId: ws, recordId: a, assigneeIds: [handle.ownerUserId] })
  if (listIds.length > 1) await rpc(handle, "move-record", { workspaceId: ws, recordId: a, listId: listIds[1] })
  await rpc(handle, "create-checklist", { workspaceId: ws, recordId: b, title: "Steps" })
  await rpc(handle, "create-comment", { workspaceId: ws, recordId: a, text: `${tag}: a comment` })
  await rpc(handle, "delete-record", { workspaceId: ws, recordId: gone })
}

// A hundredth of the documented delays: deliveries 50 ms after a change, retries soon after.
// The CLI runs as a child process against the emulator: real time (`excludeTestServices`).
layer(emulatorLayer({ seed: "empty", timeScale: 0.01 }), { timeout: 30_000, excludeTestServices: true })("worksync mirror", (it) => {
  it.effect("applies every kind of change, duplicated and out of order; survives being down long enough to be disabled; the secret is never printed", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "mirrored" }).id
      // Made directly: the alt reading's list create makes no list (CREATE_LIST_READING).
      insertList(handle.ctx, ws, "Later")
      for (const title of ["One", "Two", "Three"]) yield* Effect.promise(() => rpc(handle, "create-record", { workspaceId: ws, title }))
      const dir = yield* tempDir("ws-mirror-")
      const snapshot = path.join(dir, "snap.sqlite")
      const port = yield* Effect.promise(() => freePort())

      const first = yield* Effect.promise(() => startMirror(handle, snapshot, port, ws))
      yield* until(() => same(handle, snapshot, ws), "the first reconciliation")
      expect(mirrored(snapshot).map((r) => r.title).sort()).toEqual(["One", "Three", "Two"])

      // Every kind of change, each delivery sent twice and delayed at random.
      handle.faults.configure({ webhookDeliveries: { duplicate: true, jitterMs: 3000 } })
      yield* Effect.promise(() => changeEverything(handle, ws, "first"))
      const wanted = ["TODO_CREATED", "TODO_NAME_CHANGED", "TODO_DONE_STATUS_UPDATED", "TODO_DUE_DATE_ADDED", "TODO_ASSIGNEE_ADDED", "TODO_MOVED", "TODO_CHECKLIST_CREATED", "COMMENT_CREATED", "TODO_DELETED"]
      const events = () => first.stdout().trim().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as { event: string; applied: boolean })
      // Every kind delivered (twice) and handled; one the snapshot was already newer than is left (applied: false).
      yield* until(() => wanted.every((e) => events().filter((x) => x.event === e).length >= 2), "every delivery, twice")
      yield* until(() => same(handle, snapshot, ws), "the changes to be mirrored")
      // The second copy of each was recognised and left.
      expect(events().filter((x) => !x.applied).length).toBeGreaterThanOrEqual(events().length / 2)
      handle.faults.configure({ webhookDeliveries: undefined })

      // While it runs, export reads the mirrored state as the latest complete run.
      const exported = yield* Effect.promise(() => runCli(["export", "--snapshot", snapshot, "--out", path.join(dir, "out"), "--json"], { env: env(handle) }))
      expect(exported.code, exported.stderr).toBe(0)
      expect(fs.readFileSync(path.join(dir, "out", "records.ndjson"), "utf8")).toContain("first renamed")

      // SIGTERM: exit 0.
      first.child.kill("SIGTERM")
      expect((yield* Effect.promise(() => first.exited)).code).toBe(0)

      // Down: deliveries fail until the service disables the webhook.
      const secretFile = `${snapshot}.webhook.json`
      const saved = JSON.parse(fs.readFileSync(secretFile, "utf8")) as { webhookId: string; secrets: Array<string> }
      expect(fs.statSync(secretFile).mode & 0o777).toBe(0o600)
      yield* Effect.promise(() => changeEverything(handle, ws, "while down"))
      yield* until(() => {
        const row = handle.ctx.db.prepare("SELECT enabled, status FROM webhooks WHERE id = ?").get(saved.webhookId) as { enabled: number; status: string }
        return row.enabled === 0 && row.status === "UNHEALTHY"
      }, "the webhook to be disabled")

      // Restarted: the same webhook re-enabled, the window reconciled, the snapshot exact.
      const second = yield* Effect.promise(() => startMirror(handle, snapshot, port, ws))
      expect(second.stderr()).toMatch(/re-enabled/)
      yield* until(() => same(handle, snapshot, ws), "reconciliation after the gap")
      const row = handle.ctx.db.prepare("SELECT enabled FROM webhooks WHERE id = ?").get(saved.webhookId) as { enabled: number }
      expect(row.enabled).toBe(1)
      yield* Effect.promise(() => changeEverything(handle, ws, "after"))
      yield* until(() => same(handle, snapshot, ws), "changes after the restart")
      second.child.kill("SIGINT")
      expect((yield* Effect.promise(() => second.exited)).code).toBe(0)

      for (const out of [first.stdout(), first.stderr(), second.stdout(), second.stderr()]) {
        for (const secret of saved.secrets) expect(out).not.toContain(secret)
        expect(out).not.toContain(handle.tokenSecret)
      }
    }), 120_000)

  it.effect("bad invocations are one line and exit 64", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-mirror-")
      const base = ["mirror", "--snapshot", path.join(dir, "s.sqlite")]
      for (const [args, message] of [
        [[...base, "--listen", "nowhere", "--public-url", "http://x/"], /--listen nowhere: expected HOST:PORT/],
        [[...base, "--listen", "127.0.0.1:0", "--public-url", "ftp://x/"], /--public-url ftp:\/\/x\/: not an http\(s\) URL/],
        [[...base, "--listen", "127.0.0.1:0", "--public-url", "http://x/", "--reconcile-every", "0"], /--reconcile-every 0/]
      ] as Array<[Array<string>, RegExp]>) {
        const r = yield* Effect.promise(() => runCli(args, { env: env(handle) }))
        expect(r.code, r.stderr).toBe(64)
        expect(r.stderr.trim().split("\n")).toHaveLength(1)
        expect(r.stderr).toMatch(message)
      }
    }))
})
