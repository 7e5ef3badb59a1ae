/**
 * list-records at any offset, in both variants' orders: the emulator remembers where
 * pages ended and seeks there (core/page-boundaries.ts); a page must still be exactly the
 * page plain OFFSET paging gives, whatever was read before it, ties in the order included.
 */
import { expect, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { ok, rpc } from "./rest-support.ts"

const OFFSETS = [0, 1, 24, 25, 26, 49, 50, 51, 77, 99, 100, 101, 119, 150, 199, 200, 238, 239, 240, 500]
const LIMITS = [1, 25, 100]

/** Any write makes the emulator forget the pages' ends: this one changes no value. */
const forgetBoundaries = (h: EmulatorHandle) =>
  h.ctx.db.prepare("UPDATE records SET title = title WHERE rowid = (SELECT min(rowid) FROM records)").run()

const ids = async (h: EmulatorHandle, body: Record<string, unknown>): Promise<ReadonlyArray<string>> =>
  ((await ok(rpc(h, "list-records", body))).items as Array<{ id: string }>).map((r) => r.id)

for (const variant of ["reference", "alt"] as const) {
  layer(emulatorLayer({ variant, seed: { workspaces: 2, recordsPerWorkspace: 120 } }), { timeout: 120_000, excludeTestServices: true })(
    `list-records offsets (${variant})`,
    (it) => {
      it.effect("R-REST-PAGE-01: a page at any offset is that slice of the listing, whatever pages were read before it, ties in the order included", () =>
        Effect.gen(function*() {
          const h = yield* Emulator
          yield* Effect.promise(async () => {
            // Ties in both orders (position; creation time), across workspaces and lists: the
            // id alone must order them.
            h.ctx.db.prepare("UPDATE records SET position = 458752, created_at = '2026-01-02T03:04:05.000Z' WHERE rowid % 3 = 0").run()
            const scopes = [{ workspaceId: h.workspaces[0] }, {}, { workspaceId: h.workspaces[1], done: false }]
            for (const scope of scopes) {
              const plain = new Map<string, ReadonlyArray<string>>()
              for (const skip of OFFSETS) {
                for (const limit of LIMITS) {
                  forgetBoundaries(h)
                  plain.set(`${skip}/${limit}`, await ids(h, { ...scope, skip, limit }))
                }
              }
              // Read the listing page by page, so the emulator remembers where pages end...
              forgetBoundaries(h)
              for (let skip = 0; ; skip += 25) {
                const page = await ok(rpc(h, "list-records", { ...scope, skip, limit: 25 }))
                if (!page.pageInfo.hasNextPage) break
              }
              // ...then every page again, in an order that seeks both from exact and from earlier ends.
              for (const limit of LIMITS) {
                for (const skip of [...OFFSETS].reverse()) {
                  expect({ scope, skip, limit, ids: await ids(h, { ...scope, skip, limit }) }).toEqual({
                    scope,
                    skip,
                    limit,
                    ids: plain.get(`${skip}/${limit}`)
                  })
                }
              }
            }
          })
        }))
    }
  )
}
