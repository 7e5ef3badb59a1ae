/**
 * People named in another tool's export, resolved to users of the workspace: by e-mail,
 * else by display name through `--people FILE` (a CSV with `name,email` columns), else by
 * the one workspace user with that full name. A person not resolved never rejects a row:
 * the record is created without them and the person is listed.
 */
import { parse } from "csv-parse/sync"
import type { PersonRef } from "./model.ts"

const fold = (s: string) => s.trim().toLowerCase()

/** Reads a people file; a message naming the problem when it cannot be used. */
export const readPeopleFile = (name: string, text: string): Map<string, string> | { readonly error: string } => {
  let rows: Array<Array<string>>
  try {
    rows = parse(text.replace(/^\uFEFF/, ""), { relax_column_count: true, skip_empty_lines: true }) as Array<Array<string>>
  } catch (e) {
    return { error: `--people ${name}: not a CSV file (${(e as Error).message})` }
  }
  const header = (rows[0] ?? []).map(fold)
  const n = header.indexOf("name")
  const e = header.indexOf("email")
  if (n < 0 || e < 0) return { error: `--people ${name}: the header must have the columns name,email` }
  const map = new Map<string, string>()
  for (const row of rows.slice(1)) {
    const person = row[n]?.trim()
    const email = row[e]?.trim()
    if (person && email) map.set(fold(person), email.toLowerCase())
  }
  return map
}

export interface PeopleDirectory {
  /** Lower-case e-mail -> user id. */
  readonly byEmail: ReadonlyMap<string, string>
  /** Folded full name -> the user's e-mail, or null when several users share the name. */
  readonly byName: ReadonlyMap<string, string | null>
  /** Folded display name -> e-mail, from `--people`. */
  readonly file: ReadonlyMap<string, string>
}

/** How a person is named in messages. */
export const personLabel = (p: PersonRef): string => p.name ?? p.email ?? "unknown"

/** The e-mail of the workspace user a person is, or undefined. */
export const resolvePerson = (dir: PeopleDirectory, p: PersonRef): string | undefined => {
  if (p.email !== undefined && dir.byEmail.has(p.email.toLowerCase())) return p.email.toLowerCase()
  if (p.name === undefined) return undefined
  const viaFile = dir.file.get(fold(p.name))
  if (viaFile !== undefined && dir.byEmail.has(viaFile)) return viaFile
  return dir.byName.get(fold(p.name)) ?? undefined
}

/** Folds a full name the way `resolvePerson` looks it up. */
export const nameKey = fold
