/**
 * References between records: a description or comment that names another item of the
 * same migration (a Jira issue key, a Trello card URL, a source record id, ...) names the
 * target record once that record exists.
 *
 * Where a reference points is known only through the journal's id map (source key ->
 * target record id), which holds a record once its create is done. So the text is sent
 * as the source wrote it, and the references are resolved when the text is written after
 * every create: a comment (its phase follows the records') resolves them as it is sent;
 * a description gets a second, journaled update (`REFERENCES_KIND`) in a phase after the
 * records. Either fails while a record it names is not created yet, and a rerun writes it
 * once that record exists: exactly once, like every other op.
 *
 * The documents show no form of reference between records (no record URL, no mention
 * element): each reference keeps its token as written and gets the target id appended
 * (`ABC-12 (record 5f0c...)`), see assumptions.ts RECORD_REFERENCE_FORM.
 */
import { Schema } from "effect"
import { createHash } from "node:crypto"

/** The description update that rewrites a record's references (after every record's create). */
export const REFERENCES_KIND = "record.references"

const Str = Schema.String

/** One reference of a text: the token as written, and the source key (id map) of the record it names. */
export const Reference = Schema.Struct({ token: Str, ref: Str })
export type Reference = typeof Reference.Type

/**
 * The description of `recordRef` as the source wrote it (`text`, or `html` when the
 * description is HTML), with the references to rewrite in it.
 */
export const ReferencesPayload = Schema.Struct({
  workspaceId: Str,
  recordRef: Str,
  text: Schema.optional(Str),
  html: Schema.optional(Str),
  refs: Schema.Array(Reference),
  origin: Schema.optional(Str)
})
export type ReferencesPayload = typeof ReferencesPayload.Type

/** What a reference becomes: its token, then the target record it names. */
export const referenceMark = (targetId: string): string => ` (record ${targetId})`

const MARKS = / \(record [A-Za-z0-9_-]+\)/g

/** A text without the marks this module appends: how the source wrote it. */
export const withoutReferenceMarks = (s: string): string => s.replace(MARKS, "")

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * Each token not inside a longer word (`ABC-1` is not in `ABC-12`) and not already marked
 * gets its target's mark; tokens without a target are left as they are.
 */
export const rewriteText = (text: string, targets: ReadonlyMap<string, string>): string => {
  if (targets.size === 0) return text
  const tokens = [...targets.keys()].sort((a, b) => b.length - a.length).map(escape)
  const pattern = new RegExp(`(?<![A-Za-z0-9_])(${tokens.join("|")})(?![A-Za-z0-9_]|-\\d| \\(record )`, "g")
  return text.replace(pattern, (token) => `${token}${referenceMark(targets.get(token)!)}`)
}

/** As `rewriteText`, in the text between an HTML description's tags only (never in an attribute). */
export const rewriteHtml = (html: string, targets: ReadonlyMap<string, string>): string =>
  html.split(/(<[^>]*>)/).map((part) => (part.startsWith("<") ? part : rewriteText(part, targets))).join("")

/**
 * Text for telling whether a target's description is still the one written: tags dropped,
 * a few entities read, the marks of references taken out, blanks collapsed.
 */
export const comparableText = (s: string): string =>
  withoutReferenceMarks(
    s
      .replace(/<[^>]*>/g, " ")
      .replace(/&nbsp;/g, " ")
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&quot;/g, "\"")
      .replace(/&#39;/g, "'")
      .replace(/&amp;/g, "&")
  )
    .replace(/\s+/g, " ")
    .trim()

/** The references of a text, one per token (the first source key found for it). */
export const distinctReferences = (refs: ReadonlyArray<Reference>): Array<Reference> => {
  const seen = new Set<string>()
  return refs.filter((r) => (seen.has(r.token) ? false : (seen.add(r.token), true)))
}

/**
 * The journal key of a description's references op: under the key of the op that wrote
 * the text, and the text and references, so a rerun plans the same op (sent once) and a
 * pass with another text, or with a reference that now names a record, plans a new one.
 */
export const referencesKey = (writerKey: string, text: string, refs: ReadonlyArray<Reference>): string =>
  `${writerKey}/references/${
    createHash("sha1").update(JSON.stringify([text, refs.map((r) => [r.token, r.ref])])).digest("hex").slice(0, 16)
  }`

/** What a report says of references: rewritten in this run (planned, in a dry run), and left as written. */
export interface ReferenceCounts {
  readonly rewritten: number
  /** References to items outside the migration (not in the export, not a record of the source). */
  readonly outside: number
}

/** How many references an op rewrites when it is done (a references op, or a comment with `refs`). */
export const referencesOf = (payload: unknown): number => {
  const refs = (payload as { refs?: unknown } | null)?.refs
  return Array.isArray(refs) ? refs.length : 0
}
