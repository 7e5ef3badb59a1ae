import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { digestFile, sha256Hex } from "../../../src/connectors/files/digest.ts"
import { openManifest, readManifest } from "../../../src/connectors/files/manifest.ts"
import { walkDirectory } from "../../../src/connectors/files/walk.ts"

const dirs: Array<string> = []
const tempDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "ws-files-"))
  dirs.push(d)
  return d
}
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
})

const line = (n: number) => ({ id: `id${n}`, uid: `uid${n}`, name: `f${n}.txt`, path: `f${n}.txt`, size: n, sha256: "ab" })

describe("manifest.ndjson", () => {
  it("writes one line per file with the contract's keys in order", () => {
    const dir = tempDir()
    const m = openManifest(dir)
    m.append(line(1))
    m.append(line(2))
    m.close()
    const text = fs.readFileSync(path.join(dir, "manifest.ndjson"), "utf8")
    expect(text.split("\n")[0]).toBe('{"id":"id1","uid":"uid1","name":"f1.txt","path":"f1.txt","size":1,"sha256":"ab"}')
    expect(readManifest(dir)).toHaveLength(2)
  })

  it("does not list a file twice when it is copied again after an interruption", () => {
    const dir = tempDir()
    const m = openManifest(dir)
    m.append(line(1))
    m.close()
    const again = openManifest(dir)
    again.append(line(1))
    again.append(line(2))
    again.close()
    expect(readManifest(dir).map((l) => l.uid)).toEqual(["uid1", "uid2"])
  })

  it("cuts a torn last line left by a killed process before appending", () => {
    const dir = tempDir()
    fs.writeFileSync(path.join(dir, "manifest.ndjson"), JSON.stringify(line(1)) + "\n" + '{"id":"id2","ui')
    const m = openManifest(dir)
    m.append(line(3))
    m.close()
    const text = fs.readFileSync(path.join(dir, "manifest.ndjson"), "utf8")
    expect(text.trim().split("\n").map((t) => JSON.parse(t).uid)).toEqual(["uid1", "uid3"])
  })
})

describe("directory walk", () => {
  it("lists regular files in a stable order with /-separated relative paths, filtered by glob", async () => {
    const root = tempDir()
    fs.mkdirSync(path.join(root, "b/deep"), { recursive: true })
    fs.writeFileSync(path.join(root, "a.txt"), "a")
    fs.writeFileSync(path.join(root, "b/deep/c.pdf"), "cc")
    fs.writeFileSync(path.join(root, "b/d.txt"), "ddd")
    fs.writeFileSync(path.join(root, ".hidden.txt"), "h")
    fs.mkdirSync(path.join(root, ".worksync-tmp"))
    fs.writeFileSync(path.join(root, ".worksync-tmp/partial"), "x")
    const outside = tempDir()
    fs.writeFileSync(path.join(outside, "secret.txt"), "s")
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(root, "link.txt"))
    fs.symlinkSync(outside, path.join(root, "linkdir"))

    const all = await walkDirectory(root)
    expect(all.map((f) => f.relPath)).toEqual([".hidden.txt", "a.txt", "b/d.txt", "b/deep/c.pdf"])
    expect(all.find((f) => f.relPath === "b/d.txt")?.size).toBe(3)

    const txt = await walkDirectory(root, { include: ["**/*.txt"], exclude: [".*"] })
    expect(txt.map((f) => f.relPath)).toEqual(["a.txt", "b/d.txt"])
  })
})

describe("digest", () => {
  it("computes sha256 and size of a file by streaming", async () => {
    const dir = tempDir()
    const file = path.join(dir, "x.bin")
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 7, 0x5a)
    fs.writeFileSync(file, bytes)
    expect(await digestFile(file)).toEqual({ size: bytes.length, sha256: sha256Hex(bytes) })
  })
})
