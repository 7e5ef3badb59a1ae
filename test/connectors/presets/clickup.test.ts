import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { listCell } from "../../../src/connectors/presets/cells.ts"
import { clickup, clickupChecklists, clickupComments } from "../../../src/connectors/presets/clickup.ts"
import { epochMillis } from "../../../src/connectors/presets/dates.ts"
import { openWith, readFixture } from "./read-fixture.ts"

describe("clickup preset", () => {
  it("reads the task CSV export: epoch dates, [a,b] lists, JSON checklists and comments, literal \\n, null cells", async () => {
    const { header, rows } = await readFixture("clickup.csv")
    const reader = openWith(clickup, header)
    const [ship, changelog] = rows.map((r) => reader.read(r))
    expect(ship).toMatchObject({
      id: "86a1",
      title: "Ship the beta",
      description: "Line one\nLine two",
      list: "complete",
      done: true,
      duedAt: "2025-11-10T00:00:00.000Z",
      startedAt: undefined,
      tags: ["release", "beta", "Priority: high"],
      assignees: [{ email: "dana@example.com" }, { name: "Stranger Person" }],
      attachments: [{ name: "notes.txt", url: "http://127.0.0.1:1/files/notes.txt" }],
      checklists: [{ title: "Release", items: [{ title: "Tag the build", done: true }, { title: "Announce", done: false }] }],
      comments: [
        { author: "dana@example.com", date: "2025-11-05T09:36:40.000Z", body: "Looks good; ship it" },
        { author: "Eve Outside", date: "2025-11-06T08:00:00Z", body: "Wait for QA\nplease" }
      ],
      problems: []
    })
    expect(changelog).toMatchObject({ parentId: "86a1", done: false, description: undefined, tags: [], assignees: [], comments: [] })
    expect(reader.columns.find((u) => u.column === "Story Points")).toMatchObject({ carried: false })
    expect(reader.columns.find((u) => u.column === "List Name")).toMatchObject({ carried: false, reason: "the list is taken from Status" })
  })

  it("checklists in either shape", () => {
    expect(clickupChecklists(JSON.stringify([{ name: "A", items: ["x", { name: "y", resolved: true }] }]))).toEqual([
      { title: "A", items: [{ title: "x", done: false }, { title: "y", done: true }] }
    ])
  })

  it("list, JSON and date cells never throw, and [a,b] lists round-trip", () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        listCell(s)
        clickupComments(s)
        clickupChecklists(s)
        epochMillis(s)
      })
    )
    const item = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9 _.-]{0,8}[A-Za-z0-9]$/)
    fc.assert(fc.property(fc.array(item, { maxLength: 5 }), (items) => {
      expect(listCell(`[${items.join(",")}]`)).toEqual(items)
    }))
    fc.assert(fc.property(fc.array(fc.string({ minLength: 1 }), { maxLength: 5 }), (items) => {
      expect(listCell(JSON.stringify(items))).toEqual(items.filter((i) => i !== ""))
    }))
    fc.assert(fc.property(fc.date({ min: new Date(2002, 0, 1), max: new Date(2200, 0, 1), noInvalidDate: true }), (d) => {
      expect(epochMillis(String(d.getTime()))).toBe(d.toISOString())
    }))
  })
})
