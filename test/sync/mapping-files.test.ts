/**
 * The mapping files of import-csv and migrate (sync/mapping-files.ts): a people file maps
 * a person by e-mail or display name to a target e-mail or `skip`, a title map renames
 * lists and tags (two onto one), each remembers the entries looked up; a file that cannot
 * be used is a message naming it and what is wrong.
 */
import { describe, expect, it } from "vitest"
import { mappingsOf, readPeopleFile, readTitleMapFile, SKIP } from "../../src/sync/mapping-files.ts"

const people = (text: string) => {
  const read = readPeopleFile("people.csv", text)
  if ("error" in read) throw new Error(read.error)
  return read
}

describe("people file", () => {
  it("maps by e-mail first, then by display name (case and spaces folded), to a lower-case e-mail or skip; what was looked up is used", () => {
    const map = people("\uFEFFName,Email\n  Ann Person ,Ann@Target.example\nbob@source.example,SKIP\nNobody,nobody@target.example\n,\n")
    expect(map.target({ email: "someone@source.example", name: "ann person" })).toBe("ann@target.example")
    expect(map.target({ email: "BOB@source.example", name: "Ann Person" })).toBe(SKIP)
    expect(map.target({ email: "cy@source.example", name: "Cy" })).toBeUndefined()
    expect(map.use()).toEqual({
      used: [{ kind: "person", from: "Ann Person", to: "ann@target.example" }, { kind: "person", from: "bob@source.example", to: "skip" }],
      unused: [{ kind: "person", from: "Nobody", to: "nobody@target.example" }]
    })
  })

  it("a target that is neither an e-mail nor skip, a person mapped twice to different targets, half a row, or no name,email header: the file and what is wrong", () => {
    expect(readPeopleFile("p.csv", "name,email\nAnn,Ann There\n")).toEqual({ error: `--people p.csv: row 2: "Ann There" is neither an e-mail nor skip` })
    expect(readPeopleFile("p.csv", "name,email\nAnn,a@x.example\nann,b@x.example\n")).toEqual({
      error: `--people p.csv: row 3: "ann" is mapped twice, to a@x.example and to b@x.example`
    })
    expect(readPeopleFile("p.csv", "who,email\n")).toEqual({ error: "--people p.csv: the header must have the columns name,email" })
    // Half a row: the person would be left unmapped without a word.
    expect(readPeopleFile("p.csv", "name,email\nAnn,a@x.example\nBob,\n")).toEqual({ error: `--people p.csv: row 3: "Bob" has no e-mail (give one, or skip)` })
    expect(readPeopleFile("p.csv", "name,email\nAnn\n")).toEqual({ error: `--people p.csv: row 2: "Ann" has no e-mail (give one, or skip)` })
    expect(readPeopleFile("p.csv", "name,email\n,b@x.example\n")).toEqual({ error: `--people p.csv: row 2: no name for "b@x.example"` })
    // The same mapping twice is no conflict.
    expect("error" in readPeopleFile("p.csv", "name,email\nAnn,a@x.example\nAnn,A@x.example\n")).toBe(false)
  })
})

describe("title map", () => {
  it("renames lists and tags apart (two titles onto one), leaves the others as they are, and lists the entries used and unused", () => {
    const read = readTitleMapFile("t.json", JSON.stringify({ lists: { Backlog: "Inbox", Todo: "Inbox", Ghost: "X" }, tags: { bug: "defect" } }))
    if ("error" in read) throw new Error(read.error)
    expect(["Backlog", "Todo", "Done"].map(read.list)).toEqual(["Inbox", "Inbox", "Done"])
    // A list entry does not rename a tag of the same title.
    expect(["bug", "Backlog"].map(read.tag)).toEqual(["defect", "Backlog"])
    expect(mappingsOf(undefined, read)).toEqual({
      titles: {
        used: [{ kind: "list", from: "Backlog", to: "Inbox" }, { kind: "list", from: "Todo", to: "Inbox" }, { kind: "tag", from: "bug", to: "defect" }],
        unused: [{ kind: "list", from: "Ghost", to: "X" }]
      }
    })
    expect(mappingsOf(undefined, undefined)).toBeUndefined()
  })

  it("not JSON, another key, a title that is not a string or is empty: one line naming the file", () => {
    const error = (text: string) => {
      const read = readTitleMapFile("t.json", text)
      return "error" in read ? read.error : undefined
    }
    expect(error("{lists:")).toMatch(/^--title-map t\.json: not valid JSON/)
    // A wrong file given by mistake: the parser's message would quote its text, a token with it.
    for (const text of ["WORKSYNC_TOKEN=tok-secret-123\n", `{"lists": {}} tok-secret-123`, `{"token": "tok-secret-123"`]) {
      expect(error(text), text).toMatch(/^--title-map t\.json: not valid JSON( \(at character \d+\))?$/)
    }
    for (const text of [`{"list": {}}`, `{"lists": ["a"]}`, `{"tags": {"a": 1}}`, `{"tags": {"a": ""}}`, `[]`]) {
      const e = error(text)
      expect(e, text).toMatch(/^--title-map t\.json: expected \{"lists": \{"Source title": "Target title"\}, "tags": \{\.\.\.\}\}: /)
      expect(e!.split("\n")).toHaveLength(1)
    }
  })
})
