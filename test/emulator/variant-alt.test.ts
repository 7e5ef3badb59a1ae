/**
 * The alt variant serves the other plausible reading of every choice in
 * src/schema/assumptions.ts. Every exported choice is in CHOICES; every choice of kind
 * "service" has a probe here that runs, over real HTTP, against a reference and an alt
 * emulator and must see the reference choice on one and the alternative on the other.
 * A service choice without a probe fails.
 */
import { request } from "node:http"
import { describe, expect, it, layer } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import * as assumptions from "../../src/schema/assumptions.ts"
import { startEmulator, type EmulatorHandle, type EmulatorOptions } from "../../src/emulator/index.ts"
import { getFileByUid } from "../../src/emulator/uploads/files.ts"
import { reconcileOnce } from "../../src/emulator/uploads/reconcile.ts"
import { uploadsInFlight } from "../../src/emulator/uploads/storage.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { eventually, gql, receiver, upload, UPLOAD_FILE } from "./graphql-support.ts"
import { ok, rest, rpc, type Answer } from "./rest-support.ts"

const { CHOICES } = assumptions
type ChoiceName = keyof typeof CHOICES

interface Probe {
  /** Rule ids the probe also checks (both variants obey them). */
  readonly rules?: string
  readonly run: (h: EmulatorHandle) => Promise<unknown>
  readonly reference: unknown
  readonly alt: unknown
}

let n = 0
const fresh = (prefix: string) => `${prefix}-${++n}-${Math.random().toString(36).slice(2, 8)}`

const ws = (h: EmulatorHandle, i = 0) => h.workspaces[i]!
const keys = (o: unknown) => Object.keys(o as object).sort()
const status = async (p: Promise<Answer>) => (await p).status

const newRecord = async (h: EmulatorHandle, extra: Record<string, unknown> = {}, workspaceId = ws(h)): Promise<string> =>
  (await ok(rpc(h, "create-record", { workspaceId, title: fresh("record"), ...extra }))).id

const getRecord = (h: EmulatorHandle, recordId: string) => ok(rpc(h, "get-record", { workspaceId: ws(h), recordId }))

/** The error code of a GraphQL answer, wherever the variant carries it. */
const gqlCode = (r: { body: { errors?: Array<any> } }): string | undefined =>
  r.body.errors?.[0]?.extensions?.code ?? r.body.errors?.[0]?.code

/** A GraphQL call's outcome: its error code, or "ok". */
const gqlOutcome = async (h: EmulatorHandle, query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
  const r = await gql(h, query, variables, { headers: { "svc-org-id": h.org, ...headers } })
  return gqlCode(r) ?? "ok"
}

/** `GET {restUrl}/uploads` with the REST mount's documented headers. */
const presign = (h: EmulatorHandle, query: Record<string, string>, headers?: Record<string, string>) =>
  fetch(`${h.restUrl}/uploads?${new URLSearchParams(query).toString()}`, {
    headers: headers ?? { authorization: `Bearer ${h.token}`, "x-svc-company-id": h.org, "x-svc-project-id": ws(h) }
  })

const seededFile = async (h: EmulatorHandle) => {
  const page = await ok(rpc(h, "list-files", { workspaceId: ws(h), limit: 100 }))
  return (page.items as Array<any>).find((f) => f.status === "CONFIRMED" && f.type === "text/plain") as { uid: string; name: string }
}

/** Is `items` ordered by (createdAt, id), ascending or descending? */
const orderOf = (items: ReadonlyArray<{ createdAt: string; id: string }>) => {
  const key = (i: { createdAt: string; id: string }) => `${i.createdAt}|${i.id}`
  const asc = items.every((item, i) => i === 0 || key(items[i - 1]!) <= key(item))
  const desc = items.every((item, i) => i === 0 || key(items[i - 1]!) >= key(item))
  return asc ? "oldest first" : desc ? "newest first" : "other"
}

/** A short-lived emulator of the same variant with the documented delays scaled down. */
const withFastEmulator = async <T>(h: EmulatorHandle, f: (fast: EmulatorHandle) => Promise<T>): Promise<T> => {
  const fast = await startEmulator({ variant: h.variant, timeScale: 0.001 })
  try {
    return await f(fast)
  } finally {
    await fast.close()
  }
}

const CREATE_WEBHOOK = `mutation($input: CreateWebhookInput!) { createWebhook(input: $input) { id status } }`
const createWebhook = async (h: EmulatorHandle, input: Record<string, unknown>, org = h.org) => {
  const r = await gql(h, CREATE_WEBHOOK, { input }, { headers: { "svc-org-id": org } })
  return { id: r.body.data?.["createWebhook"]?.id as string | undefined, code: gqlCode(r) }
}

const probes: Partial<Record<ChoiceName, Probe>> = {
  CANONICAL_ORG_HEADER: {
    rules: "R-REST-AUTH-02, R-REST-AUTH-03, R-REST-AUTH-07",
    run: async (h) => [
      // `x-svc-company-id` naming no organization on a `/v1` call: read (403) or ignored.
      await status(rpc(h, "list-workspaces", {}, { org: null, headers: { "x-svc-company-id": "no-such-org" } })),
      // REST `/uploads` with `svc-org-id` instead of `x-svc-company-id`.
      (await presign(h, { filename: "a.txt" }, { authorization: `Bearer ${h.token}`, "svc-org-id": h.org, "x-svc-project-id": ws(h) }))
        .status
    ],
    reference: [403, 200],
    alt: [200, 400]
  },
  COUNT_RECORDS_RESPONSE: {
    rules: "R-REST-RECORD-55",
    run: async (h) => keys(await ok(rpc(h, "count-records", {}))),
    reference: ["count"],
    alt: ["totalCount"]
  },
  UPDATE_RECORD_RESPONSE: {
    rules: "R-REST-RECORD-43",
    run: async (h) => {
      const b = await ok(rpc(h, "update-record", { workspaceId: ws(h), recordId: await newRecord(h), title: "renamed" }))
      return "success" in b ? b : { title: b.title }
    },
    reference: { title: "renamed" },
    alt: { success: true }
  },
  ARCHIVE_VIA_UPDATE_RECORD: {
    run: async (h) => {
      const recordId = await newRecord(h)
      const sent = await status(rpc(h, "update-record", { workspaceId: ws(h), recordId, archived: true }))
      return { sent, archived: (await getRecord(h, recordId)).archived }
    },
    reference: { sent: 200, archived: true },
    alt: { sent: 200, archived: false }
  },
  UNDOCUMENTED_INPUT_FIELDS: {
    rules: "R-REST-RECORD-43",
    run: async (h) => {
      const recordId = await newRecord(h)
      // A documented field beside one the documents do not name: the first is applied either way.
      const sent = await status(rpc(h, "update-record", { workspaceId: ws(h), recordId, done: true, archived: true }))
      const detail = await getRecord(h, recordId)
      return { sent, done: detail.done, archived: detail.archived }
    },
    reference: { sent: 200, done: true, archived: true },
    alt: { sent: 200, done: true, archived: false }
  },
  REST_ERROR_SHAPE: {
    rules: "R-REST-ERR-01, R-REST-ERR-02",
    run: async (h) => {
      const a = await rpc(h, "create-record", { workspaceId: ws(h), title: 5 })
      return { status: a.status, keys: keys(a.body), path: (a.body.issues ?? a.body.error.issues)[0].path }
    },
    reference: { status: 400, keys: ["error"], path: ["title"] },
    alt: { status: 400, keys: ["error", "issues"], path: "/title" }
  },
  AUTH_401_VS_403: {
    rules: "R-REST-ERR-03",
    run: async (h) => {
      const user = h.admin.createUser({ email: `${fresh("u")}@alt.test`, firstName: "A", lastName: "B", workspaces: { [ws(h, 1)]: "VIEW_ONLY" } })
      return [
        await status(rpc(h, "list-lists", { workspaceId: ws(h, 0) }, { token: user.token })),
        await status(rpc(h, "create-record", { workspaceId: ws(h, 1), title: "no" }, { token: user.token }))
      ]
    },
    reference: [403, 403],
    alt: [401, 403]
  },
  NOT_FOUND_STATUS: {
    rules: "R-REST-ERR-04",
    run: async (h) => {
      const a = await rpc(h, "get-record", { workspaceId: ws(h), recordId: "0".repeat(24) })
      return [a.status, a.body.error.code]
    },
    reference: [422, "NOT_FOUND"],
    alt: [404, "NOT_FOUND"]
  },
  RATE_LIMIT_MODEL: {
    rules: "R-REST-ERR-05",
    run: async (h) => {
      h.faults.inject({ route: "count-records", kind: "429" })
      const a = await rpc(h, "count-records", {})
      const value = a.headers.get("retry-after") ?? ""
      return [a.status, /^\d+$/.test(value) ? "seconds" : Number.isNaN(Date.parse(value)) ? value : "http-date"]
    },
    reference: [429, "seconds"],
    alt: [429, "http-date"]
  },
  GRAPHQL_ERROR_CODE_PATH: {
    rules: "R-GQL-ERR-01, R-GQL-ERR-09",
    run: async (h) => {
      const r = await gql(h, `{ workspaceUserList(projectId: "no-such-workspace") { totalCount } }`)
      const e = r.body.errors![0] as any
      return { extensions: e.extensions?.code ?? null, top: e.code ?? null }
    },
    reference: { extensions: "PROJECT_NOT_FOUND", top: null },
    alt: { extensions: null, top: "PROJECT_NOT_FOUND" }
  },
  LIST_SHAPE: {
    rules: "R-REST-PAGE-11",
    run: async (h) => {
      const b = await ok(rpc(h, "list-lists", { workspaceId: ws(h) }))
      const items = Array.isArray(b) ? b : b.items
      return { bare: Array.isArray(b), keys: keys(items[0]) }
    },
    reference: { bare: false, keys: ["id", "position", "title", "workspaceId"] },
    alt: { bare: true, keys: ["id", "title"] }
  },
  CREATE_LIST_READING: {
    rules: "R-REST-CALL-07, R-REST-CALL-15",
    run: async (h) => {
      const title = fresh("list")
      const viaRpc = await ok(rpc(h, "create-list", { workspaceId: ws(h), title }))
      const viaPost = await ok(rest(h, "POST", "/v1/lists", { workspaceId: ws(h), title }))
      const lists = await ok(rpc(h, "list-lists", { workspaceId: ws(h) }))
      const made = (Array.isArray(lists) ? lists : lists.items).filter((l: { title: string }) => l.title === title).length
      return { rpcAnswer: Array.isArray(viaRpc) ? "lists" : "list", postAnswer: Array.isArray(viaPost) ? "lists" : "list", made }
    },
    reference: { rpcAnswer: "list", postAnswer: "list", made: 2 },
    alt: { rpcAnswer: "lists", postAnswer: "lists", made: 0 }
  },
  WORKSPACE_SHAPE: {
    rules: "R-REST-PAGE-09",
    run: async (h) => keys((await ok(rpc(h, "list-workspaces", {}))).items[0]),
    reference: ["createdAt", "id", "name", "organizationId", "slug", "updatedAt"],
    alt: ["id", "name"]
  },
  USER_SHAPE: {
    rules: "R-REST-PAGE-10",
    run: async (h) => keys((await ok(rpc(h, "list-users", {}))).users[0]),
    reference: ["accessLevel", "email", "firstName", "fullName", "id", "lastName"],
    alt: ["email", "fullName", "id"]
  },
  TAG_SHAPE: {
    run: async (h) => Array.isArray(await ok(rpc(h, "list-tags", { workspaceId: ws(h) }))),
    reference: false,
    alt: true
  },
  ALL_DAY_READ_FORM: {
    rules: "R-REST-RECORD-34, R-REST-RECORD-05",
    run: async (h) => {
      const title = fresh("all-day")
      const recordId = await newRecord(h, { title, startedAt: "2024-04-01T10:00:00.000Z", duedAt: "2024-05-01" })
      // A page reads the flags with its rows (the start timed, the due date all day).
      const listed = (await ok(rpc(h, "list-records", { workspaceId: ws(h), search: title }))).items[0]
      return { detail: (await getRecord(h, recordId)).duedAt, listed: [listed.startedAt, listed.duedAt] }
    },
    reference: { detail: "2024-05-01T00:00:00.000Z", listed: ["2024-04-01T10:00:00.000Z", "2024-05-01T00:00:00.000Z"] },
    alt: { detail: "2024-05-01T00:00:00", listed: ["2024-04-01T10:00:00.000Z", "2024-05-01T00:00:00"] }
  },
  DETAIL_EMPTY_STRING: {
    rules: "R-REST-RECORD-22",
    run: async (h) => {
      const d = await getRecord(h, await newRecord(h))
      return [d.timezone, d.cover]
    },
    reference: ["", ""],
    alt: ["UTC", ""]
  },
  CUSTOM_FIELD_TYPES: {
    rules: "R-CUSTOMFIELD-04, R-CUSTOMFIELD-06",
    run: async (h) => {
      const workspaceId = ws(h)
      const recordId = await newRecord(h)
      const text = await ok(rpc(h, "create-custom-field", { workspaceId, name: fresh("notes"), type: "TEXT" }))
      const table = await ok(
        rpc(h, "create-custom-field", { workspaceId, name: fresh("table"), type: "TABLE", tableColumns: [{ name: "n", type: "NUMBER" }] })
      )
      const columnId = table.tableColumns[0].id
      await ok(rpc(h, "set-record-custom-field", { workspaceId, recordId, customFieldId: text.id, text: "x" }))
      await ok(
        rpc(h, "set-record-custom-field", { workspaceId, recordId, customFieldId: table.id, tableRows: [{ position: 0, cells: [{ columnId, value: 3 }] }] })
      )
      const fields = (await getRecord(h, recordId)).customFields as Array<any>
      const tableField = fields.find((f) => f.id === table.id)
      return { type: fields.find((f) => f.id === text.id).type, cellsAreList: Array.isArray(tableField.tableRows[0].cells) }
    },
    reference: { type: "TEXT", cellsAreList: true },
    alt: { type: "TEXT_SINGLE", cellsAreList: false }
  },
  ACTIVITY_ACTION_TYPES: {
    rules: "R-REST-ACTIVITY-14",
    run: async (h) => {
      const recordId = await newRecord(h)
      await ok(rpc(h, "update-record", { workspaceId: ws(h), recordId, title: "retitled" }))
      const page = await ok(rpc(h, "list-record-activity", { workspaceId: ws(h), recordId, type: "actions" }))
      return (page.items as Array<any>).map((i) => i.type).sort()
    },
    reference: ["CREATE", "UPDATE_TITLE"],
    alt: ["CREATE_TODO", "UPDATE_TITLE"]
  },
  RECONCILE_MISSING_OBJECT: {
    rules: "R-FILE-STATUS-06",
    run: async (h) => {
      const answer = (await (await presign(h, { filename: "short.txt", size: "10" })).json()) as any
      const put = await fetch(answer.url, { method: "PUT", headers: answer.headers, body: "four" })
      expect(put.status).toBe(200)
      const uid = answer.fields["X-Key"]
      // The signing window is over for this row; one reconciliation pass resolves it.
      h.ctx.db.prepare("UPDATE files SET presign_expires_at = 0 WHERE uid = ?").run(uid)
      reconcileOnce(h.ctx)
      const file = getFileByUid(h.ctx.db, uid)
      return file === null ? "row removed" : `${file.status} ${file.size}`
    },
    reference: "row removed",
    alt: "CONFIRMED 4"
  },
  WEBHOOK_STATUS_AFTER_REENABLE: {
    rules: "R-WEBHOOK-13, R-WEBHOOK-14",
    run: async (h) => {
      const { id } = await createWebhook(h, { url: "http://127.0.0.1:9/hook", events: ["TAG_CREATED"] })
      await gql(h, `mutation($id: String!) { disableWebhook(id: $id) { id } }`, { id })
      await gql(h, `mutation($id: String!) { disableWebhook(id: $id) }`, { id })
      const r = await gql(h, `mutation($id: String!) { updateWebhook(input: { id: $id, enabled: true }) { status enabled } }`, { id })
      return r.body.data?.["updateWebhook"]
    },
    reference: { status: "HEALTHY", enabled: true },
    alt: { status: "UNHEALTHY", enabled: true }
  },
  PRESIGN_TTL_SECONDS: {
    rules: "R-UPLOAD-PRESIGN-07",
    run: async (h) => {
      const before = h.ctx.clock.now()
      const answer = (await (await presign(h, { filename: "ttl.txt" })).json()) as any
      return Math.round((Number(new URL(answer.url).searchParams.get("exp")) - before) / 60_000)
    },
    reference: 15,
    alt: 5
  },
  DOWNLOAD_URL_TTL_SECONDS: {
    rules: "R-FILE-SERVE-01, R-FILE-SERVE-02",
    run: async (h) => {
      const file = await seededFile(h)
      const before = h.ctx.clock.now()
      const res = await fetch(`${h.baseUrl}/uploads/${file.uid}/${encodeURIComponent(file.name)}`, { redirect: "manual" })
      expect(res.status).toBe(302)
      return Math.round((Number(new URL(res.headers.get("location")!).searchParams.get("exp")) - before) / 1000)
    },
    reference: 300,
    alt: 60
  },
  PLAN_LIMITS_DEFAULT: {
    rules: "R-UPLOAD-PRESIGN-28",
    run: async (h) => {
      const res = await presign(h, { filename: "big.bin", size: "4500000000" })
      return [res.status, ((await res.json()) as any).error?.code ?? null]
    },
    reference: [200, null],
    alt: [400, "PLAN_LIMIT_REACHED"]
  },
  ACTIVITY_ORDER: {
    rules: "R-REST-ACTIVITY-03",
    run: async (h) => {
      const recordId = await newRecord(h)
      await ok(rpc(h, "update-record", { workspaceId: ws(h), recordId, title: "second" }))
      await ok(rpc(h, "update-record", { workspaceId: ws(h), recordId, title: "third" }))
      return orderOf((await ok(rpc(h, "list-record-activity", { workspaceId: ws(h), recordId }))).items)
    },
    reference: "newest first",
    alt: "oldest first"
  },
  RECORD_ORDER: {
    rules: "R-REST-RECORD-12",
    run: async (h) => {
      const items = (await ok(rpc(h, "list-records", { workspaceId: ws(h), limit: 100 }))).items as Array<any>
      const byPosition = items.every((r, i) => i === 0 || items[i - 1].position < r.position || (items[i - 1].position === r.position && items[i - 1].id < r.id))
      return { byPosition, order: orderOf(items) }
    },
    reference: { byPosition: true, order: "other" },
    alt: { byPosition: false, order: "newest first" }
  },
  FILE_ORDER: {
    rules: "R-REST-FILES-02",
    run: async (h) => orderOf((await ok(rpc(h, "list-files", { workspaceId: ws(h), limit: 100 }))).items),
    reference: "oldest first",
    alt: "newest first"
  },
  UPDATED_AT_ON_EVERY_CHANGE: {
    run: async (h) => {
      const recordId = await newRecord(h)
      // An old stamp, so any bump shows whatever the clock's resolution.
      const before = "2020-01-01T00:00:00.000Z"
      h.ctx.db.prepare("UPDATE records SET updated_at = ? WHERE id = ?").run(before, recordId)
      await ok(rpc(h, "create-comment", { workspaceId: ws(h), recordId, text: "a comment" }))
      const after = await getRecord(h, recordId)
      return { commentCount: after.commentCount, bumped: after.updatedAt !== before }
    },
    reference: { commentCount: 1, bumped: true },
    alt: { commentCount: 1, bumped: false }
  },
  WEBHOOK_RETRY_BACKOFF_MS: {
    rules: "R-WEBHOOK-DELIVERY-17, R-LIMIT-09",
    run: (h) =>
      withFastEmulator(h, async (fast) => {
        const failing = await receiver(() => 500)
        try {
          await createWebhook(fast, { url: failing.url, events: ["TODO_CREATED"] })
          await newRecord(fast)
          await failing.next(5)
          const delays = fast.ctx.db
            .prepare("SELECT delay_ms AS d FROM webhook_delivery_attempts ORDER BY attempt")
            .all() as Array<{ d: number }>
          // Scaled by 0.001: back to the documented milliseconds.
          return delays.map((row) => row.d * 1000)
        } finally {
          await failing.close()
        }
      }),
    reference: [5_000, 5_000, 10_000, 20_000, 40_000],
    alt: [5_000, 5_000, 10_000, 15_000, 20_000]
  },
  WEBHOOK_HEALTH_CHECK_BODY: {
    rules: "R-WEBHOOK-14, R-WEBHOOK-DELIVERY-18",
    run: (h) =>
      withFastEmulator(h, async (fast) => {
        const hook = await receiver()
        try {
          const { id } = await createWebhook(fast, { url: hook.url, events: ["TAG_CREATED"] })
          await gql(fast, `mutation($id: String!) { updateWebhook(input: { id: $id, enabled: false }) { id } }`, { id })
          await gql(fast, `mutation($id: String!) { updateWebhook(input: { id: $id, enabled: true }) { id } }`, { id })
          await hook.next(1)
          const body = hook.posts[0]!.json
          // The status is read once the emulator has the receiver's answer.
          await eventually(() => {
            const row = fast.ctx.db.prepare("SELECT status FROM webhook_deliveries WHERE event = 'WEBHOOK_HEALTH_CHECK'").get() as { status: string }
            return row.status === "DELIVERED" ? true : undefined
          })
          const after = await gql(fast, `query($id: String!) { webhook(id: $id) { status } }`, { id })
          return { event: body.event, currentValue: body.currentValue === null ? null : keys(body.currentValue), status: after.body.data?.["webhook"].status }
        } finally {
          await hook.close()
        }
      }),
    reference: { event: "WEBHOOK_HEALTH_CHECK", currentValue: ["enabled", "id", "metadata", "status", "uid", "url"], status: "HEALTHY" },
    alt: { event: "WEBHOOK_HEALTH_CHECK", currentValue: null, status: "HEALTHY" }
  },
  EVENT_VALUE_SHAPES: {
    rules: "R-WEBHOOK-DELIVERY-06, R-WEBHOOK-DELIVERY-07",
    run: (h) =>
      withFastEmulator(h, async (fast) => {
        const hook = await receiver()
        try {
          await createWebhook(fast, { url: hook.url, events: ["TODO_CREATED", "TODO_LIST_NAME_CHANGED"] })
          await newRecord(fast)
          await hook.next(1)
          // A list event either reading fires (no list is created in the alt one: CREATE_LIST_READING).
          const list = (await ok(rpc(fast, "list-lists", { workspaceId: ws(fast) })))
          const listId = (Array.isArray(list) ? list : list.items)[0].id
          await ok(rpc(fast, "update-list", { workspaceId: ws(fast), listId, title: "events" }))
          await hook.next(2)
          const byEvent = Object.fromEntries(hook.posts.map((p) => [p.json.event, p.json]))
          return {
            previous: byEvent["TODO_CREATED"].previousValue,
            recordIsDetail: "checklists" in byEvent["TODO_CREATED"].currentValue,
            list: keys(byEvent["TODO_LIST_NAME_CHANGED"].currentValue)
          }
        } finally {
          await hook.close()
        }
      }),
    reference: { previous: null, recordIsDetail: true, list: ["id", "position", "title", "workspaceId"] },
    alt: { previous: null, recordIsDetail: false, list: ["id", "title"] }
  },
  RESOURCE_QUERY_ENCODING: {
    rules: "R-REST-CALL-08, R-REST-RECORD-16",
    run: async (h) => {
      const title = fresh("encoded")
      await newRecord(h, { title, assigneeIds: [h.ownerUserId] })
      const q = new URLSearchParams({ workspaceId: ws(h), search: title })
      q.append("assigneeIds", h.ownerUserId)
      q.append("assigneeIds", "0".repeat(24))
      return (await ok(rest(h, "GET", `/v1/records?${q.toString()}`))).items.length
    },
    reference: 1,
    alt: 0
  },
  RESOURCE_STYLE_SHAPES: {
    rules: "R-REST-CALL-11",
    run: async (h) => {
      const id = await newRecord(h)
      return [
        await status(rest(h, "PATCH", `/v1/records/${id}`, { workspaceId: ws(h), title: "in body" })),
        await status(rest(h, "PATCH", `/v1/records/${id}?workspaceId=${ws(h)}`, { title: "in query" }))
      ]
    },
    reference: [200, 400],
    alt: [400, 200]
  },
  SIZE_UNITS: {
    rules: "R-LIMIT-05",
    run: async (h) => {
      const form = h.ctx.db.prepare("SELECT id FROM forms WHERE workspace_id = ? AND active = 1").get(ws(h)) as { id: string }
      // 510,000,000 bytes: over 500 decimal MB, under 500 binary MB (524,288,000).
      const q = new URLSearchParams({ formId: form.id, filename: "scan.pdf", size: "510000000" })
      return (await fetch(`${h.baseUrl}/uploads?${q.toString()}`)).status
    },
    reference: 400,
    alt: 200
  },
  DATE_INPUT_FORMS: {
    rules: "R-REST-RECORD-35",
    run: async (h) => status(rpc(h, "create-record", { workspaceId: ws(h), title: "zoneless", startedAt: "2024-05-01T09:30:00" })),
    reference: 400,
    alt: 200
  },
  INVITE_USER_INPUT: {
    rules: "R-INVITE-01",
    run: (h) => gqlOutcome(h, `mutation($p: String!) { inviteUser(input: { email: "${fresh("i")}@alt.test", projectId: $p }) }`, { p: ws(h) }),
    reference: "GRAPHQL_VALIDATION_FAILED",
    alt: "ok"
  },
  WEBHOOK_INPUTS: {
    run: async (h) => {
      const { id } = await createWebhook(h, { url: "http://127.0.0.1:9/hook", events: ["TAG_DELETED"] })
      return [
        await gqlOutcome(h, `mutation($id: String!) { disableWebhook(id: $id) }`, { id }),
        await gqlOutcome(h, `mutation($id: String!) { disableWebhook(id: $id) { id status } }`, { id })
      ]
    },
    reference: ["GRAPHQL_VALIDATION_FAILED", "ok"],
    alt: ["ok", "GRAPHQL_VALIDATION_FAILED"]
  },
  ACTIVITY_TYPENAMES: {
    rules: "R-REST-ACTIVITY-10",
    run: async (h) => {
      const recordId = await newRecord(h)
      await ok(rpc(h, "create-comment", { workspaceId: ws(h), recordId, text: "hello" }))
      const page = await ok(rpc(h, "list-record-activity", { workspaceId: ws(h), recordId }))
      return [...new Set((page.items as Array<any>).map((i) => i.__typename))].sort()
    },
    reference: ["Action", "Comment"],
    alt: ["RecordAction", "RecordComment"]
  },
  COMMENT_PARENT_SHOWN: {
    rules: "R-REST-ACTIVITY-10",
    run: async (h) => {
      const recordId = await newRecord(h)
      const first = await ok(rpc(h, "create-comment", { workspaceId: ws(h), recordId, text: "question" }))
      const reply = await ok(rpc(h, "create-comment", { workspaceId: ws(h), recordId, text: "answer", parentId: first.id }))
      const page = await ok(rpc(h, "list-record-activity", { workspaceId: ws(h), recordId, type: "comments" }))
      const item = (page.items as Array<any>).find((i) => i.id === reply.id)
      return item?.parentId === first.id ? "parent shown" : "parent not shown"
    },
    reference: "parent shown",
    alt: "parent not shown"
  },
  FILE_ITEM_REFS: {
    rules: "R-REST-FILES-03, R-REST-FILES-06, R-REST-FILES-07, R-REST-FILES-08",
    run: async (h) => {
      const items = (await ok(rpc(h, "list-files", { workspaceId: ws(h), limit: 100 }))).items as Array<any>
      return {
        folder: keys(items.find((f) => f.folder !== null).folder),
        todo: keys(items.find((f) => f.todo !== null).todo),
        user: keys(items.find((f) => f.user !== null).user)
      }
    },
    reference: { folder: ["id", "name"], todo: ["id", "title"], user: ["email", "fullName", "id"] },
    alt: { folder: ["id"], todo: ["id"], user: ["email", "fullName", "id"] }
  },
  TAG_COLOR_NULLABLE: {
    rules: "R-REST-RECORD-10",
    run: async (h) => (await ok(rpc(h, "create-tag", { workspaceId: ws(h), title: fresh("tag") }))).color,
    reference: null,
    alt: ""
  },
  PRESIGN_DETAILS: {
    rules: "R-UPLOAD-PRESIGN-03, R-UPLOAD-PRESIGN-20",
    run: async (h) => {
      const key = fresh("key")
      return [
        (await presign(h, { filename: "data.xyz" })).status,
        (await presign(h, { filename: "a.txt", key })).status,
        (await presign(h, { filename: "a.txt", key })).status
      ]
    },
    reference: [200, 200, 200],
    alt: [400, 200, 400]
  },
  CONFIRM_IDEMPOTENT: {
    rules: "R-UPLOAD-PRESIGN-16, R-UPLOAD-PRESIGN-31",
    run: async (h) => {
      const file = await seededFile(h)
      const res = await fetch(`${h.restUrl}/uploads/${file.uid}/confirm`, { method: "PUT", headers: { authorization: `Bearer ${h.token}` } })
      return res.status
    },
    reference: 200,
    alt: 400
  },
  PRESIGN_SINGLE_USE: {
    rules: "R-UPLOAD-PRESIGN-07, R-UPLOAD-PRESIGN-14",
    run: async (h) => {
      const answer = (await (await presign(h, { filename: "retry.txt" })).json()) as any
      const key = answer.fields.Key as string
      // A PUT that breaks off midway: 3 of 10 bytes, then the connection is gone.
      const url = new URL(answer.url)
      const broken = request(url, { method: "PUT", headers: { "content-type": answer.headers["Content-Type"], "content-length": 10 } })
      broken.on("error", () => undefined)
      broken.write("abc")
      await eventually(() => (uploadsInFlight(h.ctx).has(key) ? true : undefined))
      broken.destroy()
      await eventually(() => (uploadsInFlight(h.ctx).has(key) ? undefined : true))
      return (await fetch(answer.url, { method: "PUT", headers: answer.headers, body: "0123456789" })).status
    },
    reference: 200,
    alt: 403
  },
  SERVE_NAME_MUST_MATCH: {
    rules: "R-FILE-SERVE-01, R-FILE-SERVE-06",
    run: async (h) => {
      const file = await seededFile(h)
      return [
        (await fetch(`${h.baseUrl}/uploads/${file.uid}/not-its-name.txt`, { redirect: "manual" })).status,
        (await fetch(`${h.baseUrl}/uploads/${file.uid}`, { redirect: "manual" })).status
      ]
    },
    reference: [404, 404],
    alt: [302, 404]
  },
  LIST_FILES_WITHOUT_WORKSPACE: {
    rules: "R-REST-FILES-01",
    run: async (h) => status(rpc(h, "list-files", {})),
    reference: 200,
    alt: 400
  },
  INVITATION_TTL_DAYS: {
    rules: "R-INVITE-14",
    run: async (h) => {
      const email = `${fresh("invitee")}@alt.test`
      await gql(h, `mutation($p: String!) { inviteUser(input: { email: "${email}", projectId: $p, accessLevel: MEMBER }) }`, { p: ws(h) })
      const r = await gql(h, `query($p: String!) { invitations(projectId: $p, pending: true) { email expiredAt } }`, { p: ws(h) })
      const invitation = (r.body.data?.["invitations"] as Array<any>).find((i) => i.email === email)
      return Math.round((Date.parse(invitation.expiredAt) - h.ctx.clock.now()) / 86_400_000)
    },
    reference: 7,
    alt: 14
  },
  WEBHOOKS_PER_ORGANIZATION: {
    rules: "R-GQL-AUTH-09",
    run: async (h) => {
      const org = h.admin.createOrganization({ name: "Hooks", slug: fresh("hooks") })
      h.admin.setOrgLevel(h.ownerUserId, "ADMIN", org)
      let created = 0
      for (let i = 0; i < 12; i++) {
        const { code } = await createWebhook(h, { url: "http://127.0.0.1:9/hook", events: ["TAG_DELETED"] }, org)
        if (code === undefined) created++
        else expect(code).toBe("PLAN_LIMIT_REACHED")
      }
      return created
    },
    reference: 12,
    alt: 10
  },
  EXTRA_OPERATIONS: {
    rules: "R-REST-CALL-02, R-REST-CALL-18",
    run: async (h) => {
      const workspaceId = ws(h)
      const tag = await ok(rpc(h, "create-tag", { workspaceId, title: fresh("extra"), color: "red" }))
      const recordId = await newRecord(h)
      return {
        operations: h.operations.length >= 50,
        created: keys(tag),
        updated: keys(await ok(rpc(h, "update-tag", { workspaceId, tagId: tag.id, title: "renamed" }))),
        unpaged: Array.isArray(await ok(rpc(h, "list-custom-fields", { workspaceId }))),
        paged: keys(await ok(rpc(h, "list-comments", { workspaceId, recordId })))
      }
    },
    reference: { operations: true, created: ["color", "id", "title"], updated: ["color", "id", "title"], unpaged: false, paged: ["items", "totalCount"] },
    alt: { operations: true, created: ["color", "id", "title"], updated: ["success"], unpaged: true, paged: ["items", "pageInfo"] }
  },
  LIST_RECORDS_DETAILS: {
    rules: "R-REST-RECORD-15, R-REST-RECORD-17, R-REST-PAGE-07",
    run: async (h) => {
      const workspaceId = ws(h)
      const page = await ok(rpc(h, "list-records", { workspaceId, limit: 100 }))
      const items = page.items as Array<any>
      const count = async (body: Record<string, unknown>) => {
        const b = await ok(rpc(h, "count-records", body))
        return b.count ?? b.totalCount
      }
      const [t1, t2] = [await ok(rpc(h, "create-tag", { workspaceId, title: fresh("t") })), await ok(rpc(h, "create-tag", { workspaceId, title: fresh("t") }))]
      const title = fresh("tagged")
      await newRecord(h, { title, tagIds: [t1.id, t2.id] })
      await newRecord(h, { title, tagIds: [t1.id] })
      const tagged = await ok(rpc(h, "list-records", { workspaceId, search: title, tagIds: [t1.id, t2.id] }))
      return {
        archivedListed: items.some((r) => r.archived),
        archivedCounted: (await count({ workspaceId })) !== (await count({ workspaceId, archived: false })),
        cursorIsId: page.pageInfo.startCursor === items[0].id,
        taggedMatches: tagged.items.length
      }
    },
    reference: { archivedListed: true, archivedCounted: true, cursorIsId: true, taggedMatches: 2 },
    alt: { archivedListed: false, archivedCounted: false, cursorIsId: false, taggedMatches: 1 }
  },
  RECORD_DETAIL_DETAILS: {
    rules: "R-REST-RECORD-23, R-REST-RECORD-25, R-CUSTOMFIELD-04",
    run: async (h) => {
      const workspaceId = ws(h)
      const recordId = await newRecord(h)
      await ok(rpc(h, "create-custom-field", { workspaceId, name: fresh("unset"), type: "NUMBER" }))
      const checklist = await ok(rpc(h, "create-checklist", { workspaceId, recordId, title: "steps" }))
      await ok(rpc(h, "create-checklist-item", { workspaceId, checklistId: checklist.id, title: "one", done: true }))
      await ok(rpc(h, "create-checklist-item", { workspaceId, checklistId: checklist.id, title: "two" }))
      const d = await getRecord(h, recordId)
      return [d.checklistCount, d.checklistCompletedCount, d.customFields.length > 0]
    },
    reference: [2, 1, true],
    alt: [1, 0, false]
  },
  REST_TRANSPORT_DETAILS: {
    rules: "R-REST-CALL-04, R-REST-CALL-06, R-REST-CALL-16",
    run: async (h) => {
      const workspaceId = ws(h)
      const recordId = await newRecord(h)
      const comment = await ok(rpc(h, "create-comment", { workspaceId, recordId, text: "soon gone" }))
      await ok(rpc(h, "delete-comment", { workspaceId, commentId: comment.id }))
      const org = h.admin.createOrganization({ name: "Second", slug: fresh("second") })
      h.admin.setOrgLevel(h.ownerUserId, "ADMIN", org)
      const other = h.admin.createWorkspace({ name: "Elsewhere", orgId: org })
      const noBody = await fetch(`${h.restUrl}/v1/count-records`, { method: "POST", headers: { authorization: `Bearer ${h.token}` } })
      return {
        unknownOperation: await status(rpc(h, "no-such-operation", {})),
        wrongMethod: await status(rest(h, "PUT", "/v1/records", {})),
        noBody: noBody.status,
        deletedComments: (await ok(rpc(h, "list-record-activity", { workspaceId, recordId, type: "comments" }))).totalCount,
        otherOrganizationListed: ((await ok(rpc(h, "list-workspaces", {}, { org: null }))).items as Array<any>).some((w) => w.id === other.id)
      }
    },
    reference: { unknownOperation: 404, wrongMethod: 405, noBody: 400, deletedComments: 1, otherOrganizationListed: true },
    alt: { unknownOperation: 400, wrongMethod: 404, noBody: 200, deletedComments: 0, otherOrganizationListed: false }
  },
  GRAPHQL_TRANSPORT: {
    rules: "R-GQL-AUTH-04, R-GQL-ERR-01",
    run: async (h) => {
      const res = await fetch(`${h.baseUrl}/graphql`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ query: "{ currentUser { id } }" })
      })
      return [res.status, gqlCode({ body: (await res.json()) as any })]
    },
    reference: [401, "UNAUTHENTICATED"],
    alt: [200, "UNAUTHENTICATED"]
  },
  FILE_PROJECT_NULLABLE: {
    rules: "R-UPLOAD-MULTIPART-08, R-UPLOAD-MULTIPART-12",
    run: async (h) => {
      const r = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: h.org } }, [
        { path: "variables.input.file", name: "org-level.txt", bytes: "org", type: "text/plain" }
      ])
      return r.body.errors === undefined ? { project: r.body.data?.["uploadFile"].project } : { error: gqlCode(r), data: r.body.data ?? null }
    },
    reference: { project: null },
    alt: { error: "INTERNAL_SERVER_ERROR", data: null }
  },
  USER_QUERIES: {
    rules: "R-USER-02, R-USER-04",
    run: async (h) => [
      await gqlOutcome(h, `{ workspaceUserList(first: 5) { totalCount } }`, {}, { "svc-workspace-id": ws(h) }),
      await gqlOutcome(h, `{ currentUser { id firstName } }`)
    ],
    reference: ["ok", "ok"],
    alt: ["GRAPHQL_VALIDATION_FAILED", "GRAPHQL_VALIDATION_FAILED"]
  },
  INVITE_EXISTING_USERS: {
    rules: "R-INVITE-02, R-USER-02",
    run: async (h) => {
      const email = `${fresh("existing")}@alt.test`
      h.admin.createUser({ email, firstName: "Ex", lastName: "Isting" })
      await gql(h, `mutation($p: String!) { inviteUser(input: { email: "${email}", projectId: $p, accessLevel: MEMBER }) }`, { p: ws(h) })
      const members = await gql(h, `query($p: String!) { workspaceUserList(projectId: $p, first: 100) { users { email } } }`, { p: ws(h) })
      const pending = await gql(h, `query($p: String!) { invitations(projectId: $p, pending: true) { email } }`, { p: ws(h) })
      return {
        member: (members.body.data?.["workspaceUserList"].users as Array<any>).some((u) => u.email === email),
        pending: (pending.body.data?.["invitations"] as Array<any>).some((i) => i.email === email)
      }
    },
    reference: { member: true, pending: false },
    alt: { member: false, pending: true }
  },
  USER_REMOVAL: {
    rules: "R-USER-08",
    run: async (h) => {
      const user = h.admin.createUser({ email: `${fresh("leaver")}@alt.test`, firstName: "L", lastName: "V", workspaces: { [ws(h)]: "MEMBER" } })
      const r = await gql(
        h,
        `mutation($p: String!, $u: String!) { removeProjectUser(input: { projectId: $p, userId: $u }) { success operationId } }`,
        { p: ws(h), u: user.userId }
      )
      const result = r.body.data?.["removeProjectUser"]
      return { success: result.success, operationId: result.operationId === null ? null : "an id" }
    },
    reference: { success: true, operationId: "an id" },
    alt: { success: true, operationId: null }
  },
  ROLE_OPERATIONS: {
    rules: "R-ROLE-02, R-ROLE-04",
    run: async (h) => {
      const r = await gql(
        h,
        `mutation($p: String!) { createWorkspaceUserRole(input: { projectId: $p, name: "${fresh("role")}" }) { id canCreateRecords canDeleteRecords } }`,
        { p: ws(h) }
      )
      const role = r.body.data?.["createWorkspaceUserRole"]
      return [role.canCreateRecords, role.canDeleteRecords, await gqlOutcome(h, `query($id: String!) { workspaceUserRole(id: $id) { isFilesEnabled } }`, { id: role.id })]
    },
    reference: [true, true, "ok"],
    alt: [false, false, "GRAPHQL_VALIDATION_FAILED"]
  },
  GRAPHQL_COMMENTS: {
    rules: "R-COMMENT-08, R-FILE-STATUS-08",
    run: async (h) => {
      const recordId = await newRecord(h)
      const element = `<div class="attachment" file='{"uid":"nosuchfile","name":"a.txt","size":1,"type":"text/plain","extension":"txt"}'></div>`
      return gqlOutcome(
        h,
        `mutation($input: CreateCommentInput!) { createComment(input: $input) { id } }`,
        { input: { html: `<p>see</p>${element}`, text: "see", category: "TODO", categoryId: recordId, tiptap: true } },
        { "svc-workspace-id": ws(h) }
      )
    },
    reference: "BAD_USER_INPUT",
    alt: "ok"
  },
  CHECKLIST_ITEM_ASSIGNEES: {
    rules: "R-WEBHOOK-EVENT-02, R-WEBHOOK-EVENT-08",
    run: async (h) => {
      const workspaceId = ws(h)
      const checklist = await ok(rpc(h, "create-checklist", { workspaceId, recordId: await newRecord(h), title: "who" }))
      const item = await ok(rpc(h, "create-checklist-item", { workspaceId, checklistId: checklist.id, title: "task" }))
      await ok(rpc(h, "update-checklist-item", { workspaceId, checklistItemId: item.id, assigneeIds: [h.ownerUserId] }))
      const viaRest = (h.ctx.db.prepare("SELECT count(*) AS n FROM checklist_item_assignees WHERE item_id = ?").get(item.id) as { n: number }).n
      const graphql = await gqlOutcome(
        h,
        `mutation($i: String!, $u: String!) { addChecklistItemAssignee(input: { checklistItemId: $i, userId: $u }) { id } }`,
        { i: item.id, u: h.ownerUserId },
        { "svc-workspace-id": workspaceId }
      )
      return { viaRest, graphql }
    },
    reference: { viaRest: 0, graphql: "ok" },
    alt: { viaRest: 1, graphql: "GRAPHQL_VALIDATION_FAILED" }
  },
  WEBHOOK_MANAGEMENT: {
    rules: "R-WEBHOOK-08",
    run: async (h) => [await gqlOutcome(h, `{ webhooks { items { id } } }`), await gqlOutcome(h, `{ webhooks { totalCount } }`)],
    reference: ["ok", "ok"],
    alt: ["ok", "GRAPHQL_VALIDATION_FAILED"]
  },
  UPLOAD_FILES_RESULT_ORDER: {
    rules: "R-UPLOAD-MULTIPART-09, R-UPLOAD-MULTIPART-11",
    run: async (h) => {
      const r = await upload(
        h,
        `mutation($input: UploadFilesInput!) { uploadFiles(input: $input) { name } }`,
        { input: { files: [null, null], companyId: h.org, projectId: ws(h) } },
        [
          { path: "variables.input.files.0", name: "first.txt", bytes: "1", type: "text/plain" },
          { path: "variables.input.files.1", name: "second.txt", bytes: "2", type: "text/plain" }
        ]
      )
      return (r.body.data?.["uploadFiles"] as Array<any>).map((f) => f.name)
    },
    reference: ["first.txt", "second.txt"],
    alt: ["second.txt", "first.txt"]
  }
}

describe("assumptions.ts CHOICES", () => {
  it("lists every exported choice, each with its kind and a stated alternative", () => {
    const exported = Object.keys(assumptions).filter((name) => name !== "CHOICES")
    expect(Object.keys(CHOICES).sort()).toEqual(exported.sort())
    for (const choice of Object.values(CHOICES)) {
      expect(["service", "client", "configuration", "emulator"]).toContain(choice.kind)
      expect(choice.alternative.length).toBeGreaterThan(0)
    }
  })

  it("probes only service choices (the other kinds have nothing to serve)", () => {
    for (const name of Object.keys(probes)) expect(CHOICES[name as ChoiceName].kind).toBe("service")
  })
})

/** The two emulators the probes compare, both on the demo seed, shared by every probe. */
class Reference extends Context.Service<Reference, EmulatorHandle>()("test/variant-alt/Reference") {}
class Alt extends Context.Service<Alt, EmulatorHandle>()("test/variant-alt/Alt") {}
const emulatorAs = <I>(tag: Context.Key<I, EmulatorHandle>, options: EmulatorOptions) =>
  Layer.effect(tag, Emulator).pipe(Layer.provide(emulatorLayer(options)))
const variants = Layer.merge(
  emulatorAs(Reference, { seed: "demo", variant: "reference" }),
  emulatorAs(Alt, { seed: "demo", variant: "alt" })
)

// Real HTTP and real waits: the live clock (no TestClock), so the emulators' timers run.
layer(variants, { timeout: 30_000, excludeTestServices: true })(
  "the alt variant serves the alternative of every service choice; the reference its choice",
  (it) => {
    const serviceChoices = (Object.keys(CHOICES) as Array<ChoiceName>).filter((name) => CHOICES[name].kind === "service")
    for (const name of serviceChoices) {
      const probe = probes[name]
      it.effect(`${name}${probe?.rules === undefined ? "" : ` (${probe.rules})`}`, () =>
        Effect.gen(function* () {
          const reference = yield* Reference
          const alt = yield* Alt
          yield* Effect.promise(async () => {
            expect(probe, `${name} is a service choice with no probe of its alternative`).toBeDefined()
            expect(await probe!.run(reference)).toEqual(probe!.reference)
            expect(await probe!.run(alt)).toEqual(probe!.alt)
          })
        }))
    }
  }
)
