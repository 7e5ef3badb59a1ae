/**
 * `verify --files DIR` through the real binary: the objects `backup --files DIR` stored
 * are read and hashed (all, or a sample with --sample), an object whose bytes changed or
 * that is gone fails by name, and a run that holds no bytes for its files fails too.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as fs from "node:fs"
import * as path from "node:path"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { connectionEnv } from "../support/cli.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { cli, WorkDir, workDirLayer } from "./cli-effect.ts"

/** Each test runs the CLI several times; a loaded machine may need a while (no assertion is on time). */
const TEST_TIMEOUT = 180_000

interface Check {
  name: string
  ok: boolean
  checked: number
  failed: number
  first: string | null
}
const objectsCheck = (stdout: string): Check => (JSON.parse(stdout) as { checks: Array<Check> }).checks.find((c) => c.name === "objects")!

const confirmedFiles = (emu: EmulatorHandle) =>
  emu.ctx.db.prepare("SELECT count(*) FROM files WHERE status = 'CONFIRMED' AND workspace_id IS NOT NULL").pluck().get() as number

/** Every object under DIR, by name. */
const objectsIn = (dir: string): Array<string> =>
  fs.readdirSync(path.join(dir, "objects")).flatMap((d) => fs.readdirSync(path.join(dir, "objects", d)).map((f) => path.join(dir, "objects", d, f))).sort()

const copyDir = (from: string, to: string) => fs.cpSync(from, to, { recursive: true })

layer(Layer.merge(emulatorLayer({ seed: "demo" }), workDirLayer("ws-cli-verify-files-")), { timeout: 90_000, excludeTestServices: true })(
  "worksync verify --files",
  (it) => {
    it.effect("every stored object is read and hashed; --sample reads a share of them", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const dir = yield* WorkDir
        const snapshot = path.join(dir, "files.sqlite")
        const files = path.join(dir, "files")
        const b = yield* cli(["backup", "--snapshot", snapshot, "--files", files, "--json"], { env: connectionEnv(emu) })
        expect(b.code, b.stderr).toBe(0)
        const objects = objectsIn(files).length
        expect(objects).toBeGreaterThan(2)

        const all = yield* cli(["verify", "--snapshot", snapshot, "--files", files, "--json"])
        expect(all.code, all.stderr).toBe(0)
        // One item per CONFIRMED file of the run (its bytes are recorded), one per object read.
        expect(objectsCheck(all.stdout)).toEqual({ name: "objects", ok: true, checked: confirmedFiles(emu) + objects, failed: 0, first: null })

        const half = yield* cli(["verify", "--snapshot", snapshot, "--files", files, "--sample", "50", "--json"])
        expect(half.code, half.stderr).toBe(0)
        expect(objectsCheck(half.stdout).checked).toBe(confirmedFiles(emu) + Math.ceil(objects / 2))
      }), TEST_TIMEOUT)

    it.effect("an object whose bytes changed, or that is gone, fails by name", () =>
      Effect.gen(function*() {
        const dir = yield* WorkDir
        const snapshot = path.join(dir, "files.sqlite")
        const damaged = path.join(dir, "damaged-files")
        copyDir(path.join(dir, "files"), damaged)
        const [first, second] = objectsIn(damaged)
        // Same size, other bytes: a bit rot no size check sees.
        const bytes = fs.readFileSync(first!)
        bytes[0] = bytes[0]! ^ 0xff
        fs.writeFileSync(first!, bytes)
        fs.rmSync(second!)
        const r = yield* cli(["verify", "--snapshot", snapshot, "--files", damaged, "--json"])
        expect(r.code).toBe(1)
        const objects = objectsCheck(r.stdout)
        expect(objects).toMatchObject({ ok: false, failed: 2 })
        expect(objects.first).toMatch(new RegExp(`^object ${path.basename(first!)}: its bytes under .* hash to [0-9a-f]{64}$`))
        expect(r.stderr).toMatch(new RegExp(`worksync: verify: run 1: objects failed: object ${path.basename(first!)}`))

        const partial = path.join(dir, "partial-files")
        copyDir(path.join(dir, "files"), partial)
        fs.rmSync(objectsIn(partial)[0]!)
        const gone = yield* cli(["verify", "--snapshot", snapshot, "--files", partial, "--json"])
        expect(gone.code).toBe(1)
        expect(objectsCheck(gone.stdout).first).toMatch(/^object [0-9a-f]{64}: missing from /)
      }), TEST_TIMEOUT)

    it.effect("a run backed up without --files holds no bytes for its files: it fails naming the first", () =>
      Effect.gen(function*() {
        const emu = yield* Emulator
        const dir = yield* WorkDir
        const snapshot = path.join(dir, "files.sqlite")
        const b = yield* cli(["backup", "--snapshot", snapshot, "--json"], { env: connectionEnv(emu) })
        expect(b.code, b.stderr).toBe(0)
        const r = yield* cli(["verify", "--snapshot", snapshot, "--files", path.join(dir, "files"), "--json"])
        expect(r.code).toBe(1)
        const objects = objectsCheck(r.stdout)
        expect(objects.failed).toBe(confirmedFiles(emu))
        expect(objects.first).toMatch(/^file \w+ \(".*"\): the run holds no bytes for it/)
        // The run before, backed up with its bytes, still verifies.
        const earlier = yield* cli(["verify", "--snapshot", snapshot, "--run", "1", "--files", path.join(dir, "files")])
        expect(earlier.code, earlier.stderr).toBe(0)
      }), TEST_TIMEOUT)
  }
)
