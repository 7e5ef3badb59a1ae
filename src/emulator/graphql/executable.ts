/**
 * The executable schema: the SDL built by graphql-js, with resolvers attached to its
 * fields and the custom scalars given their behaviour.
 */
import {
  buildSchema,
  GraphQLError,
  GraphQLObjectType,
  GraphQLScalarType,
  Kind,
  type GraphQLFieldResolver,
  type GraphQLSchema,
  type ValueNode
} from "graphql"
import { altSchemaSdl } from "../alt/graphql-schema.ts"
import type { EmulatorVariant } from "../options.ts"
import { isUploadedPart } from "./request.ts"
import { checklistMutations } from "./resolvers/checklists.ts"
import { commentMutations } from "./resolvers/comments.ts"
import { fileMutations } from "./resolvers/files.ts"
import { roleMutations, roleQueries } from "./resolvers/roles.ts"
import { invitationQueries, userMutations, userQueries, userResolvers } from "./resolvers/users.ts"
import { webhookMutations, webhookQueries } from "./resolvers/webhooks.ts"
import { schemaSdl } from "./schema.graphql.ts"

type Resolvers = Readonly<Record<string, Readonly<Record<string, (...args: Array<any>) => unknown>>>>

const resolvers: Resolvers = {
  Query: { ...userQueries, ...invitationQueries, ...roleQueries, ...webhookQueries },
  Mutation: { ...fileMutations, ...commentMutations, ...checklistMutations, ...userMutations, ...roleMutations, ...webhookMutations },
  User: userResolvers
}

const literalToJson = (node: ValueNode): unknown => {
  switch (node.kind) {
    case Kind.STRING:
    case Kind.ENUM:
      return node.value
    case Kind.BOOLEAN:
      return node.value
    case Kind.INT:
    case Kind.FLOAT:
      return Number(node.value)
    case Kind.NULL:
      return null
    case Kind.LIST:
      return node.values.map(literalToJson)
    case Kind.OBJECT:
      return Object.fromEntries(node.fields.map((f) => [f.name.value, literalToJson(f.value)]))
    default:
      throw new GraphQLError("Variables are not allowed inside JSON literals")
  }
}

const scalarBehaviour: Readonly<Record<string, Partial<GraphQLScalarType>>> = {
  JSON: { serialize: (v: unknown) => v, parseValue: (v: unknown) => v, parseLiteral: literalToJson },
  DateTime: {
    serialize: (v: unknown) => (v instanceof Date ? v.toISOString() : v),
    parseValue: (v: unknown) => {
      if (typeof v !== "string" || Number.isNaN(Date.parse(v))) throw new GraphQLError("DateTime must be an ISO 8601 string")
      return v
    }
  },
  // Only the multipart request fills Upload variables (with stored parts).
  Upload: {
    serialize: () => {
      throw new GraphQLError("Upload is an input-only scalar")
    },
    parseValue: (v: unknown) => {
      if (!isUploadedPart(v)) throw new GraphQLError("Upload must be a file part of a multipart request")
      return v
    },
    parseLiteral: () => {
      throw new GraphQLError("Upload cannot be written inline; send a multipart request")
    }
  }
}

export const buildExecutableSchema = (variant: EmulatorVariant = "reference"): GraphQLSchema => {
  const schema = buildSchema(variant === "alt" ? altSchemaSdl(schemaSdl) : schemaSdl)
  for (const [typeName, fields] of Object.entries(resolvers)) {
    const type = schema.getType(typeName)
    if (!(type instanceof GraphQLObjectType)) throw new Error(`No object type ${typeName}`)
    const defined = type.getFields()
    for (const [fieldName, resolve] of Object.entries(fields)) {
      const field = defined[fieldName]
      // The alt schema leaves out what the document does not name; its resolvers stay unused.
      if (field === undefined && variant === "alt") continue
      if (field === undefined) throw new Error(`No field ${typeName}.${fieldName}`)
      field.resolve = resolve as GraphQLFieldResolver<unknown, unknown>
    }
  }
  for (const [name, behaviour] of Object.entries(scalarBehaviour)) {
    const type = schema.getType(name)
    if (!(type instanceof GraphQLScalarType)) throw new Error(`No scalar ${name}`)
    Object.assign(type, behaviour)
  }
  // Every Query and Mutation field must have a resolver: a missing one is a bug here.
  for (const root of [schema.getQueryType(), schema.getMutationType()]) {
    for (const field of Object.values(root?.getFields() ?? {})) {
      if (field.resolve === undefined) throw new Error(`No resolver for ${root?.name}.${field.name}`)
    }
  }
  return schema
}
