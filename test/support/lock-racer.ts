/**
 * A child process for the lock race test (test/store/file-lock-race.test.ts): on each
 * `{ round, file }` message it tries once to take the store lock of FILE, appends
 * `<round> <pid> held` to LOG when it got it, answers `{ round, held }`, and on
 * `{ release: round }` appends `<round> <pid> released` and lets the lock go. LOG is
 * written with O_APPEND by both racers, so its lines are in the order things happened.
 *
 *   node --import tsx test/support/lock-racer.ts LOG
 */
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Scope from "effect/Scope"
import * as fs from "node:fs"
import { lockStore } from "../../src/store/file-lock.ts"

type Message = { readonly round: number; readonly file: string } | { readonly release: number }

const [log] = process.argv.slice(2) as [string]
const held = new Map<number, Scope.Closeable>()
const send = (m: unknown) => process.send!(m)

process.on("message", (m: Message) => {
  if ("release" in m) {
    const scope = held.get(m.release)
    if (scope === undefined) return
    held.delete(m.release)
    fs.appendFileSync(log, `${m.release} ${process.pid} released\n`)
    Effect.runSync(Scope.close(scope, Exit.void))
    send({ released: m.release })
    return
  }
  const scope = Effect.runSync(Scope.make())
  // waitMs 0: the attempt ends at once, whether or not the other racer holds the lock.
  const got = Effect.runSync(Effect.exit(Scope.provide(scope)(lockStore("journal", m.file, { waitMs: 0 }))))
  if (Exit.isSuccess(got)) {
    fs.appendFileSync(log, `${m.round} ${process.pid} held\n`)
    held.set(m.round, scope)
  } else {
    Effect.runSync(Scope.close(scope, Exit.void))
  }
  send({ round: m.round, held: Exit.isSuccess(got) })
})
send({ ready: true })
