import { Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  ACCESS_LEVELS,
  AccessLevel,
  accessLevelRank,
  CreateWorkspaceUserRoleInput,
  decodeUnknownEither,
  describeParseError,
  encodeEither,
  GraphqlUser,
  Invitation,
  InviteUserInput,
  ListsResponse,
  MutationResult,
  ProjectUserList,
  ProjectUserRole,
  TagsResponse,
  UsersPage,
  WorkspacesPage
} from "../../src/schema/index.ts"

const left = <A>(r: Result.Result<A, Schema.SchemaError>): Schema.SchemaError => {
  if (Result.isSuccess(r)) throw new Error("expected a decode failure")
  return r.failure
}

describe("users and access levels", () => {
  it("R-USER-01: exactly six access levels in descending capability", () => {
    expect(ACCESS_LEVELS).toEqual(["OWNER", "ADMIN", "MEMBER", "CLIENT", "COMMENT_ONLY", "VIEW_ONLY"])
    expect(accessLevelRank("OWNER")).toBeLessThan(accessLevelRank("ADMIN"))
    expect(accessLevelRank("COMMENT_ONLY")).toBeLessThan(accessLevelRank("VIEW_ONLY"))
    expect(Result.isFailure(decodeUnknownEither(AccessLevel)("GUEST"))).toBe(true)
  })

  it("R-REST-PAGE-10: list-users answers {users, totalCount}; the user's fields are not documented", () => {
    const page = {
      users: [
        { id: "u1", firstName: "Ada", lastName: "Lovelace", fullName: "Ada Lovelace", email: "ada@example.com", accessLevel: "OWNER" }
      ],
      totalCount: 1
    }
    expect(Result.getOrThrow(decodeUnknownEither(UsersPage)(page))).toEqual(page)
    // Every field but id is a choice of assumptions.ts USER_SHAPE: another value is kept.
    const odd = { ...page, users: [{ ...page.users[0]!, accessLevel: "ROOT" }] }
    expect(Result.getOrThrow(decodeUnknownEither(UsersPage)(odd))).toEqual(odd)
    expect(describeParseError(left(decodeUnknownEither(UsersPage)({ users: [{ email: "a@b.c" }], totalCount: 1 })))).toBe(
      "users[0].id: is missing"
    )
  })

  it("R-USER-04: a GraphQL User has id, fullName, email and image with medium", () => {
    const u = { id: "u1", fullName: "Ada", email: "ada@example.com", image: { medium: "https://img/x.png" }, projectLevel: "ADMIN" }
    expect(Result.getOrThrow(decodeUnknownEither(GraphqlUser)(u))).toEqual(u)
    expect(Result.isSuccess(decodeUnknownEither(GraphqlUser)({ ...u, image: null }))).toBe(true)
    expect(describeParseError(left(decodeUnknownEither(GraphqlUser)({ ...u, image: { medium: 1 } })))).toBe(
      "image.medium: expected string or null, got number"
    )
  })

  it("R-USER-03: ProjectUserList has users, pageInfo {totalItems, hasNextPage} and totalCount", () => {
    const list = {
      users: [{ id: "u1", fullName: "Ada", email: "ada@example.com", image: null }],
      pageInfo: { totalItems: 1, hasNextPage: false },
      totalCount: 1
    }
    expect(Result.getOrThrow(decodeUnknownEither(ProjectUserList)(list))).toEqual(list)
    expect(describeParseError(left(decodeUnknownEither(ProjectUserList)({ ...list, pageInfo: { totalItems: 1 } })))).toBe(
      "pageInfo.hasNextPage: is missing"
    )
  })

  it("R-INVITE-14: Invitation has id, email, accessLevel, expiredAt and invitedBy with fullName", () => {
    const inv = {
      id: "i1",
      email: "new@example.com",
      accessLevel: "MEMBER",
      expiredAt: "2024-06-01T00:00:00.000Z",
      invitedBy: { fullName: "Ada Lovelace" }
    }
    expect(Result.getOrThrow(decodeUnknownEither(Invitation)(inv))).toEqual(inv)
    expect(describeParseError(left(decodeUnknownEither(Invitation)({ ...inv, invitedBy: {} })))).toBe(
      "invitedBy.fullName: is missing"
    )
  })

  it("R-INVITE-01: inviteUser input takes email, projectId, companyId, projectIds, accessLevel, roleId", () => {
    const input = { email: "x@example.com", projectId: "w1", companyId: "o1", projectIds: ["w1"], accessLevel: "CLIENT", roleId: "r1" }
    expect(Result.getOrThrow(decodeUnknownEither(InviteUserInput)(input))).toEqual(input)
  })

  it("R-USER-08: MutationResult has success and operationId", () => {
    expect(Result.isSuccess(decodeUnknownEither(MutationResult)({ success: true, operationId: "op1" }))).toBe(true)
    expect(describeParseError(left(decodeUnknownEither(MutationResult)({ operationId: null })))).toBe("success: is missing")
  })

  it("R-ROLE-04: ProjectUserRole has id, name, canCreateRecords and canDeleteRecords", () => {
    const role = { id: "r1", name: "Reviewer", canCreateRecords: false, canDeleteRecords: false, isRecordsEnabled: true }
    expect(Result.getOrThrow(decodeUnknownEither(ProjectUserRole)(role))).toEqual(role)
    expect(describeParseError(left(decodeUnknownEither(ProjectUserRole)({ id: "r1", name: "R", canCreateRecords: true })))).toBe(
      "canDeleteRecords: is missing"
    )
  })

  it("R-ROLE-03: role creation toggles are flat booleans", () => {
    const input = { projectId: "w1", name: "Reviewer", isRecordsEnabled: true, canCreateRecords: false, canDeleteRecords: false }
    expect(Result.isSuccess(decodeUnknownEither(CreateWorkspaceUserRoleInput)(input))).toBe(true)
    expect(Result.isFailure(decodeUnknownEither(CreateWorkspaceUserRoleInput)({ ...input, canCreateRecords: "yes" }))).toBe(true)
  })
})

describe("workspaces, lists and tags", () => {
  const workspace = {
    id: "w1",
    slug: "team",
    name: "Team",
    organizationId: "o1",
    createdAt: "2024-01-01T00:00:00.000Z",
    updatedAt: "2024-01-02T00:00:00.000Z"
  }
  const list = { id: "l1", title: "Backlog", position: 1, workspaceId: "w1" }

  it("R-REST-PAGE-09: list-workspaces answers {items, totalCount}", () => {
    const page = { items: [workspace], totalCount: 1 }
    expect(Result.getOrThrow(decodeUnknownEither(WorkspacesPage)(page))).toEqual(page)
    // Only `id` is documented: a slug of another type is kept, a missing id fails.
    expect(Result.isSuccess(decodeUnknownEither(WorkspacesPage)({ items: [{ ...workspace, slug: null }], totalCount: 1 }))).toBe(true)
    expect(describeParseError(left(decodeUnknownEither(WorkspacesPage)({ items: [{ name: "x" }], totalCount: 1 })))).toBe(
      "items[0].id: is missing"
    )
  })

  it("R-REST-PAGE-11: list-lists decodes from {items, totalCount} or a bare array to the lists", () => {
    const decode = decodeUnknownEither(ListsResponse)
    expect(Result.getOrThrow(decode({ items: [list], totalCount: 1 }))).toEqual([list])
    expect(Result.getOrThrow(decode([list]))).toEqual([list])
    expect(Result.isFailure(decode({ lists: [list] }))).toBe(true)
  })

  it("list-lists encodes to the {items, totalCount} form the emulator sends", () => {
    expect(Result.getOrThrow(encodeEither(ListsResponse)([list]))).toEqual({ items: [list], totalCount: 1 })
  })

  it("list-tags decodes tags with a string or null color", () => {
    const tags = [
      { id: "t1", title: "urgent", color: "#f00" },
      { id: "t2", title: "later", color: null }
    ]
    expect(Result.getOrThrow(decodeUnknownEither(TagsResponse)({ items: tags, totalCount: 2 }))).toEqual(tags)
  })
})
