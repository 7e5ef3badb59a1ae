/**
 * The emulator's GraphQL schema (SDL), executed by graphql-js. Types and fields the
 * service's document names are here as documented; the rest (inputs and returns it
 * leaves open) follow src/schema/assumptions.ts.
 */
export const schemaSdl = /* GraphQL */ `
scalar DateTime
scalar JSON
scalar Upload

enum FileStatus { CONFIRMED PENDING }

enum UserAccessLevel { OWNER ADMIN MEMBER CLIENT COMMENT_ONLY VIEW_ONLY }

enum CommentCategory { TODO DISCUSSION STATUS_UPDATE }

enum WebhookStatusType { HEALTHY UNHEALTHY }

enum WebhookEvent {
  TODO_CREATED
  TODO_DELETED
  TODO_MOVED
  TODO_NAME_CHANGED
  TODO_DONE_STATUS_UPDATED
  TODO_DUE_DATE_ADDED
  TODO_DUE_DATE_UPDATED
  TODO_DUE_DATE_REMOVED
  TODO_ASSIGNEE_ADDED
  TODO_ASSIGNEE_REMOVED
  TODO_TAG_ADDED
  TODO_TAG_REMOVED
  TODO_CUSTOM_FIELD_UPDATED
  TODO_CHECKLIST_CREATED
  TODO_CHECKLIST_NAME_CHANGED
  TODO_CHECKLIST_DELETED
  TODO_CHECKLIST_ITEM_CREATED
  TODO_CHECKLIST_ITEM_NAME_CHANGED
  TODO_CHECKLIST_ITEM_DELETED
  TODO_CHECKLIST_ITEM_DUE_DATE_ADDED
  TODO_CHECKLIST_ITEM_DUE_DATE_UPDATED
  TODO_CHECKLIST_ITEM_DUE_DATE_REMOVED
  TODO_CHECKLIST_ITEM_ASSIGNEE_ADDED
  TODO_CHECKLIST_ITEM_ASSIGNEE_REMOVED
  TODO_CHECKLIST_ITEM_DONE_STATUS_UPDATED
  TODO_LIST_CREATED
  TODO_LIST_DELETED
  TODO_LIST_NAME_CHANGED
  CUSTOM_FIELD_CREATED
  CUSTOM_FIELD_DELETED
  CUSTOM_FIELD_UPDATED
  TAG_CREATED
  TAG_DELETED
  TAG_UPDATED
  COMMENT_CREATED
  COMMENT_DELETED
  COMMENT_UPDATED
}

type Organization {
  id: ID!
  slug: String!
  name: String!
}

type Workspace {
  id: ID!
  slug: String!
  name: String!
}

type Folder {
  id: ID!
  name: String!
}

type File {
  id: ID!
  uid: String!
  name: String!
  size: Float!
  type: String!
  extension: String!
  shared: Boolean!
  status: FileStatus
  createdAt: DateTime!
  "Null only for an organization-level file (uploadFile without projectId)."
  project: Workspace
  folder: Folder
}

input UploadFileInput {
  file: Upload!
  companyId: String!
  projectId: String
}

input UploadFilesInput {
  files: [Upload!]!
  companyId: String!
  projectId: String!
}

input CreateFileInput {
  uid: String!
  name: String!
  size: Float!
  type: String!
  extension: String!
  companyId: String!
  projectId: String!
  folderId: String
  documentId: String
  shared: Boolean
}

input CreateRecordCustomFieldFileInput {
  todoId: String!
  customFieldId: String!
  fileUid: String!
}

type Comment {
  id: ID!
  html: String!
  text: String!
  category: CommentCategory!
  categoryId: String!
  parentId: String
  createdAt: DateTime!
  updatedAt: DateTime!
  user: User
  files: [File!]!
}

input CreateCommentInput {
  html: String!
  text: String!
  category: CommentCategory!
  categoryId: String!
  tiptap: Boolean
  parentId: String
}

input UpdateCommentInput {
  id: String!
  html: String!
  text: String!
  tiptap: Boolean
}

type ChecklistItem {
  id: ID!
  title: String!
  done: Boolean!
  position: Float!
  startedAt: DateTime
  duedAt: DateTime
  checklistId: String!
  todoId: String!
  assignees: [User!]!
}

input ChecklistItemAssigneeInput {
  checklistItemId: String!
  userId: String!
}

type Image {
  thumbnail: String
  small: String
  medium: String
  large: String
}

type User {
  id: ID!
  firstName: String!
  lastName: String!
  fullName: String!
  email: String!
  image: Image
  projectLevel(projectId: String!): UserAccessLevel
}

type PageInfo {
  totalItems: Int!
  hasNextPage: Boolean!
}

type ProjectUserList {
  users: [User!]!
  pageInfo: PageInfo!
  totalCount: Int!
}

type Invitation {
  id: ID!
  email: String!
  accessLevel: UserAccessLevel!
  expiredAt: DateTime!
  createdAt: DateTime!
  accepted: Boolean!
  invitedBy: User
  project: Workspace
  organization: Organization
  role: ProjectUserRole
}

type MutationResult {
  success: Boolean!
  operationId: String
}

input InviteUserInput {
  email: String!
  projectId: String
  companyId: String
  projectIds: [String!]
  accessLevel: UserAccessLevel!
  roleId: String
}

input RemoveProjectUserInput {
  projectId: String!
  userId: String!
}

input RemoveOrganizationUserInput {
  companyId: String!
  userId: String!
}

type ProjectUserRole {
  id: ID!
  name: String!
  projectId: String!
  isRecordsEnabled: Boolean!
  canCreateRecords: Boolean!
  canEditRecords: Boolean!
  canDeleteRecords: Boolean!
  isFilesEnabled: Boolean!
  canUploadFiles: Boolean!
  isCommentsEnabled: Boolean!
  canInviteUsers: Boolean!
  createdAt: DateTime!
  updatedAt: DateTime!
}

input CreateWorkspaceUserRoleInput {
  projectId: String!
  name: String!
  isRecordsEnabled: Boolean
  canCreateRecords: Boolean
  canEditRecords: Boolean
  canDeleteRecords: Boolean
  isFilesEnabled: Boolean
  canUploadFiles: Boolean
  isCommentsEnabled: Boolean
  canInviteUsers: Boolean
}

input UpdateWorkspaceUserRoleInput {
  id: String!
  name: String
  isRecordsEnabled: Boolean
  canCreateRecords: Boolean
  canEditRecords: Boolean
  canDeleteRecords: Boolean
  isFilesEnabled: Boolean
  canUploadFiles: Boolean
  isCommentsEnabled: Boolean
  canInviteUsers: Boolean
}

type Webhook {
  id: ID!
  uid: String!
  name: String
  url: String!
  secret: String
  status: WebhookStatusType!
  events: [WebhookEvent!]
  projectIds: [String!]
  enabled: Boolean
  metadata: JSON
  createdAt: DateTime!
  updatedAt: DateTime!
}

type WebhookList {
  items: [Webhook!]!
  totalCount: Int!
}

input CreateWebhookInput {
  url: String!
  name: String
  events: [WebhookEvent!]
  projectIds: [String!]
}

input UpdateWebhookInput {
  id: String!
  url: String
  name: String
  events: [WebhookEvent!]
  projectIds: [String!]
  enabled: Boolean
}

type Query {
  currentUser: User!
  "projectId defaults to the workspace header."
  workspaceUserList(projectId: String, first: Int, skip: Int, search: String): ProjectUserList!
  "projectId defaults to the workspace header."
  assignees(projectId: String): [User!]!
  "projectId defaults to the workspace header."
  invitations(projectId: String, pending: Boolean): [Invitation!]!
  myInvitations: [Invitation!]!
  workspaceUserRole(id: String!): ProjectUserRole!
  "projectId defaults to the workspace header."
  workspaceUserRoles(projectId: String): [ProjectUserRole!]!
  webhooks: WebhookList!
  webhook(id: String!): Webhook!
}

type Mutation {
  uploadFile(input: UploadFileInput!): File!
  uploadFiles(input: UploadFilesInput!): [File!]!
  createFile(input: CreateFileInput!): File!
  createRecordCustomFieldFile(input: CreateRecordCustomFieldFileInput!): Boolean!

  createComment(input: CreateCommentInput!): Comment!
  updateComment(input: UpdateCommentInput!): Comment!
  deleteComment(id: String!): Boolean!

  addChecklistItemAssignee(input: ChecklistItemAssigneeInput!): ChecklistItem!
  removeChecklistItemAssignee(input: ChecklistItemAssigneeInput!): ChecklistItem!

  inviteUser(input: InviteUserInput!): Boolean!
  removeProjectUser(input: RemoveProjectUserInput!): MutationResult!
  removeOrganizationUser(input: RemoveOrganizationUserInput!): Boolean
  resendInvitation(id: String!): Invitation!
  cancelInvitation(id: String!): Boolean!

  createWorkspaceUserRole(input: CreateWorkspaceUserRoleInput!): ProjectUserRole!
  updateWorkspaceUserRole(input: UpdateWorkspaceUserRoleInput!): ProjectUserRole!
  deleteWorkspaceUserRole(id: String!): Boolean!

  createWebhook(input: CreateWebhookInput!): Webhook!
  updateWebhook(input: UpdateWebhookInput!): Webhook!
  disableWebhook(id: String!): Webhook!
  deleteWebhook(id: String!): Boolean!
}
`
