/**
 * Seeded files: per workspace a set that exercises clients' edge cases (0 and 1 byte,
 * a few KB, a real PNG, names needing URL-encoding, duplicate names, a file in a folder
 * and one attached to a record, one PENDING upload), plus one active form per workspace
 * and one inactive form. Contents are deterministic: the same plan gives the same bytes.
 */
import { createHash } from "node:crypto"
import type { EmulatorContext, SeedPlan } from "../context.ts"
import { get } from "../core/sql.ts"
import { insertFile, insertFolder, insertForm, storageKeyFor } from "./files.ts"
import { isDiskObjectStore } from "./object-store.ts"
import { typeOfFilename } from "./mime.ts"
import { encodePng } from "./png.ts"
import { presignTtlMs } from "./presign.ts"

/** Deterministic bytes: a SHA-256 counter stream over `label`. */
export const seedBytes = (label: string, size: number): Buffer => {
  const out = Buffer.alloc(size)
  let offset = 0
  for (let block = 0; offset < size; block++) {
    const digest = createHash("sha256").update(`${label}#${block}`).digest()
    offset += digest.copy(out, offset)
  }
  return out
}

/** Deterministic readable text of about `size` bytes (exactly `size`). */
const seedText = (label: string, size: number): Buffer => {
  let text = ""
  for (let line = 1; text.length < size; line++) text += `${label} line ${line}: the quick brown fox jumps over the lazy dog\n`
  return Buffer.from(text.slice(0, size), "utf8")
}

/** A real 16x16 PNG whose colours depend on `label`. */
const seedPng = (label: string): Buffer => {
  const d = createHash("sha256").update(label).digest()
  return encodePng(16, 16, (x, y) => [(x * 16) & 255, (y * 16) & 255, d[0] ?? 0])
}

interface SeedFile {
  readonly name: string
  readonly bytes: (label: string) => Buffer
  readonly pending?: true
  readonly inFolder?: true
  readonly onRecord?: true
}

/** The set for demo seeds; sized seeds take the first SIZED_COUNT entries. */
export const SEED_FILES: ReadonlyArray<SeedFile> = [
  { name: "empty.txt", bytes: () => Buffer.alloc(0) },
  { name: "one-byte.bin", bytes: (l) => seedBytes(l, 1) },
  { name: "notes.txt", bytes: (l) => seedText(l, 3 * 1024 + 7), onRecord: true },
  { name: "pixel.png", bytes: seedPng },
  { name: "100% done #1?.csv", bytes: (l) => seedText(l, 2048) },
  { name: "quarterly report 2024.pdf", bytes: (l) => seedBytes(l, 5 * 1024), inFolder: true },
  { name: "résumé – ünïcödé 日本語.txt", bytes: (l) => seedText(l, 1500) },
  { name: "notes.txt", bytes: (l) => seedText(`${l} (second)`, 900) },
  { name: "archive+plus&amp=eq.zip", bytes: (l) => seedBytes(l, 4096 + 13) },
  { name: "pending-upload.zip", bytes: () => Buffer.alloc(0), pending: true }
]

const SIZED_COUNT = 5

const firstRecordOf = (ctx: EmulatorContext, workspaceId: string): string | null =>
  get<{ id: string }>(
    ctx.db,
    "SELECT id FROM records WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY position, id LIMIT 1",
    workspaceId
  )?.id ?? null

export const seedUploads = (ctx: EmulatorContext, plan: SeedPlan): void => {
  if (plan.kind === "empty") return
  const store = ctx.objects
  if (!isDiskObjectStore(store)) throw new Error("seeding files needs the disk object store (createObjectStore)")
  const set = plan.kind === "sized" ? SEED_FILES.slice(0, SIZED_COUNT) : SEED_FILES
  plan.workspaceIds.forEach((workspaceId, w) => {
    insertForm(ctx, { workspaceId, title: "Intake form", active: true, createdBy: plan.ownerUserId })
    if (w === 0) insertForm(ctx, { workspaceId, title: "Closed form", active: false, createdBy: plan.ownerUserId })
    const folder = set.some((f) => f.inFolder) ? insertFolder(ctx, { workspaceId, name: "Reports" }) : null
    const record = set.some((f) => f.onRecord) ? firstRecordOf(ctx, workspaceId) : null
    set.forEach((spec, i) => {
      const derived = typeOfFilename(spec.name) ?? { extension: "bin", type: "application/octet-stream" }
      const uid = ctx.ids.uid()
      if (spec.pending) {
        // A presign whose bytes never came: reconciliation removes it after the window.
        insertFile(ctx, {
          uid,
          name: spec.name,
          size: 2048,
          ...derived,
          status: "PENDING",
          orgId: plan.orgId,
          workspaceId,
          userId: plan.ownerUserId,
          declaredSize: 2048,
          presignExpiresAt: ctx.clock.now() + presignTtlMs(ctx)
        })
        return
      }
      const bytes = spec.bytes(`${plan.orgId}/${w}/${i}/${spec.name}`)
      store.putBytes(storageKeyFor(uid), bytes)
      insertFile(ctx, {
        uid,
        name: spec.name,
        size: bytes.length,
        ...derived,
        status: "CONFIRMED",
        orgId: plan.orgId,
        workspaceId,
        userId: plan.ownerUserId,
        folderId: spec.inFolder && folder !== null ? folder.id : null,
        todoId: spec.onRecord ? record : null
      })
    })
  })
}
