/**
 * Paging with each plausible count-records answer (its body is not shown by the
 * documents): `{count}`, `{totalCount}`, a bare number, or no count at all. With a count
 * the pages fan out; without one they are read one after another; never a failure.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { listRecordsStream } from "../../src/streams/records.ts"
import { stableRecordScan } from "../../src/streams/stable-scan.ts"
import { startReadingProxy } from "../client/reading-proxy.ts"
import { clientFor, collect, listedIds, runWith } from "./helpers.ts"

let emu: EmulatorHandle
beforeAll(async () => {
  // The proxy makes each count shape out of the reference reading, whatever variant the suite runs.
  emu = await startEmulator({ seed: { workspaces: 1, recordsPerWorkspace: 250 }, variant: "reference" })
})
afterAll(async () => {
  await emu?.close()
})

const SHAPES: ReadonlyArray<readonly [string, (count: number) => unknown]> = [
  ["{count}", (n) => ({ count: n })],
  ["{totalCount}", (n) => ({ totalCount: n })],
  ["a bare number", (n) => n],
  ["no count ({})", () => ({})],
  ["{success: true}", () => ({ success: true })]
]

const through = async <A>(shape: (count: number) => unknown, f: (restUrl: string) => Promise<A>) => {
  const proxy = await startReadingProxy(new URL(emu.restUrl).origin, {
    rewrite: (op, body) => (op === "count-records" ? shape((body as { count: number }).count) : body)
  })
  try {
    return { out: await f(`${proxy.url}/rest`), operations: proxy.operations }
  } finally {
    await proxy.close()
  }
}

describe("count-records in every plausible shape", () => {
  it.each(SHAPES)("R-REST-RECORD-55 R-REST-PAGE-04: list-records streams every record when count-records answers %s", async (_name, shape) => {
    const ws = emu.workspaces[0]!
    const { out } = await through(shape, (restUrl) =>
      collect(clientFor(emu, { restUrl }), listRecordsStream({ workspaceId: ws }, { limit: 100, concurrency: 4 })))
    expect(out.map((r) => r.id)).toEqual(listedIds(emu, ws))
  })

  it.each(SHAPES)("R-REST-PAGE-01: the stable scan is complete when count-records answers %s", async (_name, shape) => {
    const ws = emu.workspaces[0]!
    const { out } = await through(shape, (restUrl) =>
      runWith(clientFor(emu, { restUrl }), Effect.gen(function*() {
        const s = yield* stableRecordScan(ws, { limit: 100, concurrency: 4 })
        const items = yield* Stream.runCollect(s.records)
        return { ids: [...items].map((r) => r.id), report: yield* s.report }
      })))
    expect(out.ids).toEqual(listedIds(emu, ws))
    const counted = typeof shape(1) === "number" || Object.keys(shape(1) as object).some((k) => k === "count" || k === "totalCount")
    expect(out.report.countBefore).toBe(counted ? out.ids.length : null)
  })
})
