/**
 * `import-csv --preset jira` through the command line, with an export whose attachments
 * link to loopback servers standing in for services inside the network: without
 * `--attachment-hosts` none of them is asked and each attachment is listed as not
 * fetched, with the reason, on stderr and in `--json`; named, they are fetched. A bad
 * `--attachment-hosts` or `--attachment-max-mb` is one line and exit 64. Every request
 * goes to 127.0.0.1.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { connectionEnv, runCli } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { internalForms, jiraExport, noDir, reset, Servers, serversLayer } from "./internal-servers.ts"

const importJira = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const handle = yield* Emulator
    const { gateway, internal } = yield* Servers
    const dir = yield* tempDir("ws-attachment-hosts-cli-")
    const ws = handle.admin.createWorkspace({ name: "attachment hosts cli" }).id
    const csv = jiraExport(dir, internalForms(internal, gateway))
    return yield* Effect.promise(() =>
      runCli(["import-csv", "--workspace", ws, "--csv", csv, "--preset", "jira", "--journal", path.join(dir, "j.sqlite"), "--json", ...args], {
        env: connectionEnv(handle, { app: true })
      })
    )
  })

// The CLI runs as a child process against the emulator and the loopback servers: real time.
layer(Layer.merge(emulatorLayer({ seed: "empty" }), serversLayer), { timeout: 30_000, excludeTestServices: true })("import-csv --attachment-hosts (command line)", (it) => {
  it.effect("without --attachment-hosts: no loopback server is asked, whichever form the URL takes; each attachment is listed with the reason", () =>
    Effect.gen(function*() {
      const { gateway, internal } = yield* Servers
      reset(internal, gateway)
      const r = yield* importJira([])
      expect(r.code).toBe(0)
      expect(internal.seen).toEqual([])
      expect(gateway.seen).toEqual([])
      const out = JSON.parse(r.stdout)
      expect(out).toMatchObject({ rows: 1, created: 1, attachments: 0 })
      const allow = "is not an allowed attachment host (name it in --attachment-hosts)"
      expect(out.attachmentsNotFetched).toEqual([
        { name: "direct.txt", reason: noDir(`127.0.0.1:${internal.port} ${allow}`) },
        { name: "byname.txt", reason: noDir(`localhost:${internal.port} ${allow}`) },
        { name: "mapped.txt", reason: noDir(`[::ffff:7f00:1]:${internal.port} ${allow}`) },
        { name: "redirected.txt", reason: noDir(`127.0.0.1:${gateway.port} ${allow}`) },
        { name: "iam.txt", reason: noDir(`169.254.169.254:80 ${allow}`) }
      ])
      expect(r.stderr).toContain(`import: attachment iam.txt not fetched: 169.254.169.254:80 ${allow}`)
    }))

  it.effect("with the hosts named, the same export's files are fetched; the redirect's target only when it is named too", () =>
    Effect.gen(function*() {
      const { gateway, internal } = yield* Servers
      reset(internal, gateway)
      const onlyGateway = yield* importJira(["--attachment-hosts", `127.0.0.1:${gateway.port}`])
      expect(onlyGateway.code).toBe(0)
      expect(gateway.seen.map((s) => s.url)).toEqual(["/anything/redirected.txt"])
      expect(internal.seen).toEqual([])
      expect(onlyGateway.stderr).toContain(
        `import: attachment redirected.txt not fetched: after a redirect, localhost:${internal.port} is not an allowed attachment host`
      )

      reset(internal, gateway)
      const named = yield* importJira(["--attachment-hosts", `127.0.0.1:${internal.port},localhost:${internal.port},127.0.0.1:${gateway.port}`])
      expect(named.code).toBe(0)
      expect(JSON.parse(named.stdout)).toMatchObject({ created: 1, attachments: 3 })
      expect(internal.seen.map((s) => s.url).sort()).toEqual(["/files/byname.txt", "/files/direct.txt", "/files/redirected.txt"])
    }))

  it.effect("a bad --attachment-hosts or --attachment-max-mb: one line naming it, exit 64, nothing asked", () =>
    Effect.gen(function*() {
      const { gateway, internal } = yield* Servers
      reset(internal, gateway)
      for (
        const [args, line] of [
          [["--attachment-hosts", "https://jira.example.com"], "--attachment-hosts https://jira.example.com: not a host name, *.domain or IP address; give HOST[:PORT][,...]"],
          [["--attachment-hosts", "jira.example.com:99999"], "--attachment-hosts jira.example.com:99999: port 99999 is not 1-65535"],
          [["--attachment-max-mb", "0"], "--attachment-max-mb 0: must be 1 to 256"],
          [["--attachment-max-mb", "300"], "--attachment-max-mb 300: must be 1 to 256"]
        ] as const
      ) {
        const r = yield* importJira(args)
        expect(r.code, args.join(" ")).toBe(64)
        const lines = r.stderr.trim().split("\n")
        expect(lines).toHaveLength(1)
        expect(lines[0]).toContain(line)
      }
      expect(internal.seen).toEqual([])
    }))
})
