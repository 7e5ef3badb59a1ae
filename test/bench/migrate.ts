/**
 * Benchmark: `worksync migrate` of a whole workspace into another organization, against
 * the sum of the commands it stands for run one after another (backup, restore of the
 * records, copy-files), and a rerun of the migrate with the same journal. Every request
 * waits 20 ms, so round trips show the way they would against the real service.
 *
 * The source: RECORDS records across 5 lists, COMMENTS comments (a tenth of them replies,
 * one in 25 with an attached file), FILES files of log-uniform sizes from 1 KB to MAXBYTES,
 * a FILE custom field holding a file on some records. Each measured command runs as its
 * own process into a fresh target workspace; the table gives wall time, requests seen by
 * the emulator, and the child's peak RSS. Prints figures; asserts nothing (a command that
 * fails stops the benchmark with its stderr).
 *
 *   npm run bench -- migrate     (RECORDS=500 COMMENTS=200 FILES=50 for a quick run; MAXBYTES to shrink files)
 */
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { GraphqlClient, type UploadedFile } from "../../src/client/graphql-client.ts"
import { clientLayer } from "../../src/client/layer.ts"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { cleanEnv, connectionEnv } from "../support/cli.ts"

const RECORDS = Number(process.env.RECORDS ?? 5000)
const COMMENTS = Number(process.env.COMMENTS ?? 2000)
const FILES = Number(process.env.FILES ?? 500)
const MINBYTES = 1024
const MAXBYTES = Number(process.env.MAXBYTES ?? 5 * 1024 * 1024)
const LISTS = 5
const LATENCY_MS = 20
/** Seeding runs through the service too; enough calls at once that 20 ms each does not add up. */
const SEED_CONCURRENCY = 32
const FIELD = "Attachments"

const BIN = new URL("../../bin/worksync.js", import.meta.url).pathname
const TIME_BIN = fs.existsSync("/usr/bin/time") ? "/usr/bin/time" : null
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-migrate-"))

/** A small deterministic PRNG, so two runs of the benchmark move the same bytes. */
const prng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/** Runs `f` over `items` with at most `n` at once; the first failure rejects. */
const pool = async <T>(items: ReadonlyArray<T>, n: number, f: (item: T, i: number) => Promise<void>) => {
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++
        await f(items[i]!, i)
      }
    })
  )
}

const rpc = async (emu: EmulatorHandle, token: string, org: string, op: string, body: Record<string, unknown>): Promise<any> => {
  const res = await fetch(`${emu.restUrl}/v1/${op}`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "svc-org-id": org },
    body: JSON.stringify(body)
  })
  if (res.status >= 300) throw new Error(`${op}: ${res.status} ${await res.text()}`)
  return res.json()
}

const graphql = <A, E>(emu: EmulatorHandle, f: (g: typeof GraphqlClient.Service) => Effect.Effect<A, E>) =>
  Effect.runPromise(
    Effect.flatMap(GraphqlClient, f).pipe(
      Effect.provide(
        clientLayer({
          restUrl: emu.restUrl,
          baseUrl: emu.baseUrl,
          token: emu.token,
          tokenId: emu.tokenId,
          tokenSecret: emu.tokenSecret,
          org: emu.org,
          requestTimeoutMs: 60_000,
          limiter: { maxInFlight: SEED_CONCURRENCY, initialRps: 10_000, adaptive: false }
        })
      )
    ) as Effect.Effect<A, never>
  )

/** Log-uniform sizes: as many small files as large ones per factor of size, as real workspaces hold. */
const fileSizes = () => {
  const rnd = prng(42)
  return Array.from({ length: FILES }, () => Math.round(Math.exp(Math.log(MINBYTES) + rnd() * Math.log(MAXBYTES / MINBYTES))))
}

interface Source {
  readonly ws: string
  readonly bytes: number
}

const seedSource = async (emu: EmulatorHandle): Promise<Source> => {
  const ws = emu.workspaces[0]!
  const listIds = (emu.ctx.db.prepare("SELECT id FROM lists WHERE workspace_id = ? ORDER BY position, id").pluck().all(ws) as Array<string>)
  for (let l = listIds.length; l < LISTS; l++) {
    listIds.push((await rpc(emu, emu.token, emu.org, "create-list", { workspaceId: ws, title: `List ${l + 1}` })).id)
  }
  const recordIds: Array<string> = new Array(RECORDS)
  const rnd = prng(7)
  await pool(Array.from({ length: RECORDS }, (_, i) => i), SEED_CONCURRENCY, async (i) => {
    const extra: Record<string, unknown> = {}
    if (i % 3 === 0) extra.descriptionHtml = `<p>Record ${i}: ${"some words of description ".repeat(1 + Math.floor(rnd() * 8))}</p>`
    if (i % 4 === 0) extra.duedAt = new Date(Date.UTC(2026, 0, 1 + (i % 365))).toISOString().slice(0, 10)
    const r = await rpc(emu, emu.token, emu.org, "create-record", { workspaceId: ws, title: `Record ${i}`, listId: listIds[i % LISTS], ...extra })
    recordIds[i] = r.id
  })

  // Files through the multipart upload, each a slice of one random block with its index
  // written first, so no two are alike.
  const sizes = fileSizes()
  const block = Buffer.alloc(MAXBYTES)
  const fill = prng(99)
  for (let i = 0; i + 4 <= block.length; i += 4) block.writeUInt32LE(Math.floor(fill() * 4294967296), i)
  const uploaded: Array<UploadedFile> = new Array(FILES)
  await pool(sizes, 8, async (size, i) => {
    const bytes = Buffer.from(block.subarray(0, size))
    bytes.write(`file ${i}\n`, 0)
    uploaded[i] = await graphql(emu, (g) =>
      g.uploadFile({ projectId: ws, file: { name: `file-${String(i).padStart(4, "0")}.bin`, contentType: "application/octet-stream", size, body: { _tag: "Bytes", bytes } } })
    )
  })

  // A FILE custom field holding every tenth file, each on a record of its own.
  const field = await rpc(emu, emu.token, emu.org, "create-custom-field", { workspaceId: ws, name: FIELD, type: "FILE" })
  const fieldId: string = field.id ?? field.customField?.id
  await pool(uploaded.filter((_, i) => i % 10 === 0), SEED_CONCURRENCY, async (file, i) => {
    await graphql(emu, (g) => g.createRecordCustomFieldFile({ todoId: recordIds[(i * 37) % RECORDS]!, customFieldId: fieldId, fileUid: file.uid }))
  })

  // Comments: top-level ones first, then the replies (every tenth comment) to the one before.
  const commentIds: Array<string> = new Array(COMMENTS)
  const recordOf = (i: number) => recordIds[(i * 7919) % RECORDS]!
  const isReply = (i: number) => i % 10 === 9
  const comment = async (i: number) => {
    const parentId = isReply(i) ? commentIds[i - 1] : undefined
    const attachments = i % 25 === 0 && FILES > 0 ? [uploaded[i % FILES]!] : undefined
    const c = await graphql(emu, (g) =>
      g.createComment({
        html: `<p>Comment ${i} on this record</p>`,
        text: `Comment ${i} on this record`,
        category: "TODO",
        categoryId: isReply(i) ? recordOf(i - 1) : recordOf(i),
        ...(parentId === undefined ? {} : { parentId }),
        ...(attachments === undefined ? {} : { attachments })
      })
    )
    commentIds[i] = c.id
  }
  const all = Array.from({ length: COMMENTS }, (_, i) => i)
  await pool(all.filter((i) => !isReply(i)), SEED_CONCURRENCY, comment)
  await pool(all.filter(isReply), SEED_CONCURRENCY, comment)
  return { ws, bytes: sizes.reduce((a, b) => a + b, 0) }
}

interface Target {
  readonly org: string
  readonly owner: { readonly token: string; readonly tokenId: string; readonly tokenSecret: string }
}

const seedTarget = (emu: EmulatorHandle): Target => {
  const org = emu.admin.createOrganization({ name: "Target", slug: "bench-target" })
  const owner = emu.admin.createUser({ email: "owner@target.example", firstName: "Tara", lastName: "Owner", orgLevel: "OWNER", orgId: org })
  return { org, owner }
}

/** A fresh target workspace with the FILE field of the same name (no operation creates one). */
const targetWorkspace = async (emu: EmulatorHandle, t: Target, name: string) => {
  const ws = emu.admin.createWorkspace({ name, orgId: t.org }).id
  await rpc(emu, t.owner.token, t.org, "create-custom-field", { workspaceId: ws, name: FIELD, type: "FILE" })
  return ws
}

interface Run {
  readonly label: string
  readonly ms: number
  readonly requests: number
  readonly byRoute: Readonly<Record<string, number>>
  readonly rssKb: number | null
  readonly stdout: string
  /** Each stderr line with the milliseconds since the start at which it arrived. */
  readonly lines: ReadonlyArray<{ readonly at: number; readonly text: string }>
}

/**
 * Runs the CLI as a child (under /usr/bin/time for its peak RSS) and counts the requests
 * the emulator saw meanwhile. The child is asynchronous: the emulator answers from this
 * process's event loop.
 */
const runCli = (emu: EmulatorHandle, t: Target, label: string, args: ReadonlyArray<string>): Promise<Run> =>
  new Promise((resolve, reject) => {
    // Only the connection given here: no settings of the calling shell leak in.
    const env: NodeJS.ProcessEnv = {
      ...cleanEnv(),
      ...connectionEnv(emu, { app: true }),
      WORKSYNC_TARGET_TOKEN: t.owner.token,
      WORKSYNC_TARGET_TOKEN_ID: t.owner.tokenId,
      WORKSYNC_TARGET_TOKEN_SECRET: t.owner.tokenSecret,
      WORKSYNC_TARGET_ORG: t.org
    }
    const argv = [BIN, ...args]
    emu.resetStats()
    const t0 = performance.now()
    // The temp dir as working directory, so no config file of the caller's is read.
    const child = TIME_BIN === null
      ? spawn(process.execPath, argv, { env, cwd: dir, stdio: ["ignore", "pipe", "pipe"] })
      : spawn(TIME_BIN, ["-f", "maxrss_kb=%M", process.execPath, ...argv], { env, cwd: dir, stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let pending = ""
    const lines: Array<{ at: number; text: string }> = []
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr.setEncoding("utf8").on("data", (d: string) => {
      const at = performance.now() - t0
      pending += d
      const parts = pending.split("\n")
      pending = parts.pop()!
      for (const text of parts) lines.push({ at, text })
    })
    child.on("error", reject)
    child.on("close", (code, signal) => {
      const ms = performance.now() - t0
      if (pending !== "") lines.push({ at: ms, text: pending })
      const stats = emu.stats()
      const rss = lines.find((l) => /^maxrss_kb=\d+$/.test(l.text))
      const own = lines.filter((l) => l !== rss)
      if (code !== 0) {
        const stderr = own.map((l) => l.text).join("\n")
        return reject(new Error(`${label}: worksync ${args.join(" ")} exited ${code ?? signal}\n${stderr}\n${stdout}`))
      }
      resolve({
        label,
        ms,
        requests: stats.total,
        byRoute: stats.byRoute,
        rssKb: rss === undefined ? null : Number(rss.text.slice("maxrss_kb=".length)),
        stdout,
        lines: own
      })
    })
  })

/** Milliseconds between the migrate's step line starting with `from` and the next step line. */
const phaseMs = (run: Run, from: string): number | null => {
  const steps = run.lines.filter((l) => l.text.startsWith("migrate: "))
  const i = steps.findIndex((l) => l.text.startsWith(`migrate: ${from}`))
  if (i < 0 || i + 1 >= steps.length) return null
  return steps[i + 1]!.at - steps[i]!.at
}

/** Seconds of each step the migrate announced, the last one up to the process's exit. */
const phases = (run: Run): string => {
  const steps = run.lines.filter((l) => l.text.startsWith("migrate: ") && !l.text.includes("(") && !l.text.includes(";"))
  return steps
    .map((l, i) => `${l.text.slice("migrate: ".length).replace(/:.*$/, "").replace(/ workspace .*$/, "")} ${(((steps[i + 1]?.at ?? run.ms) - l.at) / 1000).toFixed(1)} s`)
    .join(", ")
}

const mb = (bytes: number) => bytes / 1024 / 1024
const pad = (s: string, n: number) => s.padEnd(n)
const lpad = (s: string, n: number) => s.padStart(n)

const main = async () => {
  const emu = await startEmulator({ seed: "empty", faults: { latencyMs: LATENCY_MS } })
  try {
    const s0 = performance.now()
    const source = await seedSource(emu)
    const target = seedTarget(emu)
    console.log(
      `source: ${RECORDS} records in ${LISTS} lists, ${COMMENTS} comments, ${FILES} files (${mb(source.bytes).toFixed(0)} MB, ` +
        `${(MINBYTES / 1024).toFixed(0)} KB to ${mb(MAXBYTES).toFixed(1)} MB log-uniform); ${LATENCY_MS} ms latency per request; ` +
        `seeded in ${((performance.now() - s0) / 1000).toFixed(1)} s (not measured)`
    )
    const j1 = path.join(dir, "j1.sqlite")
    const migrateArgs = (ws: string) => ["migrate", "--from", `workspace:${source.ws}`, "--to", `workspace:${ws}`, "--journal", j1, "--json", "--people", "skip", "-v"]

    // 1. The migrate.
    const t1 = await targetWorkspace(emu, target, "migrate target")
    const migrate = await runCli(emu, target, "migrate", migrateArgs(t1))
    const report = JSON.parse(migrate.stdout)

    // 2. Its parts, one after another, into a workspace of their own.
    const t2 = await targetWorkspace(emu, target, "parts target")
    const snapshot = path.join(dir, "b.sqlite")
    const backup = await runCli(emu, target, "  backup", ["backup", "--snapshot", snapshot, "--workspace", source.ws, "--json"])
    const restore = await runCli(emu, target, "  restore (records)", ["restore", "--snapshot", snapshot, "--to", `workspace:${t2}`, "--journal", path.join(dir, "r.sqlite"), "--json"])
    const copy = await runCli(emu, target, "  copy-files", ["copy-files", "--from", `workspace:${source.ws}`, "--to", `workspace:${t2}`, "--journal", path.join(dir, "c.sqlite"), "--json"])
    const parts = [backup, restore, copy]
    const sum = {
      ms: parts.reduce((n, p) => n + p.ms, 0),
      requests: parts.reduce((n, p) => n + p.requests, 0),
      // The parts run one after another: the most any of them held.
      rssKb: parts.some((p) => p.rssKb === null) ? null : Math.max(...parts.map((p) => p.rssKb!))
    }

    // 3. The migrate again with the same journal.
    const rerun = await runCli(emu, target, "migrate rerun", migrateArgs(t1))
    const again = JSON.parse(rerun.stdout)

    const rows: Array<[string, number, number, number | null]> = [
      ["migrate", migrate.ms, migrate.requests, migrate.rssKb],
      ...parts.map((p): [string, number, number, number | null] => [p.label, p.ms, p.requests, p.rssKb]),
      ["sum of the parts", sum.ms, sum.requests, sum.rssKb],
      ["migrate rerun", rerun.ms, rerun.requests, rerun.rssKb]
    ]
    console.log(`${pad("", 20)}${lpad("wall s", 9)}${lpad("requests", 10)}${lpad("req/record", 12)}${lpad("peak RSS MB", 13)}`)
    for (const [label, ms, requests, rssKb] of rows) {
      console.log(
        `${pad(label, 20)}${lpad((ms / 1000).toFixed(1), 9)}${lpad(String(requests), 10)}${lpad((requests / RECORDS).toFixed(2), 12)}` +
          `${lpad(rssKb === null ? "n/a" : (rssKb / 1024).toFixed(0), 13)}`
      )
    }
    console.log(`migrate / sum of the parts: ${(migrate.ms / sum.ms).toFixed(2)}x wall time, ${(migrate.requests / sum.requests).toFixed(2)}x requests`)

    const secs = migrate.ms / 1000
    const comments = phaseMs(migrate, "comments")
    const files = phaseMs(migrate, "files")
    console.log(
      `migrate rates over its whole run: ${(COMMENTS / secs).toFixed(0)} comments/s, ${(mb(source.bytes) / secs).toFixed(1)} MB/s of files` +
        (comments === null ? "" : `; comments phase alone: ${(COMMENTS / (comments / 1000)).toFixed(0)} comments/s (${(comments / 1000).toFixed(1)} s, file values included)`) +
        (files === null ? "" : `; files phase alone: ${(mb(source.bytes) / (files / 1000)).toFixed(1)} MB/s (${(files / 1000).toFixed(1)} s)`)
    )
    console.log(`copy-files alone: ${(mb(source.bytes) / (copy.ms / 1000)).toFixed(1)} MB/s`)
    console.log(`migrate phases: ${phases(migrate)}`)
    console.log(`rerun phases: ${phases(rerun)}`)
    const top = (r: Run) => {
      // One row per kind of request: download and storage paths carry a file's uid and name.
      const grouped = new Map<string, number>()
      for (const [route, n] of Object.entries(r.byRoute)) {
        const kind = route.startsWith("storage:") ? "storage" : route.replace(/^(\/(?:rest\/)?uploads)\/.*/, "$1/*")
        grouped.set(kind, (grouped.get(kind) ?? 0) + n)
      }
      return [...grouped].sort((a, b) => b[1] - a[1]).slice(0, 7).map(([k, v]) => `${k} ${v}`).join(", ")
    }
    console.log(`migrate requests by route (top): ${top(migrate)}`)
    console.log(`parts requests by route (top): ${parts.map((p) => `${p.label.trim()}: ${top(p)}`).join("; ")}`)
    console.log(`rerun requests by route: ${top(rerun) || "none"}`)
    const counts = (r: any) =>
      ["records", "comments", "files", "customFieldFiles"].map((k) => `${k} ${JSON.stringify(r[k])}`).join("; ")
    console.log(`migrate report: verified ${report.verified}; ${counts(report)}`)
    console.log(`rerun report: verified ${again.verified}; ${counts(again)}`)
  } finally {
    await emu.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  fs.rmSync(dir, { recursive: true, force: true })
  process.exit(1)
})
