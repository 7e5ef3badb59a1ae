import { describe, expect, it } from "@effect/vitest"
import { Effect, Result, Schema } from "effect"
import {
  BATCH_MAX_BYTES,
  BATCH_MAX_FILES,
  decodeUnknown,
  decodeUnknownEither,
  describeParseError,
  effectiveLimit,
  encodeEither,
  FORM_MAX_FILE_BYTES,
  formatIssues,
  formatPath,
  LIST_ACTIVITY_DEFAULT_LIMIT,
  LIST_DOCUMENTS_DEFAULT_LIMIT,
  LIST_SAVED_VIEWS_DEFAULT_LIMIT,
  ACTIVITY_DEFAULT_LIMIT,
  ACTIVITY_MAX_LIMIT,
  MULTIPART_MAX_FILE_BYTES,
  openStruct,
  PAGE_DEFAULT_LIMIT,
  PAGE_MAX_LIMIT,
  PRESIGN_MAX_FILE_BYTES,
  RecordsPage,
  SEARCH_DEFAULT_LIMIT,
  SEARCH_MAX_LIMIT,
  SIZE_UNITS
} from "../../src/schema/index.ts"

describe("decode helpers", () => {
  it.effect("decodeUnknown keeps extra keys at every depth (R-REST-RECORD-41)", () =>
    Effect.gen(function* () {
      // A plain Struct (not openStruct) would strip these keys by default.
      const S = Schema.Struct({ a: Schema.String, nested: Schema.Struct({ b: Schema.Number }) })
      const out = yield* decodeUnknown(S)({ a: "x", extra: true, nested: { b: 1, more: "y" } })
      expect(out).toEqual({ a: "x", extra: true, nested: { b: 1, more: "y" } })
    })
  )

  it.effect("decodeUnknown fails with a ParseError describing the path", () =>
    Effect.gen(function* () {
      const error = yield* Effect.flip(decodeUnknown(RecordsPage)({ items: "none", pageInfo: {} }))
      expect(Schema.isSchemaError(error)).toBe(true)
      expect(describeParseError(error)).toMatch(/^items: expected ReadonlyArray<.*>, got string \(and 4 more\)$/)
    })
  )

  it("openStruct keeps extra keys even when decoded without the helper", () => {
    const S = openStruct({ a: Schema.String, nested: openStruct({ b: Schema.Number }) })
    expect(Schema.decodeUnknownSync(S)({ a: "x", z: 1, nested: { b: 2, y: 3 } })).toEqual({ a: "x", z: 1, nested: { b: 2, y: 3 } })
    expect(Result.getOrThrow(encodeEither(S)({ a: "x", nested: { b: 2 } }))).toEqual({ a: "x", nested: { b: 2 } })
  })

  it("formatIssues lists every bad field with its path as an array", () => {
    const S = openStruct({ a: Schema.String, list: Schema.Array(openStruct({ n: Schema.Number })) })
    const r = decodeUnknownEither(S)({ a: 1, list: [{ n: 1 }, { n: "2" }, {}] })
    if (Result.isSuccess(r)) throw new Error("expected failure")
    expect(formatIssues(r.failure)).toEqual([
      { path: ["a"], message: "expected string, got number" },
      { path: ["list", 1, "n"], message: "expected number, got string" },
      { path: ["list", 2, "n"], message: "is missing" }
    ])
  })

  it("messages name the kind of a bad value, not the value itself", () => {
    const r = decodeUnknownEither(openStruct({ email: Schema.String }))({ email: { secret: "do-not-print" } })
    if (Result.isSuccess(r)) throw new Error("expected failure")
    expect(describeParseError(r.failure)).toBe("email: expected string, got object")
    expect(describeParseError(r.failure)).not.toContain("do-not-print")
  })

  it("formatPath renders identifiers, indexes and other keys", () => {
    expect(formatPath(["items", 3, "users", 0, "email"])).toBe("items[3].users[0].email")
    expect(formatPath(["headers", "Content-Type"])).toBe('headers["Content-Type"]')
    expect(formatPath([])).toBe("(root)")
  })
})

describe("limits", () => {
  it("R-REST-PAGE-02/03, R-REST-PAGE-12/13, R-REST-SEARCH-07/08, R-REST-ACTIVITY-06/07/15: documented defaults and maxima", () => {
    expect([PAGE_DEFAULT_LIMIT, PAGE_MAX_LIMIT]).toEqual([50, 100])
    expect([ACTIVITY_DEFAULT_LIMIT, ACTIVITY_MAX_LIMIT]).toEqual([20, 24])
    expect([SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT]).toEqual([20, 100])
    expect([LIST_ACTIVITY_DEFAULT_LIMIT, LIST_DOCUMENTS_DEFAULT_LIMIT, LIST_SAVED_VIEWS_DEFAULT_LIMIT]).toEqual([20, 20, 100])
  })

  it("R-REST-PAGE-03: effectiveLimit defaults when omitted and caps silently", () => {
    expect(effectiveLimit(undefined, PAGE_DEFAULT_LIMIT, PAGE_MAX_LIMIT)).toBe(50)
    expect(effectiveLimit(500, PAGE_DEFAULT_LIMIT, PAGE_MAX_LIMIT)).toBe(100)
    expect(effectiveLimit(30, ACTIVITY_DEFAULT_LIMIT, ACTIVITY_MAX_LIMIT)).toBe(24)
    expect(effectiveLimit(7, PAGE_DEFAULT_LIMIT, PAGE_MAX_LIMIT)).toBe(7)
  })

  it("R-LIMIT-01..05: upload limits in decimal units, the smaller reading (assumptions.ts SIZE_UNITS)", () => {
    expect(SIZE_UNITS).toEqual({ MB: 1_000_000, GB: 1_000_000_000 })
    expect(MULTIPART_MAX_FILE_BYTES).toBe(256_000_000)
    expect(BATCH_MAX_FILES).toBe(10)
    expect(BATCH_MAX_BYTES).toBe(1_000_000_000)
    expect(PRESIGN_MAX_FILE_BYTES).toBe(4_800_000_000)
    expect(FORM_MAX_FILE_BYTES).toBe(500_000_000)
  })
})
