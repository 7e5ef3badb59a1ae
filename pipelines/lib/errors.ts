/**
 * How a pipeline ends when it does not simply succeed. Each carries the one line a cron
 * mail or a systemd journal shows; `main.ts` maps them to exit codes.
 */
import * as Data from "effect/Data"

/** The invocation is wrong (missing variable, bad flag): exit 64. */
export class PipelineUsage extends Data.TaggedError("PipelineUsage")<{ readonly message: string }> {}

/** Something did not finish (a file failed, the backup failed): exit 1; a rerun resumes. */
export class PipelineIncomplete extends Data.TaggedError("PipelineIncomplete")<{ readonly message: string }> {}

/** Finished, but input rows were rejected (see the rejects file): exit 2. */
export class PipelineRejected extends Data.TaggedError("PipelineRejected")<{ readonly message: string }> {}

export type PipelineError = PipelineUsage | PipelineIncomplete | PipelineRejected

/** A failure's own message (tagged errors define one), without a stack. */
export const messageOf = (e: unknown): string => {
  if (typeof e === "object" && e !== null && "message" in e) {
    const m = String((e as { message: unknown }).message)
    if (m !== "") return m
  }
  if (typeof e === "object" && e !== null && "_tag" in e) return String((e as { _tag: unknown })._tag)
  return String(e)
}
