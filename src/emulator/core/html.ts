/**
 * Record descriptions: plain text to HTML (blank lines make paragraphs, newlines make
 * line breaks: R-REST-RECORD-30/31), an allow-list sanitizer for `descriptionHtml`
 * (R-REST-RECORD-32), and HTML to plain text for the `text` field and search.
 */

export const escapeHtml = (s: string): string =>
  s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&#39;")

/** Plain text to HTML: each blank-line-separated block is a `<p>`, newlines inside are `<br>`. */
export const textToHtml = (text: string): string => {
  const normalized = text.replace(/\r\n?/g, "\n").trim()
  if (normalized === "") return ""
  return normalized
    .split(/\n[ \t]*\n+/)
    .map((block) => block.trim())
    .filter((block) => block !== "")
    .map((block) => `<p>${block.split("\n").map(escapeHtml).join("<br>")}</p>`)
    .join("")
}

const ALLOWED_TAGS = new Set([
  "a", "b", "blockquote", "br", "code", "del", "div", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr", "i",
  "img", "li", "ol", "p", "pre", "s", "span", "strong", "sub", "sup", "table", "tbody", "td", "th", "thead",
  "tr", "u", "ul", "mark"
])
/** Dropped together with their content. */
const DROP_WITH_CONTENT = new Set(["script", "style", "iframe", "object", "embed", "template", "noscript", "svg", "math"])
const VOID_TAGS = new Set(["br", "hr", "img"])
const ALLOWED_ATTRS: Record<string, ReadonlySet<string>> = {
  "*": new Set(["class", "title"]),
  a: new Set(["href", "target", "rel"]),
  img: new Set(["src", "alt", "width", "height"]),
  td: new Set(["colspan", "rowspan"]),
  th: new Set(["colspan", "rowspan"]),
  // Comment attachments are `<div class="attachment" file="{json}">`.
  div: new Set(["file", "data-type"])
}
const URL_ATTRS = new Set(["href", "src"])

const safeUrl = (value: string): boolean => {
  // Browsers ignore whitespace and control characters inside the scheme.
  const compact = value.replace(/[\u0000-\u0020\u007f]/g, "").toLowerCase()
  if (!/^[a-z][a-z0-9+.-]*:/.test(compact)) return true
  return /^(https?|mailto|tel):/.test(compact)
}

const decodeEntities = (s: string): string =>
  s
    .replace(/&#x([0-9a-f]+);?/gi, (_, h: string) => String.fromCodePoint(parseInt(h, 16)))
    .replace(/&#(\d+);?/g, (_, d: string) => String.fromCodePoint(Number(d)))
    .replace(/&quot;/g, '"')
    .replace(/&#39;|&apos;/g, "'")
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&nbsp;/g, "\u00a0")
    .replace(/&amp;/g, "&")

const ATTR = /([^\s"'>\/=]+)(?:\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+)))?/g

const cleanAttributes = (tag: string, raw: string): string => {
  let out = ""
  const allowedHere = ALLOWED_ATTRS[tag]
  for (const m of raw.matchAll(ATTR)) {
    const name = m[1]!.toLowerCase()
    if (name.startsWith("on")) continue
    if (!ALLOWED_ATTRS["*"]!.has(name) && !(allowedHere?.has(name) ?? false)) continue
    const value = decodeEntities(m[2] ?? m[3] ?? m[4] ?? "")
    if (URL_ATTRS.has(name) && !safeUrl(value)) continue
    out += ` ${name}="${escapeHtml(value)}"`
  }
  return out
}

// Comments, tags (with quoted attribute values), and bogus markup (<!doctype>, <?xml?>);
// a "<" before anything else is text.
const TOKEN = /<!--[\s\S]*?(?:-->|$)|<\/?([a-zA-Z][a-zA-Z0-9-]*)((?:[^>"']|"[^"]*"|'[^']*')*)>|<[!?][^>]*>?/g

/**
 * Keeps an allow-list of tags and attributes; drops script/style (and similar) with their
 * content, every `on*` handler and `javascript:` (any non-http/mailto/tel) URL.
 */
export const sanitizeHtml = (html: string): string => {
  let out = ""
  let last = 0
  let dropping: string | null = null
  let depth = 0
  for (const m of html.matchAll(TOKEN)) {
    const index = m.index
    if (dropping === null) out += escapeText(html.slice(last, index))
    last = index + m[0].length
    const name = m[1]?.toLowerCase()
    if (name === undefined) continue // comments, doctypes, stray "<"
    const closing = m[0].startsWith("</")
    if (dropping !== null) {
      if (name === dropping) depth += closing ? -1 : 1
      if (depth === 0) dropping = null
      continue
    }
    if (DROP_WITH_CONTENT.has(name)) {
      if (!closing && !m[0].endsWith("/>")) {
        dropping = name
        depth = 1
      }
      continue
    }
    if (!ALLOWED_TAGS.has(name)) continue
    if (closing) {
      if (!VOID_TAGS.has(name)) out += `</${name}>`
    } else {
      out += `<${name}${cleanAttributes(name, m[2] ?? "")}>`
    }
  }
  if (dropping === null) out += escapeText(html.slice(last))
  return out
}

/** Text between tags: keeps entities, escapes stray angle brackets. */
const escapeText = (s: string): string => s.replace(/</g, "&lt;").replace(/>/g, "&gt;")

/** HTML to plain text: paragraphs end with a blank line, `<br>` is a newline. */
export const htmlToText = (html: string): string =>
  decodeEntities(
    html
      .replace(/<br\s*\/?>/gi, "\n")
      .replace(/<\/(p|div|h[1-6]|li|blockquote|pre|tr)>/gi, "\n\n")
      .replace(/<[^>]*>/g, "")
  )
    .replace(/\n{3,}/g, "\n\n")
    .trim()
