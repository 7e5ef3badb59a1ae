/**
 * The emulator's scripted file deletions (file-deletes.ts): a file deleted when a given
 * download request arrives, before it is answered, over plain HTTP.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { seedConfirmedFiles } from "../connectors/files/_helpers.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"

const serveUrl = (emu: EmulatorHandle, uid: string, name: string) => `${emu.baseUrl}/uploads/${uid}/${encodeURIComponent(name)}`

/** The serving URL's answer, the redirect not followed. */
const serve = (emu: EmulatorHandle, uid: string, name: string) =>
  Effect.promise(() => fetch(serveUrl(emu, uid, name), { redirect: "manual" }))

const listedUids = (emu: EmulatorHandle, ws: string) =>
  Effect.promise(async () => {
    const res = await fetch(`${emu.restUrl}/v1/list-files`, {
      method: "POST",
      headers: { authorization: `Bearer ${emu.token}`, "content-type": "application/json" },
      body: JSON.stringify({ workspaceId: ws, limit: 100 })
    })
    const page = (await res.json()) as { items: Array<{ uid: string }> }
    return page.items.map((i) => i.uid)
  })

layer(emulatorLayer({ seed: "empty" }))("scripted file deletions", (it) => {
  it.effect("R-FILE-SERVE-01: a file deleted when another file's download arrives: that download is served, the deleted file is unlisted and its serving URL answers 404", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const ws = emu.workspaces[0]!
      const [a, b] = seedConfirmedFiles(emu, ws, 2) as [string, string]
      emu.faults.fileDeletes.script({ on: "serve", uid: a, uids: [b] })
      expect((yield* serve(emu, a, "f0.txt")).status).toBe(302)
      expect(emu.faults.fileDeletes.size).toBe(0)
      expect(yield* listedUids(emu, ws)).not.toContain(b)
      expect((yield* serve(emu, b, "f1.txt")).status).toBe(404)
    }))

  it.effect("the count-th request fires it; at storage, a signed URL handed out before the deletion answers 404", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const ws = emu.workspaces[0]!
      const [a] = seedConfirmedFiles(emu, ws, 1) as [string]
      emu.faults.fileDeletes.script({ on: "storage", uid: a, count: 2, uids: [a] })
      const location = (yield* serve(emu, a, "f0.txt")).headers.get("location")!
      expect((yield* Effect.promise(() => fetch(location))).status).toBe(200)
      expect((yield* Effect.promise(() => fetch(location))).status).toBe(404)
      expect(yield* listedUids(emu, ws)).not.toContain(a)
    }))

  it.effect("\"object\": only the stored object goes: the file stays listed, the serving URL redirects, storage answers 404", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const ws = emu.workspaces[0]!
      const [a] = seedConfirmedFiles(emu, ws, 1) as [string]
      emu.faults.fileDeletes.script({ on: "serve", uids: [a], what: "object" })
      const first = yield* serve(emu, a, "f0.txt")
      expect(first.status).toBe(302)
      expect((yield* Effect.promise(() => fetch(first.headers.get("location")!))).status).toBe(404)
      expect(yield* listedUids(emu, ws)).toContain(a)
    }))
})
