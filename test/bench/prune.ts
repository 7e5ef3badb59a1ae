/**
 * Benchmark: `worksync prune` of a year of daily backups: 365 complete runs of 10,000
 * records with 1% of them changed each day (a new version with its activity), and 500
 * files with 1% of them given new bytes each day. Policy --keep-daily 7 --keep-weekly 5
 * --keep-monthly 12 with --files. Prints the time, the bytes before and after (snapshot
 * and objects), and the peak RSS of the prune; asserts nothing.
 *
 *   npm run bench -- prune          (RUNS=90 RECORDS=5000 for a quicker run)
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { spawn } from "node:child_process"
import { openObjectStore } from "../../src/store/object-store.ts"
import { openSnapshot } from "../../src/store/snapshot.ts"
import { buildHistory } from "../support/snapshot-builder.ts"

const RUNS = Number(process.env.RUNS ?? 365)
const RECORDS = Number(process.env.RECORDS ?? 10_000)
const FILES = Number(process.env.FILES ?? 500)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-prune-"))

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`

/** Bytes of the files under `root` (or of the file `root`), in all. */
const du = (root: string): number => {
  const stat = fs.statSync(root, { throwIfNoEntry: false })
  if (stat === undefined) return 0
  if (stat.isFile()) return stat.size
  let n = 0
  for (const entry of fs.readdirSync(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) n += fs.statSync(path.join(entry.parentPath, entry.name)).size
  }
  return n
}
const sizes = (snapshot: string, files: string) => ({ snapshot: du(snapshot) + du(`${snapshot}-wal`), objects: du(path.join(files, "objects")) })

/** `worksync ARGS` with its wall time and peak RSS (from /usr/bin/time when present). */
const timed = (args: ReadonlyArray<string>) =>
  new Promise<{ code: number | null; ms: number; maxRssKb: number | null; stdout: string; stderr: string }>((resolve) => {
    const timeBin = fs.existsSync("/usr/bin/time") ? "/usr/bin/time" : null
    const argv = timeBin ? ["-f", "maxrss_kb=%M", process.execPath, "bin/worksync.js", ...args] : ["bin/worksync.js", ...args]
    const t0 = performance.now()
    const child = spawn(timeBin ?? process.execPath, argv, { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d) => (stdout += d))
    child.stderr.on("data", (d) => (stderr += d))
    child.on("close", (code) => {
      const m = /maxrss_kb=(\d+)/.exec(stderr)
      resolve({ code, ms: performance.now() - t0, maxRssKb: m ? Number(m[1]) : null, stdout, stderr })
    })
  })

const main = async () => {
  const snapshot = path.join(dir, "year.sqlite")
  const files = path.join(dir, "files")
  const t0 = performance.now()
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const store = yield* openSnapshot(snapshot)
    const objects = yield* openObjectStore(files)
    yield* buildHistory(store, {
      runs: RUNS,
      records: RECORDS,
      changedPerRun: Math.round(RECORDS / 100),
      files: FILES,
      changedFilesPerRun: Math.max(1, Math.round(FILES / 100)),
      objects
    })
  })))
  console.log(`built ${RUNS} daily runs of ${RECORDS} records (1% changed a day), ${FILES} files, in ${((performance.now() - t0) / 1000).toFixed(1)} s`)

  const before = sizes(snapshot, files)
  const rules = ["--keep-daily", "7", "--keep-weekly", "5", "--keep-monthly", "12"]
  const dry = await timed(["prune", "--snapshot", snapshot, "--files", files, ...rules, "--dry-run", "--json", "-q"])
  if (dry.code !== 0) throw new Error(`prune --dry-run exited ${dry.code}: ${dry.stderr}`)
  const plan = JSON.parse(dry.stdout) as { forgotten: number; kept: number }
  console.log(`dry run: ${(dry.ms / 1000).toFixed(2)} s, would forget ${plan.forgotten}, keep ${plan.kept}`)

  const r = await timed(["prune", "--snapshot", snapshot, "--files", files, ...rules, "--json", "-q"])
  if (r.code !== 0) throw new Error(`prune exited ${r.code}: ${r.stderr}`)
  const out = JSON.parse(r.stdout) as { forgotten: number; kept: number; bytesBefore: number; bytesAfter: number }
  console.log(
    `prune: ${(r.ms / 1000).toFixed(2)} s, forgot ${out.forgotten} runs, kept ${out.kept}; ` +
      `${mb(out.bytesBefore)} -> ${mb(out.bytesAfter)} (snapshot and objects); ` +
      `peak RSS ${r.maxRssKb === null ? "n/a" : `${(r.maxRssKb / 1024).toFixed(0)} MB`}`
  )
  const after = sizes(snapshot, files)
  console.log(`snapshot file ${mb(before.snapshot)} -> ${mb(after.snapshot)}; objects ${mb(before.objects)} -> ${mb(after.objects)}`)
  fs.rmSync(dir, { recursive: true, force: true })
}

main().catch((e) => {
  console.error(e)
  fs.rmSync(dir, { recursive: true, force: true })
  process.exit(1)
})
