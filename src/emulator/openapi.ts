/**
 * `GET /rest/v1/openapi.json` (R-REST-CALL-01): an OpenAPI 3.1 document generated from the
 * registered operations, so it lists every one of them (RPC), plus the resource-style
 * paths of records, workspaces and lists. It holds only what the service's documents
 * show (openapi-shapes.ts), so it is the same whichever reading an emulator serves, and
 * it is self-contained: every `$ref` points inside it, for tools that read it offline.
 */
import type { Schema } from "effect"
import type { RestOperation } from "./context.ts"
import { type JsonSchema, notShownResponse, omitKeys, responseSchema, SchemaRegistry, schemaRef } from "./openapi-shapes.ts"

/** R-REST-ERR-02: the shape of an issue entry is not shown (ours are `{path, message}`). */
const ERROR_ISSUES: JsonSchema = {
  type: "array",
  description: "One entry per problem found in the input (a schema-validation list); the entries' shape is not shown",
  items: {}
}

/**
 * R-REST-ERR-01/02: `{"error": ...}` with a matching status; on 400 the issues array. What
 * `error` holds and where the issues sit (inside `error` or beside it) are not shown.
 */
const ERROR_SCHEMA: JsonSchema = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      anyOf: [
        { type: "string" },
        {
          type: "object",
          properties: { code: { type: "string" }, message: { type: "string" }, issues: schemaRef("ErrorIssues") },
          additionalProperties: true
        }
      ]
    },
    issues: schemaRef("ErrorIssues")
  },
  additionalProperties: true
}

const ERROR_RESPONSES = {
  BadRequest: "Invalid input; the body includes an issues array",
  Unauthorized: "Authentication failure (missing or unknown token)",
  Forbidden: "Authorization failure (a known token without access)",
  Unprocessable: "The operation ran but failed its own validation (NOT_FOUND, ...)",
  RateLimited: "Rate limited; see Retry-After",
  ServerError: "Server error",
  OtherError: "Another error status (the documents name those above; a service may answer 404 for what is not found)"
} as const

const errorResponses = {
  "400": { $ref: "#/components/responses/BadRequest" },
  "401": { $ref: "#/components/responses/Unauthorized" },
  "403": { $ref: "#/components/responses/Forbidden" },
  "422": { $ref: "#/components/responses/Unprocessable" },
  "429": { $ref: "#/components/responses/RateLimited" },
  "500": { $ref: "#/components/responses/ServerError" },
  default: { $ref: "#/components/responses/OtherError" }
}

const OPEN_OBJECT: JsonSchema = { type: "object", additionalProperties: true }

const json = (schema: JsonSchema) => ({ "application/json": { schema } })

/** Builds the paths of one document; every schema lands in one registry. */
const pathBuilder = (operations: ReadonlyArray<RestOperation>) => {
  const registry = new SchemaRegistry()
  const byName = new Map(operations.map((op) => [op.name, op]))

  const inputSchema = (input: Schema.Top | undefined): JsonSchema => {
    if (input === undefined) return OPEN_OBJECT
    try {
      return registry.of(input)
    } catch {
      // A schema effect cannot express (a declaration without a JSON Schema annotation).
      return OPEN_OBJECT
    }
  }
  const body = (input: Schema.Top | undefined) => ({ required: true, content: json(inputSchema(input)) })
  const responses = (operation: string | null) => ({
    "200": {
      description: "Success",
      content: json(operation === null ? notShownResponse(registry) : responseSchema(registry, operation))
    },
    ...errorResponses
  })

  /** Query parameters from an input's properties (R-REST-CALL-08: arguments as query parameters). */
  const query = (input: Schema.Top | undefined) => {
    const schema = inputSchema(input)
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>
    const required = new Set((schema.required ?? []) as ReadonlyArray<string>)
    return Object.entries(properties).map(([name, property]) => ({
      name,
      in: "query",
      required: required.has(name),
      schema: property,
      ...(property.type === "array" ? { style: "form", explode: true } : {})
    }))
  }

  return { registry, byName, body, responses, query }
}

const recordIdParameter = {
  name: "id",
  in: "path",
  required: true,
  description: "The record id (recordId of the RPC operation)",
  schema: { type: "string" }
}

export const openApiDocument = (restUrl: string, operations: ReadonlyArray<RestOperation>) => {
  const { registry, byName, body, responses, query } = pathBuilder(operations)
  const paths: Record<string, unknown> = {}
  for (const op of [...operations].sort((a, b) => a.name.localeCompare(b.name))) {
    paths[`/v1/${op.name}`] = {
      post: {
        operationId: op.name,
        summary: op.summary ?? op.name,
        tags: [op.family ?? "other"],
        "x-write": op.write,
        requestBody: body(op.input),
        responses: responses(op.name)
      }
    }
  }

  // Resource style (R-REST-CALL-08..16): the same handlers, the record id from the path.
  const input = (name: string) => byName.get(name)?.input
  const withoutRecordId = (name: string) => {
    const schema = input(name)
    return schema === undefined ? undefined : omitKeys(schema, ["recordId"])
  }
  if (byName.has("list-records")) {
    paths["/v1/records"] = {
      get: {
        operationId: "records.list",
        summary: "list-records, arguments as query parameters",
        tags: ["records"],
        parameters: query(input("list-records")),
        responses: responses("list-records")
      },
      post: {
        operationId: "records.create",
        summary: "create-record",
        tags: ["records"],
        requestBody: body(input("create-record")),
        responses: responses("create-record")
      }
    }
    paths["/v1/records/{id}"] = {
      get: {
        operationId: "records.get",
        summary: "get-record",
        tags: ["records"],
        parameters: [recordIdParameter, ...query(withoutRecordId("get-record"))],
        responses: responses("get-record")
      },
      patch: {
        operationId: "records.update",
        summary: "update-record (recordId from the path)",
        description: "Request and response shapes of this path are not shown by the service's documents; the emulator reads the update-record body.",
        tags: ["records"],
        parameters: [recordIdParameter],
        requestBody: body(withoutRecordId("update-record")),
        responses: responses(null)
      },
      delete: {
        operationId: "records.delete",
        summary: "delete-record",
        tags: ["records"],
        parameters: [recordIdParameter, ...query(withoutRecordId("delete-record"))],
        responses: responses("delete-record")
      }
    }
    paths["/v1/records/{id}/move"] = {
      post: {
        operationId: "records.move",
        summary: "move-record (recordId from the path)",
        tags: ["records"],
        parameters: [recordIdParameter],
        requestBody: body(withoutRecordId("move-record")),
        responses: responses("move-record")
      }
    }
  }
  for (const resource of ["workspaces", "lists"] as const) {
    const list = `list-${resource}`
    const create = resource === "workspaces" ? "create-workspace" : "create-list"
    // Their request and response shapes are not shown by the documents.
    paths[`/v1/${resource}`] = {
      get: { operationId: `${resource}.list`, summary: list, tags: [resource], parameters: query(input(list)), responses: responses(null) },
      post: { operationId: `${resource}.create`, summary: create, tags: [resource], requestBody: body(input(create)), responses: responses(null) }
    }
  }

  registry.define("Error", ERROR_SCHEMA)
  registry.define("ErrorIssues", ERROR_ISSUES)
  const families = [...new Set(operations.map((op) => op.family ?? "other"))].sort()
  return {
    openapi: "3.1.0",
    info: {
      title: "Work-management service REST interface (local emulator)",
      version: "1",
      description:
        "RPC: POST /v1/<operation> with a JSON body ({} when there is no input); resource-style paths for records, " +
        "workspaces and lists. Every request also names the organization in the svc-org-id header (or x-svc-company-id). " +
        "Answers may hold keys beyond those described: clients tolerate extra keys.",
      license: { name: "MIT", identifier: "MIT" }
    },
    servers: [{ url: restUrl, description: "This emulator" }],
    security: [{ bearer: [] }],
    tags: families.map((name) => ({ name, description: `Operations on ${name}` })),
    paths,
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer", description: "A personal access token" } },
      schemas: registry.components(),
      responses: Object.fromEntries(
        Object.entries(ERROR_RESPONSES).map(([name, description]) => [name, { description, content: json(schemaRef("Error")) }])
      )
    }
  }
}
