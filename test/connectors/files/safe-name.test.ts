import { describe, expect, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as fc from "fast-check"
import * as path from "node:path"
import {
  MAX_NAME_BYTES,
  resolveInside,
  safeLocalName,
  SafeNamer,
  uploadNameFor
} from "../../../src/connectors/files/safe-name.ts"
import { tempDir } from "../../support/effect.ts"

describe("safe local file names", () => {
  it("replaces path separators and keeps `..` from being a path step", () => {
    expect(safeLocalName("../../etc/passwd")).toBe(".._.._etc_passwd")
    expect(safeLocalName("..\\..\\boot.ini")).toBe(".._.._boot.ini")
    expect(safeLocalName("..")).toBe("_file")
    expect(safeLocalName(".")).toBe("_file")
    expect(safeLocalName("")).toBe("_file")
    expect(safeLocalName("/")).toBe("_")
  })

  it("prefixes reserved device names, with or without an extension", () => {
    expect(safeLocalName("CON")).toBe("_CON")
    expect(safeLocalName("con.txt")).toBe("_con.txt")
    expect(safeLocalName("lpt1.tar.gz")).toBe("_lpt1.tar.gz")
    expect(safeLocalName("console.txt")).toBe("console.txt")
  })

  it("keeps unicode, spaces, % and #; replaces characters Windows refuses and controls", () => {
    expect(safeLocalName("résumé 100% #1.pdf")).toBe("résumé 100% #1.pdf")
    expect(safeLocalName("日本語のファイル.txt")).toBe("日本語のファイル.txt")
    expect(safeLocalName("what?.txt")).toBe("what_.txt")
    expect(safeLocalName("a:b*c|d<e>f\"g.txt")).toBe("a_b_c_d_e_f_g.txt")
    expect(safeLocalName("tab\there\n.txt")).toBe("tab_here_.txt")
    expect(safeLocalName("trailing. . ")).toBe("trailing")
  })

  it("normalizes to NFC so one visible name is one file", () => {
    expect(safeLocalName("cafe\u0301.txt")).toBe("caf\u00e9.txt")
  })

  it("cuts long names to the byte limit at a code point, keeping the extension", () => {
    const name = "é".repeat(300) + ".pdf"
    const safe = safeLocalName(name)
    expect(Buffer.byteLength(safe)).toBeLessThanOrEqual(MAX_NAME_BYTES)
    expect(safe.endsWith(".pdf")).toBe(true)
    expect(safe).not.toContain("\ufffd")
    const emoji = "😀".repeat(100) + ".txt"
    expect([...safeLocalName(emoji).replace(".txt", "")].every((c) => c === "😀")).toBe(true)
  })

  it("resolves collisions deterministically, case-insensitively, and reserves the manifest name", () => {
    const namer = new SafeNamer()
    expect(namer.next("report.pdf")).toBe("report.pdf")
    expect(namer.next("report.pdf")).toBe("report (2).pdf")
    expect(namer.next("REPORT.pdf")).toBe("REPORT (3).pdf")
    expect(namer.next("a/b.txt")).toBe("a_b.txt")
    expect(namer.next("a_b.txt")).toBe("a_b (2).txt")
    expect(namer.next("manifest.ndjson")).toBe("manifest (2).ndjson")
    const again = new SafeNamer()
    again.reserve("report.pdf")
    expect(again.next("report.pdf")).toBe("report (2).pdf")
  })

  it.effect("never yields a name that leaves its directory or is too long (property)", () =>
    Effect.gen(function*() {
      const root = yield* tempDir("ws-safe-")
      fc.assert(
        fc.property(fc.string({ unit: "binary", maxLength: 400 }), (name) => {
          const safe = new SafeNamer().next(name)
          expect(safe).not.toMatch(/[/\\\u0000]/)
          expect(safe).not.toBe(".")
          expect(safe).not.toBe("..")
          expect(Buffer.byteLength(safe)).toBeLessThanOrEqual(255)
          expect(resolveInside(root, safe)).not.toBeNull()
        }),
        { numRuns: 200 }
      )
    }))

  it("resolveInside refuses anything that is not a direct child", () => {
    expect(resolveInside("/tmp/x", "../y")).toBeNull()
    expect(resolveInside("/tmp/x", "a/b")).toBeNull()
    expect(resolveInside("/tmp/x", "..")).toBeNull()
    expect(resolveInside("/tmp/x", "/etc/passwd")).toBeNull()
    expect(resolveInside("/tmp/x", "ok.txt")).toBe(path.resolve("/tmp/x/ok.txt"))
    expect(resolveInside("/tmp/x", ".._.._x")).toBe(path.resolve("/tmp/x/.._.._x"))
  })

  it("R-UPLOAD-PRESIGN-20: names without a readable extension get .bin for the presign step", () => {
    expect(uploadNameFor("Makefile")).toBe("Makefile.bin")
    expect(uploadNameFor(".env")).toBe(".env.bin")
    expect(uploadNameFor("dir.d/README")).toBe("dir.d/README.bin")
    expect(uploadNameFor("a.tar.gz")).toBe("a.tar.gz")
    expect(uploadNameFor("x.")).toBe("x..bin")
  })
})
