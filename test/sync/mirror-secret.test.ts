/**
 * The library's `mirror` with a snapshot in PostgreSQL: where it keeps its webhook's
 * secret. A database has no "beside" and its URL is no path, so the caller names the
 * file (`secretFile`), as `worksync mirror` refuses such a snapshot.
 */
import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Fiber from "effect/Fiber"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { GraphqlClient } from "../../src/client/graphql-client.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { SnapshotStore } from "../../src/store/snapshot.ts"
import { mirror, MirrorError } from "../../src/sync/mirror/mirror.ts"
import { readSecretFile } from "../../src/sync/mirror/webhook.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { freshSchema } from "../support/postgres.ts"
import { testClient } from "./replay-helpers.ts"

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer()
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port
      s.close(() => resolve(port))
    })
  })

const webhookIds = (handle: EmulatorHandle): Array<string> =>
  (handle.ctx.db.prepare("SELECT id FROM webhooks ORDER BY id").all() as Array<{ id: string }>).map((w) => w.id)

/**
 * Runs the library's mirror of `snapshot` (a PostgreSQL URL) until it is ready, then stops
 * it; the exit of a mirror that ends before it is ready otherwise.
 */
const mirrorOnce = (handle: EmulatorHandle, snapshot: string, secretFile: string | undefined) =>
  Effect.scoped(
    Effect.gen(function*() {
      const ctx = yield* Layer.build(Layer.merge(testClient(handle), SnapshotStore.layer(snapshot)))
      const port = yield* Effect.promise(freePort)
      let ready: () => void = () => undefined
      const isReady = new Promise<void>((resolve) => (ready = resolve))
      const fiber = yield* Effect.forkChild(mirror({
        store: Context.get(ctx, SnapshotStore),
        rest: Context.get(ctx, RestClient),
        graphql: Context.get(ctx, GraphqlClient),
        workspaces: [handle.workspaces[0]!],
        host: "127.0.0.1",
        port,
        publicUrl: `http://127.0.0.1:${port}/hooks`,
        reconcileEveryMs: 3_600_000,
        healthEveryMs: 3_600_000,
        onReady: () => ready(),
        ...(secretFile !== undefined ? { secretFile } : {})
      }))
      const ended = yield* Effect.raceFirst(
        Effect.map(Fiber.await(fiber), (exit) => ({ exit })),
        Effect.map(Effect.promise(() => isReady), () => undefined)
      )
      if (ended !== undefined) return ended.exit
      yield* Fiber.interrupt(fiber)
      return Exit.void
    })
  )

// A PostgreSQL server and a live webhook receiver: the live clock.
layer(emulatorLayer({ seed: "empty", timeScale: 0.01 }), { timeout: 60_000, excludeTestServices: true })(
  "mirror of a PostgreSQL snapshot: the webhook secret's file",
  (it) => {
    it.effect("without a named file it refuses before registering a webhook or writing a file", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const url = yield* freshSchema
        const cwd = fs.readdirSync(process.cwd())
        const before = webhookIds(handle)
        const exit = yield* mirrorOnce(handle, url, undefined)
        expect(Exit.isFailure(exit)).toBe(true)
        if (Exit.isFailure(exit)) {
          const error = exit.cause.reasons.map((r) => ("error" in r ? r.error : undefined)).find((e) => e !== undefined)
          expect(error).toBeInstanceOf(MirrorError)
          expect((error as MirrorError).message).toContain("secretFile")
        }
        expect(webhookIds(handle)).toEqual(before)
        // Nothing made of the URL (a `postgres:` directory, a `....webhook.json`).
        expect(fs.readdirSync(process.cwd())).toEqual(cwd)
      }))

    it.effect("with a named file the secret is kept there, owner-only, and the next start reuses its webhook", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const dir = yield* tempDir("ws-mirror-secret-")
        const url = yield* freshSchema
        const secretFile = path.join(dir, "hook-secret.json")
        const before = webhookIds(handle)

        expect(Exit.isSuccess(yield* mirrorOnce(handle, url, secretFile))).toBe(true)
        const added = webhookIds(handle).filter((id) => !before.includes(id))
        expect(added).toHaveLength(1)
        const saved = readSecretFile(secretFile)
        expect(saved?.webhookId).toBe(added[0])
        expect(saved?.secrets).toHaveLength(1)
        expect(fs.statSync(secretFile).mode & 0o777).toBe(0o600)
        // The file is the one named, beside nothing else of the mirror's.
        expect(fs.readdirSync(dir)).toEqual(["hook-secret.json"])

        expect(Exit.isSuccess(yield* mirrorOnce(handle, url, secretFile))).toBe(true)
        expect(webhookIds(handle).filter((id) => !before.includes(id))).toEqual(added)
        expect(readSecretFile(secretFile)).toEqual(saved)
      }))
  }
)
