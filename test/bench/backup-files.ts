/**
 * Benchmark: `worksync backup --files` of 1,000 files of 1 MB in two workspaces, 10% of
 * them the same bytes in both (stored once), run twice: wall time, peak RSS, objects and
 * bytes written by each run (the second should write nothing). Prints figures; asserts
 * nothing.
 *
 *   npm run bench -- backup-files          (FILES=200 FILE_KB=256 for a quicker run)
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Readable } from "node:stream"
import { startEmulator } from "../../src/emulator/index.ts"
import { insertFile, storageKeyFor } from "../../src/emulator/uploads/files.ts"
import { mbps, runCli } from "./_copy-helpers.ts"

const FILES = Number(process.env.FILES ?? 1000)
const SIZE = Number(process.env.FILE_KB ?? 1024) * 1024
const SHARED = Math.round(FILES * 0.1)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-backup-files-"))

/** 1 MB of bytes unique to `seed` (cheap to make, incompressible enough for a disk). */
const bytesOf = (seed: number): Buffer => {
  const b = Buffer.alloc(SIZE)
  let x = (seed * 2654435761) >>> 0 || 1
  for (let i = 0; i < SIZE; i += 4) {
    x ^= x << 13
    x ^= x >>> 17
    x ^= x << 5
    b.writeUInt32LE(x >>> 0, i)
  }
  return b
}

/** Bytes under `root`, in all. */
const du = (root: string): number => {
  let n = 0
  for (const entry of fs.readdirSync(root, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) n += fs.statSync(path.join(entry.parentPath, entry.name)).size
  }
  return n
}

const main = async () => {
  const emu = await startEmulator({ seed: "empty" })
  try {
    const a = emu.admin.createWorkspace({ name: "files A" }).id
    const b = emu.admin.createWorkspace({ name: "files B" }).id
    const perWorkspace = FILES / 2
    const seed = async (workspaceId: string, name: string, bytes: Buffer) => {
      const row = insertFile(emu.ctx, {
        name, size: bytes.length, type: "application/octet-stream", extension: "bin", orgId: emu.org, workspaceId, status: "CONFIRMED"
      })
      await emu.ctx.objects.put(storageKeyFor(row.uid), Readable.from([bytes]))
    }
    const t0 = performance.now()
    for (let i = 0; i < perWorkspace; i++) await seed(a, `a-${i}.bin`, bytesOf(i + 1))
    // The first SHARED files of B are the bytes of A's first SHARED files.
    for (let i = 0; i < perWorkspace; i++) await seed(b, `b-${i}.bin`, bytesOf(i < SHARED ? i + 1 : perWorkspace + i + 1))
    console.log(`seeded ${FILES} files of ${SIZE / 1024} KB (${SHARED} shared across the two workspaces) in ${((performance.now() - t0) / 1000).toFixed(1)} s`)

    const snapshot = path.join(dir, "backup.sqlite")
    const files = path.join(dir, "files")
    for (const label of ["first run ", "second run"]) {
      const r = await runCli(emu, ["backup", "--snapshot", snapshot, "--files", files, "--workspace", a, "--workspace", b, "--json", "-q"])
      if (r.code !== 0) throw new Error(`backup exited ${r.code}: ${r.stderr}`)
      const out = JSON.parse(r.stdout) as { fileBytes: { stored: number; reused: number; bytes: number } }
      const fb = out.fileBytes
      console.log(
        `${label}: ${(r.ms / 1000).toFixed(2)} s, ${fb.stored} objects stored (${(fb.bytes / 1024 / 1024).toFixed(0)} MB written, ` +
          `${mbps(fb.bytes, r.ms).toFixed(1)} MB/s), ${fb.reused} reused, peak RSS ${r.maxRssKb === null ? "n/a" : `${(r.maxRssKb / 1024).toFixed(0)} MB`}`
      )
    }
    console.log(`DIR holds ${(du(files) / 1024 / 1024).toFixed(0)} MB for ${FILES} files (${FILES - SHARED} distinct contents)`)
  } finally {
    await emu.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
