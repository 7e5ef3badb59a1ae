/**
 * Mappings beyond e-mail, as import-csv and migrate read them from files the user gives:
 * - people (`--people FILE`): a CSV with the columns `name,email`; each row maps a person
 *   of the source, named by display name or e-mail, to an e-mail on the target, or to the
 *   word `skip` (migrate: not invited, their assignments dropped and reported);
 * - list and tag titles (`--title-map FILE.json`): `{"lists": {"Source": "Target"},
 *   "tags": {"Source": "Target"}}`; two source titles may map onto one target title
 *   (they merge there).
 * Each mapping remembers which of its entries a run looked up, so the plan and the report
 * list the entries used and unused (pass-plan.ts `Mappings`): a misspelt name shows.
 */
import { Result, Schema, SchemaIssue } from "effect"
import { parse } from "csv-parse/sync"
import { parseJsonText } from "../schema/json-text.ts"
import type { MappingEntry, Mappings, MappingUse } from "./pass-plan.ts"

/** The target of a person who is left out. */
export const SKIP = "skip"

const fold = (s: string) => s.trim().toLowerCase()

/** Which entries were looked up, in the file's order. */
const usage = (entries: ReadonlyArray<MappingEntry>) => {
  const used = new Set<number>()
  return {
    hit: (i: number) => void used.add(i),
    use: (): MappingUse => ({ used: entries.filter((_, i) => used.has(i)), unused: entries.filter((_, i) => !used.has(i)) })
  }
}

export interface PeopleMap {
  /**
   * What the file says of a person, by e-mail first, then by display name: a lower-case
   * e-mail, `SKIP`, or undefined (not in the file: the person keeps their own e-mail).
   */
  readonly target: (person: { readonly email?: string | undefined; readonly name?: string | undefined }) => string | undefined
  readonly use: () => MappingUse
}

const EMAIL = /^[^@\s]+@[^@\s]+$/

/** Reads a people file (`name,email`); a message naming the problem when it cannot be used. */
export const readPeopleFile = (name: string, text: string): PeopleMap | { readonly error: string } => {
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
  const entries: Array<MappingEntry> = []
  const byKey = new Map<string, number>()
  for (const [i, row] of rows.slice(1).entries()) {
    const person = row[n]?.trim() ?? ""
    const to = row[e]?.trim() ?? ""
    if (person === "" && to === "") continue
    // Half a row is a mistake, not a row to pass over: the person would go unmapped unseen.
    if (person === "") return { error: `--people ${name}: row ${i + 2}: no name for ${JSON.stringify(to)}` }
    if (to === "") return { error: `--people ${name}: row ${i + 2}: ${JSON.stringify(person)} has no e-mail (give one, or ${SKIP})` }
    const target = fold(to) === SKIP ? SKIP : to.toLowerCase()
    if (target !== SKIP && !EMAIL.test(target)) {
      return { error: `--people ${name}: row ${i + 2}: ${JSON.stringify(to)} is neither an e-mail nor ${SKIP}` }
    }
    const seen = byKey.get(fold(person))
    if (seen !== undefined && entries[seen]!.to !== target) {
      return { error: `--people ${name}: row ${i + 2}: ${JSON.stringify(person)} is mapped twice, to ${entries[seen]!.to} and to ${target}` }
    }
    if (seen !== undefined) continue
    byKey.set(fold(person), entries.length)
    entries.push({ kind: "person", from: person, to: target })
  }
  const { hit, use } = usage(entries)
  const lookup = (key: string | undefined) => {
    const i = key === undefined ? undefined : byKey.get(fold(key))
    if (i === undefined) return undefined
    hit(i)
    return entries[i]!.to
  }
  return { target: (p) => lookup(p.email) ?? lookup(p.name), use }
}

const Titles = Schema.Record(Schema.String, Schema.String.check(Schema.isMinLength(1)))
/** The shape of a `--title-map` file (another key is an error). */
export const TitleMapFile = Schema.Struct({ lists: Schema.optionalKey(Titles), tags: Schema.optionalKey(Titles) })

export interface TitleMap {
  /** A source list title as the target has it (itself when the file does not name it). */
  readonly list: (title: string) => string
  readonly tag: (title: string) => string
  readonly use: () => MappingUse
}

const issueText = SchemaIssue.makeFormatterStandardSchemaV1()

/** Reads a title map (JSON); a message naming the problem when it cannot be used. */
export const readTitleMapFile = (name: string, text: string): TitleMap | { readonly error: string } => {
  const raw = parseJsonText(text)
  if (Result.isFailure(raw)) return { error: `--title-map ${name}: ${raw.failure}` }
  const decoded = Schema.decodeUnknownResult(TitleMapFile, { onExcessProperty: "error" })(raw.success)
  if (decoded._tag === "Failure") {
    const why = issueText(decoded.failure.issue).issues.map((i) => `${(i.path ?? []).join(".") || "the file"}: ${i.message}`).join("; ")
    return { error: `--title-map ${name}: expected {"lists": {"Source title": "Target title"}, "tags": {...}}: ${why.replace(/\s+/g, " ")}` }
  }
  const file = decoded.success
  const entries: Array<MappingEntry> = [
    ...Object.entries(file.lists ?? {}).map(([from, to]): MappingEntry => ({ kind: "list", from, to })),
    ...Object.entries(file.tags ?? {}).map(([from, to]): MappingEntry => ({ kind: "tag", from, to }))
  ]
  const { hit, use } = usage(entries)
  const of = (kind: "list" | "tag") => {
    const index = new Map(entries.flatMap((entry, i) => (entry.kind === kind ? [[entry.from, i] as const] : [])))
    return (title: string): string => {
      const i = index.get(title)
      if (i === undefined) return title
      hit(i)
      return entries[i]!.to
    }
  }
  return { list: of("list"), tag: of("tag"), use }
}

/** The plan's and the report's `mappings`: a key for each file given, none without files. */
export const mappingsOf = (people: PeopleMap | undefined, titles: TitleMap | undefined): Mappings | undefined =>
  people === undefined && titles === undefined
    ? undefined
    : { ...(people !== undefined ? { people: people.use() } : {}), ...(titles !== undefined ? { titles: titles.use() } : {}) }
