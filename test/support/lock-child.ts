/**
 * A child process for lock tests: takes the store lock of FILE, prints `locked`, and
 * holds it until killed, or until 300 ms after it reads a line on stdin.
 *
 *   node --import tsx test/support/lock-child.ts FILE
 */
import * as Effect from "effect/Effect"
import { lockStore } from "../../src/store/file-lock.ts"

const [file] = process.argv.slice(2) as [string]

await Effect.runPromise(
  Effect.scoped(
    Effect.gen(function*() {
      yield* lockStore("journal", file, { waitMs: 0 })
      process.stdout.write("locked\n")
      yield* Effect.callback<void>((resume) => {
        process.stdin.once("data", () => setTimeout(() => resume(Effect.void), 300))
      })
    })
  )
)
process.stdout.write("released\n")
process.exit(0)
