import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { RestClient } from "../../src/client/rest-client.ts"
import { OutcomeUnknown, RateLimited, ServerError, Timeout, TransportError, ValidationFailed } from "../../src/client/errors.ts"
import { isRetryable, parseRetryAfter, writeOutcome } from "../../src/client/retry.ts"
import { Emulator } from "../support/effect.ts"
import { clientFailure, withClient, layerFor, json, recordingServer, scopedTestEmulator, testEmulatorLayer } from "./helpers.ts"

const EMPTY_PAGE = { items: [], totalCount: 0 }

// Real HTTP to the emulator: the live clock (no TestClock), or the client's timeouts and
// retries would never fire.
layer(testEmulatorLayer({ seed: "demo" }), { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("Retry-After is honoured (server-side timestamps)", () => {
    it.effect("R-REST-ERR-05: Retry-After in whole seconds delays the retry at least that long", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const server = yield* recordingServer((_r, res, i) =>
          i === 0 ? json(res, 429, { error: { code: "RATE_LIMITED", message: "slow down" } }, { "retry-after": "1" }) : json(res, 200, EMPTY_PAGE)
        )
        yield* withClient(layerFor({ ...emu, restUrl: server.url }), Effect.flatMap(RestClient, (c) => c.listWorkspaces()))
        expect(server.requests.length).toBe(2)
        expect(server.requests[1]!.at - server.requests[0]!.at).toBeGreaterThanOrEqual(1000)
      }))

    it.effect("R-REST-ERR-05: Retry-After as an HTTP-date delays the retry until that date", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        let until = 0
        const server = yield* recordingServer((_r, res, i) => {
          if (i > 0) return json(res, 200, EMPTY_PAGE)
          until = Math.ceil((Date.now() + 1200) / 1000) * 1000
          return json(res, 429, { error: { code: "RATE_LIMITED", message: "slow down" } }, { "retry-after": new Date(until).toUTCString() })
        })
        yield* withClient(layerFor({ ...emu, restUrl: server.url }), Effect.flatMap(RestClient, (c) => c.listWorkspaces()))
        expect(server.requests.length).toBe(2)
        expect(server.requests[1]!.at).toBeGreaterThanOrEqual(until)
      }))

    it.effect("R-REST-ERR-05: the emulator's 429 (HTTP-date form) is retried and the call succeeds", () =>
      Effect.gen(function*() {
        const limited = yield* scopedTestEmulator({ seed: "empty", faults: { retryAfterForm: "http-date" } })
        limited.faults.inject({ route: "list-workspaces", kind: "429", retryAfter: 1 })
        const page = yield* withClient(layerFor(limited), Effect.flatMap(RestClient, (c) => c.listWorkspaces()))
        expect(page.items.length).toBe(1)
        expect(limited.stats().byRouteStatus).toMatchObject({ "list-workspaces 429": 1, "list-workspaces 200": 1 })
      }))
  })

  describe("ambiguous writes are not repeated", () => {
    it.effect("a create whose answer is lost after commit is OutcomeUnknown and the server saw exactly one request", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        emu.resetStats()
        const before = emu.admin.countRecords(ws)
        emu.faults.inject({ route: "create-record", kind: "ambiguous" })
        const e = yield* clientFailure(layerFor(emu), Effect.flatMap(RestClient, (c) => c.createRecord({ workspaceId: ws, title: "ambiguous one" })))
        expect(e._tag).toBe("OutcomeUnknown")
        if (e._tag === "OutcomeUnknown") {
          expect(e.operation).toBe("create-record")
          expect(e.inputSummary).toContain("ambiguous one")
          expect(Number.isNaN(Date.parse(e.attemptedAt))).toBe(false)
        }
        expect(emu.stats().byRoute["create-record"]).toBe(1)
        // It did commit: exactly why repeating it blindly would duplicate it.
        expect(emu.admin.countRecords(ws)).toBe(before + 1)
      }))

    it.effect("a create answered 500 is OutcomeUnknown, sent once", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        emu.resetStats()
        emu.faults.inject({ route: "create-record", kind: "500" })
        const e = yield* clientFailure(layerFor(emu), Effect.flatMap(RestClient, (c) => c.createRecord({ workspaceId: ws, title: "five hundred" })))
        expect(e._tag).toBe("OutcomeUnknown")
        expect(emu.stats().byRoute["create-record"]).toBe(1)
      }))

    it.effect("a create whose connection drops is OutcomeUnknown, sent once", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        emu.resetStats()
        emu.faults.inject({ route: "create-record", kind: "drop" })
        const e = yield* clientFailure(layerFor(emu), Effect.flatMap(RestClient, (c) => c.createRecord({ workspaceId: ws, title: "dropped" })))
        expect(e._tag).toBe("OutcomeUnknown")
        expect(emu.stats().byRoute["create-record"]).toBe(1)
      }))

    it.effect("R-REST-ERR-06: an outcome unknown is dated when its request left, after the limiter's wait, not when the call began", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        // One request in flight at a time: two creates started together, the second waits
        // for the first's slot. The first request is held a second before it commits and is
        // answered; the second is answered 500.
        emu.faults.inject({ route: "create-record", kind: "latency", latencyMs: 1000 })
        emu.faults.inject({ route: "create-record", kind: "500" })
        const layer = layerFor(emu, { limiter: { maxInFlight: 1, initialRps: 500, adaptive: false } })
        const results = yield* withClient(
          layer,
          Effect.flatMap(RestClient, (c) =>
            Effect.all(
              ["slot first", "slot second"].map((title) => Effect.result(c.createRecord({ workspaceId: ws, title }))),
              { concurrency: "unbounded" }
            ))
        )
        const created = results.flatMap((r) => (r._tag === "Success" ? [r.success] : []))
        const failed = results.flatMap((r) => (r._tag === "Failure" ? [r.failure] : []))
        expect(created).toHaveLength(1)
        expect(failed.map((e) => e._tag)).toEqual(["OutcomeUnknown"])
        // The call that failed began at once and waited for the slot; its request left
        // only once the other had committed and been answered.
        const committed = emu.ctx.db.prepare("SELECT created_at FROM records WHERE id = ?").get(created[0]!.id) as { created_at: string }
        const sentAt = Date.parse((failed[0] as OutcomeUnknown).attemptedAt)
        expect(sentAt).toBeGreaterThanOrEqual(Date.parse(committed.created_at))
      }))

    it.effect("a create refused with 429 is definite and is retried", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        emu.resetStats()
        emu.faults.inject({ route: "create-record", kind: "429", retryAfter: "0" })
        const created = yield* withClient(layerFor(emu), Effect.flatMap(RestClient, (c) => c.createRecord({ workspaceId: ws, title: "after 429" })))
        expect(created.title).toBe("after 429")
        expect(emu.stats().byRouteStatus).toMatchObject({ "create-record 429": 1, "create-record 200": 1 })
      }))
  })

  describe("reads are retried", () => {
    it.effect("a read answered 500 twice is retried and succeeds", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        emu.resetStats()
        emu.faults.inject({ route: "list-records", kind: "500", times: 2 })
        const page = yield* withClient(layerFor(emu), Effect.flatMap(RestClient, (c) => c.listRecords({ workspaceId: ws, limit: 2 })))
        expect(page.items.length).toBe(2)
        expect(emu.stats().byRouteStatus).toMatchObject({ "list-records 500": 2, "list-records 200": 1 })
      }))

    it.effect("a read whose connection drops is retried and succeeds", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        emu.resetStats()
        emu.faults.inject({ route: "get-record", kind: "drop" })
        const first = (yield* withClient(layerFor(emu), Effect.flatMap(RestClient, (c) => c.listRecords({ workspaceId: ws, limit: 1 })))).items[0]!
        const detail = yield* withClient(layerFor(emu), Effect.flatMap(RestClient, (c) => c.getRecord({ workspaceId: ws, recordId: first.id })))
        expect(detail.id).toBe(first.id)
        expect(emu.stats().byRoute["get-record"]).toBe(2)
      }))

    it.effect("an update (to a fixed value) is retried after a 500", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        emu.resetStats()
        const first = (yield* withClient(layerFor(emu), Effect.flatMap(RestClient, (c) => c.listRecords({ workspaceId: ws, limit: 1 })))).items[0]!
        emu.faults.inject({ route: "update-record", kind: "500" })
        const updated = yield* withClient(layerFor(emu), Effect.flatMap(RestClient, (c) => c.updateRecord({ workspaceId: ws, recordId: first.id, color: "red" })))
        expect(Option.getOrThrow(updated).color).toBe("red")
        expect(emu.stats().byRoute["update-record"]).toBe(2)
      }))

    it.effect("R-REST-RECORD-53: a delete whose answer was lost is repeated; finding the record gone is success", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        emu.resetStats()
        const created = yield* withClient(layerFor(emu), Effect.flatMap(RestClient, (c) => c.createRecord({ workspaceId: ws, title: "to delete" })))
        emu.faults.inject({ route: "delete-record", kind: "ambiguous" })
        const out = yield* withClient(layerFor(emu), Effect.flatMap(RestClient, (c) => c.deleteRecord({ workspaceId: ws, recordId: created.id })))
        expect(out.success).toBe(true)
        expect(emu.stats().byRoute["delete-record"]).toBe(2)
        // A first-attempt NOT_FOUND is still an error.
        const e = yield* clientFailure(layerFor(emu), Effect.flatMap(RestClient, (c) => c.deleteRecord({ workspaceId: ws, recordId: created.id })))
        expect(e._tag).toBe("NotFound")
      }))

    it.effect("retries stop after maxRetries and surface the last error", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        emu.resetStats()
        emu.faults.inject({ route: "count-records", kind: "500", times: 10 })
        const e = yield* clientFailure(
          layerFor(emu, { retry: { maxRetries: 2, baseDelayMs: 1, capDelayMs: 5 } }),
          Effect.flatMap(RestClient, (c) => c.countRecords({}))
        )
        expect(e._tag).toBe("ServerError")
        expect(emu.stats().byRoute["count-records"]).toBe(3)
        emu.faults.reset()
      }))

    it.effect("a 422 is never retried", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const ws = emu.workspaces[0]!
        emu.resetStats()
        const e = yield* clientFailure(layerFor(emu), Effect.flatMap(RestClient, (c) => c.getRecord({ workspaceId: ws, recordId: "000000000000000000000000" })))
        expect(e._tag).toBe("NotFound")
        expect(emu.stats().byRoute["get-record"]).toBe(1)
      }))
  })

  describe("the exported classification", () => {
    const op = "x"
    it("retries 429 always, ambiguous failures only when safe to repeat", () => {
      expect(isRetryable(new RateLimited({ operation: op, retryAfterMs: null }), false)).toBe(true)
      expect(isRetryable(new ServerError({ operation: op, status: 502, detail: "" }), true)).toBe(true)
      expect(isRetryable(new ServerError({ operation: op, status: 502, detail: "" }), false)).toBe(false)
      expect(isRetryable(new Timeout({ operation: op, timeoutMs: 1 }), false)).toBe(false)
      expect(isRetryable(new TransportError({ operation: op, detail: "", sent: false }), false)).toBe(true)
      expect(isRetryable(new ValidationFailed({ operation: op, code: "X", serverMessage: "" }), true)).toBe(false)
      expect(isRetryable(new OutcomeUnknown({ operation: op, attemptedAt: "", inputSummary: "", reason: "" }), true)).toBe(false)
    })

    it("tells the journal whether a failed write may have been applied", () => {
      expect(writeOutcome(new ValidationFailed({ operation: op, code: "X", serverMessage: "" }))).toBe("not-applied")
      expect(writeOutcome(new RateLimited({ operation: op, retryAfterMs: 1 }))).toBe("not-applied")
      expect(writeOutcome(new OutcomeUnknown({ operation: op, attemptedAt: "", inputSummary: "", reason: "" }))).toBe("unknown")
      expect(writeOutcome(new Timeout({ operation: op, timeoutMs: 1 }))).toBe("unknown")
    })

    it("parses Retry-After in seconds and as an HTTP-date", () => {
      const now = Date.parse("2024-01-01T00:00:00Z")
      expect(parseRetryAfter("3", now)).toBe(3000)
      expect(parseRetryAfter("Mon, 01 Jan 2024 00:00:05 GMT", now)).toBe(5000)
      expect(parseRetryAfter("Sun, 31 Dec 2023 23:59:00 GMT", now)).toBe(0)
      expect(parseRetryAfter("soon", now)).toBe(null)
      expect(parseRetryAfter(undefined, now)).toBe(null)
    })
  })
})
