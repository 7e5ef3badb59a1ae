/**
 * References between records carried (import-csv presets, migrate): a description or
 * comment naming another item of the migration names its target record afterwards, with
 * the token kept and the target id appended (assumptions.ts RECORD_REFERENCE_FORM);
 * references to items outside the migration are left as written and counted. Exactly
 * once: a rerun sends nothing. The CLI runs against the emulator over HTTP, with real
 * SQLite journals.
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { insertList } from "../../src/emulator/core/lists.ts"
import { insertComment } from "../../src/emulator/core/writes.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { rpc } from "../support/mirror-cli.ts"

const BIN = "bin/worksync.js"

interface Ran {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

const run = (handle: EmulatorHandle, args: ReadonlyArray<string>, extraEnv: Record<string, string> = {}) =>
  Effect.promise(() =>
    new Promise<Ran>((resolve) => {
      const child: ChildProcess = spawn(process.execPath, [BIN, ...args], {
        env: {
          ...process.env,
          WORKSYNC_REST_URL: handle.restUrl,
          WORKSYNC_BASE_URL: handle.baseUrl,
          WORKSYNC_TOKEN: handle.token,
          WORKSYNC_ORG: handle.org,
          WORKSYNC_TOKEN_ID: handle.tokenId,
          WORKSYNC_TOKEN_SECRET: handle.tokenSecret,
          ...extraEnv
        },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout!.on("data", (d) => (stdout += d))
      child.stderr!.on("data", (d) => (stderr += d))
      child.on("close", (code) => resolve({ code, stdout, stderr }))
    })
  )

const recordByTitle = (handle: EmulatorHandle, ws: string, title: string) =>
  handle.ctx.db.prepare("SELECT id, text, html FROM records WHERE workspace_id = ? AND title = ? AND deleted_at IS NULL").get(ws, title) as
    | { id: string; text: string; html: string }
    | undefined

const commentsOf = (handle: EmulatorHandle, recordId: string): Array<string> =>
  (handle.ctx.db.prepare("SELECT text FROM activity WHERE record_id = ? AND kind = 'COMMENT' AND deleted_at IS NULL ORDER BY created_at").all(recordId) as Array<{ text: string }>)
    .map((c) => c.text)

/** REST writes the service has seen. */
const writes = (handle: EmulatorHandle) =>
  ["create-list", "create-record", "update-record", "move-record", "delete-record"].map((w) => handle.stats().byRoute[w] ?? 0)

const CLI_TEST_TIMEOUT = 120_000

/** A source workspace of three records and a target workspace in another organization, with the CLI's environment. */
const seedMigration = async (handle: EmulatorHandle, name: string) => {
  const ws = handle.admin.createWorkspace({ name: `${name} source` }).id
  // Made directly: the alt reading's list create makes no list (CREATE_LIST_READING).
  const backlog = insertList(handle.ctx, ws, "Backlog")
  const ids: Record<string, string> = {}
  for (const title of ["Alpha", "Bravo", "Charlie"]) ids[title] = (await rpc(handle, "create-record", { workspaceId: ws, title, listId: backlog.id })).id
  const org = handle.admin.createOrganization({ name: "Target", slug: `${name}-target` })
  const owner = handle.admin.createUser({ email: `owner-${org}@target.example`, firstName: "Tara", lastName: "Owner", orgLevel: "OWNER", orgId: org })
  const target = handle.admin.createWorkspace({ name: `${name} target`, orgId: org }).id
  const env = {
    WORKSYNC_TARGET_TOKEN: owner.token,
    WORKSYNC_TARGET_TOKEN_ID: owner.tokenId,
    WORKSYNC_TARGET_TOKEN_SECRET: owner.tokenSecret,
    WORKSYNC_TARGET_ORG: org
  }
  return { ws, ids, target, env }
}

/**
 * ABC-2's description names ABC-1; ABC-1's comment names ABC-2 (a cycle: whichever is
 * created first, the other does not exist yet) and ABC-999, which is not in the export.
 * ABC-12 and XABC-1 contain ABC-1 but are other keys (not in the export either): three
 * references outside.
 */
const JIRA = [
  "Summary,Issue key,Issue id,Status,Description,Comment",
  "First issue,ABC-1,1001,To Do,Plain text,\"05/Nov/25 5:18 PM;Alice Example;Blocked by ABC-2, and see ABC-999\"",
  "Second issue,ABC-2,1002,To Do,\"Follows ABC-1.\nNot ABC-12 or XABC-1.\","
].join("\n")

layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("references between records", () => {
    it.effect("import-csv --preset jira: a description and a comment name the target records (a cycle), one outside is counted; a rerun sends nothing", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "jira references" }).id
        const dir = yield* tempDir("ws-references-")
        const csv = path.join(dir, "jira.csv")
        fs.writeFileSync(csv, JIRA)
        const args = ["import-csv", "--workspace", ws, "--csv", csv, "--preset", "jira", "--journal", path.join(dir, "j.sqlite")]

        const plan = yield* run(handle, [...args, "--plan", "--json"])
        expect(plan.code, plan.stderr).toBe(0)
        expect(JSON.parse(plan.stdout).plan.references).toEqual({ rewritten: 2, outside: 3 })
        const planText = yield* run(handle, [...args, "--plan"])
        expect(planText.stderr).toContain("plan: references: 2 to rewrite to name the target record, 3 to items outside the migration (left as written)")

        const first = yield* run(handle, [...args, "--json"])
        expect(first.code, first.stderr).toBe(0)
        expect(JSON.parse(first.stdout)).toMatchObject({ created: 2, comments: 1, references: { rewritten: 2, outside: 3 } })
        const one = recordByTitle(handle, ws, "First issue")!
        const two = recordByTitle(handle, ws, "Second issue")!
        // The token is kept and the target id appended; its own key (the attribution line) and
        // tokens that only contain it are left alone.
        expect(two.text).toContain(`Follows ABC-1 (record ${one.id}).`)
        expect(two.text).toContain("Jira ABC-2\n")
        expect(two.text).toContain("Not ABC-12 or XABC-1.")
        expect(two.text.match(/\(record /g)).toHaveLength(1)
        const comments = commentsOf(handle, one.id)
        expect(comments).toHaveLength(1)
        expect(comments[0]).toContain(`Blocked by ABC-2 (record ${two.id}), and see ABC-999`)
        expect(comments[0]).not.toContain("ABC-999 (record")

        // A rerun: everything is done, nothing is sent again.
        handle.resetStats()
        const again = yield* run(handle, [...args, "--json"])
        expect(again.code, again.stderr).toBe(0)
        expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, comments: 0, references: { rewritten: 0, outside: 3 } })
        expect(writes(handle)).toEqual([0, 0, 0, 0, 0])
        expect(commentsOf(handle, one.id)).toEqual(comments)
        expect(recordByTitle(handle, ws, "Second issue")!.text).toBe(two.text)
      }), CLI_TEST_TIMEOUT)

    it.effect("import-csv --preset jira under faults: the references' update and the comment lose their answers once; each is written once, and a rerun sends nothing", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "jira references faults" }).id
        const dir = yield* tempDir("ws-references-faults-")
        const csv = path.join(dir, "jira.csv")
        fs.writeFileSync(csv, JIRA)
        const args = ["import-csv", "--workspace", ws, "--csv", csv, "--preset", "jira", "--journal", path.join(dir, "j.sqlite"), "--json"]
        // Committed, answer lost: the description's update (the only update-record of this
        // export) and the comment (the first GraphQL write).
        handle.faults.inject({ route: "update-record", kind: "ambiguous" })
        handle.faults.inject({ route: "/graphql", kind: "ambiguous" })
        handle.resetStats()
        const first = yield* run(handle, [...args, "--adoption-window", "1"])
        handle.faults.reset()
        expect(first.code, first.stderr).toBe(0)
        // The update whose answer was lost is sent again: it sets a value, so nothing is repeated.
        expect(handle.stats().byRoute["update-record"]).toBe(2)
        expect(JSON.parse(first.stdout)).toMatchObject({ created: 2, comments: 1, references: { rewritten: 2, outside: 3 } })
        const one = recordByTitle(handle, ws, "First issue")!
        const two = recordByTitle(handle, ws, "Second issue")!
        expect(two.text).toContain(`Follows ABC-1 (record ${one.id}).`)
        expect(two.text.match(/\(record /g)).toHaveLength(1)
        const comments = commentsOf(handle, one.id)
        expect(comments).toHaveLength(1)
        expect(comments[0]).toContain(`Blocked by ABC-2 (record ${two.id}), and see ABC-999`)

        handle.resetStats()
        const again = yield* run(handle, args)
        expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, comments: 0, references: { rewritten: 0, outside: 3 } })
        expect(writes(handle)).toEqual([0, 0, 0, 0, 0])
        expect(commentsOf(handle, one.id)).toEqual(comments)
      }), CLI_TEST_TIMEOUT)

    it.effect("import-csv --preset jira, a later export: a changed description is written and its references rewritten (no target edit); undo then deletes every record", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "jira references delta" }).id
        const dir = yield* tempDir("ws-references-delta-")
        const csv = path.join(dir, "jira.csv")
        const journal = path.join(dir, "j.sqlite")
        fs.writeFileSync(csv, JIRA)
        const args = ["import-csv", "--workspace", ws, "--csv", csv, "--preset", "jira", "--journal", journal, "--json"]
        expect((yield* run(handle, args)).code).toBe(0)
        const one = recordByTitle(handle, ws, "First issue")!
        fs.writeFileSync(csv, JIRA.replace("Follows ABC-1.", "Now after ABC-1 only."))
        const later = yield* run(handle, args)
        expect(later.code, later.stderr).toBe(0)
        const pass = JSON.parse(later.stdout)
        expect(pass).toMatchObject({ pass: 2, updated: 1, references: { rewritten: 1 } })
        expect(pass.kept).toBeUndefined()
        expect(recordByTitle(handle, ws, "Second issue")!.text).toContain(`Now after ABC-1 (record ${one.id}) only.`)

        // The rewritten description is what the journal wrote, not an edit on the target: undo deletes the record.
        const undo = yield* run(handle, ["undo", "--journal", journal, "--json"])
        expect(undo.code, undo.stderr).toBe(0)
        expect(JSON.parse(undo.stdout)).toMatchObject({ deleted: 2, kept: [] })
        expect(recordByTitle(handle, ws, "Second issue")).toBeUndefined()
      }), CLI_TEST_TIMEOUT)

    it.effect("import-csv --preset trello: a card URL in a description names the target record; a URL of a card not in the export is counted", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "trello references" }).id
        const dir = yield* tempDir("ws-references-trello-")
        const csv = path.join(dir, "trello.csv")
        fs.writeFileSync(csv, [
          "Card ID,Card Name,Card URL,Card Description,List Name",
          "c1,Card A,https://trello.com/c/AbCd1234/1-card-a,Plain,To Do",
          "c2,Card B,https://trello.com/c/EfGh5678/2-card-b,\"See https://trello.com/c/AbCd1234/1-card-a. Also https://trello.com/c/Zzzz9999\",To Do"
        ].join("\n"))
        const args = ["import-csv", "--workspace", ws, "--csv", csv, "--preset", "trello", "--journal", path.join(dir, "j.sqlite"), "--json"]
        const first = yield* run(handle, args)
        expect(first.code, first.stderr).toBe(0)
        expect(JSON.parse(first.stdout)).toMatchObject({ created: 2, references: { rewritten: 1, outside: 1 } })
        const a = recordByTitle(handle, ws, "Card A")!
        expect(recordByTitle(handle, ws, "Card B")!.text).toBe(
          `See https://trello.com/c/AbCd1234/1-card-a (record ${a.id}). Also https://trello.com/c/Zzzz9999`
        )
        handle.resetStats()
        const again = yield* run(handle, args)
        expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, references: { rewritten: 0, outside: 1 } })
        expect(writes(handle)).toEqual([0, 0, 0, 0, 0])
      }), CLI_TEST_TIMEOUT)

    it.effect("migrate: a description naming another source record by its id names the target record, a comment too; an id of no source record is counted; a rerun sends nothing; a changed description is rewritten", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const s = yield* Effect.promise(() => seedMigration(handle, "references"))
        const { Alpha: alpha, Bravo: bravo, Charlie: charlie } = s.ids as Record<string, string>
        // An id of the source's shape that names no record of it.
        const stranger = bravo!.split("").reverse().join("")
        yield* Effect.promise(() => rpc(handle, "update-record", { workspaceId: s.ws, recordId: alpha, description: `Depends on ${bravo} and ${stranger}.` }))
        insertComment(handle.ctx, { workspaceId: s.ws, recordId: bravo!, userId: handle.ownerUserId, html: `<p>Needed by ${alpha}</p>`, text: `Needed by ${alpha}` })
        const dir = yield* tempDir("ws-references-migrate-")
        const args = ["migrate", "--from", `workspace:${s.ws}`, "--to", `workspace:${s.target}`, "--journal", path.join(dir, "m.sqlite"), "--people", "skip", "--json"]

        const plan = yield* run(handle, [...args, "--plan"], s.env)
        expect(plan.code, plan.stderr).toBe(0)
        expect(JSON.parse(plan.stdout).plan.references).toEqual({ rewritten: 2, outside: 1 })

        const first = yield* run(handle, args, s.env)
        expect(first.code, first.stderr).toBe(0)
        expect(JSON.parse(first.stdout).references).toEqual({ rewritten: 2, outside: 1 })
        const a = recordByTitle(handle, s.target, "Alpha")!
        const b = recordByTitle(handle, s.target, "Bravo")!
        const c = recordByTitle(handle, s.target, "Charlie")!
        expect(a.text).toBe(`Depends on ${bravo} (record ${b.id}) and ${stranger}.`)
        const comments = commentsOf(handle, b.id)
        expect(comments).toHaveLength(1)
        expect(comments[0]).toContain(`Needed by ${alpha} (record ${a.id})`)

        // A rerun: nothing is sent again, and the rewritten description is no target edit.
        handle.resetStats()
        const again = yield* run(handle, args, s.env)
        expect(again.code, again.stderr).toBe(0)
        const rerun = JSON.parse(again.stdout)
        expect(rerun.references).toEqual({ rewritten: 0, outside: 1 })
        expect(rerun.kept).toBeUndefined()
        expect(writes(handle)).toEqual([0, 0, 0, 0, 0])
        expect(commentsOf(handle, b.id)).toEqual(comments)

        // The source's description changes: the next pass writes it, and its reference.
        yield* Effect.promise(() => rpc(handle, "update-record", { workspaceId: s.ws, recordId: alpha, description: `Now after ${charlie}.` }))
        const delta = yield* run(handle, args, s.env)
        expect(delta.code, delta.stderr).toBe(0)
        const pass = JSON.parse(delta.stdout)
        expect(pass).toMatchObject({ updated: 1, references: { rewritten: 1, outside: 0 } })
        expect(pass.kept).toBeUndefined()
        expect(recordByTitle(handle, s.target, "Alpha")!.text).toBe(`Now after ${charlie} (record ${c.id}).`)
      }), CLI_TEST_TIMEOUT)

    it.effect("migrate under faults: the first update-record and GraphQL calls lose their answers (committed); the references are written once, and a rerun sends nothing", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const s = yield* Effect.promise(() => seedMigration(handle, "references-faults"))
        const { Alpha: alpha, Bravo: bravo } = s.ids as Record<string, string>
        yield* Effect.promise(() => rpc(handle, "update-record", { workspaceId: s.ws, recordId: alpha, description: `Depends on ${bravo}.` }))
        insertComment(handle.ctx, { workspaceId: s.ws, recordId: bravo!, userId: handle.ownerUserId, html: `<p>Needed by ${alpha}</p>`, text: `Needed by ${alpha}` })
        const dir = yield* tempDir("ws-references-migrate-faults-")
        const args = ["migrate", "--from", `workspace:${s.ws}`, "--to", `workspace:${s.target}`, "--journal", path.join(dir, "m.sqlite"), "--people", "skip", "--json"]
        handle.faults.inject({ route: "update-record", kind: "ambiguous", times: 3 })
        handle.faults.inject({ route: "/graphql", kind: "ambiguous", times: 3 })
        const first = yield* run(handle, args, s.env)
        handle.faults.reset()
        // A run the faults stopped short is resumed by the next: exactly once either way.
        const settled = first.code === 0 ? first : yield* run(handle, args, s.env)
        expect(settled.code, settled.stderr).toBe(0)
        const a = recordByTitle(handle, s.target, "Alpha")!
        const b = recordByTitle(handle, s.target, "Bravo")!
        expect(a.text).toBe(`Depends on ${bravo} (record ${b.id}).`)
        const comments = commentsOf(handle, b.id)
        expect(comments).toHaveLength(1)
        expect(comments[0]).toContain(`Needed by ${alpha} (record ${a.id})`)

        handle.resetStats()
        const again = yield* run(handle, args, s.env)
        expect(again.code, again.stderr).toBe(0)
        expect(JSON.parse(again.stdout).references).toEqual({ rewritten: 0, outside: 0 })
        expect(writes(handle)).toEqual([0, 0, 0, 0, 0])
        expect(commentsOf(handle, b.id)).toEqual(comments)
      }), CLI_TEST_TIMEOUT)
  })
})
