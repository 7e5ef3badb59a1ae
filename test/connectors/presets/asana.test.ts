import { describe, expect, it } from "vitest"
import { asana } from "../../../src/connectors/presets/asana.ts"
import { openWith, readFixture } from "./read-fixture.ts"

describe("asana preset", () => {
  for (const file of ["asana.csv", "asana-old.csv"]) {
    it(`reads tasks as Asana writes them (${file}): completion, section, tags, the assignee by e-mail and name, the parent by name`, async () => {
      const { header, rows } = await readFixture(file)
      const reader = openWith(asana, header)
      const [plan, book] = rows.map((r) => reader.read(r))
      expect(plan).toMatchObject({
        id: "1201",
        title: "Plan the offsite",
        description: "Book rooms;\ncatering",
        list: "Planning",
        startedAt: "2025-11-02",
        duedAt: "2025-11-10",
        done: true,
        tags: ["events", "q4"],
        assignees: [{ email: "dana@example.com", name: "Dana Member" }],
        parentId: undefined,
        problems: []
      })
      expect(book).toMatchObject({
        id: "1202",
        done: false,
        description: undefined,
        parentId: "Plan the offsite",
        assignees: [{ email: "stranger@elsewhere.example", name: "Stranger" }]
      })
    })
  }

  it("lists custom fields by their exact names (trailing spaces kept) as not carried", async () => {
    const { header } = await readFixture("asana.csv")
    const uses = openWith(asana, header).columns
    expect(uses.find((u) => u.column === "Effort ")).toEqual({
      column: "Effort ",
      carried: false,
      reason: "custom field values: no documented operation sets them"
    })
    expect(uses.find((u) => u.column === "Projects")).toMatchObject({ carried: false })
    expect(uses.filter((u) => u.carried).map((u) => u.column)).toEqual([
      "Task ID", "Completed At", "Name", "Section/Column", "Assignee", "Assignee Email", "Start Date", "Due Date", "Tags", "Notes", "Parent task"
    ])
  })
})
