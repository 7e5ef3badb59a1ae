import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { jira, parseJiraAttachment, parseJiraComment } from "../../../src/connectors/presets/jira.ts"
import { openWith, readFixture } from "./read-fixture.ts"

describe("jira preset", () => {
  it("reads an issue as Jira writes it: done from the resolution, labels, priority and type as tags, comments and attachments from repeated columns", async () => {
    const { header, rows } = await readFixture("jira.csv")
    const reader = openWith(jira, header)
    const [first, sub, odd] = rows.map((r) => reader.read(r))
    expect(first).toMatchObject({
      id: "10001",
      title: "Login fails on Safari",
      list: "Done",
      done: true,
      duedAt: "2026-01-24",
      tags: ["frontend", "safari", "Priority: High", "Type: Bug"],
      assignees: [{ name: "Alice Example" }],
      parentId: undefined,
      problems: []
    })
    expect(first!.description).toBe("Jira WS-1, reported by Bob Reporter on 2025-11-05T17:16:00Z\n\nSteps:\n1. open; 2. log in")
    expect(first!.comments).toEqual([
      { date: "2025-11-05T17:18:00Z", author: "Alice Example", body: "Reproduced; looks like a cookie issue.\nSee log." },
      { date: "2025-11-06T09:00:00Z", author: "Bob Reporter", body: "Fixed in build 42; thanks" }
    ])
    expect(first!.attachments).toEqual([
      {
        date: "2025-11-05T17:20:00Z",
        author: "Bob Reporter",
        name: "screen shot;1.png",
        url: "http://127.0.0.1:1/secure/attachment/10010/screen%20shot%3B1.png"
      },
      { date: "2025-11-06T08:00:00Z", author: "Alice Example", name: "log.txt", url: "http://127.0.0.1:1/secure/attachment/10011/log.txt" }
    ])
    // "Unresolved" is not a resolution; the 24-hour time form; an e-mail assignee; `null` is no description.
    expect(sub).toMatchObject({ id: "10002", parentId: "10001", done: false, list: "In Progress", assignees: [{ email: "alice@example.com" }] })
    expect(sub!.description).toBe("Jira WS-2, reported by Bob Reporter on 2020-11-03T12:17:00Z")
    expect(sub!.tags).toEqual(["docs", "Priority: Medium", "Type: Sub-task"])
    // Unreadable dates are problems naming the column; the row stays.
    expect(odd!.title).toBe("Date is wrong")
    expect(odd!.problems).toEqual(["Created: \"31/Feb/25 10:00 AM\" is not a date", "Due date: \"not a date\" is not a date"])
    expect(odd!.description).toBe("Jira WS-3, reported by Carol\n\nLiteral\nnewline")
  })

  it("gives every column of the export a use: carried to a field, or left behind with a reason", async () => {
    const { header } = await readFixture("jira.csv")
    const uses = openWith(jira, header).columns
    expect(uses).toHaveLength(header.length)
    const byColumn = (c: string) => uses.filter((u) => u.column === c)
    expect(byColumn("Comment")).toEqual([
      { column: "Comment", carried: true, field: "comments" },
      { column: "Comment", carried: true, field: "comments" }
    ])
    expect(byColumn("Sprint")[0]).toEqual({ column: "Sprint", carried: false, reason: "the service has no sprints" })
    expect(byColumn("Σ Original Estimate")[0]).toMatchObject({ carried: false, reason: "the service has no time tracking" })
    expect(byColumn("Custom field (Story Points)")[0]).toMatchObject({ carried: false })
    expect(byColumn("Parent id")[0]).toMatchObject({ carried: true, field: "parent" })
    expect(byColumn("Priority")[0]).toMatchObject({ carried: true, field: "tags" })
  })

  it("refuses a file that is not a Jira export, in one line", () => {
    expect(jira.open(["Name", "Notes"])).toEqual({ error: "no \"Summary\" column: is this a Jira CSV export?" })
  })

  it("comment cells: only the first two `;` are structure, whatever the body holds", () => {
    const body = fc.string({ minLength: 1 }).filter((s) => s.trim() !== "" && !s.includes("\r") && !/\\n|\\r/.test(s))
    const author = fc.string({ minLength: 1 }).filter((s) => !s.includes(";") && s.trim() !== "" && s.trim() === s)
    fc.assert(
      fc.property(body, author, (b, a) => {
        const c = parseJiraComment(`05/Nov/25 5:16 PM;${a};${b}`)
        expect(c).toEqual({ date: "2025-11-05T17:16:00Z", author: a, body: b.trim() })
      })
    )
  })

  it("comment and attachment parsers never throw on any cell", () => {
    fc.assert(
      fc.property(fc.string(), (s) => {
        parseJiraComment(s)
        parseJiraAttachment(s)
      })
    )
  })
})
