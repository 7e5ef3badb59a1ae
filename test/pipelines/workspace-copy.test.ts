/**
 * pipelines/workspace-copy.ts: records and files from a workspace of one account to a
 * workspace of another (two emulators, so nothing is shared but the pipeline).
 */
import * as Effect from "effect/Effect"
import * as Context from "effect/Context"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import { workspaceCopy } from "../../pipelines/workspace-copy.ts"
import { RestClient } from "../../src/client/rest-client.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { emulatorClient, emulatorEnv, runScript } from "./helpers.ts"

const titles = (emu: EmulatorHandle, workspaceId: string) =>
  emu.ctx.db.prepare("SELECT title FROM records WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY title").pluck().all(workspaceId) as Array<string>
const files = (emu: EmulatorHandle, workspaceId: string) =>
  emu.ctx.db.prepare("SELECT name || ':' || size FROM files WHERE workspace_id = ? AND status = 'CONFIRMED' ORDER BY name, size").pluck().all(workspaceId) as Array<string>

/** Two accounts, each its own emulator: nothing is shared but the pipeline. */
class Source extends Context.Service<Source, EmulatorHandle>()("test/Source") {}
class Target extends Context.Service<Target, EmulatorHandle>()("test/Target") {}

const emulatorsLayer = Layer.merge(
  Layer.effect(Source, Emulator).pipe(Layer.provide(emulatorLayer({ seed: "demo" }))),
  Layer.effect(Target, Emulator).pipe(Layer.provide(emulatorLayer({ seed: "empty" })))
)

// Real HTTP to the emulators and real child processes: the live clock (no TestClock).
layer(emulatorsLayer, { timeout: 30_000, excludeTestServices: true })("workspace to workspace copy pipeline", (it) => {
  it.effect("the dry run plans every record and writes nothing to the target", () =>
    Effect.gen(function*() {
      const source = yield* Source
      const target = yield* Target
      const dir = yield* tempDir("worksync-wscopy-")
      const from = source.workspaces[1]!
      const to = target.workspaces[0]!
      const result = yield* workspaceCopy({ sourceWorkspaceId: from, targetWorkspaceId: to, stateDir: path.join(dir, "dry"), dryRun: true }, emulatorClient(source), emulatorClient(target))
      expect(result.dryRun).toBe(true)
      expect(result.records.planned.creates).toBe(titles(source, from).length)
      expect(titles(target, to)).toEqual([])
      expect(files(target, to)).toEqual([])
    }))

  it.effect("runs as a script between two accounts (WORKSYNC_* and WORKSYNC_TARGET_*), then a rerun sends nothing", () =>
    Effect.gen(function*() {
      const source = yield* Source
      const target = yield* Target
      const dir = yield* tempDir("worksync-wscopy-")
      const from = source.workspaces[0]!
      const to = target.admin.createWorkspace({ name: "Moved here" }).id
      const stateDir = path.join(dir, "state")
      const r = yield* Effect.promise(() =>
        runScript(
        "pipelines/workspace-copy.ts",
        ["--from", from, "--to", to, "--state", stateDir, "--json"],
        { ...emulatorEnv(source), ...emulatorEnv(target, "WORKSYNC_TARGET_") }
      ))
      expect(r.stderr).toMatch(/^workspace-copy: records: 30 created, \d+ updated, 0 deleted, 0 unchanged; files: 9 copied, 0 already copied; assignees without a target user: ada@acme.test/)
      expect(r.code).toBe(0)
      expect(JSON.parse(r.stdout)).toMatchObject({ dryRun: false, records: { created: 30, failed: 0 }, files: { copied: 9, failed: 0 } })
      expect(titles(target, to)).toEqual(titles(source, from))
      expect(files(target, to)).toEqual(files(source, from))
      expect(r.stdout + r.stderr).not.toContain(target.token)

      const again = yield* workspaceCopy({ sourceWorkspaceId: from, targetWorkspaceId: to, stateDir }, emulatorClient(source), emulatorClient(target))
      expect(again.records).toMatchObject({ created: 0, updated: 0, unchanged: 30 })
      expect(again.files).toMatchObject({ copied: 0, skipped: 9 })
      expect(titles(target, to)).toHaveLength(30)

      // A record deleted at the source goes from the target only when asked (R-REST-RECORD-53).
      const gone = source.ctx.db.prepare("SELECT id, title FROM records WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY id LIMIT 1").get(from) as { id: string; title: string }
      yield* Effect.flatMap(RestClient, (c) => c.deleteRecord({ workspaceId: from, recordId: gone.id })).pipe(Effect.provide(emulatorClient(source)))
      const deleting = yield* Effect.promise(() =>
        runScript(
        "pipelines/workspace-copy.ts",
        ["--from", from, "--to", to, "--state", stateDir, "--delete-missing", "--json"],
        { ...emulatorEnv(source), ...emulatorEnv(target, "WORKSYNC_TARGET_") }
      ))
      expect(deleting.stderr).toMatch(/^workspace-copy: records: 0 created, 0 updated, 1 deleted, 29 unchanged/)
      expect(deleting.code).toBe(0)
      expect(titles(target, to)).toEqual(titles(source, from))
      expect(titles(target, to)).toHaveLength(29)
    }))

  it.effect("an unknown source workspace is a usage error naming --from", () =>
    Effect.gen(function*() {
      const source = yield* Source
      const target = yield* Target
      const dir = yield* tempDir("worksync-wscopy-")
      const error = yield* Effect.flip(workspaceCopy({ sourceWorkspaceId: "nope", targetWorkspaceId: "x", stateDir: path.join(dir, "bad") }, emulatorClient(source), emulatorClient(target)))
      expect(error._tag).toBe("PipelineUsage")
      expect(error.message).toMatch(/^--from nope: workspace nope not found/)
    }))
})
