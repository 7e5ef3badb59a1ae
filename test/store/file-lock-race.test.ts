import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { type ChildProcess, fork, spawnSync } from "node:child_process"
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

/**
 * Has the two racers open the same store at the same moment, ROUNDS times, each round a
 * store of its own that `prepare` may fill first; returns the holders' log and how many
 * rounds someone held the lock.
 */
const race = (prepare: (file: string) => void = () => undefined) =>
  Effect.gen(function*() {
    const dir = yield* tempDir("ws-lock-race-")
    const log = path.join(dir, "holders.log")
    const a = yield* racer(log)
    const b = yield* racer(log)
    let roundsHeld = 0
    for (let round = 1; round <= ROUNDS; round++) {
      const file = path.join(dir, `store-${round}.sqlite`)
      prepare(file)
      const answers = Promise.all([a, b].map((child) => reply(child, (m) => (m.round === round ? m.held : undefined))))
      a.send({ round, file })
      b.send({ round, file })
      const held = yield* Effect.promise(() => answers)
      // Both attempts are over while the holders still hold: a second holder is an overlap.
      const holders = [a, b].filter((_, i) => held[i])
      if (holders.length > 0) roundsHeld++
      const released = Promise.all(holders.map((child) => reply(child, (m) => (m.released === round ? true : undefined))))
      for (const child of holders) child.send({ release: round })
      yield* Effect.promise(() => released)
    }
    return { lines: fs.readFileSync(log, "utf8").trim().split("\n"), roundsHeld }
  })

/** The pid of a process that has exited. */
const deadPid = (): number => spawnSync(process.execPath, ["-e", ""]).pid!

describe("one writer per store file, two processes opening a store at once", () => {
  // Real processes racing for a store's lock file: the live clock.
  it.live("never both hold the lock of the same new store", () =>
    Effect.gen(function*() {
      const { lines, roundsHeld } = yield* race()
      expect(mostAtOnce(lines)).toBe(1)
      // The race was run: the stores were taken, not all refused.
      expect(roundsHeld).toBeGreaterThan(ROUNDS / 2)
    }), 120_000)

  it.live("never both hold the lock of a store whose lock is a pid file of an older release, its process gone", () =>
    Effect.gen(function*() {
      const pid = deadPid()
      const { lines, roundsHeld } = yield* race((file) => fs.writeFileSync(`${file}.lock`, String(pid)))
      expect(mostAtOnce(lines)).toBe(1)
      expect(roundsHeld).toBeGreaterThan(ROUNDS / 2)
    }), 120_000)
})
