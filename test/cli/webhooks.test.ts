/**
 * `worksync webhooks list|create|update|disable|delete` per the contract: the secret is
 * shown once, by create, on stdout; changes show in the next list; bad invocations exit
 * 64 and an unknown id exits 1, each with one stderr line.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { type CliResult, runCli } from "../support/cli.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"

/** The workspace of the file, created once per emulator. */
const workspaces = new WeakMap<EmulatorHandle, string>()
const workspaceOf = (handle: EmulatorHandle) => {
  let id = workspaces.get(handle)
  if (id === undefined) {
    id = handle.admin.createWorkspace({ name: "hooks" }).id
    workspaces.set(handle, id)
  }
  return id
}

interface Caller {
  readonly tokenId: string
  readonly tokenSecret: string
}

let users = 0
/** A user of its own per test: webhooks are per user (R-WEBHOOK-07), so each test sees only its own. */
const newUser = (handle: EmulatorHandle): Caller => {
  users += 1
  const issued = handle.admin.createUser({
    email: `hooks${users}@example.test`,
    firstName: "Hook",
    lastName: `User${users}`,
    workspaces: { [workspaceOf(handle)]: "ADMIN" }
  })
  return { tokenId: issued.tokenId, tokenSecret: issued.tokenSecret }
}

/** Every run of the file, for the check that no secret leaks anywhere. */
const runs: Array<{ args: ReadonlyArray<string>; result: CliResult }> = []

const webhooks = (handle: EmulatorHandle, caller: Caller, args: ReadonlyArray<string>) =>
  Effect.promise(async () => {
    const result = await runCli(["webhooks", ...args], {
      env: {
        WORKSYNC_BASE_URL: handle.baseUrl,
        WORKSYNC_TOKEN_ID: caller.tokenId,
        WORKSYNC_TOKEN_SECRET: caller.tokenSecret,
        WORKSYNC_ORG: handle.org
      }
    })
    runs.push({ args, result })
    return result
  })

const lines = (text: string) => text.trim().split("\n").filter((l) => l !== "")

const storedSecret = (handle: EmulatorHandle, id: string) =>
  (handle.ctx.db.prepare("SELECT secret FROM webhooks WHERE id = ?").get(id) as { secret: string } | undefined)?.secret

const listJson = (handle: EmulatorHandle, caller: Caller) =>
  Effect.gen(function*() {
    const r = yield* webhooks(handle, caller, ["list", "--json"])
    expect(r.code, r.stderr).toBe(0)
    return JSON.parse(r.stdout) as Array<Record<string, unknown>>
  })

const create = (handle: EmulatorHandle, caller: Caller, args: ReadonlyArray<string> = []) =>
  Effect.gen(function*() {
    const r = yield* webhooks(handle, caller, ["create", "--url", "https://hooks.example.test/in", "--json", ...args])
    expect(r.code, r.stderr).toBe(0)
    return JSON.parse(r.stdout) as { id: string; url: string; events: Array<string>; workspaces: Array<string>; enabled: boolean; secret: string }
  })

// The CLI runs as a child process against the emulator: real time (`excludeTestServices`).
layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("worksync webhooks", (it) => {
  it.effect("R-WEBHOOK-03, R-WEBHOOK-04: create --json shows the secret once; list and list --json never show it", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const workspace = workspaceOf(handle)
      const me = newUser(handle)
      const r = yield* webhooks(handle, me, [
        "create",
        "--url",
        "https://hooks.example.test/in",
        "--event",
        "TODO_CREATED",
        "--event",
        "comment_created",
        "--workspace",
        workspace,
        "--json"
      ])
      expect(r.code, r.stderr).toBe(0)
      expect(lines(r.stdout)).toHaveLength(1)
      const created = JSON.parse(r.stdout)
      expect(Object.keys(created).sort()).toEqual(["enabled", "events", "id", "secret", "url", "workspaces"])
      expect(created).toMatchObject({
        url: "https://hooks.example.test/in",
        events: ["TODO_CREATED", "COMMENT_CREATED"],
        workspaces: [workspace],
        enabled: true
      })
      expect(created.secret).toBe(storedSecret(handle, created.id))
      expect(created.secret.length).toBeGreaterThan(0)
      expect(r.stderr).not.toContain(created.secret)
      expect(r.stderr).toMatch(/not shown again/)

      const listed = yield* listJson(handle, me)
      expect(listed).toEqual([
        {
          id: created.id,
          url: "https://hooks.example.test/in",
          events: ["TODO_CREATED", "COMMENT_CREATED"],
          workspaces: [workspace],
          enabled: true,
          status: "HEALTHY"
        }
      ])
      const text = yield* webhooks(handle, me, ["list"])
      expect(text.code, text.stderr).toBe(0)
      expect(text.stdout).toContain(created.id)
      expect(text.stdout).toContain("https://hooks.example.test/in")
      for (const out of [JSON.stringify(listed), text.stdout, text.stderr]) expect(out).not.toContain(created.secret)
    }))

  it.effect("create without --json prints the id and secret lines on stdout and the warning on stderr", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const workspace = workspaceOf(handle)
      const me = newUser(handle)
      const r = yield* webhooks(handle, me, ["create", "--url", "http://127.0.0.1:9/plain"])
      expect(r.code, r.stderr).toBe(0)
      const out = lines(r.stdout)
      expect(out).toHaveLength(2)
      const id = /^id: (\S+)$/.exec(out[0]!)?.[1]
      const secret = /^secret: (\S+)$/.exec(out[1]!)?.[1]
      expect(id).toBeDefined()
      expect(secret).toBe(storedSecret(handle, id!))
      expect(r.stderr).toMatch(/store the secret now: it is not shown again/)
      expect(r.stderr).not.toContain(secret)
      // No events and no workspaces given: every event of every workspace (R-WEBHOOK-DELIVERY-14/15).
      expect(yield* listJson(handle, me)).toEqual([
        { id, url: "http://127.0.0.1:9/plain", events: [], workspaces: [], enabled: true, status: "HEALTHY" }
      ])
    }))

  it.effect("R-WEBHOOK-10: update changes the URL and replaces the events; the result and list carry no secret", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const workspace = workspaceOf(handle)
      const me = newUser(handle)
      const created = yield* create(handle, me, ["--event", "TODO_CREATED"])
      const r = yield* webhooks(handle, me, [
        "update",
        created.id,
        "--url",
        "https://hooks.example.test/v2",
        "--event",
        "TAG_CREATED",
        "--event",
        "TAG_DELETED",
        "--json"
      ])
      expect(r.code, r.stderr).toBe(0)
      const updated = JSON.parse(r.stdout)
      expect(updated).toEqual({
        id: created.id,
        url: "https://hooks.example.test/v2",
        events: ["TAG_CREATED", "TAG_DELETED"],
        workspaces: [],
        enabled: true,
        status: "HEALTHY"
      })
      expect(yield* listJson(handle, me)).toEqual([updated])
      // Without --json: nothing on stdout, one summary line on stderr.
      const quiet = yield* webhooks(handle, me, ["update", created.id, "--url", "https://hooks.example.test/v3"])
      expect(quiet.code, quiet.stderr).toBe(0)
      expect(quiet.stdout).toBe("")
      expect(lines(quiet.stderr)).toHaveLength(1)
      expect((yield* listJson(handle, me))[0]!.url).toBe("https://hooks.example.test/v3")
    }))

  it.effect("R-WEBHOOK-13, R-WEBHOOK-14: disable keeps the webhook with enabled false; update --enable turns it back on", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const workspace = workspaceOf(handle)
      const me = newUser(handle)
      const created = yield* create(handle, me)
      const r = yield* webhooks(handle, me, ["disable", created.id, "--json"])
      expect(r.code, r.stderr).toBe(0)
      expect(JSON.parse(r.stdout)).toMatchObject({ id: created.id, enabled: false })
      const listed = yield* listJson(handle, me)
      expect(listed).toHaveLength(1)
      expect(listed[0]).toMatchObject({ id: created.id, enabled: false })

      const again = yield* webhooks(handle, me, ["update", created.id, "--enable", "--json"])
      expect(again.code, again.stderr).toBe(0)
      expect(JSON.parse(again.stdout)).toMatchObject({ id: created.id, enabled: true })
      const off = yield* webhooks(handle, me, ["update", created.id, "--disable", "--json"])
      expect(off.code, off.stderr).toBe(0)
      expect(JSON.parse(off.stdout)).toMatchObject({ id: created.id, enabled: false })
    }))

  it.effect("R-WEBHOOK-11: delete removes the webhook for good; list is then empty", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const workspace = workspaceOf(handle)
      const me = newUser(handle)
      const a = yield* create(handle, me)
      const b = yield* create(handle, me, ["--event", "TODO_DELETED"])
      for (const id of [a.id, b.id]) {
        const r = yield* webhooks(handle, me, ["delete", id, "--json"])
        expect(r.code, r.stderr).toBe(0)
        expect(JSON.parse(r.stdout)).toEqual({ id, deleted: true })
      }
      expect(yield* listJson(handle, me)).toEqual([])
      const text = yield* webhooks(handle, me, ["list"])
      expect(text.code).toBe(0)
      expect(text.stdout).toBe("")
      expect(storedSecret(handle, a.id)).toBeUndefined()
    }))

  it.effect("bad invocations exit 64 with one stderr line and create nothing (R-WEBHOOK-EVENT-07: the health check is not subscribable)", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const workspace = workspaceOf(handle)
      const me = newUser(handle)
      const cases: Array<[ReadonlyArray<string>, RegExp]> = [
        [["create"], /--url/],
        [["create", "--url", "not a url"], /--url/],
        [["create", "--url", "ftp://hooks.example.test/in"], /not an http\(s\) URL/],
        [["create", "--url", "https://hooks.example.test/in", "--event", "TODO_EXPLODED"], /--event TODO_EXPLODED/],
        [["create", "--url", "https://hooks.example.test/in", "--event", "WEBHOOK_HEALTH_CHECK"], /cannot be subscribed/],
        [["create", "--url", "https://hooks.example.test/in", "--workspace", "no-such-workspace"], /--workspace no-such-workspace/],
        [["create", "--url", "https://hooks.example.test/in", "--no-such-flag"], /./],
        [["frobnicate"], /./],
        [[], /subcommand/],
        [["update"], /ID/],
        [["update", "some-id"], /nothing to change/],
        [["update", "some-id", "--enable", "--disable"], /--enable and --disable/],
        [["update", "some-id", "--event", "NOPE"], /--event NOPE/],
        [["disable"], /ID/]
      ]
      for (const [args, message] of cases) {
        const r = yield* webhooks(handle, me, args)
        expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(64)
        expect(r.stdout, args.join(" ")).toBe("")
        expect(lines(r.stderr), args.join(" ")).toHaveLength(1)
        expect(r.stderr, args.join(" ")).toMatch(message)
      }
      expect(yield* listJson(handle, me)).toEqual([])
    }))

  it.effect("R-WEBHOOK-07: an unknown id, or another user's, exits 1 with one line naming it", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const workspace = workspaceOf(handle)
      const me = newUser(handle)
      const other = newUser(handle)
      const theirs = yield* create(handle, other)
      for (const id of ["no-such-webhook", theirs.id]) {
        for (const args of [["update", id, "--url", "https://hooks.example.test/x"], ["disable", id], ["delete", id, "--json"]]) {
          const r = yield* webhooks(handle, me, args)
          expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(1)
          expect(r.stdout).toBe("")
          expect(lines(r.stderr)).toHaveLength(1)
          expect(r.stderr).toContain(id)
          expect(r.stderr).toMatch(/not found/)
        }
      }
      // Still there and unchanged for its owner.
      expect(yield* listJson(handle, other)).toEqual([
        { id: theirs.id, url: theirs.url, events: [], workspaces: [], enabled: true, status: "HEALTHY" }
      ])
    }))

  it.effect("a refused token exits 1 with one line", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const workspace = workspaceOf(handle)
      const r = yield* webhooks(handle, { tokenId: "tid_nobody", tokenSecret: "wrong" }, ["list", "--json"])
      expect(r.code).toBe(1)
      expect(r.stdout).toBe("")
      expect(lines(r.stderr)).toHaveLength(1)
    }))

  it.effect("R-WEBHOOK-04: no secret ever reached stderr, nor the stdout of anything but the create that made it", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const secrets = (handle.ctx.db.prepare("SELECT secret FROM webhooks").all() as Array<{ secret: string }>).map((r) => r.secret)
      // Deleted webhooks' secrets were shown by their create too: take them from the create outputs.
      const shown = runs
        .filter(({ args, result }) => args[0] === "create" && result.code === 0)
        .map(({ result }) => /"secret":"([^"]+)"|^secret: (\S+)$/m.exec(result.stdout))
        .map((m) => m?.[1] ?? m?.[2])
        .filter((s): s is string => s !== undefined)
      const all = [...new Set([...secrets, ...shown])]
      expect(all.length).toBeGreaterThanOrEqual(5)
      for (const secret of all) {
        const showing = runs.filter(({ result }) => result.stdout.includes(secret))
        expect(showing.map(({ args }) => args[0])).toEqual(["create"])
        for (const { args, result } of runs) expect(result.stderr, args.join(" ")).not.toContain(secret)
      }
    }))
})
