/**
 * A minimal PNG encoder: enough to seed real tiny images and to answer thumbnail and
 * preview requests with a placeholder of the requested size (the emulator does not
 * resample images).
 */
import { createHash } from "node:crypto"
import { crc32, deflateSync } from "node:zlib"

const SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

const chunk = (type: string, data: Buffer): Buffer => {
  const length = Buffer.alloc(4)
  length.writeUInt32BE(data.length)
  const body = Buffer.concat([Buffer.from(type, "ascii"), data])
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(body) >>> 0)
  return Buffer.concat([length, body, crc])
}

/** An 8-bit RGB PNG of `width` x `height`, pixel colour given by `pixel(x, y)`. */
export const encodePng = (
  width: number,
  height: number,
  pixel: (x: number, y: number) => readonly [number, number, number]
): Buffer => {
  const header = Buffer.alloc(13)
  header.writeUInt32BE(width, 0)
  header.writeUInt32BE(height, 4)
  header[8] = 8 // bit depth
  header[9] = 2 // colour type: RGB
  header[10] = 0
  header[11] = 0
  header[12] = 0
  const stride = 1 + width * 3
  const raw = Buffer.alloc(stride * height)
  for (let y = 0; y < height; y++) {
    raw[y * stride] = 0 // filter: none
    for (let x = 0; x < width; x++) {
      const [r, g, b] = pixel(x, y)
      const at = y * stride + 1 + x * 3
      raw[at] = r
      raw[at + 1] = g
      raw[at + 2] = b
    }
  }
  return Buffer.concat([
    SIGNATURE,
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(raw)),
    chunk("IEND", Buffer.alloc(0))
  ])
}

/** A square placeholder whose colours derive from `seed`, so one file always gets the same image. */
export const placeholderPng = (size: number, seed: string): Buffer => {
  const digest = createHash("sha256").update(seed).digest()
  const a = [digest[0] ?? 0, digest[1] ?? 0, digest[2] ?? 0] as const
  const b = [digest[3] ?? 255, digest[4] ?? 255, digest[5] ?? 255] as const
  const cell = Math.max(1, Math.floor(size / 5))
  return encodePng(size, size, (x, y) => ((Math.floor(x / cell) + Math.floor(y / cell)) % 2 === 0 ? a : b))
}

/** Width and height from a PNG's IHDR, or null when the bytes are not a PNG. */
export const pngSize = (bytes: Uint8Array): { width: number; height: number } | null => {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (buf.length < 24 || !buf.subarray(0, 8).equals(SIGNATURE)) return null
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) }
}
