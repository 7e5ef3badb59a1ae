/**
 * Re-linking: after files were copied to another workspace, references to the source
 * uids in comment bodies and file custom fields are rewritten to the target uids.
 *
 * - A comment attachment is one empty `<div>` whose `class` is `attachment` and whose
 *   `file` attribute holds JSON `{uid, name, size, type, extension}` (R-COMMENT-07);
 *   only the `uid` inside it changes, everything else in the body stays byte for byte.
 * - A FILE custom field keeps its value in `text` as a JSON array of file uids
 *   (our assumption, `CUSTOM_FIELD_TYPES` in schema/assumptions.ts).
 *
 * Uids with no mapping are left as they are and reported, so the caller can decide
 * (copy those files first, or drop the reference).
 */

/** Source uid to target uid. */
export type UidLookup = ReadonlyMap<string, string> | ((sourceUid: string) => string | undefined)

const lookupOf = (map: UidLookup) => (uid: string): string | undefined =>
  typeof map === "function" ? map(uid) : map.get(uid)

export interface RelinkResult<A> {
  readonly value: A
  /** Source uids that were rewritten, in order of appearance. */
  readonly relinked: ReadonlyArray<string>
  /** Source uids with no mapping, left unchanged. */
  readonly missing: ReadonlyArray<string>
}

// A start tag `<div ...>` whose attribute values may hold `>` inside quotes.
const DIV_TAG = /<div((?:\s+[^\s"'>/=]+(?:\s*=\s*(?:"[^"]*"|'[^']*'|[^\s"'=<>`]+))?)*)\s*\/?>/gi
const ATTRIBUTE = /([^\s"'>/=]+)(?:\s*=\s*("[^"]*"|'[^']*'|[^\s"'=<>`]+))?/g

const NAMED: Readonly<Record<string, string>> = { quot: "\"", amp: "&", lt: "<", gt: ">", apos: "'", nbsp: "\u00a0" }

/** Decodes the character references an attribute value may hold. */
export const decodeEntities = (s: string): string =>
  s.replace(/&(#x[0-9a-f]+|#[0-9]+|[a-z]+);/gi, (whole, ref: string) => {
    if (ref[0] === "#") {
      const code = ref[1] === "x" || ref[1] === "X" ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10)
      return Number.isFinite(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    return NAMED[ref.toLowerCase()] ?? whole
  })

/** Escapes text for a double-quoted attribute value. */
export const escapeAttribute = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

interface Attr {
  readonly name: string
  /** Raw value including its quotes, or null for a bare attribute. */
  readonly raw: string | null
  /** Offset of the raw value within the attribute string. */
  readonly valueStart: number
}

const parseAttributes = (attrs: string): ReadonlyArray<Attr> => {
  const out: Array<Attr> = []
  for (const m of attrs.matchAll(ATTRIBUTE)) {
    const name = m[1]
    if (name === undefined) continue
    const raw = m[2] ?? null
    const valueStart = raw === null ? -1 : (m.index ?? 0) + m[0].length - raw.length
    out.push({ name: name.toLowerCase(), raw, valueStart })
  }
  return out
}

const unquote = (raw: string): string =>
  raw.startsWith("\"") || raw.startsWith("'") ? raw.slice(1, -1) : raw

const isAttachmentClass = (raw: string | null): boolean =>
  raw !== null && decodeEntities(unquote(raw)).split(/\s+/).includes("attachment")

/**
 * Rewrites the uid of every attachment element in a comment body. The JSON in the
 * `file` attribute is re-serialized only for elements whose uid changes.
 */
export const relinkCommentHtml = (html: string, map: UidLookup): RelinkResult<string> => {
  const lookup = lookupOf(map)
  const relinked: Array<string> = []
  const missing: Array<string> = []
  const value = html.replace(DIV_TAG, (tag: string, attrs: string) => {
    const parsed = parseAttributes(attrs)
    if (!parsed.some((a) => a.name === "class" && isAttachmentClass(a.raw))) return tag
    const file = parsed.find((a) => a.name === "file" && a.raw !== null)
    if (file === undefined || file.raw === null) return tag
    let data: unknown
    try {
      data = JSON.parse(decodeEntities(unquote(file.raw)))
    } catch {
      return tag
    }
    if (typeof data !== "object" || data === null || Array.isArray(data)) return tag
    const uid = (data as { uid?: unknown }).uid
    if (typeof uid !== "string") return tag
    const target = lookup(uid)
    if (target === undefined) {
      missing.push(uid)
      return tag
    }
    relinked.push(uid)
    if (target === uid) return tag
    const rewritten = `"${escapeAttribute(JSON.stringify({ ...(data as object), uid: target }))}"`
    const prefix = "<div"
    const start = prefix.length + file.valueStart
    return tag.slice(0, start) + rewritten + tag.slice(start + file.raw.length)
  })
  return { value, relinked, missing }
}

/** Rewrites the uids of a FILE custom field's `text` (a JSON array of uids). */
export const relinkFileFieldText = (text: string | null, map: UidLookup): RelinkResult<string | null> => {
  if (text === null || text.trim() === "") return { value: text, relinked: [], missing: [] }
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return { value: text, relinked: [], missing: [] }
  }
  const lookup = lookupOf(map)
  const uids = Array.isArray(parsed) ? parsed : typeof parsed === "string" ? [parsed] : null
  if (uids === null) return { value: text, relinked: [], missing: [] }
  const relinked: Array<string> = []
  const missing: Array<string> = []
  const out = uids.map((u: unknown) => {
    if (typeof u !== "string") return u
    const target = lookup(u)
    if (target === undefined) {
      missing.push(u)
      return u
    }
    relinked.push(u)
    return target
  })
  if (relinked.length === 0) return { value: text, relinked, missing }
  return { value: JSON.stringify(Array.isArray(parsed) ? out : out[0]), relinked, missing }
}

/** The part of a record detail's custom field that re-linking reads and writes. */
export interface CustomFieldValue {
  readonly type: string
  readonly text: string | null
}

/** Rewrites every FILE field of a record's custom fields; other fields are returned as they are. */
export const relinkCustomFields = <F extends CustomFieldValue>(
  fields: ReadonlyArray<F>,
  map: UidLookup
): RelinkResult<ReadonlyArray<F>> => {
  const relinked: Array<string> = []
  const missing: Array<string> = []
  const value = fields.map((field) => {
    if (field.type !== "FILE") return field
    const r = relinkFileFieldText(field.text, map)
    relinked.push(...r.relinked)
    missing.push(...r.missing)
    return r.value === field.text ? field : { ...field, text: r.value }
  })
  return { value, relinked, missing }
}

/** One uid through the map (e.g. `fileUid` of `createRecordCustomFieldFile`). */
export const relinkUid = (uid: string, map: UidLookup): string | undefined => lookupOf(map)(uid)
