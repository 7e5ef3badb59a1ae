/**
 * A fast splitter for CSV text of the usual shape, reading it exactly as csv-parse does
 * with the reader's options (read.ts): quote `"` escaped by doubling, no trimming, rows
 * of any length, a UTF-8 byte order mark dropped, records ending at LF (or, when the file
 * holds a CR, at CRLF, LF or CR).
 *
 * csv-parse looks at every byte through several function calls; this finds the next
 * delimiter, quote and line break with `indexOf`, several times faster on a large file.
 * It takes only cells that are unquoted (a quote inside one is a plain character, as
 * csv-parse's `relax_quotes` reads it) or quoted from their first character to a closing
 * quote followed by a delimiter, a line break or the end. Anything else (a closing quote
 * followed by other text, a quote never closed) is where csv-parse has a reading or an
 * error of its own: the scanner stops there, every record before it read as csv-parse
 * reads it, and the caller hands the rest of the file to csv-parse.
 */

const QUOTE = 0x22
const LF = 0x0a
const CR = 0x0d

export interface ScanOptions {
  /** One ASCII character. */
  readonly delimiter: string
  /** Whether CR ends records too (CRLF, LF and CR); otherwise LF only. */
  readonly cr: boolean
}

/** Whether the scanner reads files with this delimiter (an ASCII character other than a quote or line break). */
export const scannable = (delimiter: string): boolean => {
  const c = delimiter.charCodeAt(0)
  return delimiter.length === 1 && c < 0x80 && c !== QUOTE && c !== LF && c !== CR
}

/** The outcome of scanning a piece of text: how far records were complete, or where it stopped. */
const INCOMPLETE = -1
const UNREADABLE = -2

export class CsvScanner {
  private readonly delimiter: number
  private readonly delimiterText: string
  private readonly cr: boolean
  /** Text of a record not yet ended, carried to the next piece. */
  private carry = ""
  private started = false
  /** Set once the scanner met text it does not read: it takes no more. */
  stopped = false
  /**
   * The next delimiter, LF and CR in the text being scanned, at or after the current
   * position (-1: none left): each is searched for again only once passed, so a file of
   * one column or of long lines is not searched over and over.
   */
  private nd = -2
  private nl = -2
  private nr = -2

  constructor(options: ScanOptions) {
    this.delimiterText = options.delimiter
    this.delimiter = options.delimiter.charCodeAt(0)
    this.cr = options.cr
  }

  /**
   * Splits `text` (after what was carried) into the records it completes, pushed to
   * `out`. Returns false when it met text it does not read (see above): the records
   * pushed are right, the rest is csv-parse's to read.
   */
  push(text: string, out: Array<Array<string>>): boolean {
    return this.scan(text, false, out)
  }

  /** The end of the text: its last record, if any. False as for `push`. */
  end(out: Array<Array<string>>): boolean {
    return this.scan("", true, out)
  }

  private scan(text: string, final: boolean, out: Array<Array<string>>): boolean {
    if (this.stopped) return false
    let s = this.carry === "" ? text : this.carry + text
    if (!this.started && (s.length > 0 || final)) {
      this.started = true
      // csv-parse drops a UTF-8 byte order mark at the start of its input.
      if (s.charCodeAt(0) === 0xfeff) s = s.slice(1)
    }
    const n = s.length
    let p = 0
    this.nd = -2
    this.nl = -2
    this.nr = -2
    while (p < n) {
      const next = this.record(s, p, n, final, out)
      if (next === INCOMPLETE) break
      if (next === UNREADABLE) {
        this.stopped = true
        this.carry = ""
        return false
      }
      p = next
    }
    this.carry = p === 0 ? s : s.slice(p)
    return true
  }

  /**
   * Reads the record starting at `p`: pushes it and returns where the next one starts,
   * or INCOMPLETE (its end is not in `s` yet) or UNREADABLE.
   */
  private record(s: string, p: number, n: number, final: boolean, out: Array<Array<string>>): number {
    const values: Array<string> = []
    const delimiter = this.delimiter
    const cr = this.cr
    for (;;) {
      // One cell starting at p.
      if (p < n && s.charCodeAt(p) === QUOTE) {
        let from = p + 1
        let value = ""
        for (;;) {
          const q = s.indexOf("\"", from)
          if (q === -1) return final ? UNREADABLE : INCOMPLETE
          if (q + 1 >= n) {
            if (!final) return INCOMPLETE
            // A closing quote at the end of the file ends the last record.
            values.push(value + s.slice(from, q))
            out.push(values)
            return n
          }
          const c = s.charCodeAt(q + 1)
          if (c === QUOTE) {
            // A doubled quote is one quote of the cell.
            value += s.slice(from, q + 1)
            from = q + 2
            continue
          }
          value += s.slice(from, q)
          values.push(value)
          if (c === delimiter) {
            p = q + 2
            break
          }
          const end = this.lineEnd(s, q + 1, n, final, c)
          if (end < 0) return end === INCOMPLETE ? INCOMPLETE : UNREADABLE
          out.push(values)
          return end
        }
        // After a delimiter: another cell, empty at the end of the file.
        if (p >= n) {
          if (!final) return INCOMPLETE
          values.push("")
          out.push(values)
          return n
        }
        continue
      }
      // An unquoted cell: up to the next delimiter or line break (quotes inside are text).
      if (this.nd !== -1 && this.nd < p) this.nd = s.indexOf(this.delimiterText, p)
      if (this.nl !== -1 && this.nl < p) this.nl = s.indexOf("\n", p)
      let l = this.nl
      if (cr) {
        if (this.nr !== -1 && this.nr < p) this.nr = s.indexOf("\r", p)
        if (this.nr !== -1 && (l === -1 || this.nr < l)) l = this.nr
      }
      const d = this.nd
      if (d !== -1 && (l === -1 || d < l)) {
        values.push(s.slice(p, d))
        p = d + 1
        if (p >= n) {
          if (!final) return INCOMPLETE
          values.push("")
          out.push(values)
          return n
        }
        continue
      }
      if (l === -1) {
        if (!final) return INCOMPLETE
        values.push(s.slice(p, n))
        out.push(values)
        return n
      }
      values.push(s.slice(p, l))
      const end = this.lineEnd(s, l, n, final, s.charCodeAt(l))
      if (end < 0) return end
      out.push(values)
      return end
    }
  }

  /**
   * Where the record delimiter at `at` (character `c`) ends; INCOMPLETE when a CR is the
   * last character so far (a LF may follow); UNREADABLE when `c` ends no record.
   */
  private lineEnd(s: string, at: number, n: number, final: boolean, c: number): number {
    if (c === LF) return at + 1
    if (c === CR && this.cr) {
      if (at + 1 < n) return s.charCodeAt(at + 1) === LF ? at + 2 : at + 1
      return final ? at + 1 : INCOMPLETE
    }
    return UNREADABLE
  }
}
