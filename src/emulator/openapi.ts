/**
 * `GET /rest/v1/openapi.json` (R-REST-CALL-01): an OpenAPI 3.1 document generated from the
 * registered operations, so it lists every one of them (RPC), plus the resource-style
 * paths of records, workspaces and lists.
 */
import { JSONSchema } from "effect"
import type { RestOperation } from "./context.ts"

const ERROR_SCHEMA = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: {
        code: { type: "string" },
        message: { type: "string" },
        issues: {
          type: "array",
          items: {
            type: "object",
            required: ["path", "message"],
            properties: {
              path: { type: "array", items: { type: ["string", "number"] } },
              message: { type: "string" }
            }
          }
        }
      }
    }
  }
}

const errorResponses = {
  "400": { $ref: "#/components/responses/BadRequest" },
  "401": { $ref: "#/components/responses/Unauthorized" },
  "403": { $ref: "#/components/responses/Forbidden" },
  "422": { $ref: "#/components/responses/Unprocessable" },
  "429": { $ref: "#/components/responses/RateLimited" },
  "500": { $ref: "#/components/responses/ServerError" }
}

const inputSchema = (op: RestOperation): unknown => {
  if (op.input === undefined) return { type: "object" }
  try {
    const { $schema: _, ...schema } = JSONSchema.make(op.input) as unknown as Record<string, unknown>
    return schema
  } catch {
    return { type: "object" }
  }
}

const ok = { "200": { description: "Success", content: { "application/json": { schema: {} } } } }

const resourcePaths = (has: (name: string) => boolean) => {
  const ref = (op: string) => ({ $ref: `#/paths/~1v1~1${op}/post/requestBody` })
  const query = (names: ReadonlyArray<string>) => names.map((name) => ({ name, in: "query", required: false, schema: {} }))
  const paths: Record<string, unknown> = {}
  if (has("list-records")) {
    paths["/v1/records"] = {
      get: {
        operationId: "records.list",
        summary: "list-records, arguments as query parameters",
        tags: ["records"],
        parameters: query(["workspaceId", "listId", "done", "archived", "assigneeIds", "tagIds", "search", "skip", "limit"]),
        responses: { ...ok, ...errorResponses }
      },
      post: { operationId: "records.create", summary: "create-record", tags: ["records"], requestBody: ref("create-record"), responses: { ...ok, ...errorResponses } }
    }
    const id = { name: "id", in: "path", required: true, schema: { type: "string" } }
    paths["/v1/records/{id}"] = {
      get: { operationId: "records.get", summary: "get-record", tags: ["records"], parameters: [id, ...query(["workspaceId"])], responses: { ...ok, ...errorResponses } },
      patch: { operationId: "records.update", summary: "update-record (recordId from the path)", tags: ["records"], parameters: [id], requestBody: ref("update-record"), responses: { ...ok, ...errorResponses } },
      delete: { operationId: "records.delete", summary: "delete-record", tags: ["records"], parameters: [id, ...query(["workspaceId"])], responses: { ...ok, ...errorResponses } }
    }
    paths["/v1/records/{id}/move"] = {
      post: { operationId: "records.move", summary: "move-record (recordId from the path)", tags: ["records"], parameters: [id], requestBody: ref("move-record"), responses: { ...ok, ...errorResponses } }
    }
  }
  for (const resource of ["workspaces", "lists"] as const) {
    const create = resource === "workspaces" ? "create-workspace" : "create-list"
    paths[`/v1/${resource}`] = {
      get: { operationId: `${resource}.list`, summary: `list-${resource}`, tags: [resource], parameters: query(resource === "lists" ? ["workspaceId"] : []), responses: { ...ok, ...errorResponses } },
      post: { operationId: `${resource}.create`, summary: create, tags: [resource], requestBody: ref(create), responses: { ...ok, ...errorResponses } }
    }
  }
  return paths
}

export const openApiDocument = (restUrl: string, operations: ReadonlyArray<RestOperation>) => {
  const names = new Set(operations.map((o) => o.name))
  const paths: Record<string, unknown> = {}
  for (const op of [...operations].sort((a, b) => a.name.localeCompare(b.name))) {
    paths[`/v1/${op.name}`] = {
      post: {
        operationId: op.name,
        summary: op.summary ?? op.name,
        tags: [op.family ?? "other"],
        "x-write": op.write,
        requestBody: { required: true, content: { "application/json": { schema: inputSchema(op) } } },
        responses: { ...ok, ...errorResponses }
      }
    }
  }
  const errorContent = { "application/json": { schema: { $ref: "#/components/schemas/Error" } } }
  return {
    openapi: "3.1.0",
    info: {
      title: "Work-management service REST interface (local emulator)",
      version: "1",
      description: "RPC: POST /v1/<operation> with a JSON body ({} when there is no input)."
    },
    servers: [{ url: restUrl }],
    security: [{ bearer: [] }],
    paths: { ...paths, ...resourcePaths((name) => names.has(name)) },
    components: {
      securitySchemes: { bearer: { type: "http", scheme: "bearer" } },
      schemas: { Error: ERROR_SCHEMA },
      responses: {
        BadRequest: { description: "Invalid input; issues lists each problem", content: errorContent },
        Unauthorized: { description: "Missing or unknown token", content: errorContent },
        Forbidden: { description: "Known token without access", content: errorContent },
        Unprocessable: { description: "Ran but failed its own validation (NOT_FOUND, ...)", content: errorContent },
        RateLimited: { description: "Rate limited; see Retry-After", content: errorContent },
        ServerError: { description: "Server error", content: errorContent }
      }
    }
  }
}
