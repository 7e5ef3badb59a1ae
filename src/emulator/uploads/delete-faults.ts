/**
 * Applies the file deletions scripted on the emulator's faults (file-deletes.ts) when a
 * download request arrives, before it is answered.
 */
import type { EmulatorContext } from "../context.ts"
import { fileDeletesOf } from "../faults.ts"
import type { FileDeleteOn } from "../file-deletes.ts"
import { deleteFile, getFileByUid, storageKeyFor } from "./files.ts"

/**
 * The deletions one download request fires: `subject` is the file's uid for a request of
 * the serving URL, the object's key for one at storage.
 */
export const applyFileDeletes = (ctx: EmulatorContext, on: FileDeleteOn["on"], subject: string): void => {
  const deletes = fileDeletesOf(ctx)
  if (deletes === null || deletes.size === 0) return
  const isOf = (uid: string) => (on === "serve" ? subject === uid : subject === storageKeyFor(uid))
  for (const spec of deletes.fire(on, isOf)) {
    for (const uid of spec.uids) {
      const file = getFileByUid(ctx.db, uid)
      if (file === null) continue
      ctx.objects.remove(file.storageKey)
      if ((spec.what ?? "file") === "file") deleteFile(ctx.db, uid)
    }
  }
}
