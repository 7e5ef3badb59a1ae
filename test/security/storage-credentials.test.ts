/**
 * No service credentials are sent to storage URLs (R-UPLOAD-PRESIGN-13, R-FILE-SERVE-02).
 * The emulator's storage origin records the name of every credential-looking header it
 * receives; after copies in every direction through the real binary the log must be
 * empty, while the storage request counters prove storage was really used.
 */
import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { storageCredentialLog } from "../../src/emulator/uploads/files.ts"
import { runCli } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { type Canary, canaryUser } from "./support.ts"

/** The file's emulator, its two users and the workspace both may write to. */
interface Storage {
  readonly emu: EmulatorHandle
  readonly owner: Canary
  readonly second: Canary
  readonly target: string
}
class StorageSetup extends Context.Service<StorageSetup, Storage>()("test/security/StorageSetup") {}

const setupLayer = Layer.provideMerge(
  Layer.effect(
    StorageSetup,
    Effect.map(Emulator, (emu) => {
      const owner = canaryUser(emu, "storage-owner")
      const target = emu.admin.createWorkspace({ name: "storage target" }).id
      emu.admin.setWorkspaceLevel(target, owner.userId, "ADMIN")
      const second = canaryUser(emu, "storage-second")
      emu.admin.setWorkspaceLevel(target, second.userId, "ADMIN")
      return { emu, owner, second, target }
    })
  ),
  emulatorLayer({ seed: "demo" })
)

const flags = ({ emu, owner }: Storage) => [
  "--rest-url", emu.restUrl, "--base-url", emu.baseUrl, "--token", owner.token, "--token-id", owner.tokenId,
  "--token-secret", owner.tokenSecret, "--org", emu.org
]

/** Storage requests by method-less route, e.g. 3 PUTs and 9 GETs both count as `storage:/o/...`. */
const storageHits = (emu: EmulatorHandle) =>
  Object.entries(emu.stats().byRoute)
    .filter(([route]) => route.startsWith("storage:"))
    .reduce((n, [, count]) => n + count, 0)

const confirmedIn = (emu: EmulatorHandle, ws: string) =>
  emu.ctx.db.prepare("SELECT count(*) FROM files WHERE workspace_id = ? AND status = 'CONFIRMED'").pluck().get(ws) as number

const cli = (...args: Parameters<typeof runCli>) => Effect.promise(() => runCli(...args))

// The CLI runs as a child process against the emulator: real time (`excludeTestServices`).
layer(setupLayer, { timeout: 30_000, excludeTestServices: true })("no service credentials reach storage", (it) => {
  it.effect("R-FILE-SERVE-02: workspace -> dir downloads follow the signed redirect with no credential header", () =>
    Effect.gen(function*() {
      const s = yield* StorageSetup
      const { emu } = s
      emu.resetStats()
      const out = path.join(yield* tempDir("ws-sec-"), "out")
      const r = yield* cli(["copy-files", ...flags(s), "--from", `workspace:${emu.workspaces[0]}`, "--to", `dir:${out}`,
        "--journal", path.join(yield* tempDir("ws-sec-"), "j.sqlite"), "--json"])
      expect(r.code, r.stderr).toBe(0)
      const copied = JSON.parse(r.stdout).copied as number
      expect(copied).toBeGreaterThan(0)
      expect(storageHits(emu)).toBeGreaterThanOrEqual(copied)
      expect(storageCredentialLog(emu.ctx)).toEqual([])
    }))

  it.effect("R-UPLOAD-PRESIGN-13: dir -> workspace presigned PUTs (both upload strategies) carry no credential header", () =>
    Effect.gen(function*() {
      const s = yield* StorageSetup
      const { emu, target } = s
      const src = yield* tempDir("ws-sec-")
      fs.writeFileSync(path.join(src, "small.txt"), "small")
      fs.writeFileSync(path.join(src, "big.bin"), Buffer.alloc(300_000, 1))
      fs.writeFileSync(path.join(src, "no-extension"), "x")
      emu.resetStats()
      const before = confirmedIn(emu, target)
      for (const strategy of ["presign", "auto"]) {
        const r = yield* cli(["copy-files", ...flags(s), "--from", `dir:${src}`, "--to", `workspace:${target}`,
          "--journal", path.join(yield* tempDir("ws-sec-"), "j.sqlite"), "--upload-strategy", strategy, "--json"])
        expect(r.code, r.stderr).toBe(0)
        expect(JSON.parse(r.stdout)).toMatchObject({ files: 3, copied: 3, failed: 0 })
      }
      expect(confirmedIn(emu, target)).toBe(before + 6)
      // At least the presign run's three PUTs went to storage.
      expect(storageHits(emu)).toBeGreaterThanOrEqual(3)
      expect(storageCredentialLog(emu.ctx)).toEqual([])
    }))

  it.effect("R-UPLOAD-PRESIGN-13, R-FILE-SERVE-02: workspace -> workspace on a second account (--to-*) downloads and uploads with no credential at storage", () =>
    Effect.gen(function*() {
      const s = yield* StorageSetup
      const { emu, second, target } = s
      emu.resetStats()
      const r = yield* cli(["copy-files", ...flags(s), "--from", `workspace:${emu.workspaces[0]}`, "--to", `workspace:${target}`,
        "--to-token", second.token, "--to-token-id", second.tokenId, "--to-token-secret", second.tokenSecret,
        "--journal", path.join(yield* tempDir("ws-sec-"), "j.sqlite"), "--upload-strategy", "presign", "--concurrency", "3", "--json"])
      expect(r.code, r.stderr).toBe(0)
      const copied = JSON.parse(r.stdout).copied as number
      expect(copied).toBeGreaterThan(0)
      // A GET and a PUT per file (an empty file may skip its download).
      expect(storageHits(emu)).toBeGreaterThanOrEqual(2 * copied - 1)
      expect(storageCredentialLog(emu.ctx)).toEqual([])
    }))

  it.effect("the storage log does catch a credential header (so an empty log means something)", () =>
    Effect.gen(function*() {
      const { emu, owner } = yield* StorageSetup
      const res = yield* Effect.promise(() => fetch(`${emu.storageUrl}/o/nothing`, { headers: { authorization: `Bearer ${owner.token}` } }))
      yield* Effect.promise(() => res.arrayBuffer())
      expect(storageCredentialLog(emu.ctx).map((e) => e.header)).toEqual(["authorization"])
    }))
})
