/**
 * `--notify URL` (the contract's "Notifications") and the honest exit status of backup,
 * through the real binary: a monitor in the test (a local HTTP server) receives
 * URL/start, URL on success and URL/fail with the one-line summary; no secret reaches it;
 * a monitor that refuses or fails is a warning, never a failed run; a backup that
 * skipped a record exits 1 and names it.
 */
import { expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as path from "node:path"
import { spawn } from "node:child_process"
import { cleanEnv, connectionEnv } from "../support/cli.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { cli, WorkDir, workDirLayer } from "./cli-effect.ts"

interface Ping {
  readonly method: string
  readonly path: string
  readonly body: string
  readonly headers: http.IncomingHttpHeaders
}

/** A monitor that records every request and answers `status` (default 200 OK). */
interface Monitor {
  readonly url: string
  readonly pings: Array<Ping>
  status: number
}
class MonitorService extends Context.Service<MonitorService, Monitor>()("test/cli/Monitor") {}

const monitorLayer = Layer.effect(
  MonitorService,
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ monitor: Monitor; server: http.Server }>((resolve) => {
        const pings: Array<Ping> = []
        const monitor: Monitor = { url: "", pings, status: 200 }
        const server = http.createServer((req, res) => {
          let body = ""
          req.setEncoding("utf8").on("data", (d: string) => (body += d)).on("end", () => {
            pings.push({ method: req.method ?? "", path: req.url ?? "", body, headers: req.headers })
            res.writeHead(monitor.status, { "content-type": "text/plain" }).end(monitor.status === 200 ? "OK" : "error")
          })
        })
        server.listen(0, "127.0.0.1", () => {
          ;(monitor as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
          resolve({ monitor, server })
        })
      })
    ),
    ({ server }) => Effect.promise(() => new Promise<void>((resolve) => server.close(() => resolve())))
  ).pipe(Effect.map(({ monitor }) => monitor))
)

/** The pings of one check (its path prefix), forgotten once read; the monitor answers 200 again. */
const pingsOf = (monitor: Monitor, prefix: string) => {
  const mine = monitor.pings.filter((p) => p.path.startsWith(prefix))
  monitor.pings.splice(0, monitor.pings.length, ...monitor.pings.filter((p) => !p.path.startsWith(prefix)))
  monitor.status = 200
  return mine
}

/** A port with nothing listening: bound, then closed. */
const closedPort = () =>
  Effect.promise(() =>
    new Promise<number>((resolve) => {
      const s = http.createServer()
      s.listen(0, "127.0.0.1", () => {
        const port = (s.address() as AddressInfo).port
        s.close(() => resolve(port))
      })
    })
  )

/** Each test runs the CLI several times; a loaded machine may need a while (no assertion is on time). */
const TEST_TIMEOUT = 180_000

layer(Layer.mergeAll(emulatorLayer({ seed: "demo" }), workDirLayer("ws-cli-notify-"), monitorLayer), {
  timeout: 60_000,
  excludeTestServices: true
})("--notify and honest exit codes", (it) => {
  it.effect("backup pings URL/start then URL with its summary; verify and prune do the same", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* WorkDir
      const monitor = yield* MonitorService
      const snapshot = path.join(dir, "ok.sqlite")
      const r = yield* cli(["backup", "--snapshot", snapshot, "--json", "--notify", `${monitor.url}/ping/ok-check`], { env: connectionEnv(emu) })
      expect(r.code).toBe(0)
      const pings = pingsOf(monitor, "/ping/ok-check")
      expect(pings.map((p) => `${p.method} ${p.path}`)).toEqual(["POST /ping/ok-check/start", "POST /ping/ok-check"])
      expect(pings[1]!.body).toMatch(/^backup: run 1 complete: 2 workspaces/)
      for (const p of pings) {
        expect(p.headers.authorization).toBeUndefined()
        expect(p.body).not.toContain(emu.token)
      }

      const v = yield* cli(["verify", "--snapshot", snapshot, "--notify", `${monitor.url}/ping/verify-check/`])
      expect(v.code).toBe(0)
      const verifyPings = pingsOf(monitor, "/ping/verify-check")
      expect(verifyPings.map((p) => p.path)).toEqual(["/ping/verify-check/start", "/ping/verify-check/"])
      expect(verifyPings[1]!.body).toMatch(/^verify: run 1: every check holds/)

      const p = yield* cli(["prune", "--snapshot", snapshot, "--keep-last", "1", "--notify", `${monitor.url}/ping/prune-check`])
      expect(p.code).toBe(0)
      const prunePings = pingsOf(monitor, "/ping/prune-check")
      expect(prunePings.map((x) => x.path)).toEqual(["/ping/prune-check/start", "/ping/prune-check"])
      expect(prunePings[1]!.body).toMatch(/^prune: forgot 0 runs, kept 1/)
    }), TEST_TIMEOUT)

  it.effect("a failed backup pings URL/fail with the one line printed on stderr, and no token", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* WorkDir
      const monitor = yield* MonitorService
      const token = "pat_refused-token-that-must-not-leave-0123456789"
      const r = yield* cli(["backup", "--snapshot", path.join(dir, "refused.sqlite"), "--notify", `${monitor.url}/ping/refused`], {
        env: { ...connectionEnv(emu), WORKSYNC_TOKEN: token }
      })
      expect(r.code).toBe(1)
      const pings = pingsOf(monitor, "/ping/refused")
      expect(pings.map((p) => p.path)).toEqual(["/ping/refused/start", "/ping/refused/fail"])
      const line = r.stderr.trim().split("\n").find((l) => l.startsWith("worksync: backup failed"))!
      expect(pings[1]!.body).toBe(line.slice("worksync: ".length))
      expect(pings[1]!.body).toMatch(/HTTP 401/)
      for (const p of pings) expect(p.body).not.toContain(token)
    }), TEST_TIMEOUT)

  it.effect("the summary of a failure that quotes a secret is redacted before it is sent", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* WorkDir
      const monitor = yield* MonitorService
      // A scheduler's variables mixed up: the token given where a workspace is expected.
      const r = yield* cli(
        ["backup", "--snapshot", path.join(dir, "mixup.sqlite"), "--workspace", emu.token, "--notify", `${monitor.url}/ping/mixup`],
        { env: connectionEnv(emu) }
      )
      expect(r.code).toBe(64)
      const pings = pingsOf(monitor, "/ping/mixup")
      expect(pings.map((p) => p.path)).toEqual(["/ping/mixup/start", "/ping/mixup/fail"])
      expect(pings[1]!.body).toMatch(/^--workspace <redacted>: workspace <redacted> not found/)
      expect(pings[1]!.body).not.toContain(emu.token)
    }), TEST_TIMEOUT)

  it.effect("a monitor that refuses, fails or answers 500 is a warning: the run's exit code and output are unchanged", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* WorkDir
      const monitor = yield* MonitorService
      const snapshot = path.join(dir, "warn.sqlite")
      const port = yield* closedPort()
      const refused = yield* cli(["backup", "--snapshot", snapshot, "--json", "--notify", `http://127.0.0.1:${port}/ping`], { env: connectionEnv(emu) })
      expect(refused.code).toBe(0)
      expect(JSON.parse(refused.stdout)).toMatchObject({ runId: "1" })
      expect(refused.stderr).toMatch(/warning: the start notification to 127\.0\.0\.1:\d+ was not delivered \(ECONNREFUSED\)/)
      expect(refused.stderr).toMatch(/warning: the success notification to 127\.0\.0\.1:\d+ was not delivered/)

      monitor.status = 500
      const failing = yield* cli(["backup", "--snapshot", snapshot, "--json", "--notify", `${monitor.url}/ping/five-hundred`], {
        env: connectionEnv(emu)
      })
      expect(failing.code).toBe(0)
      expect(JSON.parse(failing.stdout)).toMatchObject({ runId: "2" })
      expect(failing.stderr).toMatch(/warning: the success notification to 127\.0\.0\.1:\d+ was not delivered \(HTTP 500\)/)
      expect(pingsOf(monitor, "/ping/five-hundred").map((p) => p.path)).toEqual(["/ping/five-hundred/start", "/ping/five-hundred"])
    }), TEST_TIMEOUT)

  it.effect("the URL comes from WORKSYNC_NOTIFY_URL, or the profile's notifyUrl; the flag wins; a bad URL is exit 64", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* WorkDir
      const monitor = yield* MonitorService
      const snapshot = path.join(dir, "env.sqlite")
      const fromEnv = yield* cli(["backup", "--snapshot", snapshot, "--quiet"], {
        env: { ...connectionEnv(emu), WORKSYNC_NOTIFY_URL: `${monitor.url}/ping/env` }
      })
      expect(fromEnv.code).toBe(0)
      expect(pingsOf(monitor, "/ping/env").map((p) => p.path)).toEqual(["/ping/env/start", "/ping/env"])

      const cwd = path.join(dir, "profile")
      fs.mkdirSync(cwd)
      const config = path.join(cwd, "worksync.config.json")
      fs.writeFileSync(config, JSON.stringify({ profiles: { default: { notifyUrl: `${monitor.url}/ping/profile` } } }))
      fs.chmodSync(config, 0o600)
      const fromProfile = yield* cli(["verify", "--snapshot", snapshot, "--quiet"], { cwd })
      expect(fromProfile.code).toBe(0)
      expect(pingsOf(monitor, "/ping/profile").map((p) => p.path)).toEqual(["/ping/profile/start", "/ping/profile"])
      const flagWins = yield* cli(["verify", "--snapshot", snapshot, "--quiet", "--notify", `${monitor.url}/ping/flag`], { cwd })
      expect(flagWins.code).toBe(0)
      expect(pingsOf(monitor, "/ping/profile")).toEqual([])
      expect(pingsOf(monitor, "/ping/flag").map((p) => p.path)).toEqual(["/ping/flag/start", "/ping/flag"])

      const bad = yield* cli(["verify", "--snapshot", snapshot, "--notify", "ftp://example.test/x"])
      expect(bad.code).toBe(64)
      expect(bad.stderr).toMatch(/--notify ftp:\/\/example\.test\/x: not an http\(s\) URL/)
    }), TEST_TIMEOUT)

  it.effect("a record listed and then gone before its detail is read: the run completes, backup exits 1 naming it, and pings fail", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* WorkDir
      const monitor = yield* MonitorService
      const snapshot = path.join(dir, "skipped.sqlite")
      const ws = emu.workspaces[0]!
      const live = emu.ctx.db.prepare("SELECT count(*) FROM records WHERE deleted_at IS NULL").pluck().get() as number
      // Every get-record is held unanswered. The backup is of one workspace, whose
      // unarchived records fit one page: once a get-record is held, that page has been
      // listed, with the victim on it. The victim is then deleted and the held requests
      // answered: its get-record, held or still to come, finds nothing. No clock decides it.
      emu.faults.inject({ route: "get-record", kind: "hold", times: live })
      const child = spawn(process.execPath, ["bin/worksync.js", "backup", "--snapshot", snapshot, "--workspace", ws, "--json", "--notify", `${monitor.url}/ping/skip`], {
        env: { ...cleanEnv(), ...connectionEnv(emu) },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let stdout = ""
      let stderr = ""
      child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d))
      child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d))
      const closed = new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)))
      let exited = false
      void closed.then(() => (exited = true))
      // A run that ends without ever asking for a record fails below, never waits here.
      while (emu.faults.heldRequests.size === 0 && !exited) yield* Effect.sleep("20 millis")
      const victim = emu.ctx.db
        .prepare("SELECT id FROM records WHERE workspace_id = ? AND deleted_at IS NULL AND archived = 0 ORDER BY position, id LIMIT 1")
        .pluck()
        .get(ws) as string
      emu.admin.deleteRecords([victim])
      emu.faults.reset()
      const code = yield* Effect.promise(() => closed)
      expect(code).toBe(1)
      expect(JSON.parse(stdout)).toMatchObject({ runId: "1" })
      expect(stderr).toMatch(new RegExp(`worksync: backup: run 1 is complete but skipped record ${victim} \\(listed, then not found by get-record\\)`))
      const pings = pingsOf(monitor, "/ping/skip")
      expect(pings.map((p) => p.path)).toEqual(["/ping/skip/start", "/ping/skip/fail"])
      expect(pings[1]!.body).toContain(`skipped record ${victim}`)
    }), TEST_TIMEOUT)
})
