/**
 * The source-uid -> target-uid mapping a workspace-to-workspace copy leaves in its
 * journal (id_map namespace `file`), as a lookup for re-linking comments and file
 * custom fields (relink.ts).
 */
import * as Effect from "effect/Effect"
import type { JournalApi, JournalError } from "../../store/journal.ts"
import { FILE_NAMESPACE } from "./plan.ts"
import type { UidLookup } from "./relink.ts"

/** Every source uid the copy mapped, to its target uid (a uid not copied is absent). */
export const fileUidLookup = (journal: JournalApi): Effect.Effect<UidLookup, JournalError> =>
  Effect.map(journal.mappings(FILE_NAMESPACE), (mappings) => new Map(mappings.map((m) => [m.sourceKey, m.targetId])))
