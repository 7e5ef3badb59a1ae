/**
 * A copy's plan (its listing, what the journal held of each file, each file's op) is kept
 * in a scratch file while the copy runs, read back a page at a time, and gone after: the
 * copy holds nothing a file in its heap. Over more than a page, the files are copied in
 * listing order, a directory target's new names still avoid every earlier one, and a
 * workspace's files all arrive once in batches.
 */
import { describe, expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { copyFiles } from "../../../src/connectors/files/copy.ts"
import { readManifest } from "../../../src/connectors/files/manifest.ts"
import { openJournal } from "../../../src/store/journal.ts"
import { withOwnTmpdir } from "../../support/effect.ts"
import { Emulator, emulatorWithClient, FilesClient, listFiles, runCopy, seedConfirmedFiles, tempDir } from "./_helpers.ts"

/** The copy's scratch files in the system's temporary directory. */
const scratchFiles = () => fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith("worksync-copy-")).map((f) => f.replace(/-[^-]*$/, ""))

/** More files than a page of the plan (500). */
const FILES = 600

const dirCopy = (from: string, to: string, journal: string, seen: { during: Array<string>; done: Array<string> }) =>
  Effect.scoped(
    Effect.gen(function*() {
      const j = yield* openJournal(journal)
      return yield* copyFiles({
        from: { kind: "dir", path: from },
        to: { kind: "dir", path: to },
        journal: j,
        concurrency: 1,
        reporter: {
          planned: () => void (seen.during = scratchFiles()),
          fileDone: (name) => void seen.done.push(name)
        }
      })
    })
  )

describe("copy-files: the plan in a scratch file", () => {
  layer(emulatorWithClient({ seed: "demo" }), { timeout: 60_000, excludeTestServices: true })((it) => {
    it.effect("dir to dir over two pages: copied in listing order, new names avoid earlier ones, the scratch file there while copying and gone after", () =>
      withOwnTmpdir("ws-copy-plan-tmp-", Effect.gen(function*() {
        const src = yield* tempDir("ws-copy-plan-")
        const out = yield* tempDir("ws-copy-plan-")
        const journal = path.join(yield* tempDir("ws-copy-plan-"), "j.sqlite")
        // Listing order: gA-0000.txt ... gA-0599.txt, then g_h.txt (a page later than g/, below).
        const names = Array.from({ length: FILES }, (_, i) => `gA-${String(i).padStart(4, "0")}.txt`)
        for (const name of names) fs.writeFileSync(path.join(src, name), name)
        fs.writeFileSync(path.join(src, "g_h.txt"), "root")

        const first = { during: [] as Array<string>, done: [] as Array<string> }
        expect(scratchFiles()).toEqual([])
        const summary = yield* dirCopy(src, out, journal, first)
        expect(summary).toMatchObject({ files: FILES + 1, copied: FILES + 1, skipped: 0, failed: 0 })
        expect(first.during).toEqual(["worksync-copy-plan"])
        expect(scratchFiles()).toEqual([])
        expect(first.done).toEqual([...names, "g_h.txt"])

        // A new file first in the listing whose safe name is taken by one of a later page.
        fs.mkdirSync(path.join(src, "g"))
        fs.writeFileSync(path.join(src, "g", "h.txt"), "nested")
        const second = { during: [] as Array<string>, done: [] as Array<string> }
        const again = yield* dirCopy(src, out, journal, second)
        expect(again).toMatchObject({ files: FILES + 2, copied: 1, skipped: FILES + 1, failed: 0 })
        expect(second.done).toEqual(["g/h.txt"])
        const byName = new Map(readManifest(out).map((l) => [l.name, l.path]))
        expect(byName.get("g/h.txt")).toBe("g_h (2).txt")
        expect(byName.get("g_h.txt")).toBe("g_h.txt")
        expect(byName.size).toBe(FILES + 2)
        expect(scratchFiles()).toEqual([])
      })), 300_000)

    it.effect("workspace to workspace over two pages: every file once, in batches; the listing's and the plan's scratch files gone after", () =>
      withOwnTmpdir("ws-copy-plan-tmp-", Effect.gen(function*() {
        const emu = yield* Emulator
        const client = yield* FilesClient
        const from = emu.admin.createWorkspace({ name: "Many files" }).id
        const to = emu.admin.createWorkspace({ name: "Their copy" }).id
        seedConfirmedFiles(emu, from, FILES)
        const journalFile = path.join(yield* tempDir("ws-copy-plan-"), "j.sqlite")
        let during: Array<string> = []
        const copy = () =>
          runCopy({
            from: { kind: "workspace", workspaceId: from },
            to: { kind: "workspace", workspaceId: to },
            source: client.files,
            target: client.files,
            journalFile,
            reporter: { planned: () => void (during = scratchFiles()) }
          })
        const summary = yield* copy()
        expect(summary).toMatchObject({ files: FILES, copied: FILES, skipped: 0, failed: 0 })
        // The uids the listing saw are gone with the listing.
        expect(during).toEqual(["worksync-copy-plan"])
        expect(scratchFiles()).toEqual([])
        const copied = (yield* listFiles(client, to)).map((f) => f.name).sort()
        expect(copied).toEqual(Array.from({ length: FILES }, (_, i) => `f${i}.txt`).sort())

        expect(yield* copy()).toMatchObject({ files: FILES, copied: 0, skipped: FILES, failed: 0 })
        expect(scratchFiles()).toEqual([])
      })), 300_000)
  })
})
