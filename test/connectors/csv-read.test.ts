import { parse } from "csv-parse/sync"
import { stringify } from "csv-stringify/sync"
import * as fc from "fast-check"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { CsvFileError, type CsvRecord, guessDelimiter, openCsv } from "../../src/connectors/csv/read.ts"

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ws-csv-read-"))
let n = 0
const write = (content: string | Buffer) => {
  const file = path.join(dir, `f${n++}.csv`)
  fs.writeFileSync(file, content)
  return file
}

const readAll = async (file: string, options: { delimiter?: string; encoding?: string } = {}) => {
  const reader = await openCsv({ file, ...options }, 3)
  const records: Array<CsvRecord> = []
  for await (const batch of reader.batches) records.push(...batch)
  return { header: reader.header, delimiter: reader.delimiter, records }
}

describe("CSV reader", () => {
  it("drops a UTF-8 byte order mark and keeps quoted commas, quotes and line breaks", async () => {
    const file = write("\uFEFFtitle,description\n\"a, b\",\"say \"\"hi\"\"\nsecond line\"\nc,d\n")
    const { header, records } = await readAll(file)
    expect(header).toEqual(["title", "description"])
    expect(records.map((r) => r.values)).toEqual([["a, b", "say \"hi\"\nsecond line"], ["c", "d"]])
  })

  it("numbers rows by the line they start on, counting quoted line breaks and empty lines", async () => {
    const file = write("title,notes\r\none,\"x\r\ny\r\nz\"\r\n\r\ntwo,\r\n\n   \nthree,q\n")
    const { records } = await readAll(file)
    expect(records.map((r) => [r.line, r.values[0]])).toEqual([[2, "one"], [6, "two"], [9, "three"]])
  })

  it("guesses semicolon, tab and pipe delimiters from the header, and takes an explicit one", async () => {
    expect(guessDelimiter("a;b;\"c;d,e\"")).toBe(";")
    expect(guessDelimiter("a\tb\tc")).toBe("\t")
    expect(guessDelimiter("a|b")).toBe("|")
    expect(guessDelimiter("single")).toBe(",")
    const semi = await readAll(write("title;due\nx, y;2024-01-02\n"))
    expect(semi.delimiter).toBe(";")
    expect(semi.records[0]!.values).toEqual(["x, y", "2024-01-02"])
    const forced = await readAll(write("a;b,c\n1;2,3\n"), { delimiter: "," })
    expect(forced.records[0]!.values).toEqual(["1;2", "3"])
  })

  it("reports a UTF-16 file clearly instead of importing garbage", async () => {
    const file = write(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from("title\nx\n", "utf16le")]))
    await expect(openCsv({ file })).rejects.toThrow(/UTF-16LE.*not UTF-8.*--encoding utf-16le/)
    const { records } = await readAll(file, { encoding: "utf-16le" })
    expect(records[0]!.values).toEqual(["x"])
  })

  it("reports bytes that are not UTF-8 with the line, and reads them with --encoding windows-1252", async () => {
    const file = write(Buffer.concat([Buffer.from("title\nok\ncaf"), Buffer.from([0xe9]), Buffer.from("\n")]))
    const err = await readAll(file).then(() => undefined, (e: unknown) => e)
    expect(err).toBeInstanceOf(CsvFileError)
    expect((err as CsvFileError).message).toMatch(/not valid utf-8 text near line 3/)
    const { records } = await readAll(file, { encoding: "windows-1252" })
    expect(records[1]!.values).toEqual(["café"])
  })

  it("UTF-8 read as bytes: a character cut by a read chunk stays whole; a bad byte far on and a cut last character are reported with their line", async () => {
    // Reads are 1 MiB: put a 4-byte and a 2-byte character across that boundary.
    const head = "title\n"
    const filler = "x".repeat((1 << 20) - head.length - 2)
    const good = write(`${head}${filler}😀é\nlast\n`)
    const { records } = await readAll(good)
    expect(records.map((r) => r.values[0])).toEqual([`${filler}😀é`, "last"])
    const lines = Array.from({ length: 50_000 }, (_, i) => `row ${i}\n`).join("")
    const bad = write(Buffer.concat([Buffer.from(`title\n${lines}`), Buffer.from([0x63, 0xe9, 0x0a])]))
    await expect(readAll(bad)).rejects.toThrow(/not valid utf-8 text near line 50002/)
    const cut = write(Buffer.concat([Buffer.from("title\nok\n"), Buffer.from("😀").subarray(0, 2)]))
    await expect(readAll(cut)).rejects.toThrow(/not valid utf-8 text near line 3/)
  })

  it("line endings: a file whose first CR comes after the first MiB still splits at CRLF and CR", async () => {
    const lf = Array.from({ length: 120_000 }, (_, i) => `r${i}\n`).join("")
    const { records } = await readAll(write(`title\n${lf}crlf\r\ncr\rend\n`))
    expect(records.slice(-3).map((r) => [r.line, r.values])).toEqual([[120_002, ["crlf"]], [120_003, ["cr"]], [120_004, ["end"]]])
  })

  it("a file with quoting csv-parse reads its own way past the first read (a closing quote followed by text) reads as csv-parse reads it, lines included", async () => {
    const head = Array.from({ length: 20_000 }, (_, i) => `row ${i},"quoted, ${i}"\n`).join("")
    const file = write(`title,notes\n${head}"odd"text,x\n"multi\nline",y\nlast,z\n`)
    const { records } = await readAll(file)
    expect(records.length).toBe(20_003)
    expect(records[19_999]).toEqual({ line: 20_001, values: ["row 19999", "quoted, 19999"] })
    expect(records.slice(-3)).toEqual([
      { line: 20_002, values: ["\"odd\"text", "x"] },
      { line: 20_003, values: ["multi\nline", "y"] },
      { line: 20_005, values: ["last", "z"] }
    ])
  })

  it("property: on any text the records, their lines and the parse errors are csv-parse's", async () => {
    const unit = fc.constantFrom("a", "b", ",", ",", "\"", "\"", "\n", "\n", "\r", "\r\n", " ", "é")
    await fc.assert(
      fc.asyncProperty(fc.array(unit, { maxLength: 40 }), async (units) => {
        const text = `h1,h2\n${units.join("")}`
        const cr = text.includes("\r")
        let expected: Array<Array<string>> | Error
        try {
          expected = parse(Buffer.from(text), {
            delimiter: ",",
            bom: true,
            relax_column_count: true,
            relax_quotes: true,
            skip_empty_lines: false,
            record_delimiter: cr ? ["\r\n", "\n", "\r"] : ["\n"]
          }) as Array<Array<string>>
        } catch (e) {
          expected = e as Error
        }
        const got = await readAll(write(text), { delimiter: "," }).then((r) => r.records, (e: unknown) => e as Error)
        if (expected instanceof Error) {
          expect(got).toBeInstanceOf(CsvFileError)
          expect((got as Error).message).toContain(expected.message)
          return
        }
        // Lines: each record starts after the line breaks of the ones before it.
        let line = 1
        const records: Array<CsvRecord> = []
        for (const values of expected) {
          if (line > 1 && values.some((v) => v.trim() !== "")) records.push({ line, values })
          line += 1 + values.join("").split("\n").length - 1
        }
        expect(got).toEqual(records)
      }),
      { numRuns: 300 }
    )
  })

  it("names a missing file and an empty file", async () => {
    await expect(openCsv({ file: path.join(dir, "nope.csv") })).rejects.toThrow(/file not found/)
    await expect(openCsv({ file: write("\n\n") })).rejects.toThrow(/empty/)
  })

  it("property: whatever cells csv-stringify writes, the reader gives back, with correct start lines", async () => {
    const cell = fc.string({ unit: fc.constantFrom("a", "é", "😀", ",", ";", "\"", "\n", "\r\n", " ", "x", "1") , maxLength: 8 })
    await fc.assert(
      fc.asyncProperty(fc.array(fc.tuple(cell, cell, cell), { minLength: 1, maxLength: 12 }), async (rows) => {
        // Rows whose every cell is blank are skipped by design; keep one visible cell.
        const data = rows.map(([a, b, c]) => [`r${a}`, b, c])
        const text = stringify([["t", "b", "c"], ...data])
        const { records } = await readAll(write(text), { delimiter: "," })
        expect(records.map((r) => r.values)).toEqual(data)
        // Start line = 2 + line breaks in all earlier rows.
        let line = 2
        records.forEach((r, i) => {
          expect(r.line).toBe(line)
          line += 1 + data[i]!.join("").split("\n").length - 1
        })
      }),
      { numRuns: 60 }
    )
  })
})
