/**
 * Benchmark: 2,000 files of 10 KB copied from a directory into a workspace, files per
 * second with the chosen strategy (auto: uploadFiles batches for small files) against
 * presign-only, at the same concurrency. Prints figures; asserts nothing.
 *
 *   npm run bench -- copy-small          (SMALL_FILES=500 for a quicker run)
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { startEmulator } from "../../src/emulator/index.ts"
import { runCli } from "./_copy-helpers.ts"

const FILES = Number(process.env.SMALL_FILES ?? 2000)
const SIZE = 10 * 1024
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 4)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-copy-small-"))

const main = async () => {
  const src = path.join(dir, "src")
  fs.mkdirSync(src)
  for (let i = 0; i < FILES; i++) {
    const bytes = Buffer.alloc(SIZE, i % 251)
    bytes.writeUInt32BE(i, 0)
    fs.writeFileSync(path.join(src, `doc-${String(i).padStart(5, "0")}.txt`), bytes)
  }
  const emu = await startEmulator({ seed: "empty" })
  try {
    console.log(`${FILES} files of ${SIZE / 1024} KB, directory to workspace, concurrency ${CONCURRENCY}`)
    const rates: Record<string, number> = {}
    for (const strategy of ["presign", "auto"] as const) {
      const ws = emu.admin.createWorkspace({ name: `small ${strategy}` }).id
      const r = await runCli(emu, [
        "copy-files", "--from", `dir:${src}`, "--to", `workspace:${ws}`, "--journal", path.join(dir, `${strategy}.sqlite`),
        "--concurrency", String(CONCURRENCY), "--upload-strategy", strategy, "--json", "-q"
      ])
      if (r.code !== 0) throw new Error(`copy-files (${strategy}) exited ${r.code}: ${r.stderr}`)
      const rate = FILES / (r.ms / 1000)
      rates[strategy] = rate
      console.log(
        `${strategy === "auto" ? "auto (uploadFiles batches)" : "presign only             "}: ${(r.ms / 1000).toFixed(2)} s  ${rate.toFixed(0)} files/s  peak RSS ${r.maxRssKb === null ? "n/a" : `${(r.maxRssKb / 1024).toFixed(0)} MB`}`
      )
    }
    console.log(`auto vs presign-only: ${(rates["auto"]! / rates["presign"]!).toFixed(1)}x`)
  } finally {
    await emu.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
