/** `worksync diff`: the work behind the definition in ../commands/diff.ts. */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { SnapshotStore } from "../../store/snapshot.ts"
import { diff, type IdChanges } from "../../sync/diff.ts"
import type { DiffFlags } from "../commands/diff.ts"
import { verbosityOf } from "../common-options.ts"
import { usageError } from "../exit.ts"
import { logLine, printJson } from "../output.ts"
import { shownLocation, snapshotFailure } from "./snapshot-failure.ts"

const line = (what: string, c: IdChanges) =>
  `${what}: ${c.created.length} created, ${c.updated.length} updated, ${c.deleted.length} deleted`

export const diffRun = (flags: DiffFlags) =>
  Effect.gen(function*() {
    const verbosity = verbosityOf(flags)
    const { selection, result } = yield* diff({
      from: Option.getOrUndefined(flags.from),
      to: Option.getOrUndefined(flags.to)
    }).pipe(
      Effect.provide(SnapshotStore.layer(flags.snapshot, { mustExist: true })),
      Effect.catch((e): Effect.Effect<never, unknown> => Effect.fail(snapshotFailure(e, flags.snapshot) ?? e))
    )
    if (selection === undefined) {
      return yield* Effect.fail(usageError(`--snapshot ${shownLocation(flags.snapshot)} has no complete run; run worksync backup first`))
    }
    if (flags.json) yield* printJson(result)
    yield* logLine(verbosity, `diff: run ${selection.from?.id ?? "(none)"} -> run ${selection.to.id}`)
    yield* logLine(verbosity, `  ${line("records", result.records)}`)
    yield* logLine(verbosity, `  ${line("files", result.files)}`)
    for (const [what, changes] of [["record", result.records], ["file", result.files]] as const) {
      for (const kind of ["created", "updated", "deleted"] as const) {
        for (const id of changes[kind]) yield* logLine(verbosity, `  ${what} ${kind} ${id}`, "detail")
      }
    }
  })
