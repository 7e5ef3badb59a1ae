/**
 * The alt variant's GraphQL schema: the reference SDL with only the fields the document
 * names on each type it describes, and the other reading of the choices it leaves open
 * (assumptions.ts FILE_PROJECT_NULLABLE, USER_QUERIES, ROLE_OPERATIONS, GRAPHQL_COMMENTS,
 * CHECKLIST_ITEM_ASSIGNEES, WEBHOOK_INPUTS, WEBHOOK_MANAGEMENT, INVITE_USER_INPUT). The
 * resolvers are the reference ones; fields the alt schema lacks are never asked for.
 */
import {
  Kind,
  parse,
  print,
  visit,
  type FieldDefinitionNode,
  type InputValueDefinitionNode,
  type TypeNode
} from "graphql"

/** Output fields kept, per type the document describes (every other field of it goes). */
const KEPT_FIELDS: Readonly<Record<string, ReadonlyArray<string>>> = {
  Organization: ["id", "name"],
  Workspace: ["id", "name"],
  Folder: ["id"],
  Comment: ["id", "html", "text", "createdAt"],
  User: ["id", "fullName", "email", "image", "projectLevel"],
  Image: ["medium"],
  Invitation: ["id", "email", "accessLevel", "expiredAt", "invitedBy"],
  ProjectUserRole: ["id", "name", "canCreateRecords", "canDeleteRecords"],
  WebhookList: ["items"]
}

/** Types and operations that do not exist in the alt reading. */
const DROPPED_TYPES = new Set(["ChecklistItem", "ChecklistItemAssigneeInput", "UpdateCommentInput"])
const DROPPED_MUTATIONS = new Set(["addChecklistItemAssignee", "removeChecklistItemAssignee", "updateComment", "deleteComment"])

/** Query arguments: only the documented ones, the workspace required (no header default). */
const QUERY_ARGUMENTS: Readonly<Record<string, ReadonlyArray<string>>> = {
  workspaceUserList: ["projectId", "first"],
  assignees: ["projectId"],
  invitations: ["projectId", "pending"],
  workspaceUserRoles: ["projectId"]
}

const named = (name: string): TypeNode => ({ kind: Kind.NAMED_TYPE, name: { kind: Kind.NAME, value: name } })
const nonNull = (type: TypeNode): TypeNode =>
  type.kind === Kind.NON_NULL_TYPE ? type : { kind: Kind.NON_NULL_TYPE, type: type as Exclude<TypeNode, { kind: Kind.NON_NULL_TYPE }> }
const nullable = (type: TypeNode): TypeNode => (type.kind === Kind.NON_NULL_TYPE ? type.type : type)

const withArguments = (field: FieldDefinitionNode, keep: ReadonlyArray<string>): FieldDefinitionNode => ({
  ...field,
  arguments: (field.arguments ?? [])
    .filter((a) => keep.includes(a.name.value))
    .map((a): InputValueDefinitionNode => (a.name.value === "projectId" ? { ...a, type: nonNull(a.type) } : a))
})

export const altSchemaSdl = (referenceSdl: string): string => {
  let typeName = ""
  const document = visit(parse(referenceSdl), {
    ObjectTypeDefinition: {
      enter(node) {
        typeName = node.name.value
        return DROPPED_TYPES.has(typeName) ? null : undefined
      }
    },
    InputObjectTypeDefinition: {
      enter(node) {
        typeName = node.name.value
        return DROPPED_TYPES.has(typeName) ? null : undefined
      }
    },
    // Descriptions speak of the reference's defaults.
    StringValue(_node, key) {
      return key === "description" ? null : undefined
    },
    FieldDefinition(node) {
      const field = node.name.value
      const kept = KEPT_FIELDS[typeName]
      if (kept !== undefined && !kept.includes(field)) return null
      if (typeName === "File" && field === "project") return { ...node, type: nonNull(node.type) }
      if (typeName === "Mutation" && DROPPED_MUTATIONS.has(field)) return null
      if (typeName === "Mutation" && field === "disableWebhook") return { ...node, type: nonNull(named("Boolean")) }
      if (typeName === "Query" && QUERY_ARGUMENTS[field] !== undefined) return withArguments(node, QUERY_ARGUMENTS[field])
      return undefined
    },
    InputValueDefinition(node) {
      if (typeName === "InviteUserInput" && node.name.value === "accessLevel") return { ...node, type: nullable(node.type) }
      return undefined
    }
  })
  return print(document)
}
