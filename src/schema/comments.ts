/**
 * Comments and the attachment element embedded in a comment's html
 * (`<div class="attachment" file="{...json...}"></div>`, R-COMMENT-07).
 * Pure string code: the emulator parses attachments out of `tiptap: true`
 * comments, the client rewrites uids when it re-links copied files.
 */
import { Option, Schema } from "effect"
import { IsoTimestamp } from "./dates.ts"
import { openStruct } from "./open.ts"

export const CommentCategory = Schema.Literals(["TODO", "DISCUSSION", "STATUS_UPDATE"])
export type CommentCategory = typeof CommentCategory.Type

/** GraphQL `CreateCommentInput` (R-COMMENT-01). */
export const CreateCommentInput = openStruct({
  html: Schema.String,
  text: Schema.String,
  category: CommentCategory,
  categoryId: Schema.String,
  tiptap: Schema.optional(Schema.Boolean),
  parentId: Schema.optional(Schema.String)
})
export type CreateCommentInput = typeof CreateCommentInput.Type

/** `createComment` result (R-COMMENT-06). */
export const Comment = openStruct({
  id: Schema.String,
  html: Schema.String,
  text: Schema.String,
  createdAt: IsoTimestamp
})
export type Comment = typeof Comment.Type

/** The JSON held by an attachment element's `file` attribute. */
export const AttachmentElement = openStruct({
  uid: Schema.String,
  name: Schema.String,
  size: Schema.Number,
  type: Schema.String,
  extension: Schema.String
})
export type AttachmentElement = typeof AttachmentElement.Type

const escapeAttribute = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/'/g, "&#39;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

const NAMED_ENTITIES: Readonly<Record<string, string>> = { amp: "&", quot: '"', apos: "'", lt: "<", gt: ">", nbsp: "\u00a0" }

const decodeEntities = (s: string): string =>
  s.replace(/&(#[0-9]+|#x[0-9a-f]+|[a-z]+);/gi, (whole, body: string) => {
    if (body.charAt(0) === "#") {
      const hex = body.charAt(1) === "x" || body.charAt(1) === "X"
      const code = Number.parseInt(body.slice(hex ? 2 : 1), hex ? 16 : 10)
      return Number.isFinite(code) && code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole
    }
    return NAMED_ENTITIES[body.toLowerCase()] ?? whole
  })

/** Renders one attachment element; only the five documented keys are written, in order. */
export const renderAttachment = (a: AttachmentElement): string => {
  const json = JSON.stringify({ uid: a.uid, name: a.name, size: a.size, type: a.type, extension: a.extension })
  return `<div class="attachment" file="${escapeAttribute(json)}"></div>`
}

// An empty div: `<div ...></div>` (whitespace allowed inside) or `<div .../>`.
const EMPTY_DIV = /<div\b((?:[^>"']|"[^"]*"|'[^']*')*?)(?:\/>|>\s*<\/div\s*>)/gi
const ATTRIBUTE = /([^\s"'>\/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g

const parseAttributes = (source: string): Map<string, string> => {
  const out = new Map<string, string>()
  for (const m of source.matchAll(ATTRIBUTE)) {
    const name = m[1]!.toLowerCase()
    if (out.has(name)) continue // the first occurrence wins, as in HTML
    out.set(name, decodeEntities(m[2] ?? m[3] ?? m[4] ?? ""))
  }
  return out
}

const decodeAttachment = Schema.decodeUnknownOption(AttachmentElement)

const attachmentOf = (attributeSource: string): AttachmentElement | null => {
  const attrs = parseAttributes(attributeSource)
  const classes = (attrs.get("class") ?? "").split(/\s+/)
  const file = attrs.get("file")
  if (!classes.includes("attachment") || file === undefined) return null
  let json: unknown
  try {
    json = JSON.parse(file)
  } catch {
    return null
  }
  return Option.getOrNull(decodeAttachment(json))
}

/** A well-formed attachment element found in html, with its position. */
export interface FoundAttachment {
  readonly attachment: AttachmentElement
  readonly start: number
  readonly end: number
}

/** Every well-formed attachment element of `html`, in document order; malformed ones are skipped. */
export const findAttachments = (html: string): Array<FoundAttachment> => {
  const found: Array<FoundAttachment> = []
  for (const m of html.matchAll(EMPTY_DIV)) {
    const attachment = attachmentOf(m[1] ?? "")
    if (attachment !== null) found.push({ attachment, start: m.index, end: m.index + m[0].length })
  }
  return found
}

/** The attachments of `html`, in document order. */
export const parseAttachments = (html: string): Array<AttachmentElement> =>
  findAttachments(html).map((f) => f.attachment)

/**
 * Replaces each attachment element by the rendering of `f(attachment)`; `null`
 * removes the element. Everything else in `html` is kept byte for byte.
 */
export const mapAttachments = (html: string, f: (a: AttachmentElement) => AttachmentElement | null): string => {
  let out = ""
  let at = 0
  for (const found of findAttachments(html)) {
    const next = f(found.attachment)
    out += html.slice(at, found.start) + (next === null ? "" : renderAttachment(next))
    at = found.end
  }
  return out + html.slice(at)
}

const escapeText = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")

/** Plain text as comment HTML: one paragraph per line, characters escaped. */
export const textToHtml = (text: string): string =>
  text.split("\n").map((line) => `<p>${escapeText(line)}</p>`).join("")

/**
 * The visible text of comment HTML, whitespace collapsed: what two renderings of the same
 * comment share, whatever markup a service adds or rewrites (used to recognise a comment
 * a lost answer left unconfirmed).
 */
export const commentVisibleText = (html: string): string =>
  decodeEntities(html.replace(/<(br|\/p|\/div|\/li)\b[^>]*>/gi, "\n").replace(/<[^>]*>/g, ""))
    .replace(/\s+/g, " ")
    .trim()
