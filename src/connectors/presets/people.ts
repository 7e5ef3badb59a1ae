/**
 * People named in another tool's export, resolved to users of the workspace: by e-mail,
 * else by display name through `--people FILE` (a CSV with `name,email` columns, read by
 * sync/mapping-files.ts), else by the one workspace user with that full name. A person
 * not resolved (the file's e-mail included, when the workspace does not know it: import-csv
 * invites nobody) never rejects a row: the record is created without them and the person is
 * listed; a person the file maps to `skip` is left out without being listed.
 */
import { type PeopleMap, SKIP } from "../../sync/mapping-files.ts"
import type { PersonRef } from "./model.ts"

const fold = (s: string) => s.trim().toLowerCase()

export interface PeopleDirectory {
  /** Lower-case e-mail -> user id. */
  readonly byEmail: ReadonlyMap<string, string>
  /** Folded full name -> the user's e-mail, or null when several users share the name. */
  readonly byName: ReadonlyMap<string, string | null>
  /** `--people FILE`, if given. */
  readonly file: PeopleMap | undefined
}

/** How a person is named in messages. */
export const personLabel = (p: PersonRef): string => p.name ?? p.email ?? "unknown"

/**
 * The e-mail of the workspace user a person is, `SKIP` (the people file leaves them out),
 * or undefined. The file comes first, as in migrate (mapping-files.ts): a row naming a
 * person the workspace knows by e-mail maps them all the same. A person the file maps to
 * an e-mail the workspace does not know is not resolved: their own e-mail or name may
 * match another user, and assigning that user would go against the file unseen.
 */
export const resolvePerson = (dir: PeopleDirectory, p: PersonRef): string | undefined => {
  const viaFile = dir.file?.target(p)
  if (viaFile !== undefined) return viaFile === SKIP || dir.byEmail.has(viaFile) ? viaFile : undefined
  if (p.email !== undefined && dir.byEmail.has(p.email.toLowerCase())) return p.email.toLowerCase()
  if (p.name === undefined) return undefined
  return dir.byName.get(fold(p.name)) ?? undefined
}

/** Folds a full name the way `resolvePerson` looks it up. */
export const nameKey = fold
