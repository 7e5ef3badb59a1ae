import * as fc from "fast-check"
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { readTrelloBoard } from "../../../src/connectors/presets/trello-board.ts"
import { trello, trelloLabels } from "../../../src/connectors/presets/trello.ts"
import { fixture, openWith, readFixture } from "./read-fixture.ts"

describe("trello preset", () => {
  it("reads the board CSV export: archived, done, labels without colours, members by name, attachment links", async () => {
    const { header, rows } = await readFixture("trello.csv")
    const reader = openWith(trello, header)
    const [logo, old] = rows.map((r) => reader.read(r))
    expect(logo).toMatchObject({
      id: "5f1a",
      title: "Design the logo",
      description: "Sketch three\nvariants",
      list: "Doing",
      startedAt: "2025-11-01T09:00:00.000Z",
      duedAt: "2025-11-10T12:00:00.000Z",
      done: true,
      archived: false,
      tags: ["Design", "Urgent", "green"],
      assignees: [{ name: "Dana Member" }, { name: "Stranger Person" }],
      attachments: [{ name: "logo.png", url: "http://127.0.0.1:1/files/logo.png" }],
      problems: []
    })
    expect(old).toMatchObject({ id: "5f1b", archived: true, done: false, list: "Backlog", description: undefined })
    const comments = reader.columns.find((u) => u.column === "Comment Count")
    expect(comments).toMatchObject({ carried: false })
    expect(comments && !comments.carried && comments.reason).toContain("board JSON export")
    expect(reader.columns).toHaveLength(header.length)
  })

  it("reads the board JSON export: comments oldest first with their authors, checklists in order, archived lists, attachments", () => {
    const board = readTrelloBoard(fs.readFileSync(fixture("trello-board.json"), "utf8"))
    if ("error" in board) throw new Error(board.error)
    const reader = openWith(trello, board.header)
    const [logo, shelved] = board.rows.map((r) => reader.read(r.values))
    expect(logo).toMatchObject({
      id: "c1",
      list: "Doing",
      description: "Three variants\nthen pick one",
      tags: ["Design", "green"],
      assignees: [{ name: "Dana Member" }],
      archived: false,
      comments: [
        { author: "Eve Outside", date: "2025-11-02T10:00:00.000Z", body: "First; with a semicolon" },
        { author: "Dana Member", date: "2025-11-03T10:00:00.000Z", body: "Second: \"quoted\"\nand a new line" }
      ],
      checklists: [{ title: "Steps", items: [{ title: "Sketch", done: true }, { title: "Pick colours", done: false }] }],
      attachments: [{ name: "brief.txt", url: "http://127.0.0.1:1/files/brief.txt" }]
    })
    // A card of an archived list is archived with it.
    expect(shelved).toMatchObject({ id: "c2", archived: true, done: true, list: "Shelved" })
  })

  it("says in one line when a JSON file is not a Trello board", () => {
    expect(readTrelloBoard("{\"name\":1}")).toEqual({ error: "no \"cards\" array: is this a Trello board JSON export?" })
    expect(readTrelloBoard("{")).toMatchObject({ error: expect.stringContaining("not valid JSON") })
  })

  it("labels: a name keeps its words, the colour suffix goes, never a throw", () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        trelloLabels(s)
      })
    )
    const name = fc.stringMatching(/^[A-Za-z][A-Za-z ]{0,10}[A-Za-z]$/)
    fc.assert(fc.property(name, fc.constantFrom("red", "green", "sky"), (n, c) => {
      expect(trelloLabels(`${n} (${c})`)).toEqual([n])
    }))
  })
})
