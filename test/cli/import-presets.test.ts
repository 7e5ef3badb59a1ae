/**
 * import-csv --preset with another tool's export, through the command line: the dry run's
 * census before anything is sent, the --json fields of the contract, exactly once on a
 * rerun, and one clear line (exit 64) for a bad --people or --attachments.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"

const BIN = "bin/worksync.js"
/** The Jira fixture copied into `dir`, so nothing the import writes beside it (rejects) lands in the fixtures. */
const jira = (dir: string) => {
  const file = path.join(dir, "jira.csv")
  fs.copyFileSync(path.join("test", "fixtures", "presets", "jira.csv"), file)
  return file
}

const start = (handle: EmulatorHandle, args: ReadonlyArray<string>) => {
  let child!: ReturnType<typeof spawn>
  const done = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>((resolve) => {
    child = spawn(process.execPath, [BIN, ...args], {
      env: {
        ...process.env,
        WORKSYNC_REST_URL: handle.restUrl,
        WORKSYNC_BASE_URL: handle.baseUrl,
        WORKSYNC_TOKEN: handle.token,
        WORKSYNC_TOKEN_ID: handle.tokenId,
        WORKSYNC_TOKEN_SECRET: handle.tokenSecret,
        WORKSYNC_ORG: handle.org
      },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout!.on("data", (d) => (stdout += d))
    child.stderr!.on("data", (d) => (stderr += d))
    child.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }))
  })
  return { child, done }
}

const run = (handle: EmulatorHandle, args: ReadonlyArray<string>) => Effect.promise(() => start(handle, args).done)

/** Requests the emulator has seen on routes matching `pattern`. */
const seenOn = (handle: EmulatorHandle, pattern: RegExp) =>
  Object.entries(handle.stats().byRoute).filter(([route]) => pattern.test(route)).reduce((n, [, c]) => n + c, 0)

/** Resolves once `condition` holds (checked on every turn of the event loop's timers). */
const until = (condition: () => boolean) =>
  new Promise<void>((resolve) => {
    const check = () => (condition() ? resolve() : setImmediate(check))
    check()
  })

const writes = (handle: EmulatorHandle) => Object.entries(handle.stats().byRoute).filter(([route]) => /create|update|upload|graphql/i.test(route))

// The CLI runs as a child process against the emulator: real time (`excludeTestServices`).
layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("import-csv --preset (command line)", (it) => {
  it.effect("--dry-run prints the census of a Jira export first and sends nothing", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "jira dry" }).id
      const dir = yield* tempDir("ws-preset-cli-")
      const journal = path.join(dir, "j.sqlite")
      handle.resetStats()
      const r = yield* run(handle, ["import-csv", "--workspace", ws, "--csv", jira(dir), "--preset", "jira", "--journal", journal, "--dry-run", "--json"])
      expect(r.code).toBe(0)
      const out = JSON.parse(r.stdout)
      expect(out).toMatchObject({ rows: 3, created: 0, rejected: 0, comments: 2, attachments: 2, dryRun: true, people: { unresolved: ["Alice Example", "alice@example.com"] } })
      expect(out.unmapped).toContain("Sprint")
      expect(out.notCarried.Sprint).toEqual({ count: 2, reason: "the service has no sprints" })
      expect(out.carried.Comment).toEqual({ field: "comments", count: 2 })
      const census = r.stderr.split("\n").filter((l) => l.startsWith("census: "))
      expect(census).toContain("census:   \"Sprint\": 2 values left behind; the service has no sprints")
      expect(census).toContain("census:   \"Comment\" -> comments (2 values)")
      expect(writes(handle)).toEqual([])
      expect(fs.existsSync(journal)).toBe(false)
    }))

  it.effect("a person --people maps to an e-mail the workspace does not know is listed, not matched to the user of their name", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "jira mapped away" }).id
      const dir = yield* tempDir("ws-preset-cli-")
      const people = path.join(dir, "people.csv")
      // The workspace's one "Alice Example" is another person than the one the file names.
      handle.admin.createUser({ email: "alice.example@corp.example", firstName: "Alice", lastName: "Example", workspaces: { [ws]: "MEMBER" } })
      fs.writeFileSync(people, "name,email\nAlice Example,alice@elsewhere.example\n")
      const journal = path.join(dir, "j.sqlite")
      const r = yield* run(handle, ["import-csv", "--workspace", ws, "--csv", jira(dir), "--preset", "jira", "--journal", journal, "--people", people, "--dry-run", "--json"])
      expect(r.code).toBe(0)
      expect(JSON.parse(r.stdout).people).toEqual({ unresolved: ["Alice Example", "alice@example.com"] })
      expect(r.stderr).toContain("import: not in the workspace, records created without them (map them with --people to its users): Alice Example, alice@example.com")
    }))

  it.effect("imports, then a rerun sends nothing; --json carries the contract's fields", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "jira run" }).id
      const dir = yield* tempDir("ws-preset-cli-")
      const journal = path.join(dir, "j.sqlite")
      const people = path.join(dir, "people.csv")
      handle.admin.createUser({ email: "alice@corp.example", firstName: "Al", lastName: "Ex", workspaces: { [ws]: "MEMBER" } })
      fs.writeFileSync(people, "name,email\nAlice Example,alice@corp.example\n")
      const args = ["import-csv", "--workspace", ws, "--csv", jira(dir), "--preset", "jira", "--journal", journal, "--people", people, "--json"]
      const first = yield* run(handle, args)
      expect(first.code).toBe(0)
      const out = JSON.parse(first.stdout)
      expect(out).toMatchObject({ rows: 3, created: 3, rejected: 0, comments: 2, attachments: 0 })
      // The second row's assignee is an e-mail the workspace does not know; "Alice Example" came through --people.
      expect(out.people).toEqual({ unresolved: ["alice@example.com"] })
      expect(out.attachmentsNotFetched.map((a: { name: string }) => a.name)).toEqual(["screen shot;1.png", "log.txt"])
      expect(first.stderr).toContain("import: attachment log.txt not fetched: ")
      handle.resetStats()
      const again = yield* run(handle, args)
      expect(again.code).toBe(0)
      expect(JSON.parse(again.stdout)).toMatchObject({ created: 0, skipped: 3, comments: 0, attachments: 0 })
      expect(writes(handle)).toEqual([])
    }))

  it.effect("SIGKILL while a comment is in flight, then resume: every comment exactly once, and a rerun sends nothing", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "jira kill" }).id
      const dir = yield* tempDir("ws-preset-cli-")
      const journal = path.join(dir, "j.sqlite")
      const args = ["import-csv", "--workspace", ws, "--csv", jira(dir), "--preset", "jira", "--journal", journal, "--json", "--quiet"]
      handle.resetStats()
      // The first GraphQL write (a comment) is held by the emulator; the process dies meanwhile.
      handle.faults.inject({ route: "/graphql", kind: "latency", latencyMs: 1500 })
      const { child, done } = start(handle, args)
      yield* Effect.promise(() => until(() => seenOn(handle, /graphql/) > 0))
      child.kill("SIGKILL")
      const killed = yield* Effect.promise(() => done)
      expect(killed.signal).toBe("SIGKILL")
      handle.faults.reset()
      const resumed = yield* run(handle, args)
      expect(resumed.code).toBe(0)
      expect(JSON.parse(resumed.stdout)).toMatchObject({ rows: 3, rejected: 0 })
      const recordId = (handle.ctx.db.prepare("SELECT id FROM records WHERE workspace_id = ? AND title = ?").get(ws, "Login fails on Safari") as { id: string }).id
      const comments = (handle.ctx.db.prepare("SELECT text FROM activity WHERE record_id = ? AND kind = 'COMMENT' AND deleted_at IS NULL").all(recordId) as Array<{ text: string }>)
        .map((c) => c.text.split("\n")[0])
        .sort()
      expect(comments).toEqual([
        "Alice Example attached log.txt on 2025-11-06T08:00:00Z (Jira):",
        "Alice Example wrote on 2025-11-05T17:18:00Z (Jira):",
        "Bob Reporter attached screen shot;1.png on 2025-11-05T17:20:00Z (Jira):",
        "Bob Reporter wrote on 2025-11-06T09:00:00Z (Jira):"
      ])
      handle.resetStats()
      const again = yield* run(handle, args)
      expect(again.code).toBe(0)
      expect(writes(handle)).toEqual([])
    // The resume after a kill waits one settle window (the request timeout, 30 s) for a
    // comment the dead run left in flight: its request may have left just before the kill.
    }), 180_000)

  it.effect("a people file without name,email columns, or a missing attachments directory: one line, exit 64", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "jira bad" }).id
      const dir = yield* tempDir("ws-preset-cli-")
      const people = path.join(dir, "people.csv")
      fs.writeFileSync(people, "who,mail\nA,a@x.example\n")
      const base = ["import-csv", "--workspace", ws, "--csv", jira(dir), "--preset", "jira", "--journal", path.join(dir, "j.sqlite")]
      const bad = yield* run(handle, [...base, "--people", people])
      expect(bad.code).toBe(64)
      expect(bad.stderr.trim().split("\n")).toEqual([expect.stringContaining(`--people ${people}: the header must have the columns name,email`)])
      const noDir = yield* run(handle, [...base, "--attachments", path.join(dir, "missing")])
      expect(noDir.code).toBe(64)
      expect(noDir.stderr).toContain("--attachments")
      expect(noDir.stderr).toContain("not a directory")
    }))
})
