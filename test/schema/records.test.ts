import { Result, Option } from "effect"
import { describe, expect, it } from "vitest"
import {
  CountRecordsAnswer,
  CreateRecordResponse,
  createdListId,
  CUSTOM_FIELD_TYPES,
  CustomFieldType,
  decodeUnknownEither,
  describeParseError,
  formatIssues,
  RecordDetail,
  RecordSummary,
  RecordsPage,
  SearchResult,
  SearchResults,
  SuccessResponse
} from "../../src/schema/index.ts"

const summary = () => ({
  id: "6650a1b2c3d4e5f60718293a",
  uid: "k3j9x0q2m1ab",
  title: "Prepare quarterly report",
  done: false,
  archived: false,
  position: 65535.5,
  startedAt: "2024-05-01T00:00:00.000Z",
  duedAt: null,
  color: null,
  createdAt: "2024-04-30T08:15:02.120Z",
  updatedAt: "2024-05-02T11:00:00.000Z",
  todoList: { id: "6650a1b2c3d4e5f607180001", title: "Backlog" },
  users: [{ id: "u1", firstName: "Ada", lastName: "Lovelace", email: "ada@example.com" }],
  tags: [{ id: "t1", title: "finance", color: "#ff0000" }]
})

const detail = () => ({
  ...summary(),
  text: "Numbers for Q2",
  html: "<p>Numbers for Q2</p>",
  timezone: "",
  cover: "",
  commentCount: 2,
  checklistCount: 1,
  checklistCompletedCount: 0,
  isRepeating: false,
  checklists: [
    {
      id: "c1",
      title: "Steps",
      position: 1,
      checklistItems: [
        { id: "ci1", title: "Collect", done: true, position: 1, startedAt: null, duedAt: "2024-05-03T00:00:00.000Z" }
      ]
    }
  ],
  customFields: [
    {
      id: "cf1",
      name: "Approved",
      type: "CHECKBOX",
      text: null,
      number: null,
      checked: true,
      customFieldOptions: [],
      tableColumns: [],
      tableRows: [],
      tableTotals: []
    },
    {
      id: "cf2",
      name: "Priority",
      type: "SELECT_SINGLE",
      text: null,
      number: null,
      checked: null,
      customFieldOptions: [{ id: "o1", title: "High", color: "red" }],
      tableColumns: [],
      tableRows: [],
      tableTotals: []
    },
    {
      id: "cf3",
      name: "Costs",
      type: "TABLE",
      text: null,
      number: null,
      checked: null,
      customFieldOptions: [],
      tableColumns: [{ id: "col1", name: "Amount", type: "NUMBER" }],
      tableRows: [{ position: 1, cells: [{ columnId: "col1", value: 12.5 }] }],
      tableTotals: [{ columnId: "col1", value: 12.5 }]
    }
  ]
})

const decodeSummary = decodeUnknownEither(RecordSummary)
const decodeDetail = decodeUnknownEither(RecordDetail)

const failure = <A>(r: Result.Result<A, import("effect").Schema.SchemaError>) => {
  if (Result.isSuccess(r)) throw new Error("expected a decode failure")
  return r.failure
}

describe("record summary", () => {
  it("R-REST-RECORD-02..10: a realistic list-records item decodes with every field typed", () => {
    const r = decodeSummary(summary())
    expect(Result.isSuccess(r)).toBe(true)
    const s = Result.getOrThrow(r)
    expect(s.todoList).toEqual({ id: "6650a1b2c3d4e5f607180001", title: "Backlog" })
    expect(s.users[0]?.email).toBe("ada@example.com")
    expect(s.tags[0]?.color).toBe("#ff0000")
  })

  it("R-REST-RECORD-02: a numeric id fails naming the path", () => {
    expect(describeParseError(failure(decodeSummary({ ...summary(), id: 42 })))).toBe("id: expected string, got number")
  })

  it("R-REST-RECORD-03: done must be a boolean", () => {
    expect(describeParseError(failure(decodeSummary({ ...summary(), done: "false" })))).toBe(
      "done: expected boolean, got string"
    )
  })

  it("R-REST-RECORD-04: position must be a number", () => {
    expect(formatIssues(failure(decodeSummary({ ...summary(), position: "1" })))).toEqual([
      { path: ["position"], message: "expected number, got string" }
    ])
  })

  it("R-REST-RECORD-05: startedAt and duedAt are ISO 8601 timestamps or null", () => {
    expect(Result.isSuccess(decodeSummary({ ...summary(), startedAt: null, duedAt: "2024-06-01T17:00:00+02:00" }))).toBe(true)
    const issues = formatIssues(failure(decodeSummary({ ...summary(), duedAt: "next tuesday" })))
    expect(issues[0]?.path).toEqual(["duedAt"])
    expect(issues[0]?.message).toContain("ISO 8601")
  })

  it("R-REST-RECORD-06: color is a string or null", () => {
    expect(Result.isSuccess(decodeSummary({ ...summary(), color: "blue" }))).toBe(true)
    expect(describeParseError(failure(decodeSummary({ ...summary(), color: 3 })))).toBe(
      "color: expected string or null, got number"
    )
  })

  it("R-REST-RECORD-07: createdAt and updatedAt are required ISO 8601 timestamps", () => {
    const { createdAt: _c, ...rest } = summary()
    expect(describeParseError(failure(decodeSummary(rest)))).toBe("createdAt: is missing")
    expect(formatIssues(failure(decodeSummary({ ...summary(), updatedAt: "2024-13-01T00:00:00Z" })))[0]?.path).toEqual([
      "updatedAt"
    ])
  })

  it("R-REST-RECORD-08: todoList is {id, title}", () => {
    expect(describeParseError(failure(decodeSummary({ ...summary(), todoList: { id: "l1" } })))).toBe(
      "todoList.title: is missing"
    )
  })

  it("R-REST-RECORD-09: users are {id, firstName, lastName, email}; a bad email is named by path", () => {
    const page = {
      items: [summary(), summary(), summary(), { ...summary(), users: [{ id: "u", firstName: "A", lastName: "B", email: 7 }] }],
      pageInfo: { hasNextPage: false, hasPreviousPage: false, startCursor: null, endCursor: null }
    }
    const err = failure(decodeUnknownEither(RecordsPage)(page))
    expect(describeParseError(err)).toBe("items[3].users[0].email: expected string, got number")
    expect(formatIssues(err)[0]?.path).toEqual(["items", 3, "users", 0, "email"])
  })

  it("R-REST-RECORD-10: tags are {id, title, color}", () => {
    expect(describeParseError(failure(decodeSummary({ ...summary(), tags: [{ id: "t", color: "red" }] })))).toBe(
      "tags[0].title: is missing"
    )
  })

  it("R-REST-CALL-17: extra keys are kept at every level", () => {
    const input = { ...summary(), extraTop: 1, todoList: { id: "l", title: "L", color: "x" } }
    const s = Result.getOrThrow(decodeSummary(input)) as Record<string, unknown>
    expect(s["extraTop"]).toBe(1)
    expect(s["todoList"]).toEqual({ id: "l", title: "L", color: "x" })
  })
})

describe("search result", () => {
  const result = () => {
    const { position: _p, startedAt: _s, duedAt: _d, color: _c, users: _u, ...rest } = summary()
    return { ...rest, users: [{ id: "u1", fullName: "Ada Lovelace" }] }
  }

  it("R-REST-SEARCH-10: a search result decodes without position, startedAt, duedAt and color", () => {
    const r = decodeUnknownEither(SearchResults)([result()])
    expect(Result.isSuccess(r)).toBe(true)
  })

  it("R-REST-SEARCH-11: search result users are {id, fullName}", () => {
    const s = Result.getOrThrow(decodeUnknownEither(SearchResult)(result()))
    expect(s.users).toEqual([{ id: "u1", fullName: "Ada Lovelace" }])
    const bad = { ...result(), users: [{ id: "u1", firstName: "Ada", lastName: "L", email: "a@x" }] }
    expect(describeParseError(failure(decodeUnknownEither(SearchResult)(bad)))).toBe("users[0].fullName: is missing")
  })
})

describe("record detail", () => {
  it("R-REST-RECORD-20..26: a realistic get-record answer decodes", () => {
    const d = Result.getOrThrow(decodeDetail(detail()))
    expect(d.title).toBe("Prepare quarterly report")
    expect(d.html).toBe("<p>Numbers for Q2</p>")
    expect(d.checklists[0]?.checklistItems[0]?.done).toBe(true)
  })

  it("R-REST-RECORD-20: the detail requires every summary field", () => {
    const { tags: _t, ...rest } = detail()
    expect(describeParseError(failure(decodeDetail(rest)))).toBe("tags: is missing")
  })

  it("R-REST-RECORD-21: text and html are strings", () => {
    expect(describeParseError(failure(decodeDetail({ ...detail(), html: null })))).toBe("html: expected string, got null")
  })

  it("R-REST-RECORD-22: timezone and cover are strings (null also accepted)", () => {
    expect(Result.isSuccess(decodeDetail({ ...detail(), timezone: "Europe/Paris", cover: null }))).toBe(true)
    expect(formatIssues(failure(decodeDetail({ ...detail(), cover: 1 })))[0]?.path).toEqual(["cover"])
  })

  it("R-REST-RECORD-23: commentCount, checklistCount, checklistCompletedCount are numbers", () => {
    expect(describeParseError(failure(decodeDetail({ ...detail(), checklistCompletedCount: "0" })))).toBe(
      "checklistCompletedCount: expected number, got string"
    )
  })

  it("R-REST-RECORD-24: isRepeating is a boolean", () => {
    expect(describeParseError(failure(decodeDetail({ ...detail(), isRepeating: 0 })))).toBe(
      "isRepeating: expected boolean, got number"
    )
  })

  it("R-REST-RECORD-25: checklists are {id, title, position, checklistItems}", () => {
    const d = detail()
    const bad = { ...d, checklists: [{ id: "c", title: "t", position: 1 }] }
    expect(describeParseError(failure(decodeDetail(bad)))).toBe("checklists[0].checklistItems: is missing")
  })

  it("R-REST-RECORD-26: checklist items are {id, title, done, position, startedAt, duedAt}", () => {
    const d = detail()
    const item = { id: "ci", title: "t", done: "yes", position: 1, startedAt: null, duedAt: null }
    const bad = { ...d, checklists: [{ id: "c", title: "t", position: 1, checklistItems: [item] }] }
    expect(describeParseError(failure(decodeDetail(bad)))).toBe(
      "checklists[0].checklistItems[0].done: expected boolean, got string"
    )
  })

  it("R-CUSTOMFIELD-04: customFields carry id, name, type, text, number, checked and the option/table arrays", () => {
    const d = Result.getOrThrow(decodeDetail(detail()))
    expect(d.customFields.map((f) => f.name)).toEqual(["Approved", "Priority", "Costs"])
    const field = detail().customFields[0]!
    // The documents name the keys but not the types of the values: any value is kept.
    const odd = Result.getOrThrow(decodeDetail({ ...detail(), customFields: [{ ...field, number: "1" }] }))
    expect(odd.customFields[0]?.number).toBe("1")
    const { name: _n, ...noName } = field
    expect(describeParseError(failure(decodeDetail({ ...detail(), customFields: [noName] })))).toBe("customFields[0].name: is missing")
  })

  it("R-CUSTOMFIELD-05: an option is {id, title, color}", () => {
    const d = Result.getOrThrow(decodeDetail(detail()))
    expect(d.customFields[1]?.customFieldOptions).toEqual([{ id: "o1", title: "High", color: "red" }])
    const f = { ...detail().customFields[1]!, customFieldOptions: [{ id: "o1", color: "red" }] }
    expect(describeParseError(failure(decodeDetail({ ...detail(), customFields: [f] })))).toBe(
      "customFields[0].customFieldOptions[0].title: is missing"
    )
  })

  it("R-CUSTOMFIELD-06: a table row is {position, cells}; cell contents are kept as sent", () => {
    const d = Result.getOrThrow(decodeDetail(detail()))
    expect(d.customFields[2]?.tableRows).toEqual([{ position: 1, cells: [{ columnId: "col1", value: 12.5 }] }])
    // Table contents are not shown by the documents: a row of another shape is kept as sent.
    const f = { ...detail().customFields[2]!, tableRows: [{ cells: [] }] }
    expect(Result.getOrThrow(decodeDetail({ ...detail(), customFields: [f] })).customFields[0]?.tableRows).toEqual([{ cells: [] }])
  })

  it("R-CUSTOMFIELD-07: CHECKBOX is a custom field type; unknown types are still read", () => {
    expect(CUSTOM_FIELD_TYPES).toContain("CHECKBOX")
    expect(Result.isSuccess(decodeUnknownEither(CustomFieldType)("CHECKBOX"))).toBe(true)
    const f = { ...detail().customFields[0]!, type: "RATING" }
    expect(Result.isSuccess(decodeDetail({ ...detail(), customFields: [f] }))).toBe(true)
  })
})

describe("write responses", () => {
  it("R-REST-RECORD-40: create-record answers {id, uid, title, rank, list}; only id, uid, title are required", () => {
    const body = { id: "r1", uid: "abc", title: "T", rank: "0|hzzzzz:", list: { id: "l1", title: "Backlog" } }
    expect(Result.getOrThrow(decodeUnknownEither(CreateRecordResponse)(body))).toEqual(body)
    expect(Result.isSuccess(decodeUnknownEither(CreateRecordResponse)({ ...body, rank: 3 }))).toBe(true)
    // The other example of the documents has no `list` (it shows position and todoList).
    const { list: _l, ...noList } = body
    expect(Result.isSuccess(decodeUnknownEither(CreateRecordResponse)(noList))).toBe(true)
    const { uid: _u, ...noUid } = body
    expect(describeParseError(failure(decodeUnknownEither(CreateRecordResponse)(noUid)))).toBe("uid: is missing")
  })

  it("R-REST-RECORD-41: extra keys of the create-record answer (position, todoList) are kept", () => {
    const body = {
      id: "r1",
      uid: "abc",
      title: "T",
      rank: 1,
      list: { id: "l1", title: "Backlog" },
      position: 65535,
      todoList: { id: "l1", title: "Backlog" }
    }
    const decoded = Result.getOrThrow(decodeUnknownEither(CreateRecordResponse)(body))
    expect(decoded).toEqual(body)
    expect(createdListId(decoded)).toBe("l1")
  })

  it("R-REST-RECORD-51/54: move-record and delete-record answer {success: true}", () => {
    expect(Result.isSuccess(decodeUnknownEither(SuccessResponse)({ success: true }))).toBe(true)
    expect(Result.isFailure(decodeUnknownEither(SuccessResponse)({ success: false }))).toBe(true)
  })

  it("count-records answers {count} (assumptions COUNT_RECORDS_RESPONSE)", () => {
    expect(Result.getOrThrow(decodeUnknownEither(CountRecordsAnswer)({ count: 12 }))).toEqual(Option.some(12))
  })
})
