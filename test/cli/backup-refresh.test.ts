/** `worksync backup --refresh-every N`: the rolling refresh from the command line. */
import Database from "better-sqlite3"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as path from "node:path"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { connectionEnv } from "../support/cli.ts"
import { cli } from "./cli-effect.ts"

// The CLI runs as a child process against the emulator: real time, so the layer's tests
// run on the live clock (`excludeTestServices`).
layer(emulatorLayer({ seed: "demo" }), { timeout: 30_000, excludeTestServices: true })("worksync backup --refresh-every", (it) => {
  it.effect("--refresh-every 1 re-reads every record's detail; a negative value is a usage error", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("ws-cli-refresh-")
      const snapshot = path.join(dir, "refresh.sqlite")
      expect((yield* cli(["backup", "--snapshot", snapshot, "--quiet"], { env: connectionEnv(emu) })).code).toBe(0)
      emu.resetStats()
      const second = yield* cli(["backup", "--snapshot", snapshot, "--refresh-every", "1", "--json"], { env: connectionEnv(emu) })
      expect(second.code).toBe(0)
      const records = JSON.parse(second.stdout).records as number
      expect(emu.stats().byRoute["get-record"]).toBe(records)
      const db = new Database(snapshot, { readonly: true })
      const stats = JSON.parse(db.prepare("SELECT stats FROM runs ORDER BY id DESC LIMIT 1").pluck().get() as string)
      db.close()
      expect(stats.refreshed).toBe(records)
      const bad = yield* cli(["backup", "--snapshot", snapshot, "--refresh-every", "-1"], { env: connectionEnv(emu) })
      expect(bad.code).toBe(64)
      expect(bad.stderr.trim().split("\n")).toHaveLength(1)
      expect(bad.stderr).toMatch(/--refresh-every -1/)
    }))
})
