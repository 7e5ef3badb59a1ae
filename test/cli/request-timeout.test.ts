/**
 * `--request-timeout SECONDS` (profile key requestTimeout, env WORKSYNC_REQUEST_TIMEOUT):
 * how long one attempt of a request may take, at most the client's default (30 s). A
 * request the service holds unanswered fails after that long and is retried, and the
 * backup completes. A CLI that ignored the setting would wait the default 30 s for the
 * held attempt and miss the test's smaller timeout.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { DEFAULT_REQUEST_TIMEOUT_MS } from "../../src/client/config.ts"
import { MAX_REQUEST_TIMEOUT_SECONDS } from "../../src/cli/common-options.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { runCli, connectionEnv } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"

// Below the default timeout: a held attempt that waited 30 s would miss it.
const QUICK = { timeout: 25_000 }

const backup = (emu: EmulatorHandle, snapshot: string, flags: ReadonlyArray<string>, extra: Record<string, string> = {}) =>
  Effect.promise(() => runCli(["backup", "--snapshot", snapshot, "--quiet", ...flags], { env: { ...connectionEnv(emu), ...extra } }))

// The CLI runs as a child process against the emulator: real time (`excludeTestServices`).
layer(emulatorLayer({ variant: "reference", seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("worksync --request-timeout", (it) => {
  const cases: ReadonlyArray<readonly [string, (dir: string) => ReadonlyArray<string>, Record<string, string>]> = [
    ["the flag", () => ["--request-timeout", "0.5"], {}],
    ["the profile's requestTimeout", (dir) => {
      const config = path.join(dir, "profiles.json")
      fs.writeFileSync(config, JSON.stringify({ profiles: { default: { requestTimeout: 1 } } }), { mode: 0o600 })
      return ["--config", config]
    }, {}],
    ["WORKSYNC_REQUEST_TIMEOUT", () => [], { WORKSYNC_REQUEST_TIMEOUT: "1" }]
  ]
  for (const [source, flags, extra] of cases) {
    it.effect(`a request held unanswered fails after the timeout ${source} sets and is retried; the backup completes`, () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const dir = yield* tempDir("ws-request-timeout-")
        emu.resetStats()
        emu.faults.inject({ route: "list-workspaces", kind: "hold" })
        try {
          const r = yield* backup(emu, path.join(dir, "backup.sqlite"), flags(dir), extra)
          expect(r.code, r.stderr).toBe(0)
          // The held attempt, still unanswered, and the retry that was answered.
          expect(emu.faults.heldRequests.size).toBe(1)
          expect(emu.stats().byRoute["list-workspaces"]).toBe(2)
        } finally {
          emu.faults.reset()
        }
      }), QUICK)
  }

  it.effect("a timeout above 0 and at most the default, else a usage error (64) with one line; the most is the client's default", () =>
    Effect.gen(function*() {
      expect(MAX_REQUEST_TIMEOUT_SECONDS * 1000).toBe(DEFAULT_REQUEST_TIMEOUT_MS)
      const emu = yield* Emulator
      emu.resetStats()
      const snapshot = path.join(yield* tempDir("ws-request-timeout-"), "backup.sqlite")
      for (const bad of ["0", "31"]) {
        const r = yield* backup(emu, snapshot, ["--request-timeout", bad])
        expect(r.code).toBe(64)
        expect(r.stderr.trim().split("\n")).toEqual([expect.stringContaining(`--request-timeout ${bad}: must be more than 0 and at most 30 seconds`)])
      }
      expect(emu.stats().byRoute["list-workspaces"] ?? 0).toBe(0)
    }), QUICK)
})
