/**
 * An export thread (see export-threads.ts): its own read-only connection to the snapshot
 * file; for each range asked for, the stored objects' lines in the export's format (the
 * lines export.ts's `linesOf` makes on one thread: ndjson the stored text, csv `csvLine`),
 * as UTF-8 bytes handed over to the writing thread.
 */
import { parentPort, workerData } from "node:worker_threads"
import { type ExportReader, openExportReader, type RangeEntity } from "../store/snapshot-export.ts"
import { COLUMNS_OF, csvLine } from "./export-columns.ts"
import type { FromThread, ThreadStart, ToThread } from "./export-threads.ts"

const port = parentPort!
const { file, runId, format, guard } = workerData as ThreadStart
const message = (e: unknown) => (e instanceof Error ? e.message : String(e))

// A file that cannot be opened fails every range with the reason, as a read does.
let reader: ExportReader | undefined
let unopened: string | undefined
try {
  reader = openExportReader(file)
} catch (e) {
  unopened = message(e)
}

/** Memory of answers written, handed back: the next answers are written into it. */
const spares: Array<ArrayBuffer> = []

/** Bytes first made for an answer: about a range of records' CSV lines. */
const FIRST_BYTES = 1 << 20

/**
 * The lines of `rows` as UTF-8, written line by line into spare memory (grown as needed):
 * a range's lines are never joined into one string, encoded again after.
 */
const encodedLines = (entity: RangeEntity, rows: ReadonlyArray<string>): Uint8Array => {
  const columns = COLUMNS_OF[entity]
  let bytes = Buffer.from(spares.pop() ?? new ArrayBuffer(FIRST_BYTES))
  let at = 0
  const room = (units: number) => {
    // A UTF-16 unit is at most 3 bytes of UTF-8.
    if (bytes.length - at >= units * 3) return
    const larger = Buffer.from(new ArrayBuffer(Math.max(bytes.length * 2, at + units * 3)))
    bytes.copy(larger, 0, 0, at)
    bytes = larger
  }
  for (const json of rows) {
    if (format === "csv") {
      const line = csvLine(columns, JSON.parse(json) as Record<string, unknown>, guard)
      room(line.length)
      at += bytes.write(line, at, "utf8")
    } else {
      room(json.length + 1)
      at += bytes.write(json, at, "utf8")
      bytes[at++] = 0x0a
    }
  }
  return new Uint8Array(bytes.buffer, 0, at)
}

const answer = (m: Extract<ToThread, { readonly range: unknown }>): FromThread => {
  let rows: Array<string>
  try {
    if (reader === undefined) throw new Error(unopened)
    rows = reader.content(m.entity, runId, m.range)
  } catch (e) {
    return { failed: "read", detail: message(e) }
  }
  try {
    return { rows: rows.length, bytes: encodedLines(m.entity, rows) }
  } catch (e) {
    return { failed: "format", detail: message(e) }
  }
}

port.on("message", (m: ToThread) => {
  if ("spare" in m) {
    spares.push(m.spare)
    return
  }
  if ("close" in m) {
    reader?.close()
    port.postMessage({ done: true } satisfies FromThread)
    port.close()
    return
  }
  if ("ready" in m || "begin" in m) {
    try {
      if (reader === undefined) throw new Error(unopened)
      if ("begin" in m) reader.begin()
      port.postMessage({ done: true } satisfies FromThread)
    } catch (e) {
      port.postMessage({ failed: "read", detail: message(e) } satisfies FromThread)
    }
    return
  }
  const a = answer(m)
  if ("bytes" in a) port.postMessage(a, [a.bytes.buffer as ArrayBuffer])
  else port.postMessage(a)
})
