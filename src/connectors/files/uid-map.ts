/**
 * The source-uid -> target-uid mapping a workspace-to-workspace copy leaves in its
 * journal (id_map namespace `file`), as a lookup for re-linking comments and file
 * custom fields (relink.ts).
 */
import type { JournalApi, JournalDb } from "../../store/journal.ts"
import { FILE_NAMESPACE } from "./plan.ts"
import type { UidLookup } from "./relink.ts"

/** Looks each source uid up in the journal's `file` namespace (undefined when not copied). */
export const fileUidLookup = (journal: JournalApi | JournalDb): UidLookup => {
  const db = "sync" in journal ? journal.sync : journal
  return (sourceUid) => db.lookup(FILE_NAMESPACE, sourceUid)
}
