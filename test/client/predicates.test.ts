/**
 * The one vocabulary of failures (src/client/predicates.ts): not-found, definite or of
 * unknown outcome, retryable, transient, abort; judged by tag, so a failure reads the same
 * to the retry policy, the journal, the file copy and the CLI.
 */
import * as Effect from "effect/Effect"
import { describe, expect, it, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as Errors from "../../src/client/errors.ts"
import {
  ABORT_TAGS,
  isAbort,
  isDefiniteFailure,
  isNotFound,
  isOutcomeUnknown,
  isRetryable,
  isTransient,
  writeOutcome
} from "../../src/client/predicates.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { clientFailure, json, layerFor, recordingServer } from "./helpers.ts"

const op = "op"
const all = {
  InvalidInput: new Errors.InvalidInput({ operation: op, issues: [], detail: "" }),
  Unauthorized: new Errors.Unauthorized({ operation: op, detail: "" }),
  Forbidden: new Errors.Forbidden({ operation: op, code: null, detail: "" }),
  NotFound: new Errors.NotFound({ operation: op, status: 422, code: "NOT_FOUND", detail: "" }),
  ValidationFailed: new Errors.ValidationFailed({ operation: op, code: "X", serverMessage: "" }),
  RateLimited: new Errors.RateLimited({ operation: op, retryAfterMs: 1000 }),
  RetryWaitTooLong: new Errors.RetryWaitTooLong({ operation: op, requestedMs: 3_600_000, maxMs: 120_000 }),
  ServerError: new Errors.ServerError({ operation: op, status: 503, detail: "" }),
  UnexpectedStatus: new Errors.UnexpectedStatus({ operation: op, status: 418, detail: "" }),
  Sent: new Errors.TransportError({ operation: op, detail: "", sent: true }),
  Unsent: new Errors.TransportError({ operation: op, detail: "", sent: false }),
  Timeout: new Errors.Timeout({ operation: op, timeoutMs: 1 }),
  DecodeError: new Errors.DecodeError({ operation: op, path: "", detail: "" }),
  OutcomeUnknown: new Errors.OutcomeUnknown({ operation: op, attemptedAt: "", inputSummary: "", reason: "" })
}
type Name = keyof typeof all
const which = (p: (u: unknown) => boolean): Array<Name> => (Object.keys(all) as Array<Name>).filter((k) => p(all[k])).sort()

describe("one vocabulary of failures", () => {
  it("R-REST-ERR-04: not found is the NotFound tag alone, whatever carries it", () => {
    expect(which(isNotFound)).toEqual(["NotFound"])
    expect(isNotFound({ _tag: "NotFound" })).toBe(true)
    expect(isNotFound(null)).toBe(false)
    expect(isNotFound("NotFound")).toBe(false)
  })

  it("definite, outcome unknown, retryable (safe to repeat or not), transient, abort", () => {
    expect(which(isOutcomeUnknown)).toEqual(["OutcomeUnknown", "Sent", "ServerError", "Timeout"])
    expect(which(isDefiniteFailure)).toEqual(
      ["Forbidden", "InvalidInput", "NotFound", "RateLimited", "RetryWaitTooLong", "Unauthorized", "UnexpectedStatus", "Unsent", "ValidationFailed"]
    )
    expect(which((u) => writeOutcome(u) === "unknown")).toEqual(["DecodeError", "OutcomeUnknown", "Sent", "ServerError", "Timeout"])
    expect(which((u) => isRetryable(u, true))).toEqual(["RateLimited", "Sent", "ServerError", "Timeout", "Unsent"])
    expect(which((u) => isRetryable(u, false))).toEqual(["RateLimited", "Unsent"])
    expect(which(isTransient)).toEqual(["OutcomeUnknown", "RateLimited", "Sent", "ServerError", "Timeout", "Unsent"])
    expect(which(isAbort)).toEqual(["RetryWaitTooLong", "Unauthorized"])
    expect([...ABORT_TAGS].sort()).toEqual(["RetryWaitTooLong", "Unauthorized"])
  })
})

/** The client of a server answering get-record and move-record with 422s and the rest with 404. */
class Client extends Context.Service<Client, ReturnType<typeof layerFor>>()("test/Client") {}

const clientOfServer = Layer.effect(
  Client,
  Effect.map(
    recordingServer((req, res) => {
      if (req.url?.endsWith("/get-record")) return json(res, 422, { error: { code: "NOT_FOUND", message: "no such record" } })
      if (req.url?.endsWith("/move-record")) return json(res, 422, { error: { code: "VALIDATION_FAILED", message: "bad list" } })
      return json(res, 404, { error: { code: "NOT_FOUND", message: "gone" } })
    }),
    (s) => layerFor({ restUrl: s.url, baseUrl: s.url, token: "t", tokenId: "i", tokenSecret: "s", org: "o" })
  )
)

// Real HTTP: the live clock (no TestClock), or the client's timeouts would never fire.
layer(clientOfServer, { excludeTestServices: true })("R-REST-ERR-04: what a REST answer becomes", (it) => {
  it.effect("422 NOT_FOUND and 404 are NotFound; another 422 is ValidationFailed", () =>
    Effect.gen(function*() {
      const l = yield* Client
      const gone = yield* clientFailure(l, Effect.flatMap(RestClient, (c) => c.getRecord({ workspaceId: "w", recordId: "r" })))
      expect(gone).toBeInstanceOf(Errors.NotFound)
      expect(gone.message).toBe("get-record: not found (HTTP 422, NOT_FOUND): no such record")
      const missing = yield* clientFailure(l, Effect.flatMap(RestClient, (c) => c.listFiles({ workspaceId: "w" })))
      expect(missing.message).toBe("list-files: not found (HTTP 404, NOT_FOUND): gone")
      const refused = yield* clientFailure(l, Effect.flatMap(RestClient, (c) => c.moveRecord({ workspaceId: "w", recordId: "r", listId: "l" })))
      expect(refused._tag).toBe("ValidationFailed")
      expect(isNotFound(refused)).toBe(false)
    }))
})
