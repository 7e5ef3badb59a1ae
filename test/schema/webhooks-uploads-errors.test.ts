import { Result, Schema } from "effect"
import { describe, expect, it } from "vitest"
import {
  CHECKLIST_EVENTS,
  COMMENT_EVENTS,
  ConfirmResponse,
  CUSTOM_FIELD_EVENTS,
  decodeUnknownEither,
  describeParseError,
  formatIssues,
  GraphqlErrorEntry,
  graphqlErrorCode,
  GraphqlFile,
  GraphqlResponse,
  isWebhookEvent,
  LIST_EVENTS,
  PresignQuery,
  PresignResponse,
  RECORD_EVENTS,
  RestErrorBody,
  restErrorParts,
  TAG_EVENTS,
  ValidationIssue,
  Webhook,
  WEBHOOK_EVENTS,
  WEBHOOK_HEALTH_CHECK,
  WebhookDelivery,
  WebhookEvent,
  WebhooksPage
} from "../../src/schema/index.ts"

const left = <A>(r: Result.Result<A, Schema.SchemaError>): Schema.SchemaError => {
  if (Result.isSuccess(r)) throw new Error("expected a decode failure")
  return r.failure
}

describe("webhook events", () => {
  const accepts = (values: ReadonlyArray<string>) => {
    for (const v of values) expect(Result.isSuccess(decodeUnknownEither(WebhookEvent)(v))).toBe(true)
  }

  it("R-WEBHOOK-EVENT-01: the Record group values are subscribable", () => {
    expect(RECORD_EVENTS).toHaveLength(13)
    accepts(["TODO_CREATED", "TODO_DELETED", "TODO_MOVED", "TODO_NAME_CHANGED", "TODO_DONE_STATUS_UPDATED",
      "TODO_DUE_DATE_ADDED", "TODO_DUE_DATE_UPDATED", "TODO_DUE_DATE_REMOVED", "TODO_ASSIGNEE_ADDED",
      "TODO_ASSIGNEE_REMOVED", "TODO_TAG_ADDED", "TODO_TAG_REMOVED", "TODO_CUSTOM_FIELD_UPDATED"])
  })

  it("R-WEBHOOK-EVENT-02: the Checklist group values are subscribable", () => {
    expect(CHECKLIST_EVENTS).toHaveLength(12)
    accepts(["TODO_CHECKLIST_CREATED", "TODO_CHECKLIST_NAME_CHANGED", "TODO_CHECKLIST_DELETED",
      "TODO_CHECKLIST_ITEM_CREATED", "TODO_CHECKLIST_ITEM_NAME_CHANGED", "TODO_CHECKLIST_ITEM_DELETED",
      "TODO_CHECKLIST_ITEM_DUE_DATE_ADDED", "TODO_CHECKLIST_ITEM_DUE_DATE_UPDATED", "TODO_CHECKLIST_ITEM_DUE_DATE_REMOVED",
      "TODO_CHECKLIST_ITEM_ASSIGNEE_ADDED", "TODO_CHECKLIST_ITEM_ASSIGNEE_REMOVED", "TODO_CHECKLIST_ITEM_DONE_STATUS_UPDATED"])
  })

  it("R-WEBHOOK-EVENT-03: the List group values are subscribable", () => {
    expect(LIST_EVENTS).toHaveLength(3)
    accepts(["TODO_LIST_CREATED", "TODO_LIST_DELETED", "TODO_LIST_NAME_CHANGED"])
  })

  it("R-WEBHOOK-EVENT-04: the Custom field group values are subscribable", () => {
    expect(CUSTOM_FIELD_EVENTS).toHaveLength(3)
    accepts(["CUSTOM_FIELD_CREATED", "CUSTOM_FIELD_DELETED", "CUSTOM_FIELD_UPDATED"])
  })

  it("R-WEBHOOK-EVENT-05: the Tag group values are subscribable", () => {
    expect(TAG_EVENTS).toHaveLength(3)
    accepts(["TAG_CREATED", "TAG_DELETED", "TAG_UPDATED"])
  })

  it("R-WEBHOOK-EVENT-06: the Comment group values are subscribable", () => {
    expect(COMMENT_EVENTS).toHaveLength(3)
    accepts(["COMMENT_CREATED", "COMMENT_DELETED", "COMMENT_UPDATED"])
    expect(WEBHOOK_EVENTS).toHaveLength(37)
    expect(new Set(WEBHOOK_EVENTS).size).toBe(37)
  })

  it("R-WEBHOOK-EVENT-07: WEBHOOK_HEALTH_CHECK is not a WebhookEvent", () => {
    expect(WEBHOOK_HEALTH_CHECK).toBe("WEBHOOK_HEALTH_CHECK")
    expect(isWebhookEvent(WEBHOOK_HEALTH_CHECK)).toBe(false)
    expect((WEBHOOK_EVENTS as ReadonlyArray<string>).includes(WEBHOOK_HEALTH_CHECK)).toBe(false)
  })
})

const webhook = () => ({
  id: "h1",
  uid: "hk1",
  name: null,
  url: "https://receiver.example/hook",
  secret: null,
  status: "HEALTHY",
  events: ["TODO_CREATED"],
  projectIds: [],
  enabled: true,
  metadata: { events: ["TODO_CREATED"], projectIds: [] },
  createdAt: "2024-05-01T00:00:00.000Z",
  updatedAt: "2024-05-01T00:00:00.000Z"
})

describe("webhooks", () => {
  it("R-WEBHOOK-01: a Webhook has id, uid, name, url, secret, status, events, projectIds, enabled, metadata, createdAt, updatedAt", () => {
    expect(Result.getOrThrow(decodeUnknownEither(Webhook)(webhook()))).toEqual(webhook())
    const { metadata: _m, ...noMetadata } = webhook()
    expect(describeParseError(left(decodeUnknownEither(Webhook)(noMetadata)))).toBe("metadata: is missing")
  })

  it("R-WEBHOOK-05: status is HEALTHY or UNHEALTHY", () => {
    expect(Result.isSuccess(decodeUnknownEither(Webhook)({ ...webhook(), status: "UNHEALTHY", enabled: false }))).toBe(true)
    expect(formatIssues(left(decodeUnknownEither(Webhook)({ ...webhook(), status: "SICK" })))[0]?.path).toEqual(["status"])
  })

  it("R-WEBHOOK-08: webhooks answers an object with items", () => {
    expect(Result.getOrThrow(decodeUnknownEither(WebhooksPage)({ items: [webhook()] })).items).toHaveLength(1)
  })

  it("R-WEBHOOK-DELIVERY-02/03/18: a delivery body decodes, unknown event strings included", () => {
    const { secret: _s, name: _n, events: _e, projectIds: _p, createdAt: _c, updatedAt: _u, ...config } = webhook()
    for (const event of ["TODO_CREATED", WEBHOOK_HEALTH_CHECK, "SOMETHING_NEW"]) {
      const body = { event, webhook: config, previousValue: null, currentValue: { id: "r1", title: "T" } }
      expect(Result.getOrThrow(decodeUnknownEither(WebhookDelivery)(body))).toEqual(body)
    }
    const bad = { event: "TODO_CREATED", webhook: { ...config, url: 1 }, previousValue: null, currentValue: null }
    expect(describeParseError(left(decodeUnknownEither(WebhookDelivery)(bad)))).toBe("webhook.url: expected string, got number")
  })
})

describe("presigned uploads", () => {
  const presign = () => ({
    url: "http://127.0.0.1:9000/bucket/key?sig=abc",
    method: "PUT",
    headers: { "Content-Type": "application/pdf" },
    fields: { "Content-Type": "application/pdf", Key: "o1/w1/abc/report.pdf", "X-Key": "abc" }
  })

  it("R-UPLOAD-PRESIGN-06/07: the answer has url, method, headers and fields", () => {
    expect(Result.getOrThrow(decodeUnknownEither(PresignResponse)(presign()))).toEqual(presign())
    const { url: _u, ...noUrl } = presign()
    expect(describeParseError(left(decodeUnknownEither(PresignResponse)(noUrl)))).toBe("url: is missing")
  })

  it("R-UPLOAD-PRESIGN-08: method is always PUT", () => {
    expect(describeParseError(left(decodeUnknownEither(PresignResponse)({ ...presign(), method: "POST" })))).toBe(
      'method: expected "PUT", got string'
    )
  })

  it("R-UPLOAD-PRESIGN-09: headers contains Content-Type", () => {
    expect(describeParseError(left(decodeUnknownEither(PresignResponse)({ ...presign(), headers: {} })))).toBe(
      'headers["Content-Type"]: is missing'
    )
  })

  it("R-UPLOAD-PRESIGN-10/30: fields contains Content-Type, Key and X-Key", () => {
    const p = presign()
    const bad = { ...p, fields: { "Content-Type": "application/pdf", Key: "k" } }
    expect(describeParseError(left(decodeUnknownEither(PresignResponse)(bad)))).toBe('fields["X-Key"]: is missing')
    const extra = { ...p, fields: { ...p.fields, acl: "private" } }
    expect(Result.getOrThrow(decodeUnknownEither(PresignResponse)(extra)).fields).toEqual(extra.fields)
  })

  it("R-UPLOAD-PRESIGN-16: confirm answers {message, status: CONFIRMED}", () => {
    expect(Result.isSuccess(decodeUnknownEither(ConfirmResponse)({ message: "File confirmed", status: "CONFIRMED" }))).toBe(true)
    expect(Result.isFailure(decodeUnknownEither(ConfirmResponse)({ message: "x", status: "PENDING" }))).toBe(true)
  })

  it("R-UPLOAD-PRESIGN-27: the presign query reads size as a whole number of bytes", () => {
    expect(Result.getOrThrow(decodeUnknownEither(PresignQuery)({ filename: "a.pdf", size: "1024" })).size).toBe(1024)
    expect(formatIssues(left(decodeUnknownEither(PresignQuery)({ filename: "a.pdf", size: "1.5" })))[0]?.path).toEqual(["size"])
    expect(describeParseError(left(decodeUnknownEither(PresignQuery)({ size: "1" })))).toBe("filename: is missing")
  })
})

describe("error bodies", () => {
  it("R-REST-ERR-02: the emulator's 400 body with issues decodes; parts are found", () => {
    const body = {
      error: { code: "BAD_REQUEST", message: "invalid input", issues: [{ path: ["items", 0, "title"], message: "is missing" }] }
    }
    const decoded = Result.getOrThrow(decodeUnknownEither(RestErrorBody)(body))
    expect(restErrorParts(decoded)).toEqual({
      code: "BAD_REQUEST",
      message: "invalid input",
      issues: [{ path: ["items", 0, "title"], message: "is missing" }]
    })
    expect(Result.isSuccess(decodeUnknownEither(ValidationIssue)(body.error.issues[0]))).toBe(true)
  })

  it("R-REST-ERR-01: error as a bare string and issues beside it are read too", () => {
    const decoded = Result.getOrThrow(
      decodeUnknownEither(RestErrorBody)({ error: "Unauthorized", issues: [{ path: "title", message: "Required" }] })
    )
    expect(restErrorParts(decoded)).toEqual({ code: null, message: "Unauthorized", issues: [{ path: "title", message: "Required" }] })
    expect(Result.isFailure(decodeUnknownEither(RestErrorBody)({ message: "no error key" }))).toBe(true)
  })

  it("R-GQL-ERR-01: GraphQL errors decode; the code is read from extensions or the entry", () => {
    const result = {
      data: null,
      errors: [
        { message: "File too large", path: ["uploadFile"], extensions: { code: "BAD_USER_INPUT" } },
        { message: "Not found", code: "PROJECT_NOT_FOUND" },
        { message: "Boom" }
      ]
    }
    const decoded = Result.getOrThrow(decodeUnknownEither(GraphqlResponse(GraphqlFile))(result))
    expect(decoded.errors?.map(graphqlErrorCode)).toEqual(["BAD_USER_INPUT", "PROJECT_NOT_FOUND", null])
    expect(describeParseError(left(decodeUnknownEither(GraphqlErrorEntry)({ extensions: {} })))).toBe("message: is missing")
  })
})
