import { Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  CountRecordsInput,
  CreateListInput,
  CreateRecordInput,
  CreateTagInput,
  CreateWorkspaceInput,
  DateInput,
  decodeUnknownEither,
  DeleteRecordInput,
  DESCRIPTION_CONFLICT_MESSAGE,
  describeParseError,
  encodeEither,
  formatIssues,
  GetRecordInput,
  isAllDayInput,
  ListFilesInput,
  ListListsInput,
  ListRecordActivityInput,
  ListRecordsInput,
  ListTagsInput,
  ListUsersInput,
  ListWorkspacesInput,
  MoveRecordInput,
  SearchRecordsInput,
  UpdateRecordInput
} from "../../src/schema/index.ts"

const left = <A>(r: Result.Result<A, Schema.SchemaError>): Schema.SchemaError => {
  if (Result.isSuccess(r)) throw new Error("expected a decode failure")
  return r.failure
}

const create = decodeUnknownEither(CreateRecordInput)
const update = decodeUnknownEither(UpdateRecordInput)

describe("create-record and update-record inputs", () => {
  it("R-REST-RECORD-27: create-record requires workspaceId and title", () => {
    expect(Result.isSuccess(create({ workspaceId: "w1", title: "T" }))).toBe(true)
    expect(describeParseError(left(create({ workspaceId: "w1" })))).toBe("title: is missing")
    expect(describeParseError(left(create({ title: "T", workspaceId: 5 })))).toBe("workspaceId: expected string, got number")
  })

  it("R-REST-RECORD-33: description together with descriptionHtml is rejected with a clear message", () => {
    const both = { workspaceId: "w1", title: "T", description: "a", descriptionHtml: "<p>a</p>" }
    const issues = formatIssues(left(create(both)))
    expect(issues).toEqual([{ path: ["descriptionHtml"], message: DESCRIPTION_CONFLICT_MESSAGE }])
    expect(describeParseError(left(update({ workspaceId: "w1", recordId: "r1", description: "a", descriptionHtml: "b" })))).toBe(
      `descriptionHtml: ${DESCRIPTION_CONFLICT_MESSAGE}`
    )
    expect(Result.isSuccess(create({ workspaceId: "w1", title: "T", description: "a" }))).toBe(true)
    expect(Result.isSuccess(create({ workspaceId: "w1", title: "T", descriptionHtml: "<p>a</p>" }))).toBe(true)
  })

  it("R-REST-RECORD-34: a bare YYYY-MM-DD is accepted and names an all-day date", () => {
    const r = Result.getOrThrow(create({ workspaceId: "w", title: "T", startedAt: "2024-02-29", duedAt: "2024-03-01" }))
    expect(r.startedAt).toBe("2024-02-29")
    expect(isAllDayInput("2024-02-29")).toBe(true)
    expect(isAllDayInput("2024-02-29T10:00:00Z")).toBe(false)
  })

  it("R-REST-RECORD-34: an impossible calendar day is rejected", () => {
    for (const bad of ["2023-02-29", "2024-13-01", "2024-04-31", "24-01-01", "2024-1-1"]) {
      const issues = formatIssues(left(create({ workspaceId: "w", title: "T", duedAt: bad })))
      expect(issues[0]?.path).toEqual(["duedAt"])
      expect(issues[0]?.message).toContain("YYYY-MM-DD")
    }
  })

  it("R-REST-RECORD-35: ISO 8601 timestamps with a zone are accepted as timed dates", () => {
    const decode = decodeUnknownEither(DateInput)
    for (const ok of ["2024-05-01T09:30:00Z", "2024-05-01T09:30:00.123Z", "2024-05-01T09:30+02:00", "2024-05-01T23:59:59-0530"]) {
      expect(Result.isSuccess(decode(ok))).toBe(true)
    }
    for (const bad of ["2024-05-01T09:30:00", "2024-05-01 09:30:00Z", "tomorrow", "2024-05-01T25:00:00Z", ""]) {
      expect(describeParseError(left(decode(bad)))).toContain("ISO 8601 timestamp")
    }
  })

  it("R-REST-RECORD-43: update-record accepts every optional field, null clears a date", () => {
    const body = {
      workspaceId: "w",
      recordId: "r",
      title: "T2",
      done: true,
      archived: true,
      startedAt: null,
      duedAt: "2024-05-01",
      allDay: true,
      color: "green",
      assigneeIds: ["u1", "u2"]
    }
    expect(Result.getOrThrow(update(body))).toEqual(body)
    expect(describeParseError(left(update({ workspaceId: "w", recordId: "r", duedAt: "05/01/2024" })))).toContain("duedAt: ")
  })

  it("R-REST-RECORD-42: update-record requires workspaceId and recordId", () => {
    expect(describeParseError(left(update({ workspaceId: "w" })))).toBe("recordId: is missing")
  })

  it("encoding an input keeps exactly what the caller set", () => {
    const input: CreateRecordInput = { workspaceId: "w", title: "T", tagIds: ["t1"] }
    expect(Result.getOrThrow(encodeEither(CreateRecordInput)(input))).toEqual(input)
  })
})

describe("other record operation inputs", () => {
  it("R-REST-RECORD-11..18: list-records takes only optional filters, {} is valid", () => {
    const decode = decodeUnknownEither(ListRecordsInput)
    expect(Result.getOrThrow(decode({}))).toEqual({})
    const full = {
      workspaceId: "w",
      listId: "l",
      done: false,
      archived: true,
      assigneeIds: ["u"],
      tagIds: ["t"],
      search: "report",
      skip: 0,
      limit: 500
    }
    expect(Result.getOrThrow(decode(full))).toEqual(full)
  })

  it("R-REST-PAGE-01/03: skip is an integer >= 0; limit an integer >= 1 (above the max is not an error)", () => {
    const decode = decodeUnknownEither(ListRecordsInput)
    expect(formatIssues(left(decode({ skip: -1 })))[0]?.path).toEqual(["skip"])
    expect(formatIssues(left(decode({ skip: 1.5 })))[0]?.path).toEqual(["skip"])
    expect(formatIssues(left(decode({ limit: 0 })))[0]?.path).toEqual(["limit"])
    expect(Result.isSuccess(decode({ limit: 101 }))).toBe(true)
  })

  it("R-REST-RECORD-19/49/52: get, move and delete take their required ids", () => {
    expect(Result.isSuccess(decodeUnknownEither(GetRecordInput)({ workspaceId: "w", recordId: "r" }))).toBe(true)
    expect(describeParseError(left(decodeUnknownEither(MoveRecordInput)({ workspaceId: "w", recordId: "r" })))).toBe(
      "listId: is missing"
    )
    expect(describeParseError(left(decodeUnknownEither(DeleteRecordInput)({ recordId: "r" })))).toBe(
      "workspaceId: is missing"
    )
  })

  it("R-REST-RECORD-55: count-records accepts {}", () => {
    expect(Result.isSuccess(decodeUnknownEither(CountRecordsInput)({}))).toBe(true)
    expect(Result.isFailure(decodeUnknownEither(CountRecordsInput)({ done: "yes" }))).toBe(true)
  })

  it("R-REST-SEARCH-01: search-records requires workspaceId and query", () => {
    const decode = decodeUnknownEither(SearchRecordsInput)
    expect(Result.isSuccess(decode({ workspaceId: "team-slug", query: "report", limit: 100, archived: true }))).toBe(true)
    expect(describeParseError(left(decode({ workspaceId: "w" })))).toBe("query: is missing")
  })

  it("R-REST-ACTIVITY-01/02: list-record-activity requires ids; type is all, comments or actions", () => {
    const decode = decodeUnknownEither(ListRecordActivityInput)
    for (const type of ["all", "comments", "actions"]) {
      expect(Result.isSuccess(decode({ workspaceId: "w", recordId: "r", type }))).toBe(true)
    }
    expect(formatIssues(left(decode({ workspaceId: "w", recordId: "r", type: "everything" })))[0]?.path).toEqual(["type"])
    expect(describeParseError(left(decode({ workspaceId: "w" })))).toBe("recordId: is missing")
  })

  it("R-REST-FILES-01: list-files takes workspaceId, skip and limit", () => {
    const decode = decodeUnknownEither(ListFilesInput)
    expect(Result.isSuccess(decode({ workspaceId: "w", skip: 50, limit: 50 }))).toBe(true)
    expect(formatIssues(left(decode({ workspaceId: "w", skip: "50" })))[0]?.path).toEqual(["skip"])
    expect(Result.isSuccess(decode({}))).toBe(true)
    expect(formatIssues(left(decode({ workspaceId: 1 })))[0]?.path).toEqual(["workspaceId"])
  })

  it("R-REST-CALL-06: list-workspaces and list-users accept {}", () => {
    expect(Result.isSuccess(decodeUnknownEither(ListWorkspacesInput)({}))).toBe(true)
    expect(Result.isSuccess(decodeUnknownEither(ListUsersInput)({}))).toBe(true)
  })

  it("lists, tags and workspaces inputs follow assumptions.ts", () => {
    expect(Result.isSuccess(decodeUnknownEither(ListListsInput)({ workspaceId: "w" }))).toBe(true)
    expect(describeParseError(left(decodeUnknownEither(CreateListInput)({ workspaceId: "w" })))).toBe("title: is missing")
    expect(Result.isSuccess(decodeUnknownEither(ListTagsInput)({ workspaceId: "w" }))).toBe(true)
    expect(Result.isSuccess(decodeUnknownEither(CreateTagInput)({ workspaceId: "w", title: "t", color: "red" }))).toBe(true)
    expect(Result.isSuccess(decodeUnknownEither(CreateWorkspaceInput)({ name: "Team" }))).toBe(true)
    expect(describeParseError(left(decodeUnknownEither(CreateWorkspaceInput)({ slug: "team" })))).toBe("name: is missing")
  })
})
