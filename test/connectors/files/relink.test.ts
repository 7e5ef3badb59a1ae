import { describe, expect, it } from "vitest"
import {
  escapeAttribute,
  relinkCommentHtml,
  relinkCustomFields,
  relinkFileFieldText
} from "../../../src/connectors/files/relink.ts"

const attachment = (file: object, quote: "\"" | "'" = "\"") =>
  `<div class="attachment" file=${quote}${quote === "\"" ? escapeAttribute(JSON.stringify(file)) : JSON.stringify(file)}${quote}></div>`

const map = new Map([["src1", "dst1"], ["src2", "dst2"]])

describe("re-linking copied files", () => {
  it("R-COMMENT-07: rewrites the uid inside attachment elements and nothing else", () => {
    const f1 = { uid: "src1", name: "a > b.pdf", size: 10, type: "application/pdf", extension: "pdf" }
    const html = `<p>see</p>${attachment(f1)}<p>and</p>${attachment({ ...f1, uid: "src2" }, "'")}`
    const r = relinkCommentHtml(html, map)
    expect(r.relinked).toEqual(["src1", "src2"])
    expect(r.missing).toEqual([])
    expect(r.value).toContain("<p>see</p>")
    expect(r.value).not.toContain("src1")
    expect(r.value).not.toContain("src2")
    const files = [...r.value.matchAll(/file="([^"]*)"/g)].map((m) =>
      JSON.parse(m[1]!.replace(/&quot;/g, "\"").replace(/&gt;/g, ">").replace(/&lt;/g, "<").replace(/&amp;/g, "&"))
    )
    expect(files).toEqual([{ ...f1, uid: "dst1" }, { ...f1, uid: "dst2" }])
  })

  it("leaves unmapped uids and non-attachment divs unchanged and reports the missing ones", () => {
    const html = `<div class="note" file="x"></div>${attachment({ uid: "other", name: "n.txt", size: 1, type: "text/plain", extension: "txt" })}`
    const r = relinkCommentHtml(html, map)
    expect(r.value).toBe(html)
    expect(r.missing).toEqual(["other"])
  })

  it("rewrites FILE custom fields (JSON array of uids in text) and skips other types", () => {
    expect(relinkFileFieldText('["src1","zzz"]', map)).toEqual({
      value: '["dst1","zzz"]',
      relinked: ["src1"],
      missing: ["zzz"]
    })
    const fields = [
      { id: "f1", type: "FILE", text: '["src2"]' },
      { id: "f2", type: "TEXT", text: '["src1"]' }
    ]
    const r = relinkCustomFields(fields, (uid) => map.get(uid))
    expect(r.value).toEqual([{ id: "f1", type: "FILE", text: '["dst2"]' }, fields[1]])
  })
})
