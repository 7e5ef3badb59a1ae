/**
 * Deterministic ids: a seeded sfc32 generator, so the same seed and the same sequence
 * of calls give the same ids (seeds and tests repeat exactly).
 */
import type { Ids } from "./context.ts"

/** A small seeded PRNG (sfc32) returning uint32 values; also used for fault fractions. */
export class Prng {
  private a: number
  private b: number
  private c: number
  private d: number

  constructor(seed: number) {
    this.a = 0x9e3779b9
    this.b = 0x243f6a88
    this.c = 0xb7e15162
    this.d = seed >>> 0
    // Warm up so nearby seeds diverge.
    for (let i = 0; i < 15; i++) this.next()
  }

  /** Next uint32. */
  next(): number {
    let t = (this.a + this.b) | 0
    this.a = this.b ^ (this.b >>> 9)
    this.b = (this.c + (this.c << 3)) | 0
    this.c = (this.c << 21) | (this.c >>> 11)
    this.d = (this.d + 1) | 0
    t = (t + this.d) | 0
    this.c = (this.c + t) | 0
    return t >>> 0
  }

  /** A float in [0, 1). */
  float(): number {
    return this.next() / 4294967296
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.float() * n)
  }
}

const HEX = "0123456789abcdef"
const ALNUM = "abcdefghijklmnopqrstuvwxyz0123456789"

export const makeIds = (seed = 1): Ids => {
  const prng = new Prng(seed)
  const hex = (chars: number): string => {
    let out = ""
    while (out.length < chars) {
      const n = prng.next()
      for (let i = 0; i < 8 && out.length < chars; i++) out += HEX[(n >>> (i * 4)) & 15]
    }
    return out
  }
  return {
    id: () => hex(24),
    uid: () => {
      let out = ""
      for (let i = 0; i < 12; i++) out += ALNUM[prng.next() % 36]
      return out
    },
    secret: (bytes = 32) => hex(bytes * 2)
  }
}
