/**
 * Cell helpers shared by the readers of other tools' exports. None of them throws: an
 * export is data written by another program, and one odd cell must never stop a file.
 */

/** Words tools write for "no value". */
const NULLS: ReadonlySet<string> = new Set(["", "null", "undefined", "none", "n/a", "[]", "{}"])

/** The cell trimmed, or undefined when it says "no value" (`null`, empty, ...). */
export const cellValue = (raw: string | undefined): string | undefined => {
  if (raw === undefined) return undefined
  const s = raw.trim()
  return NULLS.has(s.toLowerCase()) ? undefined : s
}

/**
 * Text whose line breaks some exports write as the two characters `\n` (ClickUp, Trello's
 * JSON pasted through other tools): real newlines, CRLF folded to LF.
 */
export const multiline = (raw: string): string => raw.replace(/\r\n?/g, "\n").replace(/\\r\\n|\\n/g, "\n")

/** `a, b, c` (or `;`) split, trimmed, empties dropped. */
export const splitList = (raw: string, separators: RegExp = /[,;]/): Array<string> =>
  raw.split(separators).map((s) => s.trim()).filter((s) => s !== "")

/**
 * A list cell as `[a,b]` or a JSON array (`["a","b"]`, `[{"name":...}]`), or a plain
 * comma list. Items that are objects are kept as objects.
 */
export const listCell = (raw: string): Array<unknown> => {
  const s = raw.trim()
  if (s === "" || s.toLowerCase() === "null") return []
  if (s.startsWith("[") && s.endsWith("]")) {
    const parsed = jsonCell(s)
    // `[10, 0.0]` is JSON too, but of numbers: the text the tool wrote is what counts.
    if (Array.isArray(parsed) && parsed.some((v) => typeof v === "string" || (typeof v === "object" && v !== null))) {
      return parsed
        .filter((v) => v !== null && v !== "")
        .map((v) => (typeof v === "number" || typeof v === "boolean" ? String(v) : v))
    }
    return splitList(s.slice(1, -1)).map(unquote)
  }
  return splitList(s)
}

const unquote = (s: string): string => (s.length >= 2 && /^(["']).*\1$/s.test(s) ? s.slice(1, -1) : s)

/** JSON inside a cell, or undefined when the cell is not JSON. */
export const jsonCell = (raw: string): unknown => {
  const s = raw.trim()
  if (s === "" || (s[0] !== "[" && s[0] !== "{" && s[0] !== "\"")) return undefined
  try {
    return JSON.parse(s) as unknown
  } catch {
    return undefined
  }
}

/** A string field of an object read from JSON, trimmed, or undefined. */
export const stringField = (value: unknown, ...names: ReadonlyArray<string>): string | undefined => {
  if (typeof value !== "object" || value === null) return undefined
  for (const name of names) {
    const v = (value as Record<string, unknown>)[name]
    if (typeof v === "string" && v.trim() !== "") return v.trim()
    if (typeof v === "number" && Number.isFinite(v)) return String(v)
  }
  return undefined
}

/** Distinct values in first-seen order. */
export const distinct = <A>(values: Iterable<A>): Array<A> => [...new Set(values)]

const EMAIL = /^[^\s@,;<>]+@[^\s@,;<>]+\.[^\s@,;<>]+$/

/** Whether a name is an e-mail address (then a person is matched by it). */
export const isEmail = (s: string): boolean => EMAIL.test(s.trim())

/** The last path segment of a URL, decoded, or undefined. */
export const urlFileName = (url: string): string | undefined => {
  try {
    const u = new URL(url)
    const last = u.pathname.split("/").filter((p) => p !== "").pop()
    return last === undefined ? undefined : decodeURIComponent(last)
  } catch {
    return undefined
  }
}

/** Whether the text is an absolute http(s) URL. */
export const isHttpUrl = (s: string): boolean => {
  try {
    const u = new URL(s.trim())
    return u.protocol === "http:" || u.protocol === "https:"
  } catch {
    return false
  }
}
