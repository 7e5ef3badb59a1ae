/**
 * The JSON Schemas of openapi.json: request bodies from the operations' input schemas and
 * 200 answers of the shapes the service's documents show, both built from the schemas the
 * client decodes with. Where the documents do not show an answer, the description is
 * open and says so: it claims nothing our emulator merely chose (the document stays the
 * same whichever reading an emulator serves).
 */
import { JSONSchema, Schema } from "effect"
import {
  ActivityItem,
  FileItem,
  FilesPageInfo,
  ItemsWithTotal,
  ListRef,
  openStruct,
  RecordDetail,
  RecordSummary,
  RecordsPageInfo,
  SearchResult,
  SuccessResponse
} from "../schema/index.ts"

export type JsonSchema = { readonly [key: string]: unknown }

/** Where shared definitions live in the document (effect's default, `#/$defs/`, is not resolvable there). */
const DEFINITIONS = "#/components/schemas/"

export const schemaRef = (name: string): JsonSchema => ({ $ref: `${DEFINITIONS}${name}` })

/**
 * effect marks `Schema.Unknown` and `Schema.Object` with fixed `$id`s; one document holding
 * several of them has duplicate ids, which validators refuse. The refs carry the naming.
 */
const withoutIds = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(withoutIds)
  if (value === null || typeof value !== "object") return value
  const out: Record<string, unknown> = {}
  for (const [key, inner] of Object.entries(value)) if (key !== "$id") out[key] = withoutIds(inner)
  return out
}

/**
 * Turns schemas into JSON Schema, collecting every named definition (a schema with an
 * `identifier`) once, for `components/schemas`.
 */
export class SchemaRegistry {
  private readonly definitions: Record<string, JSONSchema.JsonSchema7> = {}
  private readonly extra: Record<string, JsonSchema> = {}

  /** JSON Schema of a schema; undeclared keys are allowed (clients tolerate extra keys). */
  of(schema: Schema.Schema<any, any, never>): JsonSchema {
    return withoutIds(
      JSONSchema.fromAST(schema.ast, {
        definitions: this.definitions,
        definitionPath: DEFINITIONS,
        target: "openApi3.1",
        additionalPropertiesStrategy: "allow"
      })
    ) as JsonSchema
  }

  /** Registers a hand-written definition and returns its ref. */
  define(name: string, schema: JsonSchema): JsonSchema {
    this.extra[name] = schema
    return schemaRef(name)
  }

  /** Every definition collected so far, sorted by name. */
  components(): Record<string, JsonSchema> {
    const all: Record<string, JsonSchema> = { ...(withoutIds(this.definitions) as Record<string, JsonSchema>), ...this.extra }
    return Object.fromEntries(Object.keys(all).sort().map((name) => [name, all[name]!]))
  }
}

const named = <A, I>(identifier: string, schema: Schema.Schema<A, I, never>) => schema.annotations({ identifier })

const Summary = named("RecordSummary", RecordSummary)
const created = { id: Schema.String, uid: Schema.String, title: Schema.String }

/** The documented answers, each a named component (openapi-typescript names its types after them). */
const documented: Record<string, Schema.Schema<any, any, never>> = {
  // R-REST-RECORD-01, R-REST-PAGE-07
  "list-records": named(
    "RecordsPage",
    openStruct({ items: Schema.Array(Summary), pageInfo: named("RecordsPageInfo", RecordsPageInfo) })
  ),
  // R-REST-RECORD-19
  "get-record": named("RecordDetail", RecordDetail),
  // R-REST-RECORD-40/41: the documents show two examples of the created record, either may
  // come; the type of `rank` is not shown.
  "create-record": named(
    "CreateRecordResponse",
    Schema.Union(
      named("CreatedRecordWithList", openStruct({ ...created, rank: Schema.Unknown, list: ListRef })),
      named("CreatedRecordWithTodoList", openStruct({ ...created, position: Schema.Number, todoList: ListRef }))
    )
  ),
  "move-record": named("SuccessResponse", SuccessResponse),
  "delete-record": named("SuccessResponse", SuccessResponse),
  "search-records": named("SearchResults", Schema.Array(named("SearchResult", SearchResult))),
  "list-record-activity": named("ActivityPage", ItemsWithTotal(named("ActivityItem", ActivityItem))),
  // R-REST-PAGE-08
  "list-files": named(
    "FilesPage",
    openStruct({ items: Schema.Array(named("FileItem", FileItem)), pageInfo: named("FilesPageInfo", FilesPageInfo) })
  )
}

const NOT_SHOWN = "The service's documents do not show this answer"
const notShownItem = { type: "object", additionalProperties: true, description: "Fields not shown by the service's documents" }

/**
 * Answers whose envelope the documents show but not their items, or that they do not
 * show at all: what is documented is required, the rest stays open.
 */
const partlyShown: Record<string, readonly [string, JsonSchema]> = {
  // R-REST-PAGE-09
  "list-workspaces": [
    "WorkspacesPage",
    {
      type: "object",
      required: ["items", "totalCount"],
      properties: { items: { type: "array", items: notShownItem }, totalCount: { type: "number" } },
      additionalProperties: true
    }
  ],
  // R-REST-PAGE-10
  "list-users": [
    "UsersPage",
    {
      type: "object",
      required: ["users", "totalCount"],
      properties: { users: { type: "array", items: notShownItem }, totalCount: { type: "number" } },
      additionalProperties: true
    }
  ],
  // R-REST-PAGE-11: not paged, the full set; whether bare or in an envelope is not shown.
  "list-lists": [
    "ListsResponse",
    {
      description: "Every list, not paged; whether as a bare array or in an object is not shown",
      anyOf: [{ type: "array", items: notShownItem }, { type: "object", additionalProperties: true }]
    }
  ],
  "update-record": ["UpdateRecordResponse", { type: "object", additionalProperties: true, description: NOT_SHOWN }],
  "count-records": [
    "CountRecordsResponse",
    {
      description: `${NOT_SHOWN}: an object holding the count (\`count\` or \`totalCount\`) or a bare number`,
      anyOf: [{ type: "object", additionalProperties: true }, { type: "number" }]
    }
  ]
}

/** The 200 answer of an operation (RPC name), as a ref into `components/schemas`. */
export const responseSchema = (registry: SchemaRegistry, operation: string): JsonSchema => {
  const schema = documented[operation]
  if (schema !== undefined) return registry.of(schema)
  const open = partlyShown[operation]
  if (open !== undefined) return registry.define(open[0], open[1])
  return notShownResponse(registry)
}

/** An answer the documents do not show at all (most operations beyond records, files and search). */
export const notShownResponse = (registry: SchemaRegistry): JsonSchema =>
  registry.define("NotShownResponse", { type: "object", additionalProperties: true, description: NOT_SHOWN })
