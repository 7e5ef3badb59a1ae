/**
 * The decoding policy (docs/architecture.md): a shape holding only the fields the
 * documents name decodes; a missing documented field fails naming its path; a field the
 * documents do not name may be missing or of any type; answers the documents do not
 * show are read for what they offer and never fail.
 */
import { Result, Option, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  ActivityPage,
  CountRecordsAnswer,
  CreateRecordResponse,
  createdListId,
  decodeUnknownEither,
  describeParseError,
  FilesPage,
  ListsResponse,
  restUserEmail,
  TagsResponse,
  UpdateRecordAnswer,
  UsersPage,
  workspaceSlug,
  WorkspacesPage
} from "../../src/schema/index.ts"

const failure = <A>(r: Result.Result<A, Schema.SchemaError>): string => {
  if (Result.isSuccess(r)) throw new Error("expected a decode failure")
  return describeParseError(r.failure)
}

const without = <T extends object, K extends keyof T>(o: T, key: K): Omit<T, K> => {
  const { [key]: _, ...rest } = o
  return rest
}

describe("decoding policy: documented fields required, the rest optional and raw", () => {
  it("R-REST-PAGE-09: a workspace of only `id` decodes; a slug is used when it is a string", () => {
    const page = Result.getOrThrow(decodeUnknownEither(WorkspacesPage)({ items: [{ id: "w1" }], totalCount: 1 }))
    expect(page.items[0]).toEqual({ id: "w1" })
    expect(workspaceSlug(page.items[0]!)).toBeUndefined()
    expect(failure(decodeUnknownEither(WorkspacesPage)({ items: [{ name: "Team" }], totalCount: 1 }))).toBe("items[0].id: is missing")
    const odd = Result.getOrThrow(
      decodeUnknownEither(WorkspacesPage)({ items: [{ id: "w1", slug: 7, name: null, createdAt: "yesterday" }], totalCount: 1 })
    )
    // Kept as sent, never used as a slug.
    expect(odd.items[0]).toEqual({ id: "w1", slug: 7, name: null, createdAt: "yesterday" })
    expect(workspaceSlug(odd.items[0]!)).toBeUndefined()
    expect(failure(decodeUnknownEither(WorkspacesPage)({ items: [{ id: "w1" }] }))).toBe("totalCount: is missing")
  })

  it("R-REST-PAGE-11: lists of {id, title} decode (bare array too); position and workspaceId may be anything", () => {
    expect(Result.getOrThrow(decodeUnknownEither(ListsResponse)([{ id: "l1", title: "Backlog" }]))).toEqual([{ id: "l1", title: "Backlog" }])
    const odd = [{ id: "l1", title: "Backlog", position: "first", workspaceId: 3 }]
    expect(Result.getOrThrow(decodeUnknownEither(ListsResponse)({ items: odd, totalCount: 1 }))).toEqual(odd)
    expect(failure(decodeUnknownEither(ListsResponse)([{ id: "l1" }]))).toBe("[0].title: is missing")
  })

  it("tags: {id, title} decode without color; a color of another type is kept", () => {
    expect(Result.getOrThrow(decodeUnknownEither(TagsResponse)([{ id: "t1", title: "urgent" }]))).toEqual([{ id: "t1", title: "urgent" }])
    expect(Result.isSuccess(decodeUnknownEither(TagsResponse)([{ id: "t1", title: "urgent", color: 255 }]))).toBe(true)
  })

  it("R-REST-PAGE-10: a list-users user of only {id, email, fullName}, or only {id}, decodes", () => {
    const page = Result.getOrThrow(
      decodeUnknownEither(UsersPage)({ users: [{ id: "u1", email: "Ada@Example.com", fullName: "Ada" }, { id: "u2" }], totalCount: 2 })
    )
    expect(page.users.map(restUserEmail)).toEqual(["ada@example.com", undefined])
    const odd = Result.getOrThrow(decodeUnknownEither(UsersPage)({ users: [{ id: "u3", email: 42, accessLevel: "ROOT" }], totalCount: 1 }))
    expect(restUserEmail(odd.users[0]!)).toBeUndefined()
    expect(failure(decodeUnknownEither(UsersPage)({ users: [{ email: "a@b.c" }], totalCount: 1 }))).toBe("users[0].id: is missing")
  })

  it("R-REST-FILES-03: a file's folder and todo are read for their id; other keys are optional", () => {
    const item = {
      id: "f1",
      uid: "u1",
      name: "a.txt",
      size: 3,
      type: "text/plain",
      extension: "txt",
      status: "CONFIRMED",
      shared: false,
      createdAt: "2024-05-01T00:00:00.000Z",
      updatedAt: "2024-05-01T00:00:00.000Z",
      folder: { id: "d1" },
      todo: { id: "r1" },
      user: { id: "u1", fullName: "Ada", email: "ada@example.com" }
    }
    const page = { items: [item], pageInfo: { totalItems: 1, hasNextPage: false } }
    expect(Result.getOrThrow(decodeUnknownEither(FilesPage)(page))).toEqual(page)
    expect(failure(decodeUnknownEither(FilesPage)({ ...page, items: [without(item, "uid")] }))).toBe("items[0].uid: is missing")
  })

  it("R-REST-ACTIVITY-02: an activity item whose __typename the client never saw decodes", () => {
    const item = {
      __typename: "TodoActionV2",
      id: "a1",
      html: null,
      createdAt: "2024-05-01T00:00:00.000Z",
      deletedAt: null,
      commentUser: null,
      type: "SOMETHING_NEW",
      oldValue: null,
      newValue: { any: "thing" },
      automated: false,
      actionUser: { id: "u1", fullName: "Ada" },
      affectedBy: null,
      customField: null
    }
    expect(Result.getOrThrow(decodeUnknownEither(ActivityPage)({ items: [item], totalCount: 1 })).items[0]).toEqual(item)
    expect(failure(decodeUnknownEither(ActivityPage)({ items: [without(item, "automated")], totalCount: 1 }))).toBe(
      "items[0].automated: is missing"
    )
  })
})

describe("decoding policy: create-record answers of both readings", () => {
  it("R-REST-RECORD-40/41: {id, uid, title, rank, list} and {id, uid, title, position, todoList} both decode", () => {
    const documented = Result.getOrThrow(
      decodeUnknownEither(CreateRecordResponse)({ id: "r1", uid: "u", title: "T", rank: 1, list: { id: "l1", title: "A" } })
    )
    expect(createdListId(documented)).toBe("l1")
    const other = Result.getOrThrow(
      decodeUnknownEither(CreateRecordResponse)({ id: "r2", uid: "u", title: "T", position: 3, todoList: { id: "l2", title: "B" } })
    )
    expect(createdListId(other)).toBe("l2")
    const bare = Result.getOrThrow(decodeUnknownEither(CreateRecordResponse)({ id: "r3", uid: "u", title: "T", list: "l3" }))
    expect(createdListId(bare)).toBeUndefined()
    expect(failure(decodeUnknownEither(CreateRecordResponse)({ uid: "u", title: "T" }))).toBe("id: is missing")
  })
})

describe("decoding policy: answers the documents do not show", () => {
  it("count-records: {count}, {totalCount} or a bare number give the count; anything else none, never a failure", () => {
    const decode = (u: unknown) => Result.getOrThrow(decodeUnknownEither(CountRecordsAnswer)(u))
    expect(decode({ count: 12 })).toEqual(Option.some(12))
    expect(decode({ totalCount: 7 })).toEqual(Option.some(7))
    expect(decode(5)).toEqual(Option.some(5))
    expect(decode({})).toEqual(Option.none())
    expect(decode({ count: "12" })).toEqual(Option.none())
    expect(decode(null)).toEqual(Option.none())
  })

  it("update-record: the record detail when it is one; {success: true}, {} or anything else is none", () => {
    const decode = (u: unknown) => Result.getOrThrow(decodeUnknownEither(UpdateRecordAnswer)(u))
    expect(decode({ success: true })).toEqual(Option.none())
    expect(decode({})).toEqual(Option.none())
    expect(decode(null)).toEqual(Option.none())
    expect(decode("ok")).toEqual(Option.none())
  })
})
