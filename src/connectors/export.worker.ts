/**
 * An export thread (see export-threads.ts): its own read-only connection to the snapshot
 * file; for each range asked for, the stored objects' lines in the export's format, as
 * UTF-8 bytes handed over to the writing thread.
 */
import { parentPort, workerData } from "node:worker_threads"
import { type ExportReader, openExportReader } from "../store/snapshot-export.ts"
import { COLUMNS_OF, linesOf } from "./export-columns.ts"
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

/** `text` as UTF-8 in a spare buffer when one is large enough, or in a new one. */
const encoded = (text: string): Uint8Array => {
  const size = Buffer.byteLength(text, "utf8")
  let memory = spares.pop()
  if (memory === undefined || memory.byteLength < size) memory = new ArrayBuffer(size)
  const bytes = Buffer.from(memory, 0, size)
  bytes.write(text, "utf8")
  return new Uint8Array(memory, 0, size)
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
    return { rows: rows.length, bytes: encoded(linesOf(format, COLUMNS_OF[m.entity], rows, guard)) }
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
    port.postMessage({ closed: true } satisfies FromThread)
    port.close()
    return
  }
  const a = answer(m)
  if ("bytes" in a) port.postMessage(a, [a.bytes.buffer as ArrayBuffer])
  else port.postMessage(a)
})
