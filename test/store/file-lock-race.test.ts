import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type ChildProcess, fork } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { tempDir } from "../support/effect.ts"
import { exited } from "../support/lock-holder.ts"

const ROOT = new URL("../../", import.meta.url).pathname

/** New stores the two racers open at the same moment. */
const ROUNDS = 100

type Reply = { readonly ready?: true; readonly round?: number; readonly held?: boolean; readonly released?: number }

/** A racer (test/support/lock-racer.ts) writing to `log`, killed when the scope closes. */
const racer = (log: string) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<ChildProcess>((resolve, reject) => {
        const child = fork(`${ROOT}test/support/lock-racer.ts`, [log], {
          execArgv: ["--import", `file://${ROOT}node_modules/tsx/dist/loader.mjs`],
          stdio: ["ignore", "inherit", "inherit", "ipc"]
        })
        child.once("message", () => resolve(child))
        child.once("exit", (code) => reject(new Error(`lock racer exited with ${code} before it was ready`)))
      })
    ),
    (child) =>
      Effect.promise(() => {
        child.kill("SIGKILL")
        return exited(child)
      })
  )

/** The next message of `child` that `pick` accepts. */
const reply = <A>(child: ChildProcess, pick: (m: Reply) => A | undefined): Promise<A> =>
  new Promise((resolve) => {
    const on = (m: Reply) => {
      const a = pick(m)
      if (a === undefined) return
      child.off("message", on)
      resolve(a)
    }
    child.on("message", on)
  })

/** The most holders any store had at once, replaying the log's lines in their order. */
const mostAtOnce = (lines: ReadonlyArray<string>): number => {
  const holders = new Map<string, number>()
  let most = 0
  for (const line of lines) {
    const [round, , what] = line.split(" ") as [string, string, string]
    const now = (holders.get(round) ?? 0) + (what === "held" ? 1 : -1)
    holders.set(round, now)
    most = Math.max(most, now)
  }
  return most
}

describe("one writer per store file, two processes opening a new store at once", () => {
  // Real processes racing for a new store's lock file: the live clock.
  it.live("never both hold the lock of the same new store", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("ws-lock-race-")
      const log = path.join(dir, "holders.log")
      const a = yield* racer(log)
      const b = yield* racer(log)
      let rounds_held = 0
      for (let round = 1; round <= ROUNDS; round++) {
        const file = path.join(dir, `store-${round}.sqlite`)
        const answers = Promise.all([a, b].map((child) => reply(child, (m) => (m.round === round ? m.held : undefined))))
        a.send({ round, file })
        b.send({ round, file })
        const held = yield* Effect.promise(() => answers)
        // Both attempts are over while the holders still hold: a second holder is an overlap.
        const holders = [a, b].filter((_, i) => held[i])
        if (holders.length > 0) rounds_held++
        const released = Promise.all(holders.map((child) => reply(child, (m) => (m.released === round ? true : undefined))))
        for (const child of holders) child.send({ release: round })
        yield* Effect.promise(() => released)
      }
      const lines = fs.readFileSync(log, "utf8").trim().split("\n")
      expect(mostAtOnce(lines)).toBe(1)
      // The race was run: the stores were taken, not all refused.
      expect(rounds_held).toBeGreaterThan(ROUNDS / 2)
    }), 120_000)
})
