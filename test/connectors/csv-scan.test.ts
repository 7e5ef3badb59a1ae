/**
 * The CSV scanner (src/connectors/csv/scan.ts) against csv-parse with the reader's
 * options: on any text, in any pieces, every record it gives is csv-parse's record, and
 * where it stops csv-parse has a reading or an error of its own there.
 */
import { parse } from "csv-parse/sync"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { CsvScanner, scannable } from "../../src/connectors/csv/scan.ts"

/** What csv-parse makes of `text`: its records, or its error. */
const csvParse = (text: string, delimiter: string, cr: boolean): Array<Array<string>> | Error => {
  try {
    return parse(Buffer.from(text), {
      delimiter,
      bom: true,
      relax_column_count: true,
      relax_quotes: true,
      skip_empty_lines: false,
      record_delimiter: cr ? ["\r\n", "\n", "\r"] : ["\n"]
    }) as Array<Array<string>>
  } catch (e) {
    return e as Error
  }
}

/** The scanner over `text` cut at `cuts`: its records, and whether it read all of it. */
const scan = (text: string, delimiter: string, cuts: ReadonlyArray<number>) => {
  const scanner = new CsvScanner({ delimiter, cr: text.includes("\r") })
  const records: Array<Array<string>> = []
  let from = 0
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    if (!scanner.push(text.slice(from, Math.max(from, cut)), records)) return { records, read: false }
    from = Math.max(from, cut)
  }
  if (!scanner.push(text.slice(from), records)) return { records, read: false }
  return { records, read: scanner.end(records) }
}

const text = (units: ReadonlyArray<string>) =>
  fc.tuple(fc.boolean(), fc.array(fc.constantFrom(...units), { maxLength: 40 })).map(([bom, cs]) => (bom ? "\uFEFF" : "") + cs.join(""))

describe("CSV scanner", () => {
  it("property: whatever the text and however it is cut, it reads what csv-parse reads, or stops where csv-parse reads its own way", () => {
    const units = ["a", "b", ",", ",", ";", "\"", "\"", "\"\"", "\n", "\n", "\r", "\r\n", " ", "é", "😀", "\uFEFF"]
    fc.assert(
      fc.property(text(units), fc.constantFrom(",", ";", "\t"), fc.array(fc.nat(45), { maxLength: 6 }), (t, delimiter, cuts) => {
        const expected = csvParse(t, delimiter, t.includes("\r"))
        const got = scan(t, delimiter, cuts)
        if (got.read) {
          // Read to the end: csv-parse reads the same records and no error.
          expect(got.records).toEqual(expected)
        } else {
          // Stopped: the records before are csv-parse's first ones.
          const records = expected instanceof Error ? undefined : expected
          if (records !== undefined) expect(got.records).toEqual(records.slice(0, got.records.length))
        }
      }),
      { numRuns: 3000 }
    )
  })

  it("reads quoted cells with delimiters, doubled quotes and line breaks, and a quote inside an unquoted cell as text", () => {
    const got = scan("\uFEFFa,\"b, \"\"c\"\"\nd\"\n5\" screen,\"\"\r\nlast", ",", [3, 9, 20])
    expect(got).toEqual({ read: true, records: [["a", "b, \"c\"\nd"], ["5\" screen", ""], ["last"]] })
  })

  it("stops at a closing quote followed by text and at a quote never closed, after the records before them", () => {
    expect(scan("a,b\n\"x\"y,z\nc\n", ",", [])).toEqual({ read: false, records: [["a", "b"]] })
    expect(scan("a,b\n\"never closed\n", ",", [2])).toEqual({ read: false, records: [["a", "b"]] })
  })

  it("takes ASCII delimiters other than a quote or line break", () => {
    expect([",", ";", "\t", "|", " "].every(scannable)).toBe(true)
    expect(["\"", "\n", "\r", "§", ";;"].some(scannable)).toBe(false)
  })
})
