import { describe, expect, it } from "@effect/vitest"
import * as Cause from "effect/Cause"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as fs from "node:fs"
import * as path from "node:path"
import { lockStore, StoreBusy } from "../../src/store/file-lock.ts"
import { openJournal } from "../../src/store/journal.ts"
import { tempDir } from "../support/effect.ts"
import { exited, lockHolder } from "../support/lock-holder.ts"

/** A journal path in a directory removed with the test's scope. */
const tmpFile = Effect.map(tempDir("ws-lock-"), (dir) => path.join(dir, "journal.sqlite"))

/** Another process holding the lock of `file`, killed (if still running) when the scope closes. */
const holder = (file: string) =>
  Effect.acquireRelease(Effect.promise(() => lockHolder(file)), (child) =>
    Effect.promise(() => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL")
      return exited(child)
    }))

const busyOrNot = (file: string) =>
  Effect.scoped(Effect.exit(lockStore("journal", file, { waitMs: 0 })))

describe("one writer per store file (journal and snapshot lock)", () => {
  it.effect("a second opener in the same process is refused while the first holds the journal, and admitted after", () =>
    Effect.gen(function*() {
      const file = yield* tmpFile
      yield* Effect.scoped(
        Effect.gen(function*() {
          yield* openJournal(file)
          const second = yield* Effect.exit(Effect.scoped(openJournal(file)))
          expect(Exit.isFailure(second)).toBe(true)
          if (Exit.isFailure(second)) {
            expect(String(second.cause)).toContain("StoreBusy")
          }
        })
      )
      const after = yield* busyOrNot(file)
      expect(Exit.isSuccess(after)).toBe(true)
    }))

  // A real child process and real lock waits: the live clock.
  it.live("another process holding the lock makes this one refuse with one line; its SIGKILL frees the lock", () =>
    Effect.gen(function*() {
      const file = yield* tmpFile
      yield* Effect.scoped(
        Effect.gen(function*() {
          yield* holder(file)
          const refused = yield* busyOrNot(file)
          expect(Exit.isFailure(refused)).toBe(true)
          if (Exit.isFailure(refused)) {
            // The one reason of the failure, when it is a typed failure (not a defect).
            const [reason, ...others] = refused.cause.reasons
            const error = reason !== undefined && others.length === 0 && Cause.isFailReason(reason) ? reason.error : undefined
            expect(error).toBeInstanceOf(StoreBusy)
            expect((error as StoreBusy).message).toBe(`journal ${file} is in use by another worksync run; wait for it to finish or stop it`)
          }
        })
      )
      // The operating system released the dead holder's lock: no pid file to go stale.
      const taken = yield* busyOrNot(file)
      expect(Exit.isSuccess(taken)).toBe(true)
    }))

  it.live("a waiting opener gets the lock once the holder lets go", () =>
    Effect.gen(function*() {
      const file = yield* tmpFile
      const child = yield* holder(file)
      // The holder lets go a moment after this line; waiting is synchronous in SQLite, so
      // the line is flushed first.
      yield* Effect.promise(() => new Promise<void>((resolve) => child.stdin!.write("release\n", () => resolve())))
      const got = yield* Effect.scoped(Effect.exit(lockStore("journal", file, { waitMs: 20_000 })))
      yield* Effect.promise(() => exited(child))
      expect(Exit.isSuccess(got)).toBe(true)
    }))

  it.effect("a pid-file lock of an older release, even an empty one, is replaced by a real lock", () =>
    Effect.gen(function*() {
      const file = yield* tmpFile
      fs.writeFileSync(`${file}.lock`, "")
      const first = yield* busyOrNot(file)
      expect(Exit.isSuccess(first)).toBe(true)
      fs.writeFileSync(`${file}.lock`, String(process.pid))
      yield* Effect.scoped(
        Effect.gen(function*() {
          yield* lockStore("journal", file, { waitMs: 0 })
          // Held now: an empty or pid file can no longer be mistaken for a free lock.
          expect(Exit.isFailure(yield* busyOrNot(file))).toBe(true)
        })
      )
      expect(fs.statSync(`${file}.lock`).mode & 0o777).toBe(0o600)
    }))

  it.effect("a pid file of an older release whose process still runs is left alone and the store is busy", () =>
    Effect.gen(function*() {
      const file = yield* tmpFile
      // The parent of this test's process runs as long as the test does.
      fs.writeFileSync(`${file}.lock`, String(process.ppid))
      const refused = yield* busyOrNot(file)
      expect(Exit.isFailure(refused)).toBe(true)
      if (Exit.isFailure(refused)) expect(String(refused.cause)).toContain("StoreBusy")
      expect(fs.readFileSync(`${file}.lock`, "utf8")).toBe(String(process.ppid))
    }))
})
