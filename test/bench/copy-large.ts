/**
 * Benchmark: one large file (1 GB by default) copied workspace to workspace on loopback
 * by `worksync copy-files`, against a plain streaming copy of the same bytes through the
 * same emulator with curl (download redirect piped into the presigned PUT).
 * Targets: throughput >= 80% of the curl copy; peak RSS of the worksync process <= 150 MB.
 * Prints figures; asserts nothing.
 *
 *   npm run bench -- copy-large          (LARGE_MB=256 for a quicker run)
 */
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { clientLayer } from "../../src/client/layer.ts"
import { fromPath } from "../../src/client/multipart.ts"
import { Uploads } from "../../src/client/uploads.ts"
import { startEmulator } from "../../src/emulator/index.ts"
import { mbps, runCli } from "./_copy-helpers.ts"

const SIZE = Number(process.env.LARGE_MB ?? 1024) * 1024 * 1024
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-bench-copy-large-"))

const writePattern = (file: string, size: number) => {
  const fd = fs.openSync(file, "w")
  const block = Buffer.alloc(4 * 1024 * 1024)
  for (let i = 0; i < block.length; i += 4) block.writeUInt32LE((i * 2654435761) >>> 0, i)
  for (let written = 0, n = 0; written < size; n++) {
    block.writeUInt32LE(n, 0)
    const len = Math.min(block.length, size - written)
    fs.writeSync(fd, block, 0, len)
    written += len
  }
  fs.closeSync(fd)
}

const main = async () => {
  const emu = await startEmulator({ seed: "empty" })
  try {
    const from = emu.workspaces[0]!
    const toCurl = emu.admin.createWorkspace({ name: "curl target" }).id
    const toCli = emu.admin.createWorkspace({ name: "worksync target" }).id
    const file = path.join(dir, "large.bin")
    writePattern(file, SIZE)
    const layer = clientLayer({
      restUrl: emu.restUrl,
      baseUrl: emu.baseUrl,
      token: emu.token,
      tokenId: emu.tokenId,
      tokenSecret: emu.tokenSecret,
      org: emu.org
    })
    // The source file, uploaded through the presigned flow.
    const { uid, presignedForCurl } = await Effect.runPromise(
      Effect.gen(function*() {
        const uploads = yield* Uploads
        const source = yield* fromPath(file)
        const up = yield* uploads.upload(source, { workspaceId: from })
        const presigned = yield* uploads.presign({ filename: "large.bin", size: SIZE, workspaceId: toCurl })
        return { uid: up.uid, presignedForCurl: presigned }
      }).pipe(Effect.provide(layer), Effect.scoped)
    )
    fs.rmSync(file)
    console.log(`file: ${(SIZE / 1024 / 1024).toFixed(0)} MB, emulator and copies on loopback`)

    // Baseline: curl downloads (following the redirect) and streams into the presigned PUT.
    const downloadUrl = `${emu.baseUrl}/uploads/${uid}/large.bin`
    const ct = presignedForCurl.headers["Content-Type"]
    const t0 = performance.now()
    await new Promise<void>((resolve, reject) => {
      const get = spawn("curl", ["-sS", "-L", "--fail", downloadUrl], { stdio: ["ignore", "pipe", "inherit"] })
      const put = spawn(
        "curl",
        ["-sS", "--fail", "-T", "-", "-H", `Content-Type: ${ct}`, presignedForCurl.url],
        { stdio: ["pipe", "ignore", "inherit"] }
      )
      get.stdout.pipe(put.stdin)
      put.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`curl PUT exited ${code}`))))
    })
    const curlMs = performance.now() - t0
    // Async: the emulator answers from this very process.
    await new Promise<void>((resolve, reject) => {
      const confirm = spawn("curl", [
        "-sS", "--fail", "-X", "PUT", "-H", `svc-token-id: ${emu.tokenId}`, "-H", `svc-token-secret: ${emu.tokenSecret}`,
        "-H", `svc-org-id: ${emu.org}`, "-H", `svc-workspace-id: ${toCurl}`,
        `${emu.baseUrl}/uploads/${presignedForCurl.fields["X-Key"]}/confirm`
      ], { stdio: ["ignore", "ignore", "inherit"] })
      confirm.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`curl confirm exited ${code}`))))
    })

    // worksync copy-files, workspace to workspace (download piped into the upload, no disk).
    const journal = path.join(dir, "j.sqlite")
    const r = await runCli(emu, [
      "copy-files", "--from", `workspace:${from}`, "--to", `workspace:${toCli}`, "--journal", journal, "--json", "-q"
    ])
    if (r.code !== 0) throw new Error(`copy-files exited ${r.code}: ${r.stderr}`)
    const curlRate = mbps(SIZE, curlMs)
    const cliRate = mbps(SIZE, r.ms)
    const ratio = cliRate / curlRate
    const rssMb = r.maxRssKb === null ? null : r.maxRssKb / 1024
    console.log(`curl stream copy:        ${(curlMs / 1000).toFixed(2)} s  ${curlRate.toFixed(0)} MB/s`)
    console.log(`worksync copy-files:     ${(r.ms / 1000).toFixed(2)} s  ${cliRate.toFixed(0)} MB/s  (process start, listing, presign, confirm included)`)
    console.log(`throughput vs curl:      ${(ratio * 100).toFixed(0)}%  (target >= 80%: ${ratio >= 0.8 ? "met" : "NOT met"})`)
    console.log(`peak RSS of worksync:    ${rssMb === null ? "n/a" : `${rssMb.toFixed(0)} MB`}  (target <= 150 MB: ${rssMb === null ? "n/a" : rssMb <= 150 ? "met" : "NOT met"})`)
    console.log(`result: ${r.stdout.trim()}`)
  } finally {
    await emu.close()
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

main().catch((e) => {
  console.error(e)
  process.exit(1)
})
