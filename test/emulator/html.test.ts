/** Description HTML: text to paragraphs and line breaks, and the allow-list sanitizer (R-REST-RECORD-30..32). */
import { describe, expect, it } from "@effect/vitest"
import { htmlToText, sanitizeHtml, textToHtml } from "../../src/emulator/core/html.ts"

describe("textToHtml", () => {
  it("R-REST-RECORD-30/31: blank lines make paragraphs, newlines make <br>, text is escaped", () => {
    expect(textToHtml("a\nb\n\n\nc")).toBe("<p>a<br>b</p><p>c</p>")
    expect(textToHtml("x\r\n\r\ny")).toBe("<p>x</p><p>y</p>")
    expect(textToHtml("<b>&\"'")).toBe("<p>&lt;b&gt;&amp;&quot;&#39;</p>")
    expect(textToHtml("   ")).toBe("")
  })
})

describe("sanitizeHtml (R-REST-RECORD-32)", () => {
  const cases: Array<[string, string]> = [
    ["<SCRIPT>alert(1)</SCRIPT><p>ok</p>", "<p>ok</p>"],
    ["<script><script>x</script>y</script><p>after</p>", "<p>after</p>"],
    ["<p>unclosed<script>alert(1)", "<p>unclosed"],
    ['<a href="JaVaScRiPt:alert(1)">x</a>', "<a>x</a>"],
    ['<a href="&#106;avascript:alert(1)">x</a>', "<a>x</a>"],
    ['<a href=" java\tscript:alert(1)">x</a>', "<a>x</a>"],
    ['<a href="mailto:a@b.c" target="_blank">m</a>', '<a href="mailto:a@b.c" target="_blank">m</a>'],
    ["<p style=\"color:red\" class='c' ONCLICK=x>t</p>", '<p class="c">t</p>'],
    ["<!-- hidden --><p>v</p>", "<p>v</p>"],
    ["<iframe src=x></iframe><svg onload=x><circle/></svg>done", "done"],
    ["<custom>kept text</custom>", "kept text"],
    ['<div class="attachment" file="{&quot;uid&quot;:&quot;u1&quot;}"></div>', '<div class="attachment" file="{&quot;uid&quot;:&quot;u1&quot;}"></div>'],
    ["1 < 2 > 0", "1 &lt; 2 &gt; 0"]
  ]
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input)} -> ${JSON.stringify(expected)}`, () => expect(sanitizeHtml(input)).toBe(expected))
  }
})

describe("htmlToText", () => {
  it("paragraphs and breaks become newlines, entities are decoded", () => {
    expect(htmlToText("<p>a<br>b</p><p>c &amp; d</p>")).toBe("a\nb\n\nc & d")
  })
})
