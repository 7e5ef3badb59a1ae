/**
 * Streaming CSV reading as csv-parse reads it: constant memory whatever the file size.
 * The usual files are split by scan.ts, several times faster; where it stops (quoting
 * csv-parse reads its own way, or fails on) csv-parse reads the file, so every file
 * gives the same records, lines and errors as csv-parse alone.
 *
 * - Bytes are decoded with a fatal TextDecoder (UTF-8 unless `encoding` says otherwise),
 *   so a file in another encoding is reported with the line where decoding failed
 *   instead of being imported as mojibake; a UTF-16 byte order mark is named as such.
 * - A UTF-8 byte order mark is dropped; quoted fields may hold delimiters, quotes and
 *   line breaks; the delimiter is given or guessed from the header line.
 * - Each record carries the line it starts on (header = line 1), counting the line
 *   breaks inside quoted fields, so rejects point at the right place. Empty lines are
 *   skipped but counted.
 */
import { parse } from "csv-parse"
import * as Data from "effect/Data"
import * as fs from "node:fs"
import { isUtf8 } from "node:buffer"
import { Transform, type TransformCallback } from "node:stream"
import { TextDecoder } from "node:util"
import { CsvScanner, scannable } from "./scan.ts"

export class CsvFileError extends Data.TaggedError("CsvFileError")<{
  readonly file: string
  readonly detail: string
  /** The input itself is unusable (missing, wrong encoding, bad quoting): a usage problem. */
  readonly usage: boolean
}> {
  override get message(): string {
    return `--csv ${this.file}: ${this.detail}`
  }
}

export interface CsvSourceOptions {
  readonly file: string
  /** A single character; guessed from the header line when absent. */
  readonly delimiter?: string | undefined
  /** A WHATWG encoding label (utf-8, windows-1252, utf-16le, ...); default utf-8. */
  readonly encoding?: string | undefined
}

export interface CsvRecord {
  /** Line on which the record starts (header = 1). */
  readonly line: number
  readonly values: ReadonlyArray<string>
}

const CANDIDATES = [",", ";", "\t", "|"] as const

/** The candidate delimiter occurring most often outside quotes in `line`; "," on a tie or none. */
export const guessDelimiter = (line: string): string => {
  const counts = new Map<string, number>(CANDIDATES.map((c) => [c, 0]))
  let quoted = false
  for (const ch of line) {
    if (ch === "\"") quoted = !quoted
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1)
  }
  let best = ","
  let bestN = 0
  for (const [c, n] of counts) {
    if (n > bestN) {
      best = c
      bestN = n
    }
  }
  return best
}

/**
 * Bytes at the end of `b` that begin a UTF-8 sequence the chunk does not finish (0-3);
 * 0 when the end is complete or not UTF-8 at all (validation then reports it).
 */
const incompleteTail = (b: Buffer): number => {
  for (let i = 1; i <= Math.min(3, b.length); i++) {
    const c = b[b.length - i]!
    if ((c & 0xc0) === 0x80) continue
    const need = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1
    return need > i ? i : 0
  }
  return 0
}

const countLineBreaks = (b: Buffer): number => {
  let n = 0
  for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) n++
  return n
}

/**
 * UTF-8 input: checks the bytes and passes them on unchanged, each chunk ending on a
 * whole character (csv-parse works on bytes and decodes each field once; the scanner
 * decodes whole chunks). Decoding to text here only for csv-parse to encode it back
 * would cost a third of its reading time.
 */
class CheckUtf8 extends Transform {
  private lines = 1
  private carry: Buffer | undefined

  constructor(private readonly onBad: (line: number) => Error) {
    super()
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) {
    const all = this.carry === undefined ? chunk : Buffer.concat([this.carry, chunk])
    const tail = incompleteTail(all)
    const body = tail === 0 ? all : all.subarray(0, all.length - tail)
    this.carry = tail === 0 ? undefined : Buffer.from(all.subarray(all.length - tail))
    if (!isUtf8(body)) return cb(this.onBad(this.lines + linesBeforeBadByte(body, "utf-8")))
    this.lines += countLineBreaks(body)
    if (body.length > 0) this.push(body)
    cb()
  }

  override _flush(cb: TransformCallback) {
    // Bytes left over can only be a sequence cut short by the end of the file.
    if (this.carry !== undefined) return cb(this.onBad(this.lines))
    cb()
  }
}

/** Line breaks in `chunk` before its first undecodable byte (for the message only). */
const linesBeforeBadByte = (chunk: Buffer, encoding: string): number => {
  const text = new TextDecoder(encoding).decode(chunk)
  const bad = text.indexOf("\uFFFD")
  const upTo = bad === -1 ? text : text.slice(0, bad)
  return upTo.split("\n").length - 1
}

/** Decodes bytes to text, failing on the first invalid sequence with the line it is on. */
class Decode extends Transform {
  private readonly decoder: TextDecoder
  private lines = 1

  constructor(encoding: string, private readonly onBad: (line: number) => Error) {
    super({ readableObjectMode: false, decodeStrings: true })
    this.decoder = new TextDecoder(encoding, { fatal: true })
  }

  private pushText(text: string) {
    let i = -1
    while ((i = text.indexOf("\n", i + 1)) !== -1) this.lines++
    if (text !== "") this.push(text)
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback) {
    try {
      this.pushText(this.decoder.decode(chunk, { stream: true }))
      cb()
    } catch {
      cb(this.onBad(this.lines + linesBeforeBadByte(chunk, this.decoder.encoding)))
    }
  }

  override _flush(cb: TransformCallback) {
    try {
      this.pushText(this.decoder.decode())
      cb()
    } catch {
      cb(this.onBad(this.lines))
    }
  }
}

const readHead = (file: string, bytes: number): Buffer => {
  const fd = fs.openSync(file, "r")
  try {
    const buf = Buffer.alloc(bytes)
    const n = fs.readSync(fd, buf, 0, bytes, 0)
    return buf.subarray(0, n)
  } finally {
    fs.closeSync(fd)
  }
}

/**
 * Whether the file holds a carriage return byte anywhere (native memchr over 1 MiB
 * reads, stopping at the first). Files without one need no `\r` line endings checked,
 * which makes csv-parse a fifth faster; the byte is 0x0D in every encoding read here.
 */
const hasCarriageReturn = (file: string): boolean => {
  const fd = fs.openSync(file, "r")
  try {
    const buf = Buffer.allocUnsafe(1 << 20)
    for (;;) {
      const n = fs.readSync(fd, buf, 0, buf.length, null)
      if (n === 0) return false
      if (buf.subarray(0, n).indexOf(13) !== -1) return true
    }
  } finally {
    fs.closeSync(fd)
  }
}

/** Checks the file and settles encoding and delimiter before streaming. */
const prepare = (options: CsvSourceOptions): { encoding: string; delimiter: string } => {
  const file = options.file
  let stat: fs.Stats
  try {
    stat = fs.statSync(file)
  } catch {
    throw new CsvFileError({ file, detail: "file not found", usage: true })
  }
  if (!stat.isFile()) throw new CsvFileError({ file, detail: "not a regular file", usage: true })
  const encoding = (options.encoding ?? "utf-8").toLowerCase()
  try {
    new TextDecoder(encoding)
  } catch {
    throw new CsvFileError({ file, detail: `unknown encoding ${JSON.stringify(options.encoding)}`, usage: true })
  }
  const head = readHead(file, 64 * 1024)
  const isUtf8 = encoding === "utf-8" || encoding === "utf8"
  if (isUtf8 && head.length >= 2 && ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff))) {
    const which = head[0] === 0xff ? "utf-16le" : "utf-16be"
    throw new CsvFileError({
      file,
      detail: `the file is ${which.toUpperCase()} (byte order mark ${head[0] === 0xff ? "FF FE" : "FE FF"}), not UTF-8; save it as UTF-8 or pass --encoding ${which}`,
      usage: true
    })
  }
  if (isUtf8 && head.includes(0)) {
    throw new CsvFileError({
      file,
      detail: "the file contains NUL bytes: it looks like UTF-16 without a byte order mark; save it as UTF-8 or pass --encoding utf-16le",
      usage: true
    })
  }
  let delimiter = options.delimiter
  if (delimiter === undefined) {
    let text: string
    try {
      text = new TextDecoder(encoding).decode(head)
    } catch {
      text = ""
    }
    const firstLine = text.replace(/^\uFEFF/, "").split(/\r?\n/).find((l) => l.trim() !== "") ?? ""
    delimiter = guessDelimiter(firstLine)
  }
  if (delimiter.length !== 1 || delimiter === "\"" || delimiter === "\n" || delimiter === "\r") {
    throw new CsvFileError({ file, detail: `--delimiter must be one character other than a quote or line break, got ${JSON.stringify(delimiter)}`, usage: true })
  }
  return { encoding, delimiter }
}

const countNewlines = (values: ReadonlyArray<string>): number => {
  let n = 0
  for (const v of values) {
    let i = v.indexOf("\n")
    while (i !== -1) {
      n++
      i = v.indexOf("\n", i + 1)
    }
  }
  return n
}

const isEmptyRecord = (values: ReadonlyArray<string>): boolean => {
  for (const v of values) if (v.trim() !== "") return false
  return true
}

export interface CsvReader {
  readonly header: ReadonlyArray<string>
  readonly delimiter: string
  readonly encoding: string
  /** Data records in batches of up to `batchSize`, in file order. */
  readonly batches: AsyncIterable<ReadonlyArray<CsvRecord>>
  /** Stops reading early (e.g. the caller failed); safe to call twice. */
  readonly close: () => void
}

/** Records as they are read: `read` gives one already read, `wait` until there may be more. */
interface RecordSource {
  /** The next record read, or null when none is at hand (see `ended`). */
  readonly read: () => Array<string> | null
  /** No record will come any more. */
  readonly ended: () => boolean
  /** What stopped the reading (the file, its encoding, its quoting), if anything. */
  readonly failure: () => unknown
  /** Resolves when more may have been read. */
  readonly wait: () => Promise<void>
  readonly close: () => void
}

interface Input {
  readonly file: string
  readonly encoding: string
  readonly delimiter: string
  /** Whether the file holds a CR byte anywhere (then CRLF, LF and CR end records). */
  readonly cr: boolean
}

/** The csv-parse options of the reader (scan.ts reads the usual files exactly as these do). */
const csvParseOptions = (input: Input) => ({
  delimiter: input.delimiter,
  bom: true,
  relax_column_count: true,
  relax_quotes: true,
  skip_empty_lines: false,
  // Files whose line endings are mixed (edited on several systems) still split per line;
  // a file without any CR needs only LF checked.
  record_delimiter: input.cr ? ["\r\n", "\n", "\r"] : ["\n"]
})

/** The file's bytes as UTF-8 text, checked (or decoded from its encoding). */
const openText = (input: Input) => {
  // 64 KiB reads: a whole chunk is turned into records at once, and the ~800 of a 64 KiB
  // chunk die young where the ~13,000 of a 1 MiB chunk outlived young-generation
  // collections (less time in GC; measured faster than 1 MiB and than 16 KiB reads).
  const stream = fs.createReadStream(input.file, { highWaterMark: 1 << 16 })
  const bad = (line: number) =>
    new CsvFileError({
      file: input.file,
      detail: `not valid ${input.encoding === "utf8" ? "utf-8" : input.encoding} text near line ${line}; save the file as UTF-8 or pass --encoding with its encoding (e.g. windows-1252)`,
      usage: true
    })
  const decode = input.encoding === "utf-8" || input.encoding === "utf8" ? new CheckUtf8(bad) : new Decode(input.encoding, bad)
  stream.on("error", (e) => decode.destroy(e))
  stream.pipe(decode)
  return { stream, decode }
}

/** Resolves at the next of `events` on `emitter`. */
const nextEvent = (emitter: NodeJS.EventEmitter, events: ReadonlyArray<string>) =>
  new Promise<void>((resolve) => {
    const done = () => {
      for (const e of events) emitter.off(e, done)
      resolve()
    }
    for (const e of events) emitter.on(e, done)
  })

/** The records as csv-parse reads the file. */
const csvParseSource = (input: Input): RecordSource => {
  const { stream, decode } = openText(input)
  const parser = parse(csvParseOptions(input))
  decode.on("error", (e) => parser.destroy(e))
  decode.pipe(parser)
  let failure: unknown = undefined
  parser.on("error", (e) => {
    failure = e
  })
  return {
    read: () => parser.read() as Array<string> | null,
    ended: () => parser.readableEnded || parser.destroyed,
    failure: () => failure,
    wait: () => nextEvent(parser, ["readable", "end", "error", "close"]),
    close: () => {
      stream.destroy()
      parser.destroy()
    }
  }
}

/**
 * The records as scan.ts splits the text, the same as csv-parse's; where the scanner
 * stops (text csv-parse reads its own way, or fails on), csv-parse reads the file again
 * from the start and the records the scanner gave are skipped.
 */
const scannedSource = (input: Input): RecordSource => {
  const { stream, decode } = openText(input)
  decode.setEncoding("utf8")
  const scanner = new CsvScanner({ delimiter: input.delimiter, cr: input.cr })
  let records: Array<Array<string>> = []
  let next = 0
  let given = 0
  let textEnded = false
  /** The scanner has read the whole text. */
  let scanned = false
  let failure: unknown = undefined
  decode.on("end", () => {
    textEnded = true
  })
  decode.on("error", (e) => {
    failure = e
  })
  /** csv-parse, once the scanner stopped, and how many of its records are still to skip. */
  let rest: RecordSource | undefined
  let skip = 0
  const handOver = () => {
    stream.destroy()
    decode.destroy()
    rest = csvParseSource(input)
    skip = given + (records.length - next)
  }
  /** Scans what text has arrived; false when none has. */
  const scan = (): boolean => {
    const text = decode.read() as string | null
    const out: Array<Array<string>> = []
    let read: boolean
    if (text !== null) read = scanner.push(text, out)
    else if (textEnded && !scanned) {
      read = scanner.end(out)
      scanned = true
    } else return false
    if (next === records.length) {
      records = out
      next = 0
    } else records.push(...out)
    if (!read) handOver()
    return true
  }
  const read = (): Array<string> | null => {
    for (;;) {
      if (next < records.length) {
        given++
        return records[next++]!
      }
      if (rest !== undefined) {
        for (;;) {
          const r = rest.read()
          if (r === null || skip === 0) return r
          skip--
        }
      }
      if (failure !== undefined || !scan()) return null
    }
  }
  return {
    read,
    ended: () =>
      rest !== undefined ? rest.ended() : next === records.length && (scanned || decode.destroyed),
    failure: () => failure ?? rest?.failure(),
    wait: () => (rest !== undefined ? rest.wait() : nextEvent(decode, ["readable", "end", "error", "close"])),
    close: () => {
      stream.destroy()
      decode.destroy()
      rest?.close()
    }
  }
}

/**
 * Opens a CSV file: reads the header, then yields the data records in batches. Throws
 * CsvFileError for an unusable file (also from inside the iteration, with the line).
 */
export const openCsv = async (options: CsvSourceOptions, batchSize = 1000): Promise<CsvReader> => {
  const file = options.file
  const { encoding, delimiter } = prepare(options)
  const input: Input = { file, encoding, delimiter, cr: hasCarriageReturn(file) }
  const source = scannable(delimiter) ? scannedSource(input) : csvParseSource(input)

  const toFileError = (e: unknown): CsvFileError => {
    if (e instanceof CsvFileError) return e
    const err = e as { message?: string; lines?: number; code?: string }
    const where = typeof err.lines === "number" ? ` at line ${err.lines}` : ""
    return new CsvFileError({ file, detail: `cannot parse CSV${where}: ${err.message ?? String(e)}`, usage: true })
  }
  // Records are taken while the source has them read, and only awaited when it has none:
  // one promise per piece of text, not per record.
  /** The next record, or null at the end. */
  const pull = async (): Promise<Array<string> | null> => {
    for (;;) {
      if (source.failure() !== undefined) throw toFileError(source.failure())
      const r = source.read()
      if (r !== null) return r
      if (source.ended()) {
        if (source.failure() !== undefined) throw toFileError(source.failure())
        return null
      }
      await source.wait()
    }
  }

  let line = 1
  let header: Array<string> | undefined
  for (;;) {
    const r = await pull()
    if (r === null) break
    line += 1 + countNewlines(r)
    if (isEmptyRecord(r)) continue
    header = r.map((h, i) => (i === 0 ? h.replace(/^\uFEFF/, "") : h))
    break
  }
  if (header === undefined) {
    source.close()
    throw new CsvFileError({ file, detail: "the file is empty (no header line)", usage: true })
  }

  async function* batches(): AsyncGenerator<ReadonlyArray<CsvRecord>> {
    let batch: Array<CsvRecord> = []
    try {
      for (;;) {
        if (source.failure() !== undefined) throw toFileError(source.failure())
        let r = source.read()
        if (r === null) {
          r = await pull()
          if (r === null) break
        }
        const start = line
        line += 1 + countNewlines(r)
        if (isEmptyRecord(r)) continue
        batch.push({ line: start, values: r })
        if (batch.length >= batchSize) {
          yield batch
          batch = []
        }
      }
      if (batch.length > 0) yield batch
    } finally {
      source.close()
    }
  }

  return { header, delimiter, encoding, batches: batches(), close: source.close }
}
