/**
 * `worksync doctor`: the real binary against the emulator, one test per check with the
 * failure it names: a refused token (R-REST-ERR-03), an unreachable port, an
 * organization the token may not act in, a workspace where the caller is VIEW_ONLY
 * (R-USER-01, R-INVITE-09), a service clock an hour apart, a snapshot another process
 * holds, a damaged snapshot. Every failure exits 1 with its line, and no run prints a
 * token.
 */
import { expect, layer } from "@effect/vitest"
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { openJournalDatabase } from "../../src/store/journal/schema.ts"
import { SNAPSHOT_MIGRATIONS } from "../../src/store/snapshot-schema.ts"
import { openDatabaseSync } from "../../src/store/sqlite.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { connectionEnv } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { exited, lockHolder } from "../support/lock-holder.ts"
import { cli } from "./cli-effect.ts"

interface Report {
  readonly ok: boolean
  readonly checks: ReadonlyArray<{ readonly name: string; readonly ok: boolean; readonly detail: string }>
}

const credentials = (emu: { readonly token: string; readonly tokenId: string; readonly tokenSecret: string }) => [
  emu.token,
  emu.tokenId,
  emu.tokenSecret
]

/** Runs doctor with `args` over the connection of `emu` (GraphQL included); no output holds a secret of `secrets`. */
const doctor = (emu: EmulatorHandle, args: ReadonlyArray<string>, secrets: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const r = yield* cli(["doctor", ...args], { env: connectionEnv(emu, { app: true }) })
    for (const secret of [...credentials(emu), ...secrets]) {
      expect(r.stdout).not.toContain(secret)
      expect(r.stderr).not.toContain(secret)
    }
    return r
  })

const json = (stdout: string): Report => JSON.parse(stdout) as Report

const check = (report: Report, name: string) => {
  const found = report.checks.find((c) => c.name === name)
  expect(found, `check ${name} in ${JSON.stringify(report.checks.map((c) => c.name))}`).toBeDefined()
  return found!
}

/** A failure: exit 1, the failing check's line on stdout, and that same line as the one line on stderr. */
const expectFailure = (r: { code: number | null; stdout: string; stderr: string }, name: string, detail: RegExp) => {
  expect(r.code).toBe(1)
  const line = r.stdout.split("\n").find((l) => l.startsWith(`FAIL  ${name}: `))
  expect(line, r.stdout).toBeDefined()
  expect(line).toMatch(detail)
  expect(r.stderr.trim().split("\n")).toEqual([`worksync: doctor: ${line!.slice("FAIL  ".length)}`])
}

/** A port nothing listens on: one the system just gave and took back. */
const closedPort = Effect.promise(
  () =>
    new Promise<number>((resolve) => {
      const server = net.createServer()
      server.listen(0, "127.0.0.1", () => {
        const port = (server.address() as net.AddressInfo).port
        server.close(() => resolve(port))
      })
    })
)

/** An empty snapshot file of this version's schema. */
const newSnapshot = (file: string) => openDatabaseSync(file, { migrations: SNAPSHOT_MIGRATIONS }).close()

// The CLI runs as a child process against the emulator: real time (`excludeTestServices`).
layer(emulatorLayer({ seed: "demo" }), { timeout: 60_000, excludeTestServices: true })("worksync doctor", (it) => {
  it.effect("every check holds for the emulator's owner: exit 0, one ok line each, the same in --json", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("ws-doctor-")
      const snapshot = path.join(dir, "backup.sqlite")
      const journal = path.join(dir, "import.sqlite")
      newSnapshot(snapshot)
      openJournalDatabase(journal).close()
      const r = yield* doctor(emu, ["--snapshot", snapshot, "--journal", journal])
      expect(r.code).toBe(0)
      expect(r.stderr).toBe("")
      const lines = r.stdout.trim().split("\n")
      expect(lines.every((l) => l.startsWith("ok  "))).toBe(true)
      const names = lines.map((l) => l.slice(6, l.indexOf(": ")))
      expect(names).toEqual([
        "node",
        "rest",
        "graphql",
        "clock",
        "token",
        "organization",
        "graphql token",
        ...emu.workspaces.map((id) => expect.stringContaining(id)),
        "snapshot",
        "snapshot lock",
        "journal",
        "journal lock"
      ])
      const report = json((yield* doctor(emu, ["--json", "--snapshot", snapshot])).stdout)
      expect(report.ok).toBe(true)
      expect(report.checks.every((c) => c.ok && typeof c.detail === "string")).toBe(true)
    }))

  it.effect("R-REST-ERR-03: a refused REST token fails the token check, which says which flag to fix and never prints the token", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const bad = "pat_refused_0123456789abcdef"
      const r = yield* doctor(emu, ["--token", bad], [bad])
      expectFailure(r, "token", /refused.*HTTP 401.*--token/)
      const report = json((yield* doctor(emu, ["--token", bad, "--json"], [bad])).stdout)
      expect(report.ok).toBe(false)
      expect(check(report, "token").ok).toBe(false)
      expect(check(report, "rest").ok).toBe(true)
    }))

  it.effect("a refused GraphQL token id and secret fail the graphql token check", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const bad = "not-the-secret-0123456789"
      const r = yield* doctor(emu, ["--token-secret", bad], [bad])
      expectFailure(r, "graphql token", /refused.*--token-id and --token-secret/)
    }))

  it.effect("an unreachable REST port fails the rest check, naming the URL to check", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const port = yield* closedPort
      const url = `http://127.0.0.1:${port}/rest`
      const r = yield* doctor(emu, ["--rest-url", url])
      expectFailure(r, "rest", new RegExp(`${url} cannot be reached .*--rest-url`))
      // Nothing that needs the REST interface is claimed to hold.
      expect(r.stdout).not.toMatch(/^ok {4}token:/m)
    }))

  it.effect("an organization the token may not act in fails the organization check (whichever of 401 or 403 the service answers), not the token's", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const other = emu.admin.createOrganization({ name: "Elsewhere", slug: `elsewhere-${Date.now()}` })
      const report = json((yield* doctor(emu, ["--org", other, "--json"])).stdout)
      expect(check(report, "token")).toMatchObject({ ok: true })
      expect(check(report, "organization")).toMatchObject({ ok: false, detail: expect.stringMatching(/--org/) })
      expectFailure(yield* doctor(emu, ["--org", other]), "organization", /may not act in it|not found or not open/)
    }))

  it.effect("R-USER-01, R-INVITE-09: a workspace where the caller is VIEW_ONLY fails its line: reads only, cannot invite or write; a MEMBER workspace holds", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const [viewed, member] = emu.workspaces as [string, string]
      const user = emu.admin.createUser({
        email: `viewer-${Date.now()}@doctor.test`,
        firstName: "Vi",
        lastName: "Ewer",
        workspaces: { [viewed]: "VIEW_ONLY", [member]: "MEMBER" }
      })
      const asViewer = { ...emu, token: user.token, tokenId: user.tokenId, tokenSecret: user.tokenSecret }
      const report = json((yield* doctor(asViewer, ["--json"])).stdout)
      const lines = report.checks.filter((c) => c.name.startsWith("workspace "))
      expect(lines.find((c) => c.name.includes(viewed))).toMatchObject({ ok: false, detail: expect.stringMatching(/^VIEW_ONLY: reads only .*cannot invite/) })
      expect(lines.find((c) => c.name.includes(member))).toMatchObject({ ok: true, detail: expect.stringMatching(/^MEMBER: .*invites people up to MEMBER/) })
      expect(report.ok).toBe(false)
      expectFailure(yield* doctor(asViewer, []), lines.find((c) => c.name.includes(viewed))!.name, /VIEW_ONLY/)
    }))

  it.effect("a snapshot another live process holds fails the lock check; once that process is gone the lock is free", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("ws-doctor-lock-")
      const snapshot = path.join(dir, "held.sqlite")
      newSnapshot(snapshot)
      const holder = yield* Effect.promise(() => lockHolder(snapshot))
      const held = yield* doctor(emu, ["--snapshot", snapshot]).pipe(
        Effect.ensuring(Effect.promise(() => {
          holder.kill("SIGKILL")
          return exited(holder)
        }))
      )
      expectFailure(held, "snapshot lock", /in use by another worksync run/)
      expect(held.stdout).toMatch(/^ok {4}snapshot: /m)
      const free = yield* doctor(emu, ["--snapshot", snapshot, "--json"])
      expect(free.code).toBe(0)
      expect(check(json(free.stdout), "snapshot lock").ok).toBe(true)
    }))

  it.effect("a damaged snapshot, a file that is no SQLite database and a journal given as the snapshot each fail the snapshot check", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const dir = yield* tempDir("ws-doctor-corrupt-")
      const damaged = path.join(dir, "damaged.sqlite")
      newSnapshot(damaged)
      // Garbage over the pages after the first: the header still opens, the tables do not hold.
      const fd = fs.openSync(damaged, "r+")
      const size = fs.fstatSync(fd).size
      fs.writeSync(fd, Buffer.alloc(size - 4096, 0x5a), 0, size - 4096, 4096)
      fs.closeSync(fd)
      expectFailure(yield* doctor(emu, ["--snapshot", damaged]), "snapshot", /damaged/)
      const text = path.join(dir, "notes.sqlite")
      fs.writeFileSync(text, "these are notes, not a database\n".repeat(200))
      expectFailure(yield* doctor(emu, ["--snapshot", text]), "snapshot", /damaged or not a SQLite file/)
      const journal = path.join(dir, "journal.sqlite")
      openJournalDatabase(journal).close()
      expectFailure(yield* doctor(emu, ["--snapshot", journal]), "snapshot", /is a journal, not a snapshot/)
      // A healthy file still passes: the check reads, it does not write.
      const healthy = path.join(dir, "healthy.sqlite")
      newSnapshot(healthy)
      const before = fs.readFileSync(healthy)
      expect((yield* doctor(emu, ["--snapshot", healthy])).code).toBe(0)
      expect(fs.readFileSync(healthy).equals(before)).toBe(true)
      const db = new Database(healthy, { readonly: true })
      expect(db.pragma("user_version", { simple: true })).toBeGreaterThan(0)
      db.close()
    }))
})

// A service whose clock runs an hour ahead of this machine's.
layer(emulatorLayer({ seed: "empty", clockStart: Date.now() + 3_600_000 }), { timeout: 60_000, excludeTestServices: true })(
  "worksync doctor against a skewed service clock",
  (it) => {
    it.effect("the clock check fails when the service's Date header is an hour off, saying which way", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        expectFailure(yield* doctor(emu, []), "clock", /behind the service's \(its Date header; more than 30 s\).*set the clock/)
      }))
  }
)
