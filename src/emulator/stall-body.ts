/**
 * The "stall-body" fault: the answer's headers and the first half of its body go out,
 * then nothing more, and the answer never ends. A client that times only the headers
 * waits forever; one with an idle timeout on the body gives up and retries. The
 * handler runs as usual; what it writes beyond the first half is dropped. (An empty
 * body cannot stall: its headers already say it is complete.)
 */
import type * as http from "node:http"

type WriteCallback = (error?: Error | null) => void

const bytesOf = (chunk: unknown, encoding: unknown): Buffer => {
  if (Buffer.isBuffer(chunk)) return chunk
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength)
  return Buffer.from(String(chunk), typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8")
}

/** The content-length given to `writeHead` (which `getHeader` does not see), if any. */
const declaredLength = (args: ReadonlyArray<unknown>): number | null => {
  for (const a of args) {
    if (typeof a !== "object" || a === null || Array.isArray(a)) continue
    for (const [k, v] of Object.entries(a)) {
      if (k.toLowerCase() === "content-length" && Number.isFinite(Number(v))) return Number(v)
    }
  }
  return null
}

export const stallBody = (res: http.ServerResponse): void => {
  const write = res.write.bind(res)
  const writeHead = res.writeHead.bind(res) as (...args: Array<unknown>) => http.ServerResponse
  let declared: number | null = null
  /** Bytes still let through: half the declared length (else of the first chunk). */
  let budget: number | null = null
  const r = res as unknown as Record<string, unknown>
  r["writeHead"] = (...args: Array<unknown>): http.ServerResponse => {
    declared = declaredLength(args)
    return writeHead(...args)
  }
  r["write"] = (chunk: unknown, encoding?: unknown, callback?: unknown): boolean => {
    const bytes = bytesOf(chunk, encoding)
    if (budget === null) {
      const header = Number(res.getHeader("content-length"))
      budget = Math.floor((declared ?? (Number.isFinite(header) ? header : bytes.length)) / 2)
    }
    const pass = bytes.subarray(0, budget)
    budget -= pass.length
    if (pass.length > 0) write(pass)
    // `writeHead` only buffers the headers: they must go out even when no byte does.
    else res.flushHeaders()
    // Report every chunk as written, so the handler's pipeline keeps going and then waits.
    const done = (typeof encoding === "function" ? encoding : callback) as WriteCallback | undefined
    if (done !== undefined) process.nextTick(done)
    return true
  }
  r["end"] = (chunk?: unknown, encoding?: unknown): http.ServerResponse => {
    if (chunk !== undefined && chunk !== null && typeof chunk !== "function") {
      ;(r["write"] as (c: unknown, e?: unknown) => boolean)(chunk, encoding)
    } else {
      res.flushHeaders()
    }
    // Never ends: the client sees an answer that stops mid-body.
    return res
  }
}
