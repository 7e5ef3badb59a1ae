/**
 * `worksync migrate` with mappings beyond e-mail: `--people FILE` (a member invited under
 * the target e-mail the file gives, one mapped to `skip` not invited and reported, an
 * assignee mapped the same way) and `--title-map FILE.json` (lists and tags under other
 * titles, two source titles merged into one); `--plan` and the run's `--json` list the
 * entries used and unused. Two organizations of the emulator, the real CLI.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import { insertList } from "../../src/emulator/core/lists.ts"
import { insertTag } from "../../src/emulator/core/tags.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { connectionEnv, runCli, targetConnectionEnv } from "../support/cli.ts"
import { rpc } from "../support/mirror-cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"

let seq = 0
const fresh = (name: string) => `${name}-${++seq}-${process.pid}`

const q = <A>(handle: EmulatorHandle, sql: string, ...args: Array<unknown>) => handle.ctx.db.prepare(sql).all(...args) as Array<A>

/**
 * A source with lists Backlog (two records), Todo and Done, tags bug and defect, and three
 * members assigned to one record each; a target organization whose workspace has the lists Done
 * and Inbox already (a reading that makes no list puts records in its first list)
 * and a user ann@target.example of its own.
 */
const seed = async (handle: EmulatorHandle) => {
  const ws = handle.admin.createWorkspace({ name: fresh("source") }).id
  const lists = Object.fromEntries(["Backlog", "Todo", "Done"].map((t) => [t, insertList(handle.ctx, ws, t).id]))
  const bug = insertTag(handle.ctx, ws, "bug", null).id
  const defect = insertTag(handle.ctx, ws, "defect", null).id
  const person = (first: string, level: "MEMBER" | "CLIENT") =>
    handle.admin.createUser({ email: `${first.toLowerCase()}-${ws}@source.example`, firstName: first, lastName: "Person", workspaces: { [ws]: level } })
  const ann = person("Ann", "MEMBER")
  const bob = person("Bob", "MEMBER")
  const cy = person("Cy", "CLIENT")
  await rpc(handle, "create-record", { workspaceId: ws, title: "Alpha", listId: lists.Backlog, tagIds: [bug], assigneeIds: [ann.userId] })
  await rpc(handle, "create-record", { workspaceId: ws, title: "Alpha 2", listId: lists.Backlog })
  await rpc(handle, "create-record", { workspaceId: ws, title: "Bravo", listId: lists.Todo, tagIds: [defect], assigneeIds: [bob.userId] })
  await rpc(handle, "create-record", { workspaceId: ws, title: "Charlie", listId: lists.Done, assigneeIds: [cy.userId] })
  const org = handle.admin.createOrganization({ name: "Target", slug: fresh("target") })
  const owner = handle.admin.createUser({ email: `owner-${org}@target.example`, firstName: "Tara", lastName: "Owner", orgLevel: "OWNER", orgId: org })
  const target = handle.admin.createWorkspace({ name: fresh("target"), orgId: org }).id
  insertList(handle.ctx, target, "Done")
  insertList(handle.ctx, target, "Inbox")
  const annThere = handle.admin.createUser({ email: `ann-${ws}@target.example`, firstName: "Ann", lastName: "There", orgId: org })
  const env = { ...connectionEnv(handle, { app: true }), ...targetConnectionEnv(owner, org) }
  return { ws, target, env, emails: { ann: `ann-${ws}@source.example`, bob: `bob-${ws}@source.example`, cy: `cy-${ws}@source.example` }, annThere: { id: annThere.userId, email: `ann-${ws}@target.example` } }
}

/** The target's records: list, tags and assignee e-mails by title. */
const carried = (handle: EmulatorHandle, ws: string) =>
  Object.fromEntries(
    q<{ title: string; list: string; tags: string | null; assignees: string | null }>(
      handle,
      `SELECT r.title, l.title AS list,
         (SELECT group_concat(t.title, ',') FROM record_tags rt JOIN tags t ON t.id = rt.tag_id WHERE rt.record_id = r.id) AS tags,
         (SELECT group_concat(u.email, ',') FROM record_assignees ra JOIN users u ON u.id = ra.user_id WHERE ra.record_id = r.id) AS assignees
       FROM records r JOIN lists l ON l.id = r.list_id WHERE r.workspace_id = ? AND r.deleted_at IS NULL`,
      ws
    ).map((r) => [r.title, { list: r.list, tags: r.tags?.split(",").sort() ?? [], assignees: r.assignees?.split(",").sort() ?? [] }])
  )

/** Who is a member of a workspace or invited to it, with the level. */
const people = (handle: EmulatorHandle, ws: string) =>
  new Map(
    q<{ email: string; level: string }>(
      handle,
      `SELECT u.email, m.level FROM workspace_members m JOIN users u ON u.id = m.user_id WHERE m.workspace_id = ?
       UNION ALL SELECT email, access_level FROM invitations WHERE workspace_id = ? AND status = 'PENDING'`,
      ws,
      ws
    ).map((p) => [p.email, p.level])
  )

const entry = (kind: string, from: string, to: string) => ({ kind, from, to })

layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("worksync migrate: mappings beyond e-mail", (it) => {
  it.effect("--people FILE and --title-map: a member invited under the mapped e-mail, one mapped to skip left out and reported, assignees mapped; lists and tags renamed and merged; the plan and the report list the entries used and unused", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const s = yield* Effect.promise(() => seed(handle))
      const dir = yield* tempDir("ws-migrate-mappings-")
      const peopleFile = path.join(dir, "people.csv")
      // Ann by display name, Bob by e-mail (skip), and a row that names nobody of the source.
      fs.writeFileSync(peopleFile, `name,email\nAnn Person,${s.annThere.email}\n${s.emails.bob},skip\nNobody Here,nobody@target.example\n`)
      const titleFile = path.join(dir, "titles.json")
      fs.writeFileSync(titleFile, JSON.stringify({ lists: { Backlog: "Inbox", Todo: "Inbox", Ghost: "Nowhere" }, tags: { bug: "defect-x", defect: "defect-x", chore: "task" } }))
      const args = ["migrate", "--from", `workspace:${s.ws}`, "--to", `workspace:${s.target}`, "--journal", path.join(dir, "m.sqlite"), "--people", peopleFile, "--title-map", titleFile]
      const cli = (extra: ReadonlyArray<string>) => Effect.promise(() => runCli([...args, ...extra], { env: s.env }))
      const used = {
        people: { used: [entry("person", "Ann Person", s.annThere.email), entry("person", s.emails.bob, "skip")], unused: [entry("person", "Nobody Here", "nobody@target.example")] },
        titles: {
          used: [entry("list", "Backlog", "Inbox"), entry("list", "Todo", "Inbox"), entry("tag", "bug", "defect-x"), entry("tag", "defect", "defect-x")],
          unused: [entry("list", "Ghost", "Nowhere"), entry("tag", "chore", "task")]
        }
      }

      const planned = yield* cli(["--plan", "--json"])
      expect(planned.code, planned.stderr).toBe(0)
      const plan = JSON.parse(planned.stdout).plan
      expect(plan.mappings).toEqual(used)
      // Ann under the target e-mail; Bob not at all; Cy under their own.
      expect(plan.invite).toEqual(expect.arrayContaining([{ email: s.annThere.email, level: "MEMBER" }, { email: s.emails.cy, level: "CLIENT" }]))
      expect(plan.invite.map((i: { email: string }) => i.email)).not.toContain(s.emails.bob)
      expect(plan.invite.map((i: { email: string }) => i.email)).not.toContain(s.emails.ann)
      expect(plan.lists).toEqual([])
      expect(plan.tags).toEqual(["defect-x"])
      const text = yield* cli(["--plan"])
      expect(text.code, text.stderr).toBe(0)
      expect(text.stderr).toContain(`migrate: plan: mappings not used: person "Nobody Here" -> nobody@target.example`)
      expect(text.stderr).toContain(`migrate: plan: mappings used: list "Backlog" -> "Inbox", list "Todo" -> "Inbox", tag "bug" -> "defect-x", tag "defect" -> "defect-x"`)

      const run = yield* cli(["--json"])
      expect(run.code, run.stderr).toBe(0)
      const report = JSON.parse(run.stdout)
      expect(report).toMatchObject({ verified: true, mappings: used })
      // Backlog then Todo, each in its order, in the one list they merge into: the order is kept.
      expect(report.lists.orderKept).toContain("Inbox")
      expect(report.lists.orderNotKept).not.toContain("Inbox")
      expect(report.notCarried).toContainEqual({ what: "people", count: 1, why: `not invited: --people maps them to skip: ${s.emails.bob}` })
      expect(report.notCarried).toContainEqual(expect.objectContaining({ what: "assignments", count: 1 }))

      // Ann, a user of the service, is a member under the target e-mail at once; Bob is nobody there.
      const there = people(handle, s.target)
      expect(there.get(s.annThere.email)).toBe("MEMBER")
      expect(there.get(s.emails.cy)).toBe("CLIENT")
      expect(there.has(s.emails.bob)).toBe(false)
      expect(there.has(s.emails.ann)).toBe(false)
      // Records in the mapped (merged) list, the two tags merged into one, Alpha assigned to Ann's target user.
      const records = carried(handle, s.target)
      // Where the invitation makes Ann's target user a member at once, Alpha is assigned to them.
      const annMember = q(handle, "SELECT 1 FROM workspace_members WHERE workspace_id = ? AND user_id = ?", s.target, s.annThere.id).length > 0
      expect(records.Alpha).toEqual({ list: "Inbox", tags: ["defect-x"], assignees: annMember ? [s.annThere.email] : [] })
      expect(records.Bravo).toEqual({ list: "Inbox", tags: ["defect-x"], assignees: [] })
      expect(records["Alpha 2"]).toEqual({ list: "Inbox", tags: [], assignees: [] })
      expect(records.Charlie!.list).toBe("Done")
      expect(q<{ title: string }>(handle, "SELECT title FROM tags WHERE workspace_id = ?", s.target).map((t) => t.title)).toEqual(["defect-x"])
      const targetLists = q<{ title: string }>(handle, "SELECT title FROM lists WHERE workspace_id = ?", s.target).map((l) => l.title)
      expect(targetLists).not.toContain("Backlog")
      expect(targetLists).not.toContain("Todo")

      // The next pass with the same files: nothing to do, the same entries used.
      const again = yield* cli(["--plan", "--json"])
      expect(again.code, again.stderr).toBe(0)
      expect(JSON.parse(again.stdout).plan).toMatchObject({ create: 0, update: 0, unchanged: 4, mappings: used })
    }), 120_000)

  it.effect("a mapping file that cannot be used: one line naming the file and what is wrong, exit 64, nothing read", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-migrate-mappings-")
      const env = connectionEnv(handle)
      const base = ["migrate", "--from", "workspace:a", "--to", "workspace:b", "--journal", path.join(dir, "m.sqlite")]
      const file = (name: string, text: string) => {
        const f = path.join(dir, name)
        fs.writeFileSync(f, text)
        return f
      }
      const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
        [["--title-map", path.join(dir, "absent.json")], `--title-map ${path.join(dir, "absent.json")}: file not found`],
        [["--title-map", file("bad.json", "{lists:")], `--title-map ${path.join(dir, "bad.json")}: not valid JSON`],
        [["--title-map", file("array.json", `{"lists": ["Backlog"]}`)], `--title-map ${path.join(dir, "array.json")}: expected {"lists"`],
        [["--title-map", file("key.json", `{"list": {"Backlog": "Inbox"}}`)], `--title-map ${path.join(dir, "key.json")}: expected {"lists"`],
        [["--people", file("header.csv", "who,where\nAnn,ann@x.example\n")], `--people ${path.join(dir, "header.csv")}: the header must have the columns name,email`],
        [["--people", file("target.csv", "name,email\nAnn,Ann There\n")], `--people ${path.join(dir, "target.csv")}: row 2: "Ann There" is neither an e-mail nor skip`]
      ]
      handle.resetStats()
      for (const [extra, line] of cases) {
        const r = yield* Effect.promise(() => runCli([...base, ...extra], { env }))
        expect(r.code, r.stderr).toBe(64)
        const lines = r.stderr.trim().split("\n")
        expect(lines, r.stderr).toHaveLength(1)
        expect(lines[0]).toContain(line)
      }
      expect(Object.values(handle.stats().byRoute).reduce((a, b) => a + b, 0)).toBe(0)
    }), 120_000)
})
