/**
 * Benchmark: diff of two runs of 1,000,000 records with 1% changed, inside SQLite.
 * Targets: <= 5 s and <= 300 MB peak RSS. The diff runs in a fresh child process so
 * its peak RSS is its own. Prints figures; asserts nothing.
 *
 *   npx tsx test/bench/diff.ts [records=1000000]
 */
import { execFileSync } from "node:child_process"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { openSnapshot } from "../../src/store/snapshot.ts"
import { diffRuns, selectRuns } from "../../src/sync/diff.ts"
import { fillSnapshot } from "./diff-fill.ts"

const self = fileURLToPath(import.meta.url)

if (process.argv[2] === "--child") {
  const file = process.argv[3]!
  const started = performance.now()
  const result = await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function*() {
        const store = yield* openSnapshot(file, { mustExist: true })
        const sel = yield* selectRuns(store, {})
        return yield* diffRuns(store, sel!.from?.id, sel!.to.id)
      })
    )
  )
  const ms = performance.now() - started
  // The contract output is printed by the CLI; serialize it here too so its cost counts.
  const json = JSON.stringify(result)
  process.stdout.write(JSON.stringify({
    ms: Math.round(performance.now() - started),
    queryMs: Math.round(ms),
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    created: result.records.created.length,
    updated: result.records.updated.length,
    deleted: result.records.deleted.length,
    jsonBytes: json.length
  }) + "\n")
} else {
  const n = Number(process.argv[2] ?? 1_000_000)
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-diff-"))
  const file = path.join(dir, "snapshot.sqlite")
  const t0 = performance.now()
  const filled = fillSnapshot(file, n, 0.01)
  console.log(`filled ${n} records x 2 runs in ${((performance.now() - t0) / 1000).toFixed(1)} s; file ${(fs.statSync(file).size / 1e6).toFixed(0)} MB; expected ${JSON.stringify(filled.expected)}`)
  const out = execFileSync(process.execPath, ["--import", "tsx", self, "--child", file], { encoding: "utf8" })
  const r = JSON.parse(out) as Record<string, number>
  console.log(`diff of ${n} records, 1% changed: ${(r.ms! / 1000).toFixed(2)} s (target <= 5 s), peak RSS ${r.maxRssMb} MB (target <= 300 MB)`)
  console.log(`  created ${r.created}, updated ${r.updated}, deleted ${r.deleted}; JSON ${r.jsonBytes} bytes`)
  const ok = r.created === filled.expected.created && r.updated === filled.expected.updated && r.deleted === filled.expected.deleted
  console.log(`  counts match the filled changes: ${ok}`)
  fs.rmSync(dir, { recursive: true, force: true })
}
