/**
 * Benchmark: `restore --delete-missing` of RECORDS records (default 100,000) into a
 * workspace an earlier restore of the same run filled: every record is matched through
 * the journal and unchanged, and the EXTRA (default 1,000) records created on the target
 * since are deleted. Prints the measured restore's time and peak RSS; asserts nothing.
 *
 * The measured restore runs in a child process of its own (its peak RSS is its own),
 * against the emulator in another process. The setup (the source seeded, backed up and
 * restored once into a new workspace, then the extra records created there) takes
 * minutes at this size: it is kept in DIR (default <tmp>/ws-bench-restore-<RECORDS>x<EXTRA>)
 * and reused; each measurement works on a copy of it.
 *
 *   RECORDS=100000 EXTRA=1000 npm run bench -- restore
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import type { ConnectionInput } from "../../src/client/config.ts"
import { clientLayer } from "../../src/client/layer.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import { startEmulator } from "../../src/emulator/index.ts"
import { Journal } from "../../src/store/journal.ts"
import { resolveRun, SnapshotStore } from "../../src/store/snapshot.ts"
import { backup } from "../../src/sync/backup.ts"
import { restore } from "../../src/sync/restore.ts"
import { type EmulatorProcess, spawnEmulator } from "./_emulator-process.ts"

const RECORDS = Number(process.env.RECORDS ?? 100_000)
const EXTRA = Number(process.env.EXTRA ?? 1_000)
const DIR = process.env.DIR ?? path.join(os.tmpdir(), `ws-bench-restore-${RECORDS}x${EXTRA}`)
const self = fileURLToPath(import.meta.url)

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`

/** What the setup leaves besides its files. */
interface Setup {
  readonly source: string
  readonly target: string
}

/** A client held to a fixed pace, wide enough that the emulator bounds the run. */
const connection = (emu: Omit<EmulatorProcess, "stop">): ConnectionInput => ({
  restUrl: emu.restUrl,
  baseUrl: emu.baseUrl,
  token: emu.token,
  tokenId: emu.tokenId,
  tokenSecret: emu.tokenSecret,
  org: emu.org,
  limiter: { maxInFlight: 16, initialRps: 2_000, adaptive: false }
})

const files = (dir: string) => ({
  emulator: path.join(dir, "emulator.sqlite"),
  snapshot: path.join(dir, "snapshot.sqlite"),
  journal: path.join(dir, "journal.sqlite"),
  setup: path.join(dir, "setup.json")
})

/** Seeds, backs up and restores once, then adds the extra target records (see the top). */
const makeSetup = async (): Promise<Setup> => {
  fs.rmSync(DIR, { recursive: true, force: true })
  fs.mkdirSync(DIR, { recursive: true })
  const f = files(DIR)
  let t = performance.now()
  const seeded = await startEmulator({ seed: { workspaces: 1, recordsPerWorkspace: RECORDS }, dbFile: f.emulator })
  const source = seeded.workspaces[0]!
  const target = seeded.admin.createWorkspace({ name: "restored" }).id
  await seeded.close()
  console.log(`setup: seeded ${RECORDS} records in ${seconds(performance.now() - t)}`)

  const emu = await spawnEmulator(["--db", f.emulator])
  const layer = Layer.mergeAll(clientLayer(connection(emu)), SnapshotStore.layer(f.snapshot), Journal.layer(f.journal))
  await Effect.runPromise(Effect.gen(function*() {
    t = performance.now()
    const backedUp = yield* backup({ workspaces: [source], detailConcurrency: 16 })
    console.log(`setup: backup of ${backedUp.records} records in ${seconds(performance.now() - t)}`)
    t = performance.now()
    const store = yield* SnapshotStore
    const run = (yield* resolveRun(store, undefined))!
    const first = yield* restore(store, yield* RestClient, yield* Journal, { run, sourceWorkspaceId: source, targetWorkspaceId: target, concurrency: 16 })
    console.log(`setup: first restore, ${first.created} created, ${first.failed + first.unknown} failed, in ${seconds(performance.now() - t)}`)
    t = performance.now()
    const client = yield* RestClient
    const lists = yield* client.listLists({ workspaceId: target })
    yield* Effect.forEach(
      Array.from({ length: EXTRA }, (_, i) => i),
      (i) => client.createRecord({ workspaceId: target, listId: lists[0]!.id, title: `created on the target since ${i}` }),
      { concurrency: 16, discard: true }
    )
    console.log(`setup: ${EXTRA} records created on the target in ${seconds(performance.now() - t)}`)
  }).pipe(Effect.provide(layer)))
  await emu.stop()
  const setup = { source, target }
  fs.writeFileSync(f.setup, JSON.stringify(setup))
  return setup
}

if (process.argv[2] === "--child") {
  // The measured restore: the copy's files, the running emulator's connection.
  const dir = process.argv[3]!
  const emu = JSON.parse(process.argv[4]!) as Omit<EmulatorProcess, "stop">
  const setup = JSON.parse(process.argv[5]!) as Setup
  const f = files(dir)
  const started = performance.now()
  const result = await Effect.runPromise(Effect.gen(function*() {
    const store = yield* SnapshotStore
    const run = (yield* resolveRun(store, undefined))!
    return yield* restore(store, yield* RestClient, yield* Journal, {
      run,
      sourceWorkspaceId: setup.source,
      targetWorkspaceId: setup.target,
      deleteMissing: true,
      concurrency: 16
    })
  }).pipe(
    Effect.provide(Layer.mergeAll(clientLayer(connection(emu)), SnapshotStore.layer(f.snapshot, { mustExist: true }), Journal.layer(f.journal)))
  ))
  process.stdout.write(JSON.stringify({
    ms: Math.round(performance.now() - started),
    maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    records: result.records,
    unchanged: result.unchanged,
    deleted: result.deleted,
    planned: result.planned,
    failed: result.failed + result.unknown
  }) + "\n")
  process.exit(0)
} else {
  console.log(`machine: ${os.cpus().length} CPUs, load average ${os.loadavg().map((l) => l.toFixed(1)).join(" ")} at the start`)
  const f = files(DIR)
  const setup = fs.existsSync(f.setup) ? (JSON.parse(fs.readFileSync(f.setup, "utf8")) as Setup) : await makeSetup()
  const work = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-restore-run-"))
  for (const name of fs.readdirSync(DIR)) fs.cpSync(path.join(DIR, name), path.join(work, name), { recursive: true })
  const emu = await spawnEmulator(["--db", files(work).emulator])
  const { stop, ...conn } = emu
  const r = spawnSync(process.execPath, ["--import", "tsx", self, "--child", work, JSON.stringify(conn), JSON.stringify(setup)], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
    maxBuffer: 1 << 20
  })
  await stop()
  fs.rmSync(work, { recursive: true, force: true })
  if (r.status !== 0) {
    console.log(`the measured restore exited ${r.status}`)
    process.exit(1)
  }
  const m = JSON.parse(r.stdout.trim().split("\n").pop()!) as Record<string, unknown>
  console.log(
    `restore --delete-missing of ${RECORDS} records (all unchanged, matched through the journal) with ${EXTRA} target records to delete: ` +
      `${seconds(Number(m.ms))}, peak RSS ${m.maxRssMb} MB`
  )
  console.log(`  records ${m.records}, unchanged ${m.unchanged}, deleted ${m.deleted}, failed ${m.failed}; planned ${JSON.stringify(m.planned)}`)
}
