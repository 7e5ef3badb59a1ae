/**
 * openapi.json read by tools no one here wrote (issue 11, interoperability): fetched over
 * real HTTP from both emulator variants, validated and dereferenced by swagger-parser,
 * linted by the Redocly CLI, and held against the answers the emulator really sends. The
 * tools run offline: the document is self-contained and Redocly's telemetry is off.
 */
import SwaggerParser from "@apidevtools/swagger-parser"
import { Ajv2020 } from "ajv/dist/2020.js"
import { execFile } from "node:child_process"
import { writeFileSync } from "node:fs"
import { join, resolve } from "node:path"
import { describe, expect, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { ok, rest, rpc } from "./rest-support.ts"

/** The operations whose answers the service's documents name (REST § Endpoints, § Other named operations). */
const DOCUMENTED = [
  "list-records",
  "get-record",
  "create-record",
  "update-record",
  "move-record",
  "delete-record",
  "count-records",
  "search-records",
  "list-record-activity",
  "list-files",
  "list-workspaces",
  "list-users",
  "list-lists"
] as const

const REDOCLY = resolve("node_modules/.bin/redocly")

let reference: EmulatorHandle
let alt: EmulatorHandle
let doc: any
let dir: string
let file: string

// The checks below read both emulators and the fetched document from these bindings: the layer
// fills them once both emulators are up, and closes them and removes the directory after the last test.
const fileLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    const [refContext, altContext] = yield* Effect.all(
      [Layer.build(emulatorLayer({ seed: "demo" })), Layer.build(emulatorLayer({ seed: "demo", variant: "alt" }))],
      { concurrency: "unbounded" }
    )
    reference = Context.get(refContext, Emulator)
    alt = Context.get(altContext, Emulator)
    doc = yield* Effect.promise(() => ok(rest(reference, "GET", "/v1/openapi.json")))
    dir = yield* tempDir("worksync-openapi-")
    file = join(dir, "openapi.json")
    writeFileSync(file, JSON.stringify(doc))
  })
)

const clone = () => structuredClone(doc)

/** A `#/components/schemas/...` ref followed once (documented answers are named components). */
const resolveRef = (schema: any): any =>
  typeof schema?.$ref === "string" ? doc.components.schemas[schema.$ref.replace("#/components/schemas/", "")] : schema

const answerSchema = (path: string, method: string, status = "200") =>
  doc.paths[path]?.[method]?.responses?.[status]?.content?.["application/json"]?.schema

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("openapi.json for independent tools (R-REST-CALL-01)", () => {
    it.effect("R-REST-CALL-01: both emulator variants publish the same document (documented shapes only)", () => Effect.promise(async () => {
      const other = await ok(rest(alt, "GET", "/v1/openapi.json"))
      const withoutServers = (d: any) => ({ ...d, servers: undefined })
      expect(withoutServers(other)).toEqual(withoutServers(doc))
      expect(JSON.stringify(doc).includes("#/$defs/"), "a ref to #/$defs/ (not resolvable in OpenAPI)").toBe(false)
    }))

    it.effect("R-REST-CALL-01: @apidevtools/swagger-parser validates it", () => Effect.promise(async () => {
      const api: any = await SwaggerParser.validate(clone())
      expect(api.openapi).toMatch(/^3\.1\./)
    }))

    it.effect("R-REST-CALL-01: redocly lint (recommended rules, no telemetry) finds no error", () => Effect.promise(async () => {
      const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((done) =>
        execFile(
          REDOCLY,
          ["lint", file, "--format=json"],
          {
            cwd: dir,
            env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" },
            timeout: 20_000
          },
          (error, stdout, stderr) => done({ code: error === null ? 0 : Number(error.code ?? 1), stdout, stderr })
        )
      )
      const report = JSON.parse(stdout || "null") as { totals: { errors: number; warnings: number }; problems: any[] } | null
      expect(report, stderr.slice(-400)).not.toBeNull()
      const errors = report!.problems.filter((p) => p.severity === "error").map((p) => `${p.ruleId}: ${p.message}`)
      expect(errors).toEqual([])
      expect(report!.totals.warnings).toBeLessThanOrEqual(5)
      expect(code).toBe(0)
    }))

    it.effect("R-REST-RECORD-02..10: RecordSummary has every documented field, required; list-records' 200 answer is RecordsPage of them", () => Effect.promise(async () => {
      const schemas = doc.components.schemas
      const fields = objectFields(schemas.RecordSummary)
      expect(fields).toEqual(
        expect.arrayContaining(
          ["id", "uid", "title", "done", "archived", "position", "startedAt", "duedAt", "color", "createdAt", "updatedAt", "todoList", "users", "tags"].map(
            (name) => ({ name, optional: false })
          )
        )
      )
      expect(objectFields(schemas.RecordsPage).map((m) => m.name)).toEqual(["items", "pageInfo"])
      // The 200 answer of list-records is named (not {}): RecordsPage, whose items are RecordSummary.
      expect(answerSchema("/v1/list-records", "post")?.$ref).toBe("#/components/schemas/RecordsPage")
      expect(schemas.RecordsPage.properties.items.type).toBe("array")
      expect(schemas.RecordsPage.properties.items.items?.$ref).toBe("#/components/schemas/RecordSummary")
      // Dereferenced, as a tool reads it: the answer itself holds the same fields.
      const api: any = await SwaggerParser.dereference(clone())
      const answer = api.paths["/v1/list-records"].post.responses["200"].content["application/json"].schema
      expect(objectFields(answer).map((m) => m.name)).toEqual(["items", "pageInfo"])
      expect(objectFields(answer.properties.items.items)).toEqual(fields)
    }))

    it.effect("every documented operation has a 200 answer schema (not {}) and the error answers", () => Effect.sync(() => {
      for (const op of DOCUMENTED) {
        const schema = answerSchema(`/v1/${op}`, "post")
        expect(schema, op).toBeDefined()
        expect(Object.keys(resolveRef(schema) ?? {}), op).not.toEqual([])
        for (const status of ["400", "401", "403", "422", "429", "500"]) {
          expect(doc.paths[`/v1/${op}`].post.responses[status], `${op} ${status}`).toBeDefined()
        }
      }
      // Documented fields are listed and required; undeclared keys stay allowed (clients tolerate extra keys).
      const required = (op: string) => resolveRef(answerSchema(`/v1/${op}`, "post")).required
      expect(required("list-records")).toEqual(["items", "pageInfo"])
      expect(required("list-workspaces")).toEqual(["items", "totalCount"])
      expect(required("list-users")).toEqual(["users", "totalCount"])
      expect(required("list-record-activity")).toEqual(["items", "totalCount"])
      expect(required("list-files")).toEqual(["items", "pageInfo"])
      expect(required("move-record")).toEqual(["success"])
      expect(resolveRef(answerSchema("/v1/get-record", "post")).required).toEqual(
        expect.arrayContaining(["text", "html", "timezone", "cover", "commentCount", "isRepeating", "checklists", "customFields"])
      )
      expect(resolveRef(answerSchema("/v1/search-records", "post")).type).toBe("array")
      expect(resolveRef(answerSchema("/v1/list-records", "post")).additionalProperties).toBe(true)
      // Resource style (R-REST-CALL-08..13): the same answers.
      expect(answerSchema("/v1/records", "get")).toEqual(answerSchema("/v1/list-records", "post"))
      expect(answerSchema("/v1/records/{id}", "get")).toEqual(answerSchema("/v1/get-record", "post"))
      expect(answerSchema("/v1/records/{id}", "delete")).toEqual(answerSchema("/v1/delete-record", "post"))
      expect(answerSchema("/v1/records/{id}/move", "post")).toEqual(answerSchema("/v1/move-record", "post"))
      expect(doc.paths["/v1/records/{id}/move"].post.requestBody.content["application/json"].schema.required).toEqual([
        "workspaceId",
        "listId"
      ])
    }))

    it.effect("R-REST-CALL-01: the answers of both variants fit the document", () => Effect.promise(async () => {
      const api: any = await SwaggerParser.dereference(clone())
      const ajv = new Ajv2020({ strict: false, allErrors: true })
      const misfits: string[] = []
      for (const [variant, h] of [["reference", reference], ["alt", alt]] as const) {
        const ws = h.workspaces[0]!
        const seen = new Map<string, any>()
        const call = async (op: string, body: unknown, path = `/v1/${op}`) => {
          const a = await rpc(h, op, body)
          const described = api.paths[path]?.post?.responses
          const schema = (described?.[String(a.status)] ?? described?.default)?.content?.["application/json"]?.schema
          if (schema === undefined) misfits.push(`${variant} ${op}: status ${a.status} is not described`)
          else {
            const validate = ajv.compile(schema)
            if (!validate(a.body)) misfits.push(`${variant} ${op} ${a.status}: ${JSON.stringify(validate.errors).slice(0, 200)}`)
          }
          seen.set(op, a.body)
          return a.body
        }
        const page = await call("list-records", { workspaceId: ws, limit: 5 })
        await call("get-record", { workspaceId: ws, recordId: page.items[0].id })
        await call("search-records", { workspaceId: ws, query: page.items[0].title.split(" ")[0] })
        await call("list-files", { workspaceId: ws })
        await call("list-workspaces", {})
        await call("list-users", {})
        const lists = await call("list-lists", { workspaceId: ws })
        const created = await call("create-record", { workspaceId: ws, title: "openapi check" })
        await call("update-record", { workspaceId: ws, recordId: created.id, title: "openapi check, renamed" })
        await call("list-record-activity", { workspaceId: ws, recordId: created.id })
        await call("count-records", { workspaceId: ws })
        const listIds = (Array.isArray(lists) ? lists : lists.items).map((l: any) => l.id)
        await call("move-record", { workspaceId: ws, recordId: created.id, listId: listIds[listIds.length - 1] })
        await call("delete-record", { workspaceId: ws, recordId: created.id })
        await call("get-record", { workspaceId: ws }) // 400
        await call("get-record", { workspaceId: ws, recordId: "no-such-record" }) // 422 (or 404)
        // Not vacuous: the arrays checked hold items.
        for (const [op, key] of [["list-records", "items"], ["list-files", "items"], ["list-workspaces", "items"], ["list-users", "users"], ["list-record-activity", "items"]] as const) {
          expect(seen.get(op)[key].length, op).toBeGreaterThan(0)
        }
        expect(seen.get("search-records").length).toBeGreaterThan(0)
      }
      expect(misfits).toEqual([])
    }))
  })

  /**
   * Fields (name, optional) of an object schema of the document: its `properties`, optional
   * unless listed in `required`; an `allOf` contributes the fields of each part.
   */
  const objectFields = (schema: any): Array<{ name: string; optional: boolean }> => {
    if (schema === undefined || schema === null || typeof schema !== "object") return []
    const required: ReadonlyArray<string> = Array.isArray(schema.required) ? schema.required : []
    const own = Object.keys(schema.properties ?? {}).map((name) => ({ name, optional: !required.includes(name) }))
    const parts: ReadonlyArray<any> = Array.isArray(schema.allOf) ? schema.allOf : []
    return [...own, ...parts.flatMap((part) => objectFields(resolveRef(part)))]
  }
})
