import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { copyFiles } from "../../../src/connectors/files/copy.ts"
import { sha256Hex } from "../../../src/connectors/files/digest.ts"
import { readManifest } from "../../../src/connectors/files/manifest.ts"
import { openJournal } from "../../../src/store/journal.ts"
import { tempDir } from "./_helpers.ts"


const run = (from: string, to: string, journal: string, include?: Array<string>) =>
  Effect.scoped(
    Effect.gen(function*() {
      const j = yield* openJournal(journal)
      return yield* copyFiles({
        from: { kind: "dir", path: from },
        to: { kind: "dir", path: to },
        journal: j,
        concurrency: 3,
        filter: include ? { include } : undefined
      })
    })
  )

// Copies run concurrently on real files: the live clock, so nothing waits on a TestClock.
describe("copy-files dir to dir", () => {
  it.live("copies byte-identical files with safe names and a manifest; a rerun copies nothing", () =>
    Effect.gen(function*() {
      const src = yield* tempDir("ws-dircopy-")
      const out = yield* tempDir("ws-dircopy-")
      const journal = path.join(yield* tempDir("ws-dircopy-"), "j.sqlite")
      fs.mkdirSync(path.join(src, "sub"))
      const files: Record<string, Buffer> = {
        "empty.txt": Buffer.alloc(0),
        "one.bin": Buffer.from([7]),
        "sub/naïve 100% #1?.txt": Buffer.from("hello"),
        "sub_naïve 100% #1_.txt": Buffer.from("clash")
      }
      for (const [rel, bytes] of Object.entries(files)) fs.writeFileSync(path.join(src, rel), bytes)

      const first = yield* run(src, out, journal)
      expect(first).toMatchObject({ files: 4, copied: 4, skipped: 0, failed: 0, bytes: 11 })

      const manifest = readManifest(out)
      expect(manifest.map((l) => [l.name, l.path]).sort()).toEqual([
        ["empty.txt", "empty.txt"],
        ["one.bin", "one.bin"],
        ["sub/naïve 100% #1?.txt", "sub_naïve 100% #1_.txt"],
        ["sub_naïve 100% #1_.txt", "sub_naïve 100% #1_ (2).txt"]
      ])
      for (const line of manifest) {
        const bytes = fs.readFileSync(path.join(out, line.path))
        expect(sha256Hex(bytes)).toBe(line.sha256)
        expect(bytes.equals(files[line.name]!)).toBe(true)
      }
      expect(fs.existsSync(path.join(out, ".worksync-tmp"))).toBe(false)

      const second = yield* run(src, out, journal)
      expect(second).toMatchObject({ files: 4, copied: 0, skipped: 4, failed: 0, bytes: 0 })
      expect(readManifest(out)).toHaveLength(4)

      // A new file later gets a name that avoids every earlier one.
      fs.writeFileSync(path.join(src, "sub", "one.bin"), "x")
      fs.writeFileSync(path.join(src, "sub_one.bin"), "y")
      const third = yield* run(src, out, journal)
      expect(third).toMatchObject({ files: 6, copied: 2, skipped: 4 })
      expect(readManifest(out).map((l) => l.path).filter((p) => p.includes("one"))).toEqual(
        expect.arrayContaining(["one.bin", "sub_one.bin", "sub_one (2).bin"])
      )
    }))

  it.live("filters a directory source by glob", () =>
    Effect.gen(function*() {
      const src = yield* tempDir("ws-dircopy-")
      const out = yield* tempDir("ws-dircopy-")
      fs.writeFileSync(path.join(src, "a.pdf"), "a")
      fs.writeFileSync(path.join(src, "b.txt"), "b")
      const summary = yield* run(src, out, path.join(yield* tempDir("ws-dircopy-"), "j.sqlite"), ["*.pdf"])
      expect(summary).toMatchObject({ files: 1, copied: 1 })
      expect(readManifest(out).map((l) => l.path)).toEqual(["a.pdf"])
    }))

  it.live("never writes through a symlink planted at a target name", () =>
    Effect.gen(function*() {
      const src = yield* tempDir("ws-dircopy-")
      const out = yield* tempDir("ws-dircopy-")
      const elsewhere = yield* tempDir("ws-dircopy-")
      fs.writeFileSync(path.join(src, "victim.txt"), "new")
      fs.writeFileSync(path.join(elsewhere, "keep.txt"), "original")
      fs.symlinkSync(path.join(elsewhere, "keep.txt"), path.join(out, "victim.txt"))
      const summary = yield* run(src, out, path.join(yield* tempDir("ws-dircopy-"), "j.sqlite"))
      expect(summary.copied).toBe(1)
      expect(fs.readFileSync(path.join(elsewhere, "keep.txt"), "utf8")).toBe("original")
      // The existing entry is kept; the copy takes the next free name.
      expect(readManifest(out).map((l) => l.path)).toEqual(["victim (2).txt"])
    }))
})
