/** `worksync copy-files`: the work behind the definition in ../commands/copy-files.ts. */
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import * as fs from "node:fs"
import { isNotFound } from "../../client/errors.ts"
import type { ClientServices } from "../../client/layer.ts"
import { copyFiles, CopySetupError, type CopySummary, DEFAULT_CONCURRENCY, ListingUnverified } from "../../connectors/files/copy.ts"
import { isFileCopyError } from "../../connectors/files/errors.ts"
import type { WorkspaceFiles } from "../../connectors/files/ports.ts"
import { describeEndpoint, type Endpoint, parseEndpoint } from "../../connectors/files/spec.ts"
import { workspaceFilesFromServices } from "../../connectors/files/workspace-files.ts"
import { announcePlanned } from "../../engine/job.ts"
import { StoreBusy } from "../../store/file-lock.ts"
import { describeJournalError, openJournal } from "../../store/journal.ts"
import type { COPY_DEFAULT_CONCURRENCY, CopyFilesFlags } from "../commands/copy-files.ts"
import { type ConnectionFlags, verbosityOf } from "../common-options.ts"
import { checkConfigFile, clientLayerFromFlags, requireBaseUrl, targetFlags } from "../connection.ts"
import { CliExit, ExitCode, registerDescriber, usageError } from "../exit.ts"
import { logLine, printJson } from "../output.ts"
import { formatBytes, makeProgress } from "../progress.ts"
import { copiedLine, isHelper, runCopyHelper } from "./copy-helper.ts"
import { hasOwnTarget, targetPrefix } from "./target.ts"

registerDescriber(describeJournalError)
registerDescriber((e) => (isFileCopyError(e) ? e.message : undefined))

// The default shown in help must be the connector's.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
const defaultAgrees: Same<typeof DEFAULT_CONCURRENCY, typeof COPY_DEFAULT_CONCURRENCY> = true
void defaultAgrees

/** The workspace connection of one end, built in the command's scope. */
const workspaceFilesOf = (
  layer: Layer.Layer<ClientServices>
) =>
  Effect.flatMap(Layer.build(layer), (ctx: Context.Context<ClientServices>) => Effect.provide(workspaceFilesFromServices, ctx))

const parseEnd = (flag: string, value: string): Effect.Effect<Endpoint, CliExit> =>
  Result.match(parseEndpoint(flag, value), {
    onFailure: (e) => Effect.fail(usageError(e.message)),
    onSuccess: Effect.succeed
  })

/**
 * The service's answer to listing the files of a workspace that does not exist (HTTP 422
 * NOT_FOUND, or 404 in the other reading, on list-files), found anywhere in the chain of
 * causes (paging wraps it).
 */
const unknownWorkspace = (error: unknown): { readonly message: string } | undefined => {
  let e: unknown = error
  for (let depth = 0; depth < 6 && typeof e === "object" && e !== null; depth++) {
    const f = e as { _tag?: unknown; code?: unknown; operation?: unknown; message?: unknown; cause?: unknown }
    if (isNotFound(f) && f.operation === "list-files") {
      return { message: String(f.message) }
    }
    e = f.cause
  }
  return undefined
}

export const copyFilesRun = (flags: CopyFilesFlags) =>
  Effect.scoped(
    Effect.gen(function*() {
      const verbosity = verbosityOf(flags)
      // Before the URL checks below: a broken config file explains a missing URL.
      yield* checkConfigFile
      const from = yield* parseEnd("--from", flags.from)
      const to = yield* parseEnd("--to", flags.to)
      const concurrency = Option.getOrElse(flags.concurrency, () => DEFAULT_CONCURRENCY)
      if (concurrency < 1) return yield* Effect.fail(usageError(`--concurrency ${concurrency}: must be at least 1`))
      if (from.kind === "dir") {
        const stat = fs.statSync(from.path, { throwIfNoEntry: false })
        if (stat === undefined || !stat.isDirectory()) {
          return yield* Effect.fail(usageError(`--from ${flags.from}: no such directory`))
        }
      }
      if (from.kind === "workspace" && (flags.include.length > 0 || flags.exclude.length > 0)) {
        return yield* Effect.fail(usageError("--include and --exclude apply to a dir: source only"))
      }

      const sourceFlags: ConnectionFlags = flags
      const targetOwn = hasOwnTarget(flags.to_)
      const target = targetFlags(sourceFlags, flags.to_)
      let source: WorkspaceFiles | undefined
      let targetFiles: WorkspaceFiles | undefined
      if (from.kind === "workspace") {
        yield* requireBaseUrl(sourceFlags, "base-url", "WORKSYNC_BASE_URL")
        source = yield* workspaceFilesOf(yield* clientLayerFromFlags(sourceFlags, { rest: true }))
      }
      if (to.kind === "workspace") {
        targetFiles = source !== undefined && !targetOwn
          // One account: one client, so both ends share its limiter.
          ? source
          : yield* workspaceFilesOf(
            yield* clientLayerFromFlags(target, { rest: true }, targetPrefix(flags.to_))
          )
      }

      const helper = isHelper()
      const journal = yield* openJournal(flags.journal, { helper }).pipe(
        Effect.catch((e) =>
          Effect.fail(e instanceof StoreBusy ? new CliExit({ code: ExitCode.failed, message: e.message }) : e)
        )
      )
      const run = <A>(effect: Effect.Effect<A>) => Effect.runSync(effect)
      const copy = { from, to, source, target: targetFiles, journal, concurrency, uploadStrategy: flags.uploadStrategy }
      if (helper) return yield* runCopyHelper("copy-files", copy, verbosity)

      const progress = yield* makeProgress({ label: "copy", unit: "bytes", verbosity })
      yield* logLine(verbosity, `copy-files: ${describeEndpoint(from)} -> ${describeEndpoint(to)}`, "detail")
      // A source listing that could not be verified complete: its files were copied, the
      // run still ends 1 (after its summary) so a rerun copies what it missed.
      let unverified: ListingUnverified | undefined
      const summary: CopySummary = yield* copyFiles({
        ...copy,
        filter: { include: flags.include, exclude: flags.exclude },
        reporter: {
          planned: (p) => {
            // The plan is stored: a worker may start helpers now.
            announcePlanned(p.toCopy)
            run(progress.setTotal(p.bytes))
            if (p.pendingSource.length > 0) {
              const names = p.pendingSource.slice(0, 5).join(", ") + (p.pendingSource.length > 5 ? ", ..." : "")
              run(progress.note(`copy-files: ${p.pendingSource.length} source file(s) still PENDING, not copied: ${names}`))
            }
            run(
              logLine(
                verbosity,
                `copy-files: ${p.files} file(s), ${p.files - p.toCopy} already copied, ${p.toCopy} to copy (${formatBytes(p.bytes)})`
              )
            )
          },
          bytes: (n) => run(progress.advance(n)),
          fileDone: (name, size, where) => run(progress.note(copiedLine(name, size, where, to.kind === "dir"))),
          fileFailed: (name, reason) => run(progress.note(`failed ${name}: ${reason}`)),
          fileDeleted: (name) => run(progress.note(`deleted at the source during the copy, not copied: ${name}`)),
          retrying: (name, reason) =>
            verbosity === "verbose" ? run(progress.note(`retrying ${name}: ${reason}`)) : undefined
        }
      }).pipe(
        Effect.catch((e) => {
          if (e instanceof ListingUnverified) {
            unverified = e
            return Effect.succeed(e.summary)
          }
          if (e instanceof CopySetupError) return Effect.fail(usageError(e.message))
          // Like backup and import-csv: a workspace that does not exist is a bad invocation.
          const unknown = from.kind === "workspace" ? unknownWorkspace(e) : undefined
          return Effect.fail(unknown !== undefined ? usageError(`--from ${flags.from}: ${unknown.message}`) : e)
        })
      )
      yield* progress.done()

      if (flags.json) {
        // The contract's keys, then the files deleted at the source meanwhile (not failed).
        yield* printJson({
          files: summary.files,
          copied: summary.copied,
          skipped: summary.skipped,
          failed: summary.failed,
          bytes: summary.bytes,
          deleted: summary.deleted
        })
      }
      const deleted = summary.deleted > 0 ? `, ${summary.deleted} deleted at the source meanwhile` : ""
      yield* logLine(
        verbosity,
        `copy-files: ${summary.files} file(s): ${summary.copied} copied (${formatBytes(summary.bytes)}), ${summary.skipped} already copied, ${summary.failed} failed${deleted}`
      )
      if (summary.stopped !== undefined) {
        return yield* Effect.fail(
          new CliExit({
            code: ExitCode.failed,
            message: `copy-files: stopped: ${summary.stopped.reason}; ${summary.stopped.notStarted} file(s) not started; rerun with the same --journal to resume`
          })
        )
      }
      if (unverified !== undefined) {
        return yield* Effect.fail(
          new CliExit({
            code: ExitCode.failed,
            message: `copy-files: ${unverified.describe("--journal")}`
          })
        )
      }
      if (summary.failed > 0) {
        const first = summary.failures[0]!
        return yield* Effect.fail(
          new CliExit({
            code: ExitCode.failed,
            message: `copy-files: ${summary.failed} of ${summary.files} file(s) failed (first: ${first.reason}); rerun with the same --journal to retry them`
          })
        )
      }
    })
  )
