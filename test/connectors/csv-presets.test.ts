import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RestClient } from "../../src/client/rest-client.ts"
import { importCsv } from "../../src/connectors/csv/import.ts"
import { type PresetName } from "../../src/connectors/csv/presets.ts"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { Journal, journalLayer } from "../../src/store/journal.ts"
import { testClient, tmpDir } from "../sync/replay-helpers.ts"

let handle: EmulatorHandle
beforeAll(async () => {
  // The demo seed has the users the Asana sample assigns (ada@, grace@acme.test).
  handle = await startEmulator({ seed: "demo" })
})
afterAll(() => handle.close())

const sample = (name: string) => path.join("examples", "data", name)

const importSample = (preset: PresetName, file: string) => {
  const ws = handle.admin.createWorkspace({ name: `preset ${preset}` }).id
  const journalFile = path.join(tmpDir("ws-presets-"), "j.sqlite")
  return Effect.runPromise(
    Effect.gen(function*() {
      const result = yield* importCsv(yield* RestClient, yield* Journal, {
        workspaceId: ws,
        csv: { file: sample(file) },
        mapping: { preset }
      })
      return { ws, result }
    }).pipe(Effect.provide(Layer.merge(journalLayer(journalFile), testClient(handle))))
  )
}

interface Rec {
  title: string
  list: string
  done: number
  dued_at: string | null
  dued_all_day: number
  tags: string | null
  assignees: string | null
}
const records = (ws: string): Map<string, Rec> =>
  new Map(
    (handle.ctx.db
      .prepare(
        `SELECT r.title, l.title AS list, r.done, r.dued_at, r.dued_all_day,
           (SELECT group_concat(t.title, ',') FROM record_tags rt JOIN tags t ON t.id = rt.tag_id WHERE rt.record_id = r.id) AS tags,
           (SELECT group_concat(u.email, ',') FROM record_assignees ra JOIN users u ON u.id = ra.user_id WHERE ra.record_id = r.id) AS assignees
         FROM records r JOIN lists l ON l.id = r.list_id WHERE r.workspace_id = ? AND r.deleted_at IS NULL`
      )
      .all(ws) as Array<Rec>).map((r) => [r.title, r])
  )

describe("presets on sample exports (examples/data)", () => {
  it("R-REST-RECORD-38 R-REST-RECORD-39: asana: sections become lists, Assignee Email assigns, Completed At means done", async () => {
    const { ws, result } = await importSample("asana", "asana-export.csv")
    expect(result).toMatchObject({ rows: 3, created: 3, rejected: 0 })
    const r = records(ws)
    expect(r.get("Draft the release notes")).toMatchObject({ list: "In progress", done: 0, assignees: "ada@acme.test", dued_all_day: 1 })
    expect(r.get("Draft the release notes")!.tags!.split(",").sort()).toEqual(["docs", "release"])
    expect(r.get("Tag the release")).toMatchObject({ list: "Done", done: 1, assignees: "grace@acme.test" })
  })

  it("trello: List Name, label colours dropped, Due Complete means done", async () => {
    const { ws, result } = await importSample("trello", "trello-export.csv")
    expect(result).toMatchObject({ rows: 3, created: 3, rejected: 0 })
    const r = records(ws)
    expect(r.get("Design the landing page")!.tags!.split(",").sort()).toEqual(["Design", "Urgent"])
    expect(r.get("Design the landing page")).toMatchObject({ list: "Doing", done: 0, dued_all_day: 0 })
    expect(r.get("Pick a domain")).toMatchObject({ list: "Done", done: 1 })
  })

  it("jira: repeated Labels columns, Jira dates, a Resolved date means done", async () => {
    const { ws, result } = await importSample("jira", "jira-export.csv")
    expect(result).toMatchObject({ rows: 3, created: 3, rejected: 0 })
    const r = records(ws)
    // Labels, plus the priority and issue type as tags.
    expect(r.get("Login fails with SSO")!.tags!.split(",").sort()).toEqual(["Priority: High", "Type: Bug", "backend", "sso"])
    expect(r.get("Login fails with SSO")).toMatchObject({ list: "In Progress", done: 0, dued_all_day: 1 })
    expect(r.get("Rotate the TLS certificates")).toMatchObject({ list: "Done", done: 1 })
    expect(r.get("Upgrade the database")).toMatchObject({ dued_all_day: 0 })
  })

  it("generic: our own field names", async () => {
    const { ws, result } = await importSample("generic", "generic.csv")
    expect(result).toMatchObject({ rows: 3, created: 3, rejected: 0 })
    expect(records(ws).get("Send the invitations")).toMatchObject({ list: "Backlog", done: 1, dued_all_day: 0 })
  })
})
