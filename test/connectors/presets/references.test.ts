/**
 * What each tool's texts name as a reference to another item (presets/references.ts), and
 * how a reference is written to name its target record (sync/references.ts: the token
 * kept, `(record ID)` after it; assumptions.ts RECORD_REFERENCE_FORM).
 */
import { describe, expect, it } from "vitest"
import { findReferences } from "../../../src/connectors/presets/references.ts"
import { comparableText, rewriteHtml, rewriteText, withoutReferenceMarks } from "../../../src/sync/references.ts"

describe("findReferences", () => {
  it("Jira: issue keys, bare or in a browse URL, not inside a longer key", () => {
    expect(findReferences("jira", "See ABC-1, https://x.atlassian.net/browse/ABC-2 and ABC-12; not XABC-1x or abc-1")).toEqual([
      { token: "ABC-1", name: "ABC-1" },
      { token: "ABC-2", name: "ABC-2" },
      { token: "ABC-12", name: "ABC-12" }
    ])
  })

  it("Trello: a card URL with or without the card's name, a trailing full stop left out", () => {
    expect(findReferences("trello", "After https://trello.com/c/AbCd1234/12-card-name. Or https://trello.com/c/EfGh5678")).toEqual([
      { token: "https://trello.com/c/AbCd1234/12-card-name", name: "AbCd1234" },
      { token: "https://trello.com/c/EfGh5678", name: "EfGh5678" }
    ])
  })

  it("Asana: a task URL (/0/PROJECT/TASK, with /f or not, and .../task/TASK)", () => {
    expect(findReferences("asana", "(https://app.asana.com/0/111/222/f) and https://app.asana.com/1/9/project/111/task/333")).toEqual([
      { token: "https://app.asana.com/0/111/222/f", name: "222" },
      { token: "https://app.asana.com/1/9/project/111/task/333", name: "333" }
    ])
  })

  it("ClickUp: a task URL (/t/TASKID, or /t/TEAM/TASKID)", () => {
    expect(findReferences("clickup", "https://app.clickup.com/t/86abc12 and https://app.clickup.com/t/9012/86def34")).toEqual([
      { token: "https://app.clickup.com/t/86abc12", name: "86abc12" },
      { token: "https://app.clickup.com/t/9012/86def34", name: "86def34" }
    ])
  })

  it("nothing in a text without references", () => {
    expect(findReferences("jira", undefined)).toEqual([])
    expect(findReferences("trello", "https://example.com/c/AbCd1234")).toEqual([])
  })
})

describe("rewriting references", () => {
  const targets = new Map([["ABC-1", "t1"], ["https://trello.com/c/AbCd1234/1-a", "t2"]])

  it("appends the target to every occurrence of a token, not to a longer token, once", () => {
    const once = rewriteText("ABC-1 then ABC-12, ABC-1. See https://trello.com/c/AbCd1234/1-a", targets)
    expect(once).toBe("ABC-1 (record t1) then ABC-12, ABC-1 (record t1). See https://trello.com/c/AbCd1234/1-a (record t2)")
    expect(rewriteText(once, targets)).toBe(once)
    expect(withoutReferenceMarks(once)).toBe("ABC-1 then ABC-12, ABC-1. See https://trello.com/c/AbCd1234/1-a")
  })

  it("HTML: only the text between tags, never an attribute", () => {
    expect(rewriteHtml(`<p><a href="https://trello.com/c/AbCd1234/1-a">https://trello.com/c/AbCd1234/1-a</a> ABC-1</p>`, targets)).toBe(
      `<p><a href="https://trello.com/c/AbCd1234/1-a">https://trello.com/c/AbCd1234/1-a (record t2)</a> ABC-1 (record t1)</p>`
    )
  })

  it("a description as written compares equal to its rewritten form on the service", () => {
    expect(comparableText("<p>Follows ABC-1 (record t1).</p>")).toBe(comparableText("Follows ABC-1."))
  })
})
