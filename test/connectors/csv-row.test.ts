import * as Result from "effect/Result"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { parseMapFlag, parseMappingFile, resolveMapping } from "../../src/connectors/csv/mapping.ts"
import { trelloLabels } from "../../src/connectors/presets/trello.ts"
import { decodeRowWithSchema, fastDecodeRow, normalizeDate, normalizeDateOnce, parseDone, validateRow } from "../../src/connectors/csv/row.ts"
import { contentKey, makeExtractor } from "../../src/connectors/csv/rows.ts"

const ok = <A>(e: Result.Result<A, unknown>): A => {
  if (Result.isFailure(e)) throw new Error(`expected Success, got ${JSON.stringify(e.failure)}`)
  return e.success
}

describe("row validation", () => {
  it("R-REST-RECORD-34 R-REST-RECORD-35: bare dates stay all-day, timestamps stay timed", () => {
    expect(normalizeDate("2024-05-01")).toBe("2024-05-01")
    expect(normalizeDate(" 2024-05-01T09:30:00Z ")).toBe("2024-05-01T09:30:00Z")
    expect(normalizeDate("2024-05-01T09:30:00+02:00")).toBe("2024-05-01T09:30:00+02:00")
    // Zone-less timestamps are read as UTC (assumptions.ts CSV_TIMESTAMP_WITHOUT_ZONE).
    expect(normalizeDate("2024-05-01 09:30")).toBe("2024-05-01T09:30:00Z")
    // Jira's export format.
    expect(normalizeDate("24/Jan/24")).toBe("2024-01-24")
    expect(normalizeDate("24/Jan/24 3:05 PM")).toBe("2024-01-24T15:05:00Z")
    expect(normalizeDate("24/Jan/24 12:05 AM")).toBe("2024-01-24T00:05:00Z")
    for (const bad of ["2024-02-30", "2024-13-01", "31/02/2024", "tomorrow", "2024-05-01T25:00:00Z", "30/Feb/24"]) {
      expect(normalizeDate(bad)).toBeUndefined()
    }
  })

  it("property: every real calendar day and UTC timestamp passes through unchanged", () => {
    fc.assert(
      fc.property(fc.date({ min: new Date("1970-01-01"), max: new Date("2199-12-31"), noInvalidDate: true }), (d) => {
        const iso = d.toISOString()
        expect(normalizeDate(iso)).toBe(iso)
        expect(normalizeDate(iso.slice(0, 10))).toBe(iso.slice(0, 10))
      })
    )
  })

  it("property: the shortcuts for YYYY-MM-DD and YYYY-MM-DDTHH:MM:SSZ read every text as the full reading does", () => {
    const pad = (n: number, w: number) => String(n).padStart(w, "0")
    // Every year 0000-9999 (the years Date.UTC reads as 19xx too), months and days around
    // the valid ones, times around their bounds, and the separators swapped or lower case.
    const day = fc.tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }))
      .map(([y, m, d]) => `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`)
    const time = fc.tuple(fc.integer({ min: 0, max: 25 }), fc.integer({ min: 0, max: 61 }), fc.integer({ min: 0, max: 61 }))
      .map(([h, m, s]) => `${pad(h, 2)}:${pad(m, 2)}:${pad(s, 2)}`)
    const text = fc.oneof(
      day,
      fc.tuple(day, fc.constantFrom("T", "t", " "), time, fc.constantFrom("Z", "z", "", "+")).map((p) => p.join("")),
      fc.string({ unit: fc.constantFrom("0", "1", "2", "9", "-", ":", "T", "Z", " ", "/"), minLength: 8, maxLength: 22 })
    )
    fc.assert(
      fc.property(text, (t) => {
        expect(normalizeDate(t)).toBe(normalizeDateOnce(t))
      }),
      { numRuns: 20_000 }
    )
    for (const t of ["0000-02-29", "0004-02-29", "1900-02-29", "2000-02-29", "2100-02-29", "9996-02-29", "2024-12-31T23:59:59Z"]) {
      expect(normalizeDate(t)).toBe(normalizeDateOnce(t))
    }
  })

  it("done accepts the usual spellings in any case, and a completion date means done", () => {
    const truthy = ["yes", "Y", "TRUE", "1", "x", "Done", "completed", "✓", "closed"]
    const falsy = ["no", "N", "false", "0", "", "  ", "open", "To Do", "not done"]
    fc.assert(
      fc.property(fc.constantFrom(...truthy, ...falsy), fc.boolean(), (word, upper) => {
        const spelled = upper ? word.toUpperCase() : word.toLowerCase()
        expect(parseDone(spelled)).toBe(truthy.includes(word))
      })
    )
    expect(parseDone("2024-06-02")).toBe(true)
    expect(parseDone("maybe")).toBeUndefined()
  })

  it("a row: title trimmed, CRLF normalised, assignees split and lower-cased, tags deduplicated", () => {
    const row = ok(validateRow({
      title: "  Write report ",
      description: "a\r\n\r\nb",
      assignees: "Ada@Acme.test; grace@acme.test,ada@acme.test",
      tags: "x, y;x",
      done: "yes",
      duedAt: "2024-05-01"
    }))
    expect(row).toMatchObject({
      title: "Write report",
      description: "a\n\nb",
      assignees: ["ada@acme.test", "grace@acme.test"],
      tags: ["x", "y"],
      done: true,
      duedAt: "2024-05-01"
    })
  })

  it("R-REST-RECORD-33: description and descriptionHtml together are rejected, as are bad cells, with readable errors", () => {
    const err = (raw: Record<string, string>) => {
      const r = validateRow({ title: "t", ...raw })
      return Result.isFailure(r) ? r.failure : "valid"
    }
    expect(err({ description: "a", descriptionHtml: "<p>b</p>" })).toMatch(/description and descriptionHtml/)
    expect(err({ assignees: "not-an-email" })).toBe("assignees: \"not-an-email\" is not an e-mail address")
    expect(err({ startedAt: "soon" })).toMatch(/^startedAt "soon" is not a date/)
    expect(err({ title: "   " })).toBe("title is empty")
  })

  it("property: the fast row decoder accepts nothing the schema rejects, and agrees with it on what it accepts", () => {
    // Keys are absent or strings, as the extractor builds them.
    const cell = (...samples: Array<string>) => fc.oneof(fc.constantFrom(...samples), fc.string({ maxLength: 12 }))
    const raw = fc.record({
      title: fc.oneof(fc.constantFrom("", "  ", "Task", " padded "), fc.string({ maxLength: 12 })),
      description: cell("a\r\nb", "plain"),
      descriptionHtml: cell("<p>x</p>"),
      list: cell(" Backlog "),
      startedAt: cell("2024-05-01", "2024-05-01 09:30", "24/Jan/24 3:05 PM", "2024-02-30"),
      duedAt: cell("2024-05-01T09:30:00Z", "bad"),
      assignees: cell("a@b.co; C@D.org", "nope", "a@b.co,,a@b.co"),
      tags: cell("x, y;x", ";"),
      done: cell("yes", "NO", "2024-01-01", "maybe", ""),
      key: cell(" k1 ")
    }, { requiredKeys: ["title"] })
    fc.assert(
      fc.property(raw, (r) => {
        const fast = fastDecodeRow(r)
        const slow = decodeRowWithSchema(r)
        if (fast !== undefined) expect(Result.getOrThrow(slow)).toStrictEqual(fast)
        expect(Result.isSuccess(validateRow(r))).toBe(Result.isSuccess(slow))
      }),
      { numRuns: 500 }
    )
  })

  it("property: any non-blank title is accepted and comes back trimmed; blank ones are rejected", () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 30 }), (title) => {
        const r = validateRow({ title })
        if (title.trim() === "") expect(Result.isFailure(r)).toBe(true)
        else expect(ok(r).title).toBe(title.trim())
      })
    )
  })
})

describe("mapping", () => {
  it("--map FIELD=COLUMN and --mapping files are checked; the column may contain '='", () => {
    expect(ok(parseMapFlag("title=A=B"))).toEqual(["title", "A=B"])
    expect(Result.isFailure(parseMapFlag("titel=Name"))).toBe(true)
    expect(Result.isFailure(parseMapFlag("title="))).toBe(true)
    expect(ok(parseMappingFile("m.json", "{\"title\":\"Name\",\"done\":\"Status\"}"))).toEqual({ title: "Name", done: "Status" })
    expect(Result.isFailure(parseMappingFile("m.json", "{\"owner\":\"x\"}"))).toBe(true)
    expect(Result.isFailure(parseMappingFile("m.json", "{"))).toBe(true)
    // Not JSON: where, never the text (a wrong file given by mistake may hold a token).
    const notJson = parseMappingFile("m.json", "WORKSYNC_TOKEN=tok-secret-123\n")
    expect(Result.isFailure(notJson) && notJson.failure.message).toBe("--mapping m.json: not valid JSON")
  })

  it("property: explicit columns resolve to their index; a column not in the header is an error", () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 6 }).filter((s) => s.trim() === s && s !== ""), {
          minLength: 1,
          maxLength: 8,
          comparator: (a, b) => a.toLowerCase() === b.toLowerCase()
        }),
        fc.nat(),
        (header, pick) => {
          const column = header[pick % header.length]!
          const m = ok(resolveMapping(header, { flags: [["title", column]] }))
          expect(m.mapping.title?.indexes).toEqual([header.indexOf(column)])
          const missing = `${column}\u0001`
          const bad = resolveMapping(header, { flags: [["title", column], ["tags", missing]] })
          expect(Result.isFailure(bad) && bad.failure.message).toMatch(/unknown column in the mapping/)
        }
      )
    )
  })

  it("the generic preset maps our field names and their synonyms; explicit entries win over it", () => {
    const g = ok(resolveMapping(["Name", "Notes", "Section", "Due date", "Assignee Email", "Labels", "id"], { preset: "generic", flags: [["description", "Section"]] }))
    expect(g.mapping.title?.name).toBe("name")
    expect(g.mapping.assignees?.name).toBe("assignee email")
    expect(g.mapping.key?.name).toBe("id")
    expect(g.mapping.description?.name).toBe("Section")
    expect(Result.isFailure(resolveMapping(["Foo"], { preset: "generic" }))).toBe(true)
    expect(trelloLabels("Bug (red), Urgent (orange), (green)")).toEqual(["Bug", "Urgent", "green"])
  })

  it("row identity: the key column when mapped, else a content hash; a repeated column (Labels) is joined", () => {
    const header = ["Summary", "Issue key", "Labels", "Labels", "Resolved"]
    const m = ok(resolveMapping(header, { flags: [["title", "Summary"], ["key", "Issue key"], ["tags", "Labels"], ["done", "Resolved"]] }))
    const extract = makeExtractor(header, m.mapping, m.transforms)
    const e = extract({ line: 2, values: ["Fix it", "PRJ-1", "backend", "urgent", "24/Jan/24 10:00 AM"] })
    expect(e.key).toBe("k:PRJ-1")
    expect(e.occurrence).toBe(false)
    expect(ok(e.row)).toMatchObject({ title: "Fix it", tags: ["backend", "urgent"], done: true })
    const noKey = makeExtractor(["title"], ok(resolveMapping(["title"], { preset: "generic" })).mapping, {})
    const h = noKey({ line: 2, values: ["x"] })
    expect(h.key).toBe(contentKey(["x"]))
    expect(h.occurrence).toBe(true)
    const tooWide = noKey({ line: 3, values: ["a", "b"] })
    expect(Result.isFailure(tooWide.row) && tooWide.row.failure).toMatch(/2 fields but the header has 1/)
  })
})
