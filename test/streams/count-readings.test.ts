/**
 * Paging with each plausible count-records answer (its body is not shown by the
 * documents): `{count}`, `{totalCount}`, a bare number, or no count at all. With a count
 * the pages fan out; without one they are read one after another; never a failure.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { listRecordsStream } from "../../src/streams/records.ts"
import { stableRecordScan } from "../../src/streams/stable-scan.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { clientFor, collect, listedIds, readingProxy, runWith } from "./helpers.ts"

const SHAPES: ReadonlyArray<readonly [string, (count: number) => unknown]> = [
  ["{count}", (n) => ({ count: n })],
  ["{totalCount}", (n) => ({ totalCount: n })],
  ["a bare number", (n) => n],
  ["no count ({})", () => ({})],
  ["{success: true}", () => ({ success: true })]
]

/** Runs `f` against a proxy that answers count-records in `shape`; the proxy is closed when `f` ends. */
const through = <A, E>(emu: EmulatorHandle, shape: (count: number) => unknown, f: (restUrl: string) => Effect.Effect<A, E>) =>
  Effect.scoped(Effect.gen(function*() {
    const proxy = yield* readingProxy(new URL(emu.restUrl).origin, {
      rewrite: (op, body) => (op === "count-records" ? shape((body as { count: number }).count) : body)
    })
    return { out: yield* f(`${proxy.url}/rest`), operations: proxy.operations }
  }))

// The proxy makes each count shape out of the reference reading, whatever variant the suite runs.
// No TestClock: the client's retries and timeouts run on real time against a real server.
layer(emulatorLayer({ seed: { workspaces: 1, recordsPerWorkspace: 250 }, variant: "reference" }), { timeout: 30_000, excludeTestServices: true })("count-records in every plausible shape", (it) => {
  it.effect.each(SHAPES)("R-REST-RECORD-55 R-REST-PAGE-04: list-records streams every record when count-records answers %s", ([_name, shape]) =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const ws = emu.workspaces[0]!
      const { out } = yield* through(emu, shape, (restUrl) =>
        collect(clientFor(emu, { restUrl }), listRecordsStream({ workspaceId: ws }, { limit: 100, concurrency: 4 })))
      expect(out.map((r) => r.id)).toEqual(listedIds(emu, ws))
    }))

  it.effect.each(SHAPES)("R-REST-PAGE-01: the stable scan is complete when count-records answers %s", ([_name, shape]) =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const ws = emu.workspaces[0]!
      const { out } = yield* through(emu, shape, (restUrl) =>
        runWith(clientFor(emu, { restUrl }), Effect.gen(function*() {
          const s = yield* stableRecordScan(ws, { limit: 100, concurrency: 4 })
          const items = yield* Stream.runCollect(s.records)
          return { ids: [...items].map((r) => r.id), report: yield* s.report }
        })))
      expect(out.ids).toEqual(listedIds(emu, ws))
      const counted = typeof shape(1) === "number" || Object.keys(shape(1) as object).some((k) => k === "count" || k === "totalCount")
      expect(out.report.countBefore).toBe(counted ? out.ids.length : null)
    }))
})
