/**
 * Shared pieces of the security tests: an emulator user whose credentials are
 * distinctive canaries, wrong canaries for the error paths, and scans that look for
 * any of them in text or in the raw bytes of every file a command left behind.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { EmulatorHandle } from "../../src/emulator/index.ts"

export interface Canary {
  readonly userId: string
  readonly token: string
  readonly tokenId: string
  readonly tokenSecret: string
}

const hex = (bytes: number) => randomBytes(bytes).toString("hex")

/**
 * A user (organization OWNER, ADMIN of every seeded workspace) whose REST token and
 * GraphQL secret are replaced by distinctive values, so a leak of even a part of one is
 * unmistakable.
 */
export const canaryUser = (emu: EmulatorHandle, label: string): Canary => {
  const workspaces = Object.fromEntries(emu.workspaces.map((w) => [w, "ADMIN" as const]))
  const issued = emu.admin.createUser({
    email: `${label}@canary.example`,
    firstName: "Canary",
    lastName: label,
    orgLevel: "OWNER",
    workspaces
  })
  const token = `pat_LEAKCANARYtoken${hex(16)}`
  const tokenSecret = `LEAKCANARYsecret${hex(16)}`
  emu.ctx.db
    .prepare("UPDATE tokens SET token = ?, token_secret = ? WHERE token_id = ?")
    .run(token, tokenSecret, issued.tokenId)
  return { userId: issued.userId, token, tokenId: issued.tokenId, tokenSecret }
}

/** Credentials of the same shape the service does not know. */
export const wrongCanary = () => ({
  token: `pat_WRONGCANARYtoken${hex(16)}`,
  tokenSecret: `WRONGCANARYsecret${hex(16)}`
})

/**
 * Fragments that betray a secret: the whole value and every 12-character window of it,
 * so a truncated or partly masked copy is caught too (the windows include the random
 * part, which nothing else holds).
 */
export const fragmentsOf = (secrets: ReadonlyArray<string>): ReadonlyArray<string> => {
  const out = new Set<string>()
  for (const s of secrets) {
    out.add(s)
    for (let i = 0; i + 12 <= s.length; i += 3) out.add(s.slice(i, i + 12))
  }
  return [...out]
}

/** The fragments found in `text` (empty when clean). */
export const leaksIn = (text: string, secrets: ReadonlyArray<string>): Array<string> =>
  fragmentsOf(secrets).filter((f) => text.includes(f))

/** Every regular file under `dir` (not following links), depth first. */
export const filesUnder = (dir: string): Array<string> => {
  const out: Array<string> = []
  if (!fs.existsSync(dir)) return out
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name)
    if (entry.isDirectory()) out.push(...filesUnder(full))
    else if (entry.isFile()) out.push(full)
  }
  return out
}

/**
 * Secrets found in the raw bytes of every file under `dir` (SQLite main files, -wal,
 * -shm and -journal files, manifests, exports), as UTF-8 and as UTF-16LE (SQLite may
 * store text either way). Returns `file: fragment` entries; empty when clean.
 */
export const leaksInFiles = (dir: string, secrets: ReadonlyArray<string>): Array<string> => {
  const needles = fragmentsOf(secrets).flatMap((f) => [
    { f, bytes: Buffer.from(f, "utf8") },
    { f, bytes: Buffer.from(f, "utf16le") }
  ])
  const found: Array<string> = []
  for (const file of filesUnder(dir)) {
    const bytes = fs.readFileSync(file)
    for (const n of needles) if (bytes.includes(n.bytes)) found.push(`${path.relative(dir, file)}: ${n.f}`)
  }
  return found
}

/** A temp dir removed by `cleanup`. */
export const tempDirs = () => {
  const dirs: Array<string> = []
  return {
    make(prefix = "ws-sec-"): string {
      const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix))
      dirs.push(d)
      return d
    },
    cleanup(): void {
      for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
    }
  }
}

/** Lines of a stack trace (`    at fn (file:line:col)`) or a thrown error's dump. */
export const STACK_LINE = /^\s+at\s|\bat\s+\S+\s+\(.*:\d+:\d+\)|node:internal|\.ts:\d+:\d+|\.js:\d+:\d+/m
