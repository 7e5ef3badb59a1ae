/** `worksync restore`: the work behind the definition in ../commands/restore.ts. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import { RestClient } from "../../client/rest-client.ts"
import { workspaceFilesFromServices } from "../../connectors/files/workspace-files.ts"
import { StoreBusy } from "../../store/file-lock.ts"
import { describeJournalError, openJournal } from "../../store/journal.ts"
import { openObjectStore } from "../../store/object-store.ts"
import { resolveRun, SnapshotStore } from "../../store/snapshot.ts"
import { findWorkspace } from "../../sync/backup.ts"
import { restore, RestoreError, type RestoreResult } from "../../sync/restore.ts"
import type { RestoreFlags } from "../commands/restore.ts"
import { type ConnectionFlags, verbosityOf } from "../common-options.ts"
import { checkConfigFile, clientLayerFromFlags, nextStepSuffix, targetFlags } from "../connection.ts"
import { CliExit, ExitCode, registerDescriber, usageError } from "../exit.ts"
import { logLine, printJson } from "../output.ts"
import { shownLocation, snapshotFailure } from "./snapshot-failure.ts"
import { parseWorkspaceEnd, targetPrefix } from "./target.ts"

registerDescriber(describeJournalError)

const messageOf = (e: unknown): string =>
  typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)

const summary = (r: RestoreResult, dryRun: boolean): string =>
  dryRun
    ? `restore (dry run): ${r.records} record(s): would create ${r.planned.creates}, update ${r.planned.updates} ` +
      `(${r.planned.moves} moved), delete ${r.planned.deletes}; ${r.unchanged} unchanged; nothing was sent`
    : `restore: ${r.records} record(s): ${r.created} created, ${r.updated} updated, ${r.unchanged} unchanged, ` +
      `${r.deleted} deleted, ${r.failed + r.unknown} failed`

export const restoreRun = (flags: RestoreFlags) =>
  Effect.scoped(
    Effect.gen(function*() {
      const verbosity = verbosityOf(flags)
      yield* checkConfigFile
      const to = yield* parseWorkspaceEnd("--to", flags.to)
      const sourceFlags: ConnectionFlags = flags
      const client = yield* clientLayerFromFlags(
        targetFlags(sourceFlags, flags.to_),
        { rest: true },
        targetPrefix(flags.to_)
      )
      const snapshot = SnapshotStore.layer(flags.snapshot, { mustExist: true })
      const filesDir = Option.getOrUndefined(flags.files)
      const result = yield* Effect.gen(function*() {
        const store = yield* SnapshotStore
        const run = yield* resolveRun(store, Option.getOrUndefined(flags.run))
        if (run === undefined) {
          return yield* Effect.fail(usageError(`--snapshot ${shownLocation(flags.snapshot)}: no complete run to restore; run worksync backup first`))
        }
        const held = yield* store.recordWorkspaces(run.id)
        const named = Option.getOrUndefined(flags.fromWorkspace)
        if (named === undefined && held.length !== 1) {
          return yield* Effect.fail(
            usageError(
              held.length === 0
                ? `run ${run.id} holds no record; pick another --run`
                : `run ${run.id} holds workspaces ${held.join(", ")}: name one with --from-workspace`
            )
          )
        }
        const source = named ?? held[0]!
        if (!held.includes(source)) {
          return yield* Effect.fail(usageError(`--from-workspace ${source}: run ${run.id} holds no record of it (it holds ${held.join(", ") || "none"})`))
        }
        const target = yield* findWorkspace(to).pipe(
          Effect.catchTag("WorkspaceNotFound", (e) => Effect.fail(usageError(`--to workspace:${to}: ${e.message}`)))
        )
        const journal = yield* openJournal(flags.journal).pipe(
          Effect.catch((e) => Effect.fail(e instanceof StoreBusy ? new CliExit({ code: ExitCode.failed, message: e.message }) : e))
        )
        yield* logLine(verbosity, `restore: run ${run.id}, workspace ${source} -> workspace ${target.id}`, "detail")
        const files = filesDir === undefined ? undefined : {
          objects: yield* openObjectStore(filesDir).pipe(
            Effect.catch((e) => Effect.fail(usageError(`--files ${filesDir}: cannot use it as the files directory: ${e.detail}`)))
          ),
          target: yield* workspaceFilesFromServices
        }
        if (files !== undefined && flags.record.length > 0) {
          return yield* Effect.fail(usageError("--files restores the files of a whole run: do not name single records with it"))
        }
        return yield* restore(store, yield* RestClient, journal, {
          run,
          sourceWorkspaceId: source,
          targetWorkspaceId: target.id,
          ...(flags.record.length > 0 ? { records: flags.record } : {}),
          ...(flags.deleteMissing ? { deleteMissing: true } : {}),
          ...(flags.dryRun ? { dryRun: true } : {}),
          ...(files !== undefined ? { files } : {})
        })
      }).pipe(
        Effect.provide(Layer.merge(client, snapshot)),
        Effect.catch((e): Effect.Effect<never, unknown> => {
          if (e instanceof CliExit) return Effect.fail(e)
          if (e instanceof RestoreError) return Effect.fail(usageError(`restore: ${e.message}`))
          const mapped = snapshotFailure(e, flags.snapshot)
          if (mapped !== undefined) return Effect.fail(mapped)
          return Effect.fail(
            new CliExit({
              code: ExitCode.failed,
              message: `restore failed: ${messageOf(e)}${nextStepSuffix(e)}; rerun with the same --journal to resume`
            })
          )
        })
      )
      for (const line of result.notices) yield* logLine(verbosity, `restore: ${line}`)
      if (result.unknownAssignees.length > 0) {
        yield* logLine(verbosity, `restore: no user on the target with these e-mails, left unassigned: ${result.unknownAssignees.join(", ")}`)
      }
      for (const a of result.adopted) {
        yield* logLine(verbosity, `restore: adopted record ${a.targetId} for ${a.opKey} (found by ${a.detail})`, "detail")
      }
      if (flags.json) {
        yield* printJson({
          records: result.records,
          ...(flags.dryRun ? { planned: result.planned } : {}),
          created: result.created,
          updated: result.updated,
          unchanged: result.unchanged,
          deleted: result.deleted,
          failed: result.failed + result.unknown,
          notRestored: result.notRestored,
          ...(result.files !== undefined
            ? { files: { files: result.files.files, uploaded: result.files.uploaded, present: result.files.present, failed: result.files.failed.length, bytes: result.files.bytes } }
            : {}),
          ...(result.adopted.length > 0 ? { adopted: result.adopted.map((a) => ({ key: a.opKey, recordId: a.targetId, found: a.detail })) } : {})
        })
      }
      yield* logLine(verbosity, summary(result, flags.dryRun))
      for (const f of result.files?.failed ?? []) yield* logLine(verbosity, `restore: file ${f.name} (${f.fileId}) not restored: ${f.reason}`)
      if (result.failed + result.unknown > 0) {
        return yield* Effect.fail(
          new CliExit({
            code: ExitCode.failed,
            message: `restore: ${result.failed + result.unknown} operation(s) failed; rerun with the same --journal to retry them`
          })
        )
      }
      const lost = result.files?.failed ?? []
      if (lost.length > 0 && !flags.dryRun) {
        const more = lost.length > 1 ? ` and ${lost.length - 1} more (listed above)` : ""
        return yield* Effect.fail(
          new CliExit({
            code: ExitCode.failed,
            message: `restore: file ${lost[0]!.name} not restored: ${lost[0]!.reason}${more}; mend --files ${filesDir} and rerun with the same --journal`
          })
        )
      }
    })
  )
