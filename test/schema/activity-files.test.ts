import { Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  ActivityItem,
  ActivityPage,
  decodeUnknownEither,
  describeParseError,
  FileItem,
  FilesPage,
  formatIssues,
  GraphqlFile,
  RecordsPageInfo
} from "../../src/schema/index.ts"

const left = <A>(r: Result.Result<A, Schema.SchemaError>): Schema.SchemaError => {
  if (Result.isSuccess(r)) throw new Error("expected a decode failure")
  return r.failure
}

const comment = () => ({
  __typename: "Comment",
  id: "a1",
  html: "<p>Looks good</p>",
  createdAt: "2024-05-02T10:00:00.000Z",
  deletedAt: null,
  commentUser: { id: "u1", fullName: "Ada Lovelace" },
  type: null,
  oldValue: null,
  newValue: null,
  automated: false,
  actionUser: null,
  affectedBy: null,
  customField: null
})

const action = () => ({
  __typename: "Action",
  id: "a2",
  html: null,
  createdAt: "2024-05-02T09:00:00.000Z",
  deletedAt: null,
  commentUser: null,
  type: "UPDATE_TITLE",
  oldValue: "Draft",
  newValue: "Prepare quarterly report",
  automated: true,
  actionUser: { id: "u2", fullName: "Grace Hopper" },
  affectedBy: { id: "u1", fullName: "Ada Lovelace" },
  customField: { id: "cf1", name: "Approved" }
})

describe("activity items", () => {
  it("R-REST-ACTIVITY-10: comments and actions decode with all keys present", () => {
    const page = Result.getOrThrow(decodeUnknownEither(ActivityPage)({ items: [comment(), action()], totalCount: 2 }))
    expect(page.totalCount).toBe(2)
    expect(page.items.map((i) => i.__typename)).toEqual(["Comment", "Action"])
    expect(Object.keys(page.items[0]!).sort()).toEqual(Object.keys(comment()).sort())
  })

  it("R-REST-ACTIVITY-11: commentUser, actionUser and affectedBy are {id, fullName}", () => {
    const a = Result.getOrThrow(decodeUnknownEither(ActivityItem)(action()))
    expect(a.actionUser).toEqual({ id: "u2", fullName: "Grace Hopper" })
    const bad = { ...action(), affectedBy: { id: "u1" } }
    expect(describeParseError(left(decodeUnknownEither(ActivityItem)(bad)))).toBe("affectedBy.fullName: is missing")
  })

  it("R-REST-ACTIVITY-12: customField is {id, name}", () => {
    const bad = { ...action(), customField: { id: "cf1", name: 3 } }
    expect(describeParseError(left(decodeUnknownEither(ActivityItem)(bad)))).toBe(
      "customField.name: expected string, got number"
    )
  })

  it("R-REST-ACTIVITY-13: automated is a boolean", () => {
    expect(describeParseError(left(decodeUnknownEither(ActivityItem)({ ...comment(), automated: null })))).toBe(
      "automated: expected boolean, got null"
    )
  })

  it("R-REST-ACTIVITY-14: action type is any string (UPDATE_TITLE and kinds the client does not know)", () => {
    expect(Result.isSuccess(decodeUnknownEither(ActivityItem)({ ...action(), type: "SOME_FUTURE_KIND" }))).toBe(true)
  })

  it("R-REST-ACTIVITY-09: the page needs totalCount", () => {
    expect(describeParseError(left(decodeUnknownEither(ActivityPage)({ items: [] })))).toBe("totalCount: is missing")
  })
})

const fileItem = () => ({
  id: "f1",
  uid: "abc123def456",
  name: "report \"Q2\".pdf",
  size: 10_485_760,
  type: "application/pdf",
  extension: "pdf",
  status: "CONFIRMED",
  shared: false,
  createdAt: "2024-05-01T08:00:00.000Z",
  updatedAt: "2024-05-01T08:00:01.000Z",
  folder: null,
  todo: null,
  user: { id: "u1", fullName: "Ada Lovelace", email: "ada@example.com" }
})

describe("file items", () => {
  const decode = decodeUnknownEither(FileItem)

  it("R-REST-FILES-03: a list-files item with every key decodes", () => {
    expect(Result.getOrThrow(decode(fileItem()))).toEqual(fileItem())
    const { todo: _t, ...noTodo } = fileItem()
    expect(describeParseError(left(decode(noTodo)))).toBe("todo: is missing")
  })

  it("R-REST-FILES-04: status is CONFIRMED or PENDING", () => {
    expect(Result.isSuccess(decode({ ...fileItem(), status: "PENDING" }))).toBe(true)
    const issues = formatIssues(left(decode({ ...fileItem(), status: "DELETED" })))
    expect(issues).toEqual([{ path: ["status"], message: 'expected "CONFIRMED" or "PENDING", got string' }])
  })

  it("R-REST-FILES-05: shared is a boolean", () => {
    expect(describeParseError(left(decode({ ...fileItem(), shared: "no" })))).toBe("shared: expected boolean, got string")
  })

  it("R-REST-FILES-06/07: folder and todo may be null or an object, extra keys kept", () => {
    const f = { ...fileItem(), folder: { id: "fo1", name: "Invoices" }, todo: { id: "r1", title: "Prepare" } }
    expect(Result.getOrThrow(decode(f))).toEqual(f)
  })

  it("R-REST-FILES-08: user is {id, fullName, email}", () => {
    const bad = { ...fileItem(), user: { id: "u1", fullName: "Ada" } }
    expect(describeParseError(left(decode(bad)))).toBe("user.email: is missing")
  })

  it("R-REST-PAGE-08: list-files pageInfo carries totalItems and hasNextPage", () => {
    const page = { items: [fileItem()], pageInfo: { totalItems: 1, hasNextPage: false } }
    expect(Result.getOrThrow(decodeUnknownEither(FilesPage)(page)).pageInfo).toEqual({ totalItems: 1, hasNextPage: false })
    const bad = { items: [], pageInfo: { hasNextPage: false } }
    expect(describeParseError(left(decodeUnknownEither(FilesPage)(bad)))).toBe("pageInfo.totalItems: is missing")
  })

  it("R-UPLOAD-MULTIPART-12: a GraphQL File decodes with project and a null folder", () => {
    const file = {
      id: "f1",
      uid: "abc",
      name: "a.png",
      size: 3,
      type: "image/png",
      extension: "png",
      shared: false,
      status: "CONFIRMED",
      createdAt: "2024-05-01T08:00:00.000Z",
      project: { id: "w1", name: "Team" },
      folder: null
    }
    expect(Result.getOrThrow(decodeUnknownEither(GraphqlFile)(file))).toEqual(file)
    expect(describeParseError(left(decodeUnknownEither(GraphqlFile)({ ...file, project: null })))).toBe(
      "project: expected { readonly id: string }, got null"
    )
  })
})

describe("records page info", () => {
  it("R-REST-PAGE-07: pageInfo carries hasNextPage, hasPreviousPage, startCursor and endCursor", () => {
    const info = { hasNextPage: true, hasPreviousPage: false, startCursor: "0", endCursor: null }
    expect(Result.getOrThrow(decodeUnknownEither(RecordsPageInfo)(info))).toEqual(info)
    const { endCursor: _e, ...missing } = info
    expect(describeParseError(left(decodeUnknownEither(RecordsPageInfo)(missing)))).toBe("endCursor: is missing")
  })
})
