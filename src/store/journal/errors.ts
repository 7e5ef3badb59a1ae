/** The journal's errors: the file failed, or a transition does not apply. */
import * as Data from "effect/Data"
import type { OpState } from "./types.ts"

export class JournalError extends Data.TaggedError("JournalError")<{
  readonly file: string
  readonly operation: string
  readonly detail: string
}> {
  override get message(): string {
    return `journal ${this.file}: ${this.operation} failed: ${this.detail}`
  }
}

/** A state transition that does not apply (e.g. claiming an op that is not pending). */
export class JournalStateError extends Data.TaggedError("JournalStateError")<{
  readonly key: string
  readonly expected: string
  readonly actual: OpState | "missing"
}> {
  override get message(): string {
    return `journal op ${this.key}: expected ${this.expected}, found ${this.actual}`
  }
}
