/**
 * The config file of connection profiles: the real binary against the emulator, with
 * the file in the working directory or named by --config / WORKSYNC_CONFIG. Precedence:
 * flag, then profile, then environment.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { argValue, loadConfig, parseConfigFile } from "../../src/cli/config-file.ts"
import { type EmulatorHandle, startEmulator } from "../../src/emulator/index.ts"
import { runCli } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"

/** A directory shared by the tests of the file; each test makes its own subdirectory. */
class ConfigDir extends Context.Service<ConfigDir, string>()("test/cli/ConfigDir") {}

const unreachable = "http://127.0.0.1:9/rest"

const profileOf = (e: EmulatorHandle) => ({
  restUrl: e.restUrl,
  baseUrl: e.baseUrl,
  token: e.token,
  tokenId: e.tokenId,
  tokenSecret: e.tokenSecret,
  org: e.org
})

const writeConfig = (file: string, value: unknown, mode = 0o600) => {
  fs.writeFileSync(file, typeof value === "string" ? value : JSON.stringify(value, null, 2))
  fs.chmodSync(file, mode)
}

const freshDir = (name: string) =>
  Effect.map(ConfigDir, (dir) => {
    const d = path.join(dir, name)
    fs.mkdirSync(d)
    return d
  })

/** Another emulator for the length of a test, closed when it ends. */
const scopedEmulator = (options: Parameters<typeof startEmulator>[0]) =>
  Effect.acquireRelease(Effect.promise(() => startEmulator(options)), (e) => Effect.promise(() => e.close()))

// The CLI runs as a child process against the emulator: real time (`excludeTestServices`).
layer(Layer.merge(emulatorLayer({ seed: "empty" }), Layer.effect(ConfigDir, tempDir("worksync-config-"))), {
  timeout: 30_000,
  excludeTestServices: true
})((it) => {
  describe("worksync.config.json profiles", () => {
    it.effect("backup connects with the default profile of ./worksync.config.json alone (no flags, no env)", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const cwd = yield* freshDir("default-profile")
        writeConfig(path.join(cwd, "worksync.config.json"), { defaultProfile: "dev", profiles: { dev: profileOf(emu) } })
        const r = yield* Effect.promise(() => runCli(["backup", "--snapshot", "s.sqlite", "--json", "--quiet"], { cwd }))
        expect(r.stderr).toBe("")
        expect(r.code).toBe(0)
        expect(JSON.parse(r.stdout)).toMatchObject({ runId: "1", workspaces: 1 })
      }))

    it.effect("a flag wins over the file, and the file wins over the environment", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const cwd = yield* freshDir("precedence")
        // The profile's URL is unreachable: only the flag can make the run succeed.
        writeConfig(path.join(cwd, "worksync.config.json"), {
          profiles: { default: { ...profileOf(emu), restUrl: unreachable } }
        })
        const flagWins = yield* Effect.promise(() => runCli(["backup", "--snapshot", "a.sqlite", "--json", "--quiet", "--rest-url", emu.restUrl], { cwd }))
        expect(flagWins.code).toBe(0)

        // The environment holds a wrong token and a wrong URL; the profile's token and the flag's URL are used.
        const fileBeatsEnv = yield* Effect.promise(() => runCli(["backup", "--snapshot", "b.sqlite", "--json", "--quiet", "--rest-url", emu.restUrl], {
          cwd,
          env: { WORKSYNC_TOKEN: "pat_wrong", WORKSYNC_REST_URL: unreachable }
        }))
        expect(fileBeatsEnv.stderr).toBe("")
        expect(fileBeatsEnv.code).toBe(0)
      }))

    it.effect("a setting missing from the profile falls back to the environment", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const cwd = yield* freshDir("env-fallback")
        const { token: _token, ...withoutToken } = profileOf(emu)
        writeConfig(path.join(cwd, "worksync.config.json"), { profiles: { default: withoutToken } })
        const r = yield* Effect.promise(() => runCli(["backup", "--snapshot", "s.sqlite", "--json", "--quiet"], { cwd, env: { WORKSYNC_TOKEN: emu.token } }))
        expect(r.code).toBe(0)
      }))

    it.effect("--profile and WORKSYNC_PROFILE select a profile; --config and WORKSYNC_CONFIG name the file", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const cwd = yield* freshDir("select")
        writeConfig(path.join(cwd, "conn.json"), {
          defaultProfile: "broken",
          profiles: { broken: { ...profileOf(emu), restUrl: unreachable }, good: profileOf(emu) }
        })
        const byFlag = yield* Effect.promise(() => runCli(["backup", "--snapshot", "a.sqlite", "--json", "--quiet", "--config", "conn.json", "--profile", "good"], { cwd }))
        expect(byFlag.code).toBe(0)
        const byEnv = yield* Effect.promise(() => runCli(["backup", "--snapshot", "b.sqlite", "--json", "--quiet"], {
          cwd,
          env: { WORKSYNC_CONFIG: path.join(cwd, "conn.json"), WORKSYNC_PROFILE: "good" }
        }))
        expect(byEnv.code).toBe(0)
      }))

    it.effect("an unknown profile, a missing file and a malformed file are usage errors (64) with one line saying what to fix", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const cwd = yield* freshDir("errors")
        writeConfig(path.join(cwd, "worksync.config.json"), { profiles: { prod: profileOf(emu), staging: profileOf(emu) } })
        writeConfig(path.join(cwd, "typo.json"), { profiles: { prod: { resturl: emu.restUrl } } })
        writeConfig(path.join(cwd, "broken.json"), "{ not json")

        const unknown = yield* Effect.promise(() => runCli(["backup", "--snapshot", "s.sqlite", "--profile", "prd"], { cwd }))
        expect(unknown.code).toBe(64)
        expect(unknown.stderr.trim().split("\n")).toEqual([
          expect.stringMatching(/^worksync: --profile prd: no such profile in .*worksync\.config\.json \(profiles: prod, staging\)$/)
        ])

        const missing = yield* Effect.promise(() => runCli(["backup", "--snapshot", "s.sqlite", "--config", "nope.json"], { cwd }))
        expect(missing.code).toBe(64)
        expect(missing.stderr.trim()).toBe("worksync: --config nope.json: file not found")

        const typo = yield* Effect.promise(() => runCli(["backup", "--snapshot", "s.sqlite", "--config=typo.json"], { cwd }))
        expect(typo.code).toBe(64)
        expect(typo.stderr).toMatch(/typo\.json: not a worksync config at profiles\.prod\.resturl/)

        const notJson = yield* Effect.promise(() => runCli(["backup", "--snapshot", "s.sqlite", "--config", "broken.json"], { cwd }))
        expect(notJson.code).toBe(64)
        expect(notJson.stderr).toMatch(/broken\.json: not valid JSON/)
        for (const r of [unknown, missing, typo, notJson]) expect(r.stderr).not.toMatch(/\n\s+at /)
      }))

    it.effect("warns when a file holding a token is readable by others, and never prints the token", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const cwd = yield* freshDir("readable")
        writeConfig(path.join(cwd, "worksync.config.json"), { profiles: { default: profileOf(emu) } }, 0o644)
        const loose = yield* Effect.promise(() => runCli(["backup", "--snapshot", "s.sqlite", "--json", "--quiet"], { cwd }))
        expect(loose.code).toBe(0)
        expect(loose.stderr).toMatch(/worksync\.config\.json holds a token and is readable by others; run chmod 600 on it/)
        fs.chmodSync(path.join(cwd, "worksync.config.json"), 0o600)
        const tight = yield* Effect.promise(() => runCli(["backup", "--snapshot", "s.sqlite", "--json", "--quiet"], { cwd }))
        expect(tight.stderr).toBe("")
        for (const r of [loose, tight]) {
          expect(r.stdout + r.stderr).not.toContain(emu.token)
          expect(r.stdout + r.stderr).not.toContain(emu.tokenSecret)
        }
      }))

    it.effect("--help lists --config and --profile with their environment variables", () =>
      Effect.gen(function*() {
        const r = yield* Effect.promise(() => runCli(["backup", "--help"]))
        expect(r.code).toBe(0)
        expect(r.stdout).toMatch(/--config/)
        expect(r.stdout).toMatch(/WORKSYNC_PROFILE/)
      }))
  })

  describe("copy-files --to-profile", () => {
    it.effect("takes the target account from another profile of the file; an unknown one is a usage error before any URL check", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const other = yield* scopedEmulator({ seed: "empty" })
        const cwd = yield* freshDir("to-profile-cli")
        writeConfig(path.join(cwd, "worksync.config.json"), { defaultProfile: "src", profiles: { src: profileOf(emu), dst: profileOf(other) } })
        fs.mkdirSync(path.join(cwd, "in"))
        fs.writeFileSync(path.join(cwd, "in", "hello.txt"), "hello")
        const ok = yield* Effect.promise(() =>
          runCli(
            ["copy-files", "--from", "dir:in", "--to", `workspace:${other.workspaces[0]}`, "--to-profile", "dst", "--journal", "j.sqlite", "--json", "--quiet"],
            { cwd }
          )
        )
        expect(ok.stderr).toBe("")
        expect(JSON.parse(ok.stdout)).toMatchObject({ files: 1, copied: 1, failed: 0 })
        const names = other.ctx.db.prepare("SELECT name FROM files WHERE workspace_id = ?").pluck().all(other.workspaces[0])
        expect(names).toEqual(["hello.txt"])

        const unknown = yield* Effect.promise(() =>
          runCli(
            ["copy-files", "--from", `workspace:${emu.workspaces[0]}`, "--to", "dir:out", "--to-profile", "nope", "--journal", "k.sqlite"],
            { cwd }
          )
        )
        expect(unknown.code).toBe(64)
        expect(unknown.stderr.trim()).toMatch(/^worksync: --to-profile nope: no such profile in .*\(profiles: src, dst\)$/)
      }))
  })

  describe("config file selection (in-process)", () => {
    it("reads --name VALUE and --name=VALUE, stopping at --", () => {
      expect(argValue(["backup", "--profile", "a"], "profile")).toBe("a")
      expect(argValue(["--profile=b"], "profile")).toBe("b")
      expect(argValue(["--", "--profile", "c"], "profile")).toBeUndefined()
    })

    it.effect("picks --to-profile for the target connection and the default profile for the source", () =>
      Effect.gen(function*() {
        const cwd = yield* freshDir("to-profile")
        writeConfig(path.join(cwd, "worksync.config.json"), {
          profiles: { default: { restUrl: "http://a.test/rest" }, target: { restUrl: "http://b.test/rest", token: "t" } }
        })
        const loaded = loadConfig({ argv: ["copy-files", "--to-profile", "target"], env: {}, cwd })
        expect(loaded.problem).toBeUndefined()
        expect(loaded.profile?.restUrl).toBe("http://a.test/rest")
        expect(loaded.targetProfile?.restUrl).toBe("http://b.test/rest")
        expect(loaded.readableBy).toBeUndefined()
      }))

    it.effect("without a file, --profile is an error but nothing else is", () =>
      Effect.gen(function*() {
        const cwd = yield* freshDir("no-file")
        expect(loadConfig({ argv: ["backup"], env: {}, cwd }).problem).toBeUndefined()
        expect(loadConfig({ argv: ["backup", "--profile", "x"], env: {}, cwd }).problem).toMatch(/needs a config file/)
      }))

    it("rejects unknown keys so a typo does not silently drop a setting", () => {
      expect(Result.isFailure(parseConfigFile("f.json", JSON.stringify({ profiles: { a: { tokn: "x" } } })))).toBe(true)
      expect(Result.isSuccess(parseConfigFile("f.json", JSON.stringify({ profiles: { a: { token: "x" } } })))).toBe(true)
    })

    it("names the first bad field and what was expected, never the value found there (it may be a token)", () => {
      const problem = (json: unknown) => {
        const parsed = parseConfigFile("f.json", JSON.stringify(json))
        return Result.isFailure(parsed) ? parsed.failure : undefined
      }
      const hint = `; expected {"profiles": {"NAME": {"restUrl": ..., "token": ...}}}`
      expect(problem({ profiles: { prod: { restUrl: "u", resturl: "tok_in_typo" } } })).toBe(
        `f.json: not a worksync config at profiles.prod.resturl: is unexpected, expected: "restUrl" | "baseUrl" | "token" | "tokenId" | "tokenSecret" | "org" | "headerPrefix" | "maxRetryWait" | "bodyIdleTimeout" | "requestTimeout" | "notifyUrl"${hint}`
      )
      expect(problem({ profiles: { a: { token: ["tok_secret_value"] } } })).toBe(`f.json: not a worksync config at profiles.a.token: Expected string${hint}`)
      expect(problem({ profiles: {}, extra: 1 })).toBe(`f.json: not a worksync config at extra: is unexpected, expected: "defaultProfile" | "profiles"${hint}`)
      expect(problem({ defaultProfile: 3, profiles: {} })).toBe(`f.json: not a worksync config at defaultProfile: Expected string${hint}`)
      expect(problem({})).toBe(`f.json: not a worksync config at profiles: is missing${hint}`)
      expect(problem({ profiles: { a: "tok_secret_value" } })).toMatch(/^f\.json: not a worksync config at profiles\.a: Expected \{ readonly restUrl\?: string/)
      expect(problem([])).toMatch(/^f\.json: not a worksync config: Expected \{ readonly defaultProfile\?: string/)
      for (const bad of [{ profiles: { a: "tok_secret_value" } }, { profiles: { a: { token: ["tok_secret_value"] } } }]) {
        expect(problem(bad)).not.toContain("tok_secret_value")
      }
      // A profile named like an Object method is just a name.
      const parsed = parseConfigFile("f.json", JSON.stringify({ profiles: { constructor: { org: "o" } } }))
      expect(Result.isSuccess(parsed) && parsed.success.profiles.constructor).toEqual({ org: "o" })
      const none = parseConfigFile("f.json", JSON.stringify({ profiles: {} }))
      expect(Result.isSuccess(none) && none.success.profiles.toString).toBeUndefined()
    })
  })

  describe("per-command help", () => {
    it.effect("worksync --help lists every command; each command's --help shows copyable examples", () =>
      Effect.gen(function*() {
        const root = yield* Effect.promise(() => runCli(["--help"]))
        expect(root.code).toBe(0)
        for (const command of ["backup", "diff", "export", "import-csv", "copy-files", "emulator"]) {
          expect(root.stdout).toContain(`- ${command} `)
          const one = yield* Effect.promise(() => runCli([command, "--help"]))
          expect(one.code).toBe(0)
          expect(one.stdout).toMatch(new RegExp(`EXAMPLES\\n  worksync ${command} `))
        }
        const one = yield* Effect.promise(() => runCli(["import-csv", "--help"]))
        expect(one.stdout).toMatch(/EXAMPLES\n  worksync import-csv --workspace website --csv trello\.csv --preset trello/)
      }))
  })

  describe("failures say what to do next", () => {
    it.effect("R-REST-ERR-03: a refused token ends with exit 1 and one line that names HTTP 401 and the flags to check", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const cwd = yield* freshDir("refused")
        for (const args of [
          ["backup", "--snapshot", "s.sqlite"],
          ["import-csv", "--workspace", emu.workspaces[0]!, "--csv", new URL("../../examples/data/generic.csv", import.meta.url).pathname, "--journal", "j.sqlite"]
        ]) {
          const r = yield* Effect.promise(() => runCli([...args, "--quiet", "--rest-url", emu.restUrl, "--token", "pat_refused_0123456789"], { cwd }))
          expect(r.code).toBe(1)
          expect(r.stderr.trim().split("\n")).toEqual([
            expect.stringMatching(/HTTP 401.*the token was refused: check --token/)
          ])
          expect(r.stderr).not.toContain("pat_refused_0123456789")
        }
      }))
  })
})
