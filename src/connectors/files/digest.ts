/**
 * sha256 and size computed on the way through a stream, so a copy never reads its
 * bytes twice and never holds a whole file in memory.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { Transform } from "node:stream"
import { pipeline } from "node:stream/promises"
import * as Stream from "effect/Stream"

export interface Digest {
  readonly size: number
  readonly sha256: string
}

/** A pass-through stream that hashes and counts what flows through it. */
export interface DigestTap {
  readonly stream: Transform
  /** Size so far; the final digest once the stream has ended. */
  readonly bytes: () => number
  /** Valid after the stream has ended. */
  readonly digest: () => Digest
}

export const makeDigestTap = (onChunk?: (bytes: number) => void): DigestTap => {
  const hash = createHash("sha256")
  let size = 0
  let hex: string | null = null
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      hash.update(chunk)
      size += chunk.length
      onChunk?.(chunk.length)
      callback(null, chunk)
    },
    flush(callback) {
      hex = hash.digest("hex")
      callback()
    }
  })
  return {
    stream,
    bytes: () => size,
    digest: () => {
      if (hex === null) throw new Error("digest read before the stream ended")
      return { size, sha256: hex }
    }
  }
}

/** sha256 and size of a local file, streamed. */
export const digestFile = async (file: string): Promise<Digest> => {
  const tap = makeDigestTap()
  await pipeline(fs.createReadStream(file), tap.stream, async function*(source) {
    for await (const _ of source) {
      // drain
    }
  })
  return tap.digest()
}

/** sha256 of in-memory bytes (tests, small payloads). */
export const sha256Hex = (bytes: Uint8Array | string): string => createHash("sha256").update(bytes).digest("hex")

/**
 * Hashes and counts the bytes of an Effect stream as they pass. A stream may be run more
 * than once (an HTTP client repeating a request re-reads its body): each run starts the
 * digest afresh, and `onBytes` is told to take back what the abandoned run had counted,
 * so the digest and the progress always describe the latest run.
 */
export const tapDigestStream = <E, R>(
  stream: Stream.Stream<Uint8Array, E, R>,
  onBytes?: (bytes: number) => void
): { readonly stream: Stream.Stream<Uint8Array, E, R>; readonly digest: () => Digest } => {
  let hash = createHash("sha256")
  let size = 0
  let hex: string | null = null
  let runs = 0
  return {
    stream: Stream.suspend(() => {
      if (runs++ > 0) {
        if (size > 0) onBytes?.(-size)
        hash = createHash("sha256")
        size = 0
        hex = null
      }
      return Stream.mapArray(stream, (chunk) => {
        let n = 0
        for (const bytes of chunk) {
          hash.update(bytes)
          n += bytes.length
        }
        size += n
        if (n > 0) onBytes?.(n)
        return chunk
      })
    }),
    digest: () => {
      hex ??= hash.digest("hex")
      return { size, sha256: hex }
    }
  }
}
