/**
 * One process at a time per journal and per snapshot file (the contract's "Waits, locks
 * and deletions"): a second run exits 1 with one line and writes nothing; the lock of a
 * SIGKILLed holder is gone with it.
 */
import { expect, layer } from "@effect/vitest"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import type { ChildProcess } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { connectionEnv } from "../support/cli.ts"
import { lockHolder } from "../support/lock-holder.ts"
import { cli } from "./cli-effect.ts"

const kill = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    child.once("exit", () => resolve())
    child.kill("SIGKILL")
  })

/** Runs `use` while another process holds the lock of `file`; that holder is SIGKILLed after. */
const whileHeld = <A, E, R>(file: string, use: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(
    Effect.promise(() => lockHolder(file)),
    () => use,
    (child) => Effect.promise(() => kill(child))
  )

const runs = (snapshot: string) => {
  const db = new Database(snapshot, { readonly: true })
  try {
    return db.prepare("SELECT id, status FROM runs ORDER BY id").all()
  } finally {
    db.close()
  }
}

// The CLI and the lock holders run as child processes against the emulator: real time, so
// the layer's tests run on the live clock (`excludeTestServices`).
layer(emulatorLayer({ seed: "demo" }), { timeout: 30_000, excludeTestServices: true })("one process per snapshot and per journal", (it) => {
  it.effect("a backup on a snapshot another process holds exits 1 with one line and adds no run; after the holder's SIGKILL it runs", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("ws-cli-lock-")
      const snapshot = path.join(dir, "held.sqlite")
      const first = yield* cli(["backup", "--snapshot", snapshot, "--json"], { env: connectionEnv(emu) })
      expect(first.code).toBe(0)
      const second = yield* whileHeld(snapshot, cli(["backup", "--snapshot", snapshot, "--json"], { env: connectionEnv(emu) }))
      expect(second.code).toBe(1)
      expect(second.stdout).toBe("")
      const lines = second.stderr.trim().split("\n")
      expect(lines.at(-1)).toBe(`worksync: snapshot ${snapshot} is in use by another worksync run; wait for it to finish or stop it`)
      expect(lines.filter((l) => l.startsWith("worksync:"))).toHaveLength(1)
      // The first run is still the only one, and still complete: nobody marked it failed.
      expect(runs(snapshot)).toEqual([{ id: 1, status: "complete" }])
      const third = yield* cli(["backup", "--snapshot", snapshot, "--json"], { env: connectionEnv(emu) })
      expect(third.code).toBe(0)
      expect(runs(snapshot)).toEqual([{ id: 1, status: "complete" }, { id: 2, status: "complete" }])
    }))

  it.effect("an import on a journal another process holds exits 1 with one line and sends nothing", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("ws-cli-lock-")
      const csv = path.join(dir, "in.csv")
      fs.writeFileSync(csv, "title\nOne\nTwo\n")
      const journal = path.join(dir, "held-journal.sqlite")
      const result = yield* whileHeld(
        journal,
        cli(["import-csv", "--workspace", emu.workspaces[0]!, "--csv", csv, "--journal", journal, "--map", "title=title", "--json"], { env: connectionEnv(emu) })
      )
      expect(result.code).toBe(1)
      const lines = result.stderr.trim().split("\n")
      expect(lines.at(-1)).toBe(`worksync: journal ${journal} is in use by another worksync run; wait for it to finish or stop it`)
      expect(lines.filter((l) => l.startsWith("worksync:"))).toHaveLength(1)
      const writes = emu.ctx.db.prepare("SELECT count(*) FROM records WHERE title IN ('One', 'Two')").pluck().get()
      expect(writes).toBe(0)
    }))
})
