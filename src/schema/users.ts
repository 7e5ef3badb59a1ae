/**
 * Users, access levels, invitations and roles.
 */
import { Schema } from "effect"
import { openStruct, stringOf, undocumented } from "./open.ts"

/** The six access levels in descending capability (R-USER-01). */
export const ACCESS_LEVELS = ["OWNER", "ADMIN", "MEMBER", "CLIENT", "COMMENT_ONLY", "VIEW_ONLY"] as const
export const AccessLevel = Schema.Literals(ACCESS_LEVELS)
export type AccessLevel = typeof AccessLevel.Type

/** Rank of a level: 0 is OWNER, higher numbers are less capable. */
export const accessLevelRank = (level: AccessLevel): number => ACCESS_LEVELS.indexOf(level)

/**
 * list-users item. The documents name no field of it (assumptions.ts USER_SHAPE): only
 * `id` is required; a service may send `{id, email, fullName}` or fewer keys.
 */
export const RestUser = openStruct({
  id: Schema.String,
  firstName: undocumented(Schema.String),
  lastName: undocumented(Schema.String),
  fullName: undocumented(Schema.String),
  email: undocumented(Schema.String),
  accessLevel: undocumented(AccessLevel)
})
export type RestUser = typeof RestUser.Type

/** A list-users user's e-mail, lower-cased, when the service sends one (else it cannot be matched by e-mail). */
export const restUserEmail = (u: RestUser): string | undefined => stringOf(u.email)?.toLowerCase()

export const UserImage = openStruct({ medium: Schema.NullOr(Schema.String) })
export type UserImage = typeof UserImage.Type

/** GraphQL `User` (R-USER-04); `projectLevel(projectId)` is kept when selected. */
export const GraphqlUser = openStruct({
  id: Schema.String,
  fullName: Schema.String,
  email: Schema.String,
  image: Schema.NullOr(UserImage),
  projectLevel: Schema.optional(Schema.NullOr(AccessLevel))
})
export type GraphqlUser = typeof GraphqlUser.Type

/** GraphQL `ProjectUserList` (R-USER-03). */
export const ProjectUserList = openStruct({
  users: Schema.Array(GraphqlUser),
  pageInfo: openStruct({ totalItems: Schema.Number, hasNextPage: Schema.Boolean }),
  totalCount: Schema.Number
})
export type ProjectUserList = typeof ProjectUserList.Type

/** GraphQL `Invitation` (R-INVITE-14). */
export const Invitation = openStruct({
  id: Schema.String,
  email: Schema.String,
  accessLevel: AccessLevel,
  expiredAt: Schema.NullOr(Schema.String),
  invitedBy: Schema.NullOr(openStruct({ fullName: Schema.String }))
})
export type Invitation = typeof Invitation.Type

/** GraphQL `MutationResult` (R-USER-08). */
export const MutationResult = openStruct({
  success: Schema.Boolean,
  operationId: Schema.NullOr(Schema.String)
})
export type MutationResult = typeof MutationResult.Type

/** GraphQL `ProjectUserRole` (R-ROLE-04). */
export const ProjectUserRole = openStruct({
  id: Schema.String,
  name: Schema.String,
  canCreateRecords: Schema.Boolean,
  canDeleteRecords: Schema.Boolean
})
export type ProjectUserRole = typeof ProjectUserRole.Type

/** `inviteUser` input (required flags chosen in assumptions.ts INVITE_USER_INPUT). */
export const InviteUserInput = openStruct({
  email: Schema.String,
  accessLevel: AccessLevel,
  projectId: Schema.optional(Schema.String),
  companyId: Schema.optional(Schema.String),
  projectIds: Schema.optional(Schema.Array(Schema.String)),
  roleId: Schema.optional(Schema.String)
})
export type InviteUserInput = typeof InviteUserInput.Type

export const RemoveProjectUserInput = openStruct({ projectId: Schema.String, userId: Schema.String })
export type RemoveProjectUserInput = typeof RemoveProjectUserInput.Type

export const RemoveOrganizationUserInput = openStruct({ companyId: Schema.String, userId: Schema.String })
export type RemoveOrganizationUserInput = typeof RemoveOrganizationUserInput.Type

/** `createWorkspaceUserRole` input: flat Boolean toggles, no nested permissions (R-ROLE-03). */
export const CreateWorkspaceUserRoleInput = openStruct({
  projectId: Schema.String,
  name: Schema.String,
  isRecordsEnabled: Schema.optional(Schema.Boolean),
  canCreateRecords: Schema.optional(Schema.Boolean),
  canDeleteRecords: Schema.optional(Schema.Boolean)
})
export type CreateWorkspaceUserRoleInput = typeof CreateWorkspaceUserRoleInput.Type
