/**
 * `worksync migrate` between two organizations of the emulator: a seeded source (lists,
 * records of every kind, comments with an attachment and a reply, a file custom field,
 * members of every level, a custom role) moved completely with ambiguous writes on,
 * killed twice and resumed, a rerun that sends nothing, and the inviteUser rules.
 */
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import { GraphqlClient } from "../../src/client/graphql-client.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { insertList } from "../../src/emulator/core/lists.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { runCli } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { testClient } from "../sync/replay-helpers.ts"

const BIN = new URL("../../bin/worksync.js", import.meta.url).pathname
let seq = 0
const fresh = (name: string) => `${name}-${++seq}-${process.pid}`

const rpc = async (handle: EmulatorHandle, op: string, body: Record<string, unknown>): Promise<any> => {
  const res = await fetch(`${handle.restUrl}/v1/${op}`, {
    method: "POST",
    headers: { authorization: `Bearer ${handle.token}`, "content-type": "application/json", "svc-org-id": handle.org },
    body: JSON.stringify(body)
  })
  expect(res.status, `${op}: ${res.status}`).toBeLessThan(300)
  return res.json()
}

const lib = <A, E>(handle: EmulatorHandle, f: (rest: typeof RestClient.Service, graphql: typeof GraphqlClient.Service) => Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      return yield* f(yield* RestClient, yield* GraphqlClient)
    }).pipe(Effect.provide(testClient(handle))) as Effect.Effect<A, never>
  )

/** A source workspace holding one of everything migrate carries. */
const seedSource = async (handle: EmulatorHandle) => {
  const ws = handle.admin.createWorkspace({ name: fresh("source") }).id
  // Made directly: the alt reading's list create makes no list (CREATE_LIST_READING).
  const backlog = insertList(handle.ctx, ws, "Backlog")
  const doing = insertList(handle.ctx, ws, "Doing")
  const levels = ["ADMIN", "MEMBER", "CLIENT", "COMMENT_ONLY", "VIEW_ONLY"] as const
  const people = levels.map((level) =>
    handle.admin.createUser({ email: `${level.toLowerCase()}-${ws}@source.example`, firstName: level, lastName: "Person", workspaces: { [ws]: level } })
  )
  const ids: Record<string, string> = {}
  const make = async (title: string, extra: Record<string, unknown> = {}) => {
    ids[title] = (await rpc(handle, "create-record", { workspaceId: ws, title, listId: backlog.id, ...extra })).id
  }
  await make("Plain")
  await make("Done one")
  await make("Due all day", { duedAt: "2026-04-01" })
  await make("Timed start", { startedAt: "2026-04-02T09:30:00Z" })
  await make("Assigned", { assigneeIds: [people[1]!.userId] })
  await make("Described", { descriptionHtml: "<p>Hello <strong>there</strong></p>" })
  await make("Moving")
  await rpc(handle, "update-record", { workspaceId: ws, recordId: ids["Done one"], done: true })
  await rpc(handle, "move-record", { workspaceId: ws, recordId: ids.Moving, listId: doing.id })
  const field = await rpc(handle, "create-custom-field", { workspaceId: ws, name: "Attachments", type: "FILE" })
  const { attached, reply } = await lib(handle, (_, g) =>
    Effect.gen(function*() {
      yield* g.createWorkspaceUserRole({ projectId: ws, name: "Reviewer", canCreateRecords: false, canDeleteRecords: false })
      const bytes = new TextEncoder().encode("the spec, version 1\n")
      const file = yield* g.uploadFile({ projectId: ws, file: { name: "spec.txt", contentType: "text/plain", size: bytes.byteLength, body: { _tag: "Bytes", bytes } } })
      const first = yield* g.createComment({ html: "<p>See the spec</p>", text: "See the spec", category: "TODO", categoryId: ids.Described!, attachments: [file] })
      const reply = yield* g.createComment({ html: "<p>Thanks!</p>", text: "Thanks!", category: "TODO", categoryId: ids.Described!, parentId: first.id })
      yield* g.createComment({ html: "<p>Second thought</p>", text: "Second thought", category: "TODO", categoryId: ids.Plain! })
      yield* g.createRecordCustomFieldFile({ todoId: ids.Assigned!, customFieldId: field.id ?? field.customField?.id, fileUid: file.uid })
      return { attached: file, reply }
    })
  )
  return { ws, ids, attached, reply, people }
}

/** A second organization with its OWNER, a workspace there, and the FILE field of the same name. */
const seedTarget = async (handle: EmulatorHandle) => {
  const org = handle.admin.createOrganization({ name: "Target", slug: fresh("target") })
  const owner = handle.admin.createUser({ email: `owner-${org}@target.example`, firstName: "Tara", lastName: "Owner", orgLevel: "OWNER", orgId: org })
  const ws = handle.admin.createWorkspace({ name: fresh("target"), orgId: org }).id
  const res = await fetch(`${handle.restUrl}/v1/create-custom-field`, {
    method: "POST",
    headers: { authorization: `Bearer ${owner.token}`, "content-type": "application/json", "svc-org-id": org },
    body: JSON.stringify({ workspaceId: ws, name: "Attachments", type: "FILE" })
  })
  expect(res.status).toBeLessThan(300)
  return { org, owner, ws }
}

const envFor = (handle: EmulatorHandle, t: { org: string; owner: { token: string; tokenId: string; tokenSecret: string } }) => ({
  WORKSYNC_REST_URL: handle.restUrl,
  WORKSYNC_BASE_URL: handle.baseUrl,
  WORKSYNC_TOKEN: handle.token,
  WORKSYNC_TOKEN_ID: handle.tokenId,
  WORKSYNC_TOKEN_SECRET: handle.tokenSecret,
  WORKSYNC_ORG: handle.org,
  WORKSYNC_TARGET_TOKEN: t.owner.token,
  WORKSYNC_TARGET_TOKEN_ID: t.owner.tokenId,
  WORKSYNC_TARGET_TOKEN_SECRET: t.owner.tokenSecret,
  WORKSYNC_TARGET_ORG: t.org
})

const q = <A>(handle: EmulatorHandle, sql: string, ...args: Array<unknown>) => handle.ctx.db.prepare(sql).all(...args) as Array<A>

/** What a workspace holds, in a form two workspaces can be compared by. */
const contents = (handle: EmulatorHandle, ws: string) => ({
  lists: q<{ title: string }>(handle, "SELECT title FROM lists WHERE workspace_id = ? ORDER BY position, id", ws).map((l) => l.title),
  records: q<Record<string, unknown>>(handle, 
    `SELECT r.title, r.done, r.started_at, r.dued_at, l.title AS list FROM records r JOIN lists l ON l.id = r.list_id
     WHERE r.workspace_id = ? AND r.deleted_at IS NULL ORDER BY r.title`,
    ws
  ),
  comments: q<{ text: string }>(handle, "SELECT text FROM activity WHERE workspace_id = ? AND kind = 'COMMENT' AND deleted_at IS NULL", ws).length,
  files: q<{ name: string; size: number; status: string }>(handle, 
    "SELECT name, size, status FROM files WHERE workspace_id = ? ORDER BY name",
    ws
  )
})

const start = (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const child = spawn(process.execPath, [BIN, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  const done = new Promise<{ signal: NodeJS.Signals | null }>((resolve) => child.on("close", (_code, signal) => resolve({ signal })))
  return { child, done }
}
const until = (condition: () => boolean) =>
  new Promise<void>((resolve) => {
    const check = () => (condition() ? resolve() : setTimeout(check, 5))
    check()
  })

// The CLI runs as a child process against the emulator: real time (`excludeTestServices`).
layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("worksync migrate", (it) => {
  it.effect("moves everything with ambiguous writes on, killed twice and resumed: the same result, nothing duplicated, a rerun sends nothing", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const s = yield* Effect.promise(() => seedSource(handle))
      const t = yield* Effect.promise(() => seedTarget(handle))
      const dir = yield* tempDir("ws-migrate-")
      const env = envFor(handle, t)
      const args = ["migrate", "--from", `workspace:${s.ws}`, "--to", `workspace:${t.ws}`, "--journal", path.join(dir, "m.sqlite"), "--json"]

      handle.resetStats()
      const dry = yield* Effect.promise(() => runCli([...args, "--dry-run"], { env }))
      expect(dry.code, dry.stderr).toBe(0)
      expect(JSON.parse(dry.stdout)).toMatchObject({ records: { source: 7 }, comments: { source: 3 }, files: { source: 1 }, people: { source: 6 } })
      expect(contents(handle, t.ws).records).toEqual([])

      // Killed twice: once while the first comment is held, once while a record create is.
      for (const route of ["/graphql", "create-record"]) {
        handle.faults.inject({ route, kind: "latency", latencyMs: 2000 })
        const before = handle.stats().byRoute[route] ?? 0
        const { child, done } = start(args, env)
        yield* Effect.promise(() => until(() => (handle.stats().byRoute[route] ?? 0) > before))
        child.kill("SIGKILL")
        expect((yield* Effect.promise(() => done)).signal).toBe("SIGKILL")
        handle.faults.reset()
      }

      // The rest with ambiguous writes: committed, answers lost.
      handle.faults.inject({ route: "create-record", kind: "ambiguous", times: 2 })
      handle.faults.inject({ route: "/graphql", kind: "ambiguous", times: 3 })
      let report: any
      for (let attempt = 0; attempt < 4; attempt++) {
        const r = yield* Effect.promise(() => runCli(args, { env }))
        if (r.code === 0) {
          report = JSON.parse(r.stdout)
          break
        }
        expect(r.code, r.stderr).toBe(1)
      }
      handle.faults.reset()
      expect(report).toMatchObject({
        verified: true,
        lists: { source: 3, failed: 0 },
        records: { source: 7, failed: 0 },
        comments: { source: 3, failed: 0 },
        files: { source: 1, failed: 0 },
        customFieldFiles: { source: 1, failed: 0 },
        roles: { source: 1, failed: 0 },
        people: { source: 6, refused: [] }
      })
      const source = contents(handle, s.ws)
      const target = contents(handle, t.ws)
      if (handle.variant === "alt") {
        // The alt reading's list create makes no list (CREATE_LIST_READING): records in the first list, the lists reported.
        expect(target.records).toEqual(source.records.map((r) => ({ ...r, list: "To do" })))
        expect(target.lists).toEqual(["To do"])
        expect(report.lists.notMade).toEqual(["Backlog", "Doing"])
      } else {
        expect(target.records).toEqual(source.records)
        expect(target.lists).toEqual(expect.arrayContaining(source.lists))
      }
      expect(target.comments).toBe(source.comments)
      expect(target.files).toEqual(source.files)
      // The attachment points at the target's copy, with the attribution line first.
      const targetUid = q<{ uid: string }>(handle, "SELECT uid FROM files WHERE workspace_id = ?", t.ws)[0]!.uid
      const attachedComment = q<{ html: string }>(handle, "SELECT html FROM activity WHERE workspace_id = ? AND html LIKE '%attachment%'", t.ws)
      expect(attachedComment).toHaveLength(1)
      expect(attachedComment[0]!.html).toContain(targetUid)
      expect(attachedComment[0]!.html).not.toContain(s.attached.uid)
      expect(attachedComment[0]!.html).toMatch(/Originally by .* on \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/)
      // COMMENT_PARENT_SHOWN: where the service names a reply's parent, the reply answers the copy of it.
      const replyRow = q<{ parent_id: string | null }>(handle, "SELECT parent_id FROM activity WHERE workspace_id = ? AND text LIKE '%Thanks!%'", t.ws)[0]!
      const parentRow = q<{ id: string }>(handle, "SELECT id FROM activity WHERE workspace_id = ? AND text LIKE '%See the spec%'", t.ws)[0]!
      expect(replyRow.parent_id).toBe(handle.variant === "alt" ? null : parentRow.id)
      // Roles and people: the custom role by name; every member a member or invited, at their level.
      expect(q<{ name: string }>(handle, "SELECT name FROM workspace_roles WHERE workspace_id = ?", t.ws).map((r) => r.name)).toContain("Reviewer")
      // Existing users of the service become members at once; new addresses get a pending invitation.
      const levels = q<{ email: string; level: string }>(handle, 
        `SELECT u.email, m.level FROM workspace_members m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = ?
         UNION ALL SELECT email, access_level FROM invitations WHERE workspace_id = ? AND status = 'PENDING'`,
        t.ws,
        t.ws
      )
      for (const p of ["admin", "member", "client", "comment_only", "view_only"]) {
        const row = levels.find((i) => i.email.startsWith(`${p}-`))
        expect(row?.level, p).toBe(p.toUpperCase())
      }
      // File custom field value: the target record's field holds the target uid.
      const cf = q<{ value: string }>(handle, 
        `SELECT v.text FROM record_custom_values v JOIN records r ON r.id = v.record_id WHERE r.workspace_id = ? AND r.title = 'Assigned'`,
        t.ws
      )
      expect(JSON.stringify(cf)).toContain(targetUid)

      // A second run sends nothing.
      handle.resetStats()
      const again = yield* Effect.promise(() => runCli(args, { env }))
      expect(again.code, again.stderr).toBe(0)
      expect(JSON.parse(again.stdout)).toMatchObject({
        verified: true,
        records: { created: 0, skipped: 7 },
        comments: { created: 0, skipped: 3 },
        files: { copied: 0, skipped: 1 }
      })
      const writes = ["create-record", "update-record", "move-record", "create-list", "/rest/uploads"]
      expect(writes.map((w) => handle.stats().byRoute[w] ?? 0)).toEqual([0, 0, 0, 0, 0])
      expect(contents(handle, t.ws)).toEqual(target)
    }), 120_000)

  it.effect("R-REST-CALL-15 R-REST-RECORD-43: a target whose list create makes no list and whose update-record ignores `archived` (the alt reading): exit 0, both reported, and the rerun too", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const s = yield* Effect.promise(() => seedSource(handle))
      handle.ctx.db.prepare("UPDATE records SET archived = 1 WHERE id = ?").run(s.ids.Plain)
      const t = yield* Effect.promise(() => seedTarget(handle))
      const dir = yield* tempDir("ws-migrate-")
      const args = ["migrate", "--from", `workspace:${s.ws}`, "--to", `workspace:${t.ws}`, "--journal", path.join(dir, "m.sqlite"), "--json"]
      const alt = handle.variant === "alt"
      for (const pass of ["first", "rerun"]) {
        handle.resetStats()
        const r = yield* Effect.promise(() => runCli(args, { env: envFor(handle, t) }))
        expect(r.code, `${pass}: ${r.stderr}`).toBe(0)
        const report = JSON.parse(r.stdout)
        expect(report.verified).toBe(true)
        expect(report.lists.notMade).toEqual(alt ? ["Backlog", "Doing"] : [])
        const notCarried = (report.notCarried as Array<{ what: string; count: number }>).filter((n) => n.what === "lists" || n.what === "archived")
        expect(notCarried.map((n) => [n.what, n.count])).toEqual(alt ? [["lists", 2], ["archived", 1]] : [])
        if (alt) {
          expect(r.stderr).toMatch(/migrate: not carried: lists \(2\): lists: create-list answered success but list-lists does not show the list: .*"Backlog", "Doing"/)
          expect(r.stderr).toMatch(/migrate: not carried: archived \(1\): archived: update-record with archived answered success/)
        }
        if (pass === "rerun") expect(handle.stats().byRoute["create-list"] ?? 0).toBe(0)
      }
    }), 120_000)

  it.effect("inviteUser rules: an ADMIN inviter cannot assign OWNER (the owner comes as ADMIN); a MEMBER inviter's ADMIN invite is refused before sending; the seat limit is reported with its numbers (exit 2)", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const s = yield* Effect.promise(() => seedSource(handle))
      const t = yield* Effect.promise(() => seedTarget(handle))
      // The target account is a MEMBER of the target workspace, not its owner.
      const member = handle.admin.createUser({ email: `m-${t.ws}@target.example`, firstName: "Mem", lastName: "Ber", orgId: t.org, workspaces: { [t.ws]: "MEMBER" } })
      handle.admin.setSeatLimit(4, t.org)
      const dir = yield* tempDir("ws-migrate-")
      const r = yield* Effect.promise(() => runCli(
        ["migrate", "--from", `workspace:${s.ws}`, "--to", `workspace:${t.ws}`, "--journal", path.join(dir, "m.sqlite"), "--json"],
        { env: { ...envFor(handle, t), WORKSYNC_TARGET_TOKEN: member.token, WORKSYNC_TARGET_TOKEN_ID: member.tokenId, WORKSYNC_TARGET_TOKEN_SECRET: member.tokenSecret } }
      ))
      const out = JSON.parse(r.stdout)
      const refused = new Map((out.people.refused as Array<{ email: string; code: string; current?: number; limit?: number }>).map((x) => [x.email.split("-")[0], x]))
      // Rule 2: a MEMBER may assign MEMBER, CLIENT, COMMENT_ONLY, VIEW_ONLY only; the ADMIN (and the owner, as ADMIN) refused before sending.
      expect(refused.get("admin")?.code).toBe("MEMBER_CANNOT_ASSIGN_ADMIN")
      // The seat limit: reported with the seats in use and the limit from the service's message.
      const limited = [...refused.values()].filter((x) => x.code === "PLAN_LIMIT_REACHED")
      expect(limited.length).toBeGreaterThan(0)
      expect(limited[0]).toMatchObject({ limit: 4 })
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toContain("refused")
    }), 120_000)
})
