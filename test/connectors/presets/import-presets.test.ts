/**
 * Imports of other tools' exports, end to end against the emulator: records, comments
 * with their attribution line, attachments (bytes; one from a URL that needs no
 * credentials, one found under --attachments, one reported as not fetched), checklists,
 * sub-tasks, archived state, people, the census; a rerun sends nothing.
 */
import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { GraphqlClient } from "../../../src/client/graphql-client.ts"
import { RestClient } from "../../../src/client/rest-client.ts"
import { importCsv } from "../../../src/connectors/csv/import.ts"
import type { ImportOptions } from "../../../src/connectors/csv/options.ts"
import type { ImportResult } from "../../../src/connectors/csv/result.ts"
import type { EmulatorHandle } from "../../../src/emulator/index.ts"
import { Journal } from "../../../src/store/journal.ts"
import { Emulator, emulatorLayer, tempDir } from "../../support/effect.ts"
import { testClient } from "../../sync/replay-helpers.ts"
import { fixture } from "./read-fixture.ts"

/** A local attachment server: files under /files/ need no credentials, anything else asks for them. */
class AttachmentServer extends Context.Service<AttachmentServer, {
  readonly url: string
  /** Requests the attachment server saw, with their Authorization header. */
  readonly seen: Array<{ url: string; authorization: string | undefined }>
}>()("test/AttachmentServer") {}

const attachmentServerLayer = Layer.effect(
  AttachmentServer,
  Effect.acquireRelease(
    Effect.promise(async () => {
      const seen: Array<{ url: string; authorization: string | undefined }> = []
      const server = http.createServer((req, res) => {
        seen.push({ url: req.url ?? "", authorization: req.headers.authorization })
        if (req.url?.startsWith("/files/")) {
          res.writeHead(200, { "content-type": "application/octet-stream" })
          res.end(`bytes of ${path.basename(req.url)}`)
        } else {
          res.writeHead(401, { "www-authenticate": "Basic" })
          res.end()
        }
      })
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
      return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen }
    }),
    ({ server }) => Effect.promise(() => new Promise((resolve) => server.close(resolve)))
  ).pipe(Effect.map(({ seen, url }) => ({ seen, url })))
)

/** The fixture with its attachment URLs pointed at the local attachment server. */
const localCopy = (filesUrl: string, name: string, dir: string) => {
  const out = path.join(dir, name)
  fs.writeFileSync(out, fs.readFileSync(fixture(name), "utf8").replaceAll("http://127.0.0.1:1", filesUrl))
  return out
}

/** An import; the local attachment server stands in for the tool's own host, so it is named (`--attachment-hosts`). */
/**
 * A record's list: the one its row names, or, on a service whose list create makes no list
 * (the alt reading, assumptions.ts CREATE_LIST_READING), the workspace's first list, with
 * the result naming the list it could not make.
 */
const expectList = (handle: EmulatorHandle, r: ImportResult, got: string, wanted: string) => {
  if (handle.variant === "alt") {
    expect(got).toBe("To do")
    expect(r.listsNotMade).toContain(wanted)
    expect(r.notices.find((n) => n.startsWith("lists:"))).toContain(JSON.stringify(wanted))
  } else {
    expect(got).toBe(wanted)
    expect(r.listsNotMade).toBeUndefined()
  }
}

const run = (ws: string, journalFile: string, options: Partial<ImportOptions> & Pick<ImportOptions, "csv" | "mapping">) =>
  Effect.flatMap(Effect.all([Emulator, AttachmentServer]), ([handle, files]) =>
    Effect.gen(function*() {
      return yield* importCsv(yield* RestClient, yield* Journal, {
        workspaceId: ws,
        graphql: yield* GraphqlClient,
        attachmentHosts: [new URL(files.url).host],
        ...options
      })
    }).pipe(Effect.provide(Layer.merge(Journal.layer(journalFile), testClient(handle)))))

/** Reads of what the emulator stored. */
const queriesOf = (handle: EmulatorHandle) => {
  const db = () => handle.ctx.db
  const recordByTitle = (ws: string, title: string) =>
    db().prepare("SELECT r.*, l.title AS list FROM records r JOIN lists l ON l.id = r.list_id WHERE r.workspace_id = ? AND r.title = ? AND r.deleted_at IS NULL")
      .all(ws, title) as Array<{ id: string; done: number; archived: number; list: string; description: string | null }>
  const commentsOf = (recordId: string) =>
    db().prepare("SELECT id, text, html FROM activity WHERE record_id = ? AND kind = 'COMMENT' AND deleted_at IS NULL ORDER BY created_at, id")
      .all(recordId) as Array<{ id: string; text: string | null; html: string | null }>
  const filesOfComment = (commentId: string) =>
    db().prepare("SELECT f.name, f.size, f.storage_key FROM comment_files cf JOIN files f ON f.id = cf.file_id WHERE cf.comment_id = ?")
      .all(commentId) as Array<{ name: string; size: number; storage_key: string }>
  const bytesOf = (key: string) =>
    Effect.promise(async () => {
      const chunks: Array<Buffer> = []
      for await (const c of handle.ctx.objects.read(key)) chunks.push(Buffer.from(c as Buffer))
      return Buffer.concat(chunks).toString("utf8")
    })
  const checklistsOf = (recordId: string) =>
    (db().prepare("SELECT id, title FROM checklists WHERE record_id = ? AND deleted_at IS NULL ORDER BY position").all(recordId) as Array<{ id: string; title: string }>)
      .map((c) => ({
        title: c.title,
        items: (db().prepare("SELECT title, done FROM checklist_items WHERE checklist_id = ? AND deleted_at IS NULL ORDER BY position").all(c.id) as Array<{ title: string; done: number }>)
          .map((i) => ({ title: i.title, done: i.done === 1 }))
      }))
  const writes = () => Object.entries(handle.stats().byRoute).filter(([route]) => /create|update|upload|move|delete|graphql/i.test(route))
  return { db, recordByTitle, commentsOf, filesOfComment, bytesOf, checklistsOf, writes }
}

// Imports talk to the emulator and the attachment server over real HTTP: the layer's tests
// run on the live clock (`excludeTestServices`).
layer(Layer.merge(emulatorLayer({ seed: "empty" }), attachmentServerLayer), { timeout: 30_000, excludeTestServices: true })("presets: imports from other tools that lose nothing", (it) => {
  it.effect("jira: fields, comments with attribution, attachments (--attachments, not fetched), sub-tasks, census, people; a rerun sends nothing", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const { seen, url: filesUrl } = yield* AttachmentServer
      const { recordByTitle, commentsOf, filesOfComment, bytesOf, checklistsOf, writes } = queriesOf(handle)
      const ws = handle.admin.createWorkspace({ name: "from jira" }).id
      handle.admin.createUser({ email: "alice@example.com", firstName: "Alice", lastName: "Example", workspaces: { [ws]: "MEMBER" } })
      const dir = yield* tempDir("ws-jira-")
      const csv = localCopy(filesUrl, "jira.csv", dir)
      const attachments = path.join(dir, "attachments")
      fs.mkdirSync(attachments)
      fs.writeFileSync(path.join(attachments, "screen shot;1.png"), "png bytes from the directory")
      const journal = path.join(dir, "j.sqlite")
      seen.length = 0
      const r = yield* run(ws, journal, { csv: { file: csv }, mapping: { preset: "jira" }, attachmentsDir: attachments })

      expect(r).toMatchObject({ rows: 3, created: 3, rejected: 0, failed: 0, unknown: 0, blocked: 0, comments: 2, attachments: 1 })
      // Both Jira URLs need credentials: one file is found under --attachments, the other is reported.
      expect(r.attachmentsNotFetched).toEqual([
        { name: "log.txt", reason: `needs credentials (HTTP 401); not found in ${path.resolve(attachments)}` }
      ])
      // "Alice Example" is resolved by the workspace user's full name; nobody is unresolved.
      expect(r.people).toEqual({ unresolved: [] })
      expect(r.problems).toEqual([
        "line 6: Created: \"31/Feb/25 10:00 AM\" is not a date",
        "line 6: Due date: \"not a date\" is not a date"
      ])
      // The census: every column, carried or not, repeated columns summed.
      expect(r.census!.carried.find((c) => c.column === "Comment")).toEqual({ column: "Comment", field: "comments", count: 2 })
      expect(r.census!.notCarried.find((c) => c.column === "Sprint")).toEqual({ column: "Sprint", count: 2, reason: "the service has no sprints" })
      const columns = new Set([...r.census!.carried, ...r.census!.notCarried].map((c) => c.column))
      const header = fs.readFileSync(csv, "utf8").replace(/^\uFEFF/, "").split("\r\n")[0]!.split(",")
      expect([...new Set(header)].filter((h) => !columns.has(h))).toEqual([])

      const [issue] = recordByTitle(ws, "Login fails on Safari")
      expect(issue).toMatchObject({ done: 1, archived: 0 })
      expectList(handle, r, issue!.list, "Done")
      const comments = commentsOf(issue!.id)
      expect(comments.map((c) => c.text!.split("\n")[0])).toEqual([
        "Alice Example wrote on 2025-11-05T17:18:00Z (Jira):",
        "Bob Reporter wrote on 2025-11-06T09:00:00Z (Jira):",
        "Bob Reporter attached screen shot;1.png on 2025-11-05T17:20:00Z (Jira):",
        "Alice Example attached log.txt on 2025-11-06T08:00:00Z (Jira):"
      ])
      expect(comments[0]!.text).toBe("Alice Example wrote on 2025-11-05T17:18:00Z (Jira):\nReproduced; looks like a cookie issue.\nSee log.")
      // The first attachment's URL needs credentials: found by name under --attachments instead.
      const [fromDir] = filesOfComment(comments[2]!.id)
      expect(fromDir!.name).toBe("screen shot;1.png")
      expect(yield* bytesOf(fromDir!.storage_key)).toBe("png bytes from the directory")
      // The one not fetched: its comment names it, its URL and why.
      expect(filesOfComment(comments[3]!.id)).toEqual([])
      expect(comments[3]!.text).toBe(
        `Alice Example attached log.txt on 2025-11-06T08:00:00Z (Jira):\n${filesUrl}/secure/attachment/10011/log.txt\n(not attached: needs credentials (HTTP 401); not found in ${path.resolve(attachments)})`
      )
      // No credential of any kind reached the other tool's server.
      expect(seen.length).toBeGreaterThan(0)
      expect(seen.every((s) => s.authorization === undefined)).toBe(true)
      // The sub-task is a record, and an item of its parent's Sub-tasks checklist.
      expect(recordByTitle(ws, "Write release notes")).toHaveLength(1)
      expect(checklistsOf(issue!.id)).toEqual([{ title: "Sub-tasks", items: [{ title: "Write release notes", done: false }] }])

      handle.resetStats()
      const again = yield* run(ws, journal, { csv: { file: csv }, mapping: { preset: "jira" }, attachmentsDir: attachments })
      expect(again).toMatchObject({ rows: 3, created: 0, skipped: 3, comments: 0, attachments: 0 })
      expect(writes()).toEqual([])
      expect(commentsOf(issue!.id)).toHaveLength(4)
    }))

  it.effect("a comment whose answer is lost (committed, connection dropped) is found, never sent twice", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const { seen, url: filesUrl } = yield* AttachmentServer
      const { recordByTitle, commentsOf, filesOfComment, bytesOf, checklistsOf, writes } = queriesOf(handle)
      const ws = handle.admin.createWorkspace({ name: "jira lost answers" }).id
      const dir = yield* tempDir("ws-jira-lost-")
      // Both attachment URLs need credentials and there is no --attachments: no upload, so
      // the first GraphQL writes are the comments.
      const csv = localCopy(filesUrl, "jira.csv", dir)
      handle.faults.inject({ route: "/graphql", kind: "ambiguous", times: 3 })
      const r = yield* run(ws, path.join(dir, "j.sqlite"), { csv: { file: csv }, mapping: { preset: "jira" } })
      handle.faults.reset()
      expect(r).toMatchObject({ created: 3, failed: 0, unknown: 0, blocked: 0, comments: 2 })
      const [issue] = recordByTitle(ws, "Login fails on Safari")
      const texts = commentsOf(issue!.id).map((c) => c.text!.split("\n")[0])
      expect(texts).toEqual([
        "Alice Example wrote on 2025-11-05T17:18:00Z (Jira):",
        "Bob Reporter wrote on 2025-11-06T09:00:00Z (Jira):",
        "Bob Reporter attached screen shot;1.png on 2025-11-05T17:20:00Z (Jira):",
        "Alice Example attached log.txt on 2025-11-06T08:00:00Z (Jira):"
      ])
    }))

  it.effect("trello board JSON: comments oldest first, checklists, archived; people not in the workspace are listed, never rejecting a card", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const { seen, url: filesUrl } = yield* AttachmentServer
      const { recordByTitle, commentsOf, filesOfComment, bytesOf, checklistsOf, writes } = queriesOf(handle)
      const ws = handle.admin.createWorkspace({ name: "from trello" }).id
      const dir = yield* tempDir("ws-trello-")
      const board = localCopy(filesUrl, "trello-board.json", dir)
      const r = yield* run(ws, path.join(dir, "j.sqlite"), { csv: { file: board }, mapping: { preset: "trello" } })
      expect(r).toMatchObject({ rows: 2, created: 2, rejected: 0, failed: 0, blocked: 0, comments: 2, attachments: 1 })
      expect(r.people).toEqual({ unresolved: ["Dana Member"] })
      const [logo] = recordByTitle(ws, "Design the logo")
      expect(commentsOf(logo!.id).map((c) => c.text)).toEqual([
        "Eve Outside wrote on 2025-11-02T10:00:00.000Z (Trello):\nFirst; with a semicolon",
        "Dana Member wrote on 2025-11-03T10:00:00.000Z (Trello):\nSecond: \"quoted\"\nand a new line",
        `Someone attached brief.txt (Trello):\n${filesUrl}/files/brief.txt`
      ])
      const [brief] = filesOfComment(commentsOf(logo!.id)[2]!.id)
      expect(yield* bytesOf(brief!.storage_key)).toBe("bytes of brief.txt")
      expect(checklistsOf(logo!.id)).toEqual([{ title: "Steps", items: [{ title: "Sketch", done: true }, { title: "Pick colours", done: false }] }])
      // Archived, or (a service that cannot archive: the alt reading) a notice saying so: never silently live.
      const shelved = recordByTitle(ws, "Shelved card")[0]!
      expect(shelved.done).toBe(1)
      const archivedNotice = r.notices.some((n) => n.startsWith("archived"))
      expect(shelved.archived === 1 ? !archivedNotice : archivedNotice).toBe(true)
    }))

  it.effect("asana: a task whose assignee is not a member is imported without them; the parent found by name", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const { seen, url: filesUrl } = yield* AttachmentServer
      const { recordByTitle, commentsOf, filesOfComment, bytesOf, checklistsOf, writes } = queriesOf(handle)
      const ws = handle.admin.createWorkspace({ name: "from asana" }).id
      handle.admin.createUser({ email: "dana@example.com", firstName: "Dana", lastName: "Member", workspaces: { [ws]: "MEMBER" } })
      const dir = yield* tempDir("ws-asana-")
      const r = yield* run(ws, path.join(dir, "j.sqlite"), { csv: { file: fixture("asana.csv") }, mapping: { preset: "asana" } })
      expect(r).toMatchObject({ rows: 2, created: 2, rejected: 0, failed: 0, blocked: 0 })
      expect(r.people).toEqual({ unresolved: ["Stranger"] })
      const [plan] = recordByTitle(ws, "Plan the offsite")
      expect(plan).toMatchObject({ done: 1 })
      expectList(handle, r, plan!.list, "Planning")
      expect(checklistsOf(plan!.id)).toEqual([{ title: "Sub-tasks", items: [{ title: "Book the venue", done: false }] }])
      expect(r.census!.notCarried.find((c) => c.column === "Effort ")).toMatchObject({ count: 1 })
    }))

  it.effect("clickup: comments and checklists from JSON cells, an attachment from its URL", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const { seen, url: filesUrl } = yield* AttachmentServer
      const { recordByTitle, commentsOf, filesOfComment, bytesOf, checklistsOf, writes } = queriesOf(handle)
      const ws = handle.admin.createWorkspace({ name: "from clickup" }).id
      const dir = yield* tempDir("ws-clickup-")
      const csv = localCopy(filesUrl, "clickup.csv", dir)
      const r = yield* run(ws, path.join(dir, "j.sqlite"), { csv: { file: csv }, mapping: { preset: "clickup" } })
      expect(r).toMatchObject({ rows: 2, created: 2, rejected: 0, failed: 0, blocked: 0, comments: 2, attachments: 1 })
      const [ship] = recordByTitle(ws, "Ship the beta")
      expect(ship).toMatchObject({ done: 1 })
      expectList(handle, r, ship!.list, "complete")
      expect(commentsOf(ship!.id).map((c) => c.text!.split("\n")[0])).toEqual([
        "dana@example.com wrote on 2025-11-05T09:36:40.000Z (ClickUp):",
        "Eve Outside wrote on 2025-11-06T08:00:00Z (ClickUp):",
        "Someone attached notes.txt (ClickUp):"
      ])
      expect(checklistsOf(ship!.id)).toEqual([
        { title: "Release", items: [{ title: "Tag the build", done: true }, { title: "Announce", done: false }] },
        { title: "Sub-tasks", items: [{ title: "Write changelog", done: false }] }
      ])
    }))
})
