/**
 * Help and usage errors are plain text when the output is not a terminal (or NO_COLOR is
 * set): effect/cli styles them with ANSI escapes otherwise. The version the CLI prints is
 * the package's. The top-level help lists the commands one line each, grouped by job; a
 * command's help shows its own flags, then the connection flags, then examples.
 */
import { spawnSync } from "node:child_process"
import { readFileSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { COMMAND_GROUPS, groupOf } from "../../src/cli/command-groups.ts"
import { commands } from "../../src/cli/commands/index.ts"
import { colourFor, stripStyles } from "../../src/cli/plain-text.ts"

const BIN = "bin/worksync.js"
const ESC = "\u001b"

const run = (args: ReadonlyArray<string>) => {
  const env: Record<string, string | undefined> = { ...process.env }
  delete env.NO_COLOR
  delete env.FORCE_COLOR
  return spawnSync(process.execPath, [BIN, ...args], { encoding: "utf8", env, timeout: 20_000 })
}

describe("help without a terminal", () => {
  it("worksync --help and a command's --help print no escape sequences into a pipe", () => {
    for (const args of [["--help"], ["import-csv", "--help"], ["copy-files", "--help"]]) {
      const r = run(args)
      expect(r.status).toBe(0)
      expect(r.stdout).toMatch(/USAGE/)
      expect(r.stdout).not.toContain(ESC)
    }
  })

  it("a usage error on stderr is plain too, and still exits 64", () => {
    const r = run(["backup", "--no-such-flag"])
    expect(r.status).toBe(64)
    expect(r.stderr.length).toBeGreaterThan(0)
    expect(r.stderr).not.toContain(ESC)
  })

  it("colour only on a terminal without NO_COLOR (an empty NO_COLOR does not count)", () => {
    expect(colourFor({ isTTY: true }, {})).toBe(true)
    expect(colourFor({ isTTY: false }, {})).toBe(false)
    expect(colourFor({}, {})).toBe(false)
    expect(colourFor({ isTTY: true }, { NO_COLOR: "1" })).toBe(false)
    expect(colourFor({ isTTY: true }, { NO_COLOR: "" })).toBe(true)
  })

  it("stripping keeps the text and drops only the styles", () => {
    expect(stripStyles("\u001b[0;1m\u001b[0;37;1mworksync\u001b[0;1m\u001b[0m --help")).toBe("worksync --help")
  })
})

describe("version", () => {
  it("`worksync --version` and `worksync version` print package.json's version", () => {
    const { version } = JSON.parse(readFileSync("package.json", "utf8")) as { version: string }
    const flag = run(["--version"])
    expect(flag.status).toBe(0)
    expect(flag.stdout.trim()).toBe(version)
    const command = run(["version"])
    expect(command.status).toBe(0)
    expect(command.stdout.trim()).toBe(`worksync ${version}`)
  })
})

describe("help that fits a screen", () => {
  const registered: ReadonlyArray<string> = commands.map((c) => c.name)
  const root = () => {
    const r = run(["--help"])
    expect(r.status).toBe(0)
    return r.stdout
  }
  /** The lines of one section of a help text: from its heading to the next blank line. */
  const section = (text: string, heading: string) => {
    const lines = text.split("\n")
    const start = lines.findIndex((l) => l.startsWith(heading))
    if (start < 0) return []
    const end = lines.findIndex((l, i) => i > start && l.trim() === "")
    return lines.slice(start + 1, end < 0 ? undefined : end)
  }

  it("every registered command has a group", () => {
    expect(registered.filter((name) => groupOf(name) === undefined)).toEqual([])
  })

  it("worksync --help lists each registered command once, on one line, under its group, and fits 40 lines with the commands still to come", () => {
    const text = root()
    const lines = text.trimEnd().split("\n")
    // The commands the groups name that are not registered yet would add one line each.
    const toCome = COMMAND_GROUPS.flatMap((g) => g.commands).filter((name) => !registered.includes(name))
    expect(lines.length + toCome.length).toBeLessThanOrEqual(40)
    for (const { group, commands: names } of COMMAND_GROUPS) {
      const rows = section(text, `${group}:`)
      expect(rows.map((r) => /^ {2}- (\S+) /.exec(r)?.[1])).toEqual(names.filter((n) => registered.includes(n)))
    }
    for (const name of registered) expect(lines.filter((l) => l.startsWith(`  - ${name} `))).toHaveLength(1)
    // One line each: no examples or notes in the listing.
    expect(text).not.toMatch(/Examples:|EXAMPLES/)
  })

  it("a command's help: its own flags, then the shared connection flags as one block, examples last", () => {
    const r = run(["copy-files", "--help"])
    expect(r.status).toBe(0)
    const text = r.stdout
    const at = (heading: string) => text.indexOf(`\n${heading}`)
    expect(at("FLAGS")).toBeGreaterThan(0)
    expect(at("CONNECTION FLAGS")).toBeGreaterThan(at("FLAGS"))
    expect(at("EXAMPLES")).toBeGreaterThan(at("CONNECTION FLAGS"))
    expect(text.trimEnd().split("\n").at(-1)).toMatch(/^ {2}worksync copy-files /)
    const own = section(text, "FLAGS").map((l) => l.trim().split(/[ ,]/)[0])
    const shared = section(text, "CONNECTION FLAGS").map((l) => l.trim().split(/[ ,]/)[0])
    expect(own).toContain("--journal")
    expect(own).not.toContain("--token")
    expect(shared).toEqual(expect.arrayContaining(["--rest-url", "--token", "--org", "--config", "--profile", "--to-token", "--to-profile"]))
    expect(shared).not.toContain("--journal")
  })

  it("worksync help connection prints the connection flags with their environment variables; help COMMAND is COMMAND --help", () => {
    const r = run(["help", "connection"])
    expect(r.status).toBe(0)
    for (const flag of ["--rest-url", "--base-url", "--token", "--token-id", "--token-secret", "--org", "--header-prefix", "--config", "--profile", "--to-rest-url"]) {
      expect(r.stdout).toContain(`  ${flag} `)
    }
    expect(r.stdout).toContain("WORKSYNC_TOKEN")
    expect(run(["help", "backup"]).stdout).toBe(run(["backup", "--help"]).stdout)
    const unknown = run(["help", "no-such-topic"])
    expect(unknown.status).toBe(64)
    expect(unknown.stderr.trim().split("\n")).toHaveLength(1)
  })
})
