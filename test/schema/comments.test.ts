import { Result } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import {
  type AttachmentElement,
  Comment,
  CreateCommentInput,
  decodeUnknownEither,
  describeParseError,
  findAttachments,
  mapAttachments,
  parseAttachments,
  renderAttachment
} from "../../src/schema/index.ts"

const pdf: AttachmentElement = { uid: "abc123", name: "report.pdf", size: 2048, type: "application/pdf", extension: "pdf" }

describe("comments", () => {
  it("R-COMMENT-01/02: createComment input takes html, text, category, categoryId, tiptap, parentId", () => {
    const input = { html: "<p>hi</p>", text: "hi", category: "TODO", categoryId: "r1", tiptap: true, parentId: "c0" }
    expect(Result.getOrThrow(decodeUnknownEither(CreateCommentInput)(input))).toEqual(input)
    for (const category of ["TODO", "DISCUSSION", "STATUS_UPDATE"]) {
      expect(Result.isSuccess(decodeUnknownEither(CreateCommentInput)({ ...input, category }))).toBe(true)
    }
    const bad = decodeUnknownEither(CreateCommentInput)({ ...input, category: "RECORD" })
    expect(Result.isFailure(bad)).toBe(true)
  })

  it("R-COMMENT-06: createComment returns id, html, text and createdAt", () => {
    const c = { id: "c1", html: "<p>hi</p>", text: "hi", createdAt: "2024-05-01T10:00:00.000Z" }
    expect(Result.getOrThrow(decodeUnknownEither(Comment)(c))).toEqual(c)
    const r = decodeUnknownEither(Comment)({ id: "c1", html: "<p>hi</p>", createdAt: c.createdAt })
    expect(Result.isFailure(r) && describeParseError(r.failure)).toBe("text: is missing")
  })
})

describe("attachment elements", () => {
  it("R-COMMENT-07: renders one empty div with class attachment and a JSON file attribute", () => {
    const html = renderAttachment(pdf)
    expect(html).toBe(
      '<div class="attachment" file="{&quot;uid&quot;:&quot;abc123&quot;,&quot;name&quot;:&quot;report.pdf&quot;,&quot;size&quot;:2048,&quot;type&quot;:&quot;application/pdf&quot;,&quot;extension&quot;:&quot;pdf&quot;}"></div>'
    )
    expect(parseAttachments(html)).toEqual([pdf])
  })

  it("R-COMMENT-07: quotes, ampersands, angle brackets and unicode in names survive the round trip", () => {
    const tricky = { ...pdf, name: `Q2 "final" <draft> & 'notes' — café 日本語 😀.pdf` }
    const html = `<p>See</p>${renderAttachment(tricky)}<p>and</p>${renderAttachment(pdf)}`
    expect(html).not.toMatch(/file="[^"]*"[^>]*"[^>]*><\/div>/)
    expect(parseAttachments(html)).toEqual([tricky, pdf])
  })

  it("R-COMMENT-07: elements written by other tools are read (single quotes, numeric entities, extra attributes, self-closing)", () => {
    const json = JSON.stringify(pdf)
    const singleQuoted = `<div data-x="1" class='attachment file-card' file='${json}'></div>`
    const numeric = `<DIV class="attachment" file="${json.replace(/"/g, "&#34;")}" />`
    const hex = `<div file="${json.replace(/"/g, "&#x22;")}" class="attachment">\n</div>`
    expect(parseAttachments(singleQuoted + numeric + hex)).toEqual([pdf, pdf, pdf])
  })

  it("R-COMMENT-07: malformed elements, other classes and non-empty divs are ignored", () => {
    const badJson = `<div class="attachment" file="{not json}"></div>`
    const missingKey = `<div class="attachment" file="${JSON.stringify({ uid: "x", name: "n" }).replace(/"/g, "&quot;")}"></div>`
    const otherClass = `<div class="attachments" file="${JSON.stringify(pdf).replace(/"/g, "&quot;")}"></div>`
    const notEmpty = `<div class="attachment" file="${JSON.stringify(pdf).replace(/"/g, "&quot;")}">text</div>`
    expect(parseAttachments(badJson + missingKey + otherClass + notEmpty)).toEqual([])
  })

  it("R-COMMENT-07: mapAttachments re-links uids and leaves the rest of the html as it was", () => {
    const html = `<p>before &amp; after</p>${renderAttachment(pdf)}<p>tail</p>`
    const relinked = mapAttachments(html, (a) => ({ ...a, uid: "new999" }))
    expect(relinked).toBe(`<p>before &amp; after</p>${renderAttachment({ ...pdf, uid: "new999" })}<p>tail</p>`)
    expect(mapAttachments(html, () => null)).toBe("<p>before &amp; after</p><p>tail</p>")
    const found = findAttachments(html)
    expect(html.slice(found[0]!.start, found[0]!.end)).toBe(renderAttachment(pdf))
  })

  it("R-COMMENT-07: render then parse is the identity for any attachment (property)", () => {
    const text = fc.string({ unit: "binary", maxLength: 40 })
    const attachment = fc.record({
      uid: text,
      name: text,
      size: fc.nat(),
      type: text,
      extension: text
    })
    fc.assert(
      fc.property(fc.array(attachment, { maxLength: 4 }), text, (list, filler) => {
        // Filler text between elements must not create or hide attachments.
        const safeFiller = filler.replace(/[<>&]/g, "")
        const html = list.map((a) => `<p>${safeFiller}</p>${renderAttachment(a)}`).join("")
        expect(parseAttachments(html)).toEqual(list)
      }),
      { numRuns: 200 }
    )
  })
})
