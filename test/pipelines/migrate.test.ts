/**
 * pipelines/migrate.ts: CSV through a preset, then a directory of attachments, with a
 * dry run first; against the emulator.
 */
import * as Effect from "effect/Effect"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import { migrate } from "../../pipelines/migrate.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { emulatorClient, emulatorEnv, runScript, soleError } from "./helpers.ts"

const ROOT = new URL("../..", import.meta.url).pathname
const TRELLO = path.join(ROOT, "examples", "data", "trello-export.csv")

const filesIn = (emu: EmulatorHandle, workspaceId: string) =>
  (emu.ctx.db.prepare("SELECT name FROM files WHERE workspace_id = ? AND status = 'CONFIRMED' ORDER BY name").pluck().all(workspaceId) as Array<string>)

/** The file's working directory (removed at the end) with a directory of attachments to upload. */
class Workdir extends Context.Service<Workdir, { readonly dir: string; readonly attachments: string }>()("test/Workdir") {}

const workdirLayer = Layer.effect(
  Workdir,
  Effect.map(tempDir("worksync-migrate-"), (dir) => {
    const attachments = path.join(dir, "attachments")
    fs.mkdirSync(path.join(attachments, "specs"), { recursive: true })
    fs.writeFileSync(path.join(attachments, "logo.png"), Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]))
    fs.writeFileSync(path.join(attachments, "specs", "landing page.txt"), "Hero, pricing and FAQ\n")
    return { dir, attachments }
  })
)

// Real HTTP to the emulator and real child processes: the live clock (no TestClock).
layer(Layer.merge(emulatorLayer({ seed: "empty" }), workdirLayer), { timeout: 30_000, excludeTestServices: true })("migration pipeline", (it) => {
  it.effect("the dry run sends nothing; the run imports every row and uploads every file once; a rerun sends nothing", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const { attachments, dir } = yield* Workdir
      const workspaceId = emu.admin.createWorkspace({ name: "From Trello" }).id
      const stateDir = path.join(dir, "state-ok")
      const options = { workspaceId, csv: TRELLO, preset: "trello" as const, filesDir: attachments, stateDir }
      const client = emulatorClient(emu)

      const dry = yield* migrate({ ...options, dryRun: true }).pipe(Effect.provide(client))
      expect(dry.plan).toEqual({ rows: 3, toCreate: 3, alreadyImported: 0, rejected: 0, files: 2, bytes: 7 + 22 })
      expect(emu.admin.countRecords(workspaceId)).toBe(0)
      expect(filesIn(emu, workspaceId)).toEqual([])
      expect(fs.existsSync(stateDir)).toBe(false)

      // The alt reading's list create makes no list (CREATE_LIST_READING): rows in the first list, lists named.
      const listsNotice = emu.variant === "alt" ? { notices: [expect.stringContaining('records go to the first list: "Doing", "Done"')] } : {}
      const done = yield* migrate(options).pipe(Effect.provide(client))
      expect(done.import).toEqual({ rows: 3, created: 3, skipped: 0, rejected: 0, ...listsNotice })
      expect(done.files).toMatchObject({ files: 2, copied: 2, failed: 0 })
      expect(emu.admin.countRecords(workspaceId)).toBe(3)
      expect(filesIn(emu, workspaceId)).toEqual(["logo.png", "specs/landing page.txt"])

      const again = yield* migrate(options).pipe(Effect.provide(client))
      expect(again.plan.toCreate).toBe(0)
      expect(again.import).toEqual({ rows: 3, created: 0, skipped: 3, rejected: 0, ...listsNotice })
      expect(again.files).toMatchObject({ copied: 0, skipped: 2 })
      expect(emu.admin.countRecords(workspaceId)).toBe(3)
      expect(filesIn(emu, workspaceId)).toHaveLength(2)
    }))

  it.effect("rows the dry run rejects stop the migration before anything is sent, unless accepted (then exit-2 rejection with the rejects file)", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const { dir } = yield* Workdir
      const workspaceId = emu.admin.createWorkspace({ name: "With a bad row" }).id
      const csv = path.join(dir, "bad.csv")
      fs.writeFileSync(csv, "key,title,duedAt\n1,Good row,2024-05-01\n2,Bad date,someday soon\n")
      const stateDir = path.join(dir, "state-bad")
      const client = emulatorClient(emu)
      const base = { workspaceId, csv, preset: "generic" as const, stateDir }

      const stopped = yield* Effect.exit(migrate(base).pipe(Effect.provide(client)))
      const error = soleError(stopped)
      expect(error?._tag).toBe("PipelineRejected")
      expect(error?.message).toMatch(/^the dry run rejects 1 of 2 row\(s\); nothing was sent/)
      expect(emu.admin.countRecords(workspaceId)).toBe(0)

      const accepted = yield* Effect.exit(migrate({ ...base, acceptRejects: true }).pipe(Effect.provide(client)))
      const rejected = soleError(accepted)
      expect(rejected?._tag).toBe("PipelineRejected")
      expect(rejected?.message).toMatch(/^imported 1 record\(s\); 1 row\(s\) rejected, see .*import\.rejects\.csv$/)
      expect(emu.admin.countRecords(workspaceId)).toBe(1)
      expect(fs.readFileSync(path.join(stateDir, "import.rejects.csv"), "utf8")).toMatch(/Bad date/)
    }))

  it.effect("runs as a script: --dry-run --json prints the plan and one line; a missing CSV exits 64", () =>
    Effect.gen(function*() {
      const emu = yield* Emulator
      const { attachments, dir } = yield* Workdir
      const workspaceId = emu.admin.createWorkspace({ name: "Script" }).id
      const args = ["--workspace", workspaceId, "--csv", TRELLO, "--preset", "trello", "--files", attachments, "--state", path.join(dir, "state-script")]
      const dry = yield* Effect.promise(() => runScript("pipelines/migrate.ts", [...args, "--dry-run", "--json"], emulatorEnv(emu)))
      expect(dry.code).toBe(0)
      expect(JSON.parse(dry.stdout)).toMatchObject({ dryRun: true, plan: { rows: 3, toCreate: 3, files: 2 } })
      expect(dry.stderr.trim()).toBe("migrate: dry run: 3 rows, 3 records to create, 0 already imported, 0 rejected; 2 file(s) (29 bytes) to upload; nothing was sent")
      expect(emu.admin.countRecords(workspaceId)).toBe(0)

      const missing = yield* Effect.promise(() => runScript("pipelines/migrate.ts", ["--workspace", workspaceId, "--csv", "nope.csv", "--state", dir], emulatorEnv(emu)))
      expect(missing.code).toBe(64)
      expect(missing.stderr.trim()).toBe("migrate: --csv nope.csv: file not found")
    }))
})
