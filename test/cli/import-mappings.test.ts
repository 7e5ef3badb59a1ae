/**
 * import-csv --preset with mappings beyond e-mail: `--title-map FILE.json` puts the
 * export's lists and tags under other titles (two merged into one), `--people FILE` maps a
 * person to `skip` (left out, not listed as unresolved); `--plan` and the run's `--json`
 * list the entries used and unused; a bad title map is one line and exit 64.
 */
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { connectionEnv, runCli } from "../support/cli.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"

/** The workspace's records: list and tags by title. */
const records = (handle: EmulatorHandle, ws: string) =>
  Object.fromEntries(
    (handle.ctx.db.prepare(
      `SELECT r.title, l.title AS list,
         (SELECT group_concat(t.title, ',') FROM record_tags rt JOIN tags t ON t.id = rt.tag_id WHERE rt.record_id = r.id) AS tags
       FROM records r JOIN lists l ON l.id = r.list_id WHERE r.workspace_id = ? AND r.deleted_at IS NULL`
    ).all(ws) as Array<{ title: string; list: string; tags: string | null }>).map((r) => [r.title, { list: r.list, tags: r.tags?.split(",").sort() ?? [] }])
  )

const entry = (kind: string, from: string, to: string) => ({ kind, from, to })

layer(emulatorLayer({ seed: "empty" }), { timeout: 30_000, excludeTestServices: true })("import-csv --preset with --title-map and --people", (it) => {
  it.effect("a Jira export's statuses and labels land under the mapped titles (two merged), a person mapped to skip is left out; the plan and the report list the entries used and unused", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const ws = handle.admin.createWorkspace({ name: "jira mapped" }).id
      const dir = yield* tempDir("ws-import-mappings-")
      const csv = path.join(dir, "jira.csv")
      fs.copyFileSync(path.join("test", "fixtures", "presets", "jira.csv"), csv)
      const titles = path.join(dir, "titles.json")
      fs.writeFileSync(titles, JSON.stringify({ lists: { "To Do": "Open", "In Progress": "Open", Done: "Closed", Blocked: "Open" }, tags: { frontend: "web", safari: "web" } }))
      const people = path.join(dir, "people.csv")
      fs.writeFileSync(people, "name,email\nAlice Example,skip\nZed Nobody,zed@example.com\n")
      const args = ["import-csv", "--workspace", ws, "--csv", csv, "--preset", "jira", "--journal", path.join(dir, "j.sqlite"), "--people", people, "--title-map", titles]
      const cli = (extra: ReadonlyArray<string>) => Effect.promise(() => runCli([...args, ...extra], { env: connectionEnv(handle, { app: true }) }))
      const used = {
        people: { used: [entry("person", "Alice Example", "skip")], unused: [entry("person", "Zed Nobody", "zed@example.com")] },
        titles: {
          used: [entry("list", "To Do", "Open"), entry("list", "In Progress", "Open"), entry("list", "Done", "Closed"), entry("tag", "frontend", "web"), entry("tag", "safari", "web")],
          unused: [entry("list", "Blocked", "Open")]
        }
      }

      const planned = yield* cli(["--plan", "--json"])
      expect(planned.code, planned.stderr).toBe(0)
      const plan = JSON.parse(planned.stdout).plan
      expect(plan.mappings).toEqual(used)
      expect([...plan.lists].sort()).toEqual(["Closed", "Open"])
      expect(plan.tags).toContain("web")
      expect(plan.tags).not.toContain("frontend")
      expect(plan.tags).not.toContain("safari")
      // Alice Example is left out by the file; the e-mail of the second row is still not found.
      expect(plan.unresolved).toEqual(["alice@example.com"])
      const text = yield* cli(["--plan"])
      expect(text.code, text.stderr).toBe(0)
      expect(text.stderr).toContain(`plan: mappings not used: list "Blocked" -> "Open"`)

      const run = yield* cli(["--json"])
      expect(run.code, run.stderr).toBe(0)
      const report = JSON.parse(run.stdout)
      expect(report).toMatchObject({ rows: 3, created: 3, rejected: 0, mappings: used, people: { unresolved: ["alice@example.com"] } })
      const made = records(handle, ws)
      expect(made["Login fails on Safari"]!.list).toBe("Closed")
      expect(made["Login fails on Safari"]!.tags.filter((t) => t === "web")).toEqual(["web"])
      expect(made["Login fails on Safari"]!.tags).not.toContain("frontend")
      expect(made["Write release notes"]!.list).toBe("Open")
      expect(made["Date is wrong"]!.list).toBe("Open")
    }), 120_000)

  it.effect("a title map that cannot be used: one line naming the file and what is wrong, exit 64", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-import-mappings-")
      const csv = path.join(dir, "jira.csv")
      fs.copyFileSync(path.join("test", "fixtures", "presets", "jira.csv"), csv)
      const titles = path.join(dir, "titles.json")
      fs.writeFileSync(titles, `{"lists": {"Done": ["Closed"]}}`)
      const r = yield* Effect.promise(() =>
        runCli(["import-csv", "--workspace", "ws", "--csv", csv, "--preset", "jira", "--journal", path.join(dir, "j.sqlite"), "--title-map", titles], { env: connectionEnv(handle, { app: true }) })
      )
      expect(r.code, r.stderr).toBe(64)
      expect(r.stderr.trim().split("\n")).toEqual([expect.stringContaining(`--title-map ${titles}: expected {"lists": {"Source title": "Target title"}, "tags": {...}}: lists.Done: `)])
    }), 120_000)
})
