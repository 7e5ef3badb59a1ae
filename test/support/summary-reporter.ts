/**
 * Prints one plain closing line, `tests: N passed, N failed, N skipped`, after the
 * default reporter's summary, so any log reader can tell what ran.
 */
import type { Reporter, TestModule } from "vitest/node"

export default class SummaryReporter implements Reporter {
  onTestRunEnd(modules: ReadonlyArray<TestModule>, errors: ReadonlyArray<unknown>) {
    const totals = { passed: 0, failed: 0, skipped: 0 }
    for (const module of modules) {
      let tests = 0
      for (const test of module.children.allTests()) {
        tests++
        const state = test.result().state
        if (state === "passed") totals.passed++
        else if (state === "failed") totals.failed++
        else totals.skipped++
      }
      // A file that failed to load has no tests; count it as a failure.
      if (module.state() === "failed" && tests === 0) totals.failed++
    }
    totals.failed += errors.length
    process.stdout.write(`\ntests: ${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped\n`)
  }
}
