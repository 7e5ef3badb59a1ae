/**
 * What the caller's level in a workspace lets worksync do there, from the service's
 * documents only:
 * - every level reads the workspace it is a member of: backup, diff, export and verify;
 * - the levels an inviter may give (`inviteUser` rule 2, R-INVITE-05..09): migrate into
 *   the workspace invites the source's members at their level, and reports those above
 *   the caller's reach as refused; COMMENT_ONLY and VIEW_ONLY cannot invite at all;
 * - COMMENT_ONLY and VIEW_ONLY are, by their names, the levels below writing records, so
 *   import-csv, restore, copy-files and migrate into the workspace need a level above.
 * A workspace passes when every command can use it (a level above COMMENT_ONLY).
 */
import { type AccessLevel, accessLevelRank } from "../../schema/users.ts"
import { ASSIGNABLE } from "../../sync/migrate/people.ts"

const WRITES = "import-csv, restore, copy-files and migrate into it"

export const levelVerdict = (level: AccessLevel): { readonly ok: boolean; readonly detail: string } => {
  const invites = ASSIGNABLE[level]
  if (invites.length === 0 || accessLevelRank(level) >= accessLevelRank("COMMENT_ONLY")) {
    return {
      ok: false,
      detail:
        `${level}: reads only (backup, diff, export, verify); ${WRITES} need a level above ${level}, which cannot invite or write records: ask an ADMIN of the workspace to raise it`
    }
  }
  const reach = invites.length === ASSIGNABLE.OWNER.length ? "at any level" : `up to ${invites[0]}`
  return { ok: true, detail: `${level}: backup and ${WRITES}; migrate invites people ${reach}` }
}
