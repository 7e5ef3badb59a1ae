/**
 * Prints one plain closing line, `tests: N passed, N failed, N skipped`, after the
 * default reporter's summary, so any log reader can tell what ran.
 */
import type { Reporter } from "vitest/reporters"

interface TaskLike {
  readonly type: string
  readonly mode?: string
  readonly result?: { readonly state?: string }
  readonly tasks?: ReadonlyArray<TaskLike>
}

const count = (tasks: ReadonlyArray<TaskLike>, totals: { passed: number; failed: number; skipped: number }) => {
  for (const task of tasks) {
    if (task.tasks) count(task.tasks, totals)
    if (task.type !== "test") continue
    const state = task.result?.state
    if (state === "pass") totals.passed++
    else if (state === "fail") totals.failed++
    else totals.skipped++
  }
}

export default class SummaryReporter implements Reporter {
  onFinished(files: ReadonlyArray<TaskLike> = [], errors: ReadonlyArray<unknown> = []) {
    const totals = { passed: 0, failed: 0, skipped: 0 }
    count(files, totals)
    // A file that failed to load has no tests; count it as a failure.
    for (const file of files) if (file.result?.state === "fail" && !(file.tasks ?? []).length) totals.failed++
    totals.failed += errors.length
    process.stdout.write(`\ntests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`)
  }
}
