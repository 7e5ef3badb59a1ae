/**
 * Replay commits an op's completion without waiting for the fsync of the journal's log
 * (src/store/journal/batch.ts): a process killed (SIGKILL) keeps every commit, but a
 * power cut may lose the completions committed after the last fsync, leaving their ops
 * as their durable claim did, in flight. Here the process is killed mid-replay and the
 * latest completions are then taken back as a power cut takes them (each op in flight
 * again, the mappings its completion wrote gone): the rerun must reconcile those ops,
 * finding the records their requests made, and send none of them again.
 */
import Database from "better-sqlite3"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"

const BIN = "bin/worksync.js"
const ROWS = 120

interface Ran {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

const start = (handle: EmulatorHandle, args: ReadonlyArray<string>) => {
  const env = { ...process.env, WORKSYNC_REST_URL: handle.restUrl, WORKSYNC_BASE_URL: handle.baseUrl, WORKSYNC_TOKEN: handle.token, WORKSYNC_ORG: handle.org }
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (d) => (stdout += d))
  child.stderr.on("data", (d) => (stderr += d))
  const done = new Promise<Ran>((resolve) => child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr })))
  return { child, done }
}

const titles = (handle: EmulatorHandle, ws: string): Map<string, number> => {
  const rows = handle.ctx.db
    .prepare("SELECT title, COUNT(*) AS n FROM records WHERE workspace_id = ? AND deleted_at IS NULL GROUP BY title")
    .all(ws) as Array<{ title: string; n: number }>
  return new Map(rows.map((r) => [r.title, r.n]))
}

const created = (handle: EmulatorHandle, ws: string): number => [...titles(handle, ws).values()].reduce((a, n) => a + n, 0)

/**
 * Takes back the `n` latest completions of record creates as a power cut loses them: the
 * op in flight as its claim left it, without its result, and without the mappings and
 * follow-up ops its completion wrote (all dated by the completion, in one transaction).
 * Returns the keys taken back.
 */
const loseLatestCompletions = (file: string, n: number): Array<string> => {
  const db = new Database(file)
  try {
    const done = db
      .prepare("SELECT key, updated_at AS at FROM ops WHERE kind = 'record.create' AND state = 'done' ORDER BY updated_at DESC, seq DESC LIMIT ?")
      .all(n) as Array<{ key: string; at: string }>
    db.transaction(() => {
      for (const { key, at } of done) {
        db.prepare("UPDATE ops SET state = 'in_flight', result = NULL, error = NULL WHERE key = ?").run(key)
        db.prepare("DELETE FROM id_map WHERE op_key = ? AND created_at = ?").run(key, at)
        db.prepare("DELETE FROM ops WHERE plan_run IS NULL AND state = 'pending' AND updated_at = ?").run(at)
      }
    })()
    return done.map((d) => d.key)
  } finally {
    db.close()
  }
}

layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("replay: completions committed before the log's fsync", () => {
    it.effect("SIGKILL mid-replay, the latest completions then lost as to a power cut: the rerun reconciles them, every row exists once", () =>
      Effect.gen(function*() {
        const handle = yield* Emulator
        const ws = handle.admin.createWorkspace({ name: "unsynced" }).id
        const dir = yield* tempDir("ws-unsynced-")
        const csv = path.join(dir, "in.csv")
        const rows = Array.from({ length: ROWS }, (_, i) => `${i},Unsynced task ${i}`)
        fs.writeFileSync(csv, ["key,title", ...rows].join("\n") + "\n")
        const journal = path.join(dir, "j.sqlite")
        const args = ["import-csv", "--workspace", ws, "--csv", csv, "--journal", journal, "--json", "--quiet"]
        // Latency keeps several requests in flight when the kill lands.
        handle.faults.configure({ latencyMs: 10 })
        try {
          const { child, done } = start(handle, args)
          // The kill lands by progress, not by the clock: once half the records exist.
          const watch = setInterval(() => {
            if (created(handle, ws) >= ROWS / 2) child.kill("SIGKILL")
          }, 2)
          const killed = yield* Effect.promise(() => done)
          clearInterval(watch)
          expect(killed.signal).toBe("SIGKILL")
        } finally {
          handle.faults.reset()
        }
        const lost = loseLatestCompletions(journal, 8)
        expect(lost.length).toBe(8)
        const before = created(handle, ws)
        expect(before).toBeLessThan(ROWS)
        handle.resetStats()
        const rerun = yield* Effect.promise(() => start(handle, args).done)
        expect(rerun.code).toBe(0)
        expect(JSON.parse(rerun.stdout)).toMatchObject({ rows: ROWS, rejected: 0 })
        // Only the records missing were created: none of the ops taken back was sent again.
        expect(handle.stats().byRoute["create-record"] ?? 0).toBe(ROWS - before)
        expect(titles(handle, ws)).toEqual(new Map(rows.map((_, i) => [`Unsynced task ${i}`, 1])))
        // Each op taken back is done again, with its record mapped.
        const db = new Database(journal, { readonly: true })
        try {
          for (const key of lost) {
            expect(db.prepare("SELECT state FROM ops WHERE key = ?").get(key)).toEqual({ state: "done" })
            expect(db.prepare("SELECT COUNT(*) AS n FROM id_map WHERE op_key = ?").get(key)).toEqual({ n: 1 })
          }
        } finally {
          db.close()
        }
      }), 120_000)
  })
})
