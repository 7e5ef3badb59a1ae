/**
 * Progress on stderr: a redrawn bar on a TTY (done, total, rate, ETA), plain lines at a
 * steady interval otherwise (logs and cron mails stay readable), nothing when quiet.
 */
import * as Effect from "effect/Effect"
import { printable, type Verbosity } from "./output.ts"

export interface Progress {
  readonly advance: (n?: number) => Effect.Effect<void>
  readonly setTotal: (total: number) => Effect.Effect<void>
  /** A line above the bar (a finished file, a warning). */
  readonly note: (line: string) => Effect.Effect<void>
  readonly done: () => Effect.Effect<void>
}

export interface ProgressOptions {
  readonly label: string
  readonly total?: number
  readonly unit: "items" | "bytes"
  readonly verbosity: Verbosity
  /** Defaults to whether stderr is a terminal. */
  readonly tty?: boolean
  /** Interval between plain lines, in ms. */
  readonly plainEveryMs?: number
  /** Where the lines go; defaults to stderr. */
  readonly write?: (text: string) => void
}

/** A byte count for people: 512 B, 1.5 KiB, 3.2 GiB. */
export const formatBytes = (n: number): string => {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"]
  let value = n
  let unit = 0
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024
    unit++
  }
  return `${unit === 0 ? Math.round(value) : value.toFixed(1)} ${units[unit]}`
}

/**
 * A count with thousands separators: 400,000. Not toLocaleString: its first call loads the
 * ICU locale data, about 30 ms of CPU in a process that prints one progress line.
 */
export const formatCount = (n: number): string => String(Math.round(n)).replace(/\B(?=(\d{3})+(?!\d))/g, ",")

const formatDuration = (seconds: number): string => {
  if (!Number.isFinite(seconds) || seconds < 0) return "--:--"
  const s = Math.round(seconds)
  const h = Math.floor(s / 3600)
  const m = Math.floor((s % 3600) / 60)
  const r = s % 60
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${String(r).padStart(2, "0")}` : `${m}:${String(r).padStart(2, "0")}`
}

/** One progress line, shared by the bar and the plain form so both say the same. */
export const describeProgress = (
  options: { label: string; unit: "items" | "bytes" },
  done: number,
  total: number | undefined,
  elapsedMs: number
): string => {
  const fmt = options.unit === "bytes" ? formatBytes : formatCount
  const rate = elapsedMs > 0 ? (done * 1000) / elapsedMs : 0
  const rateText = options.unit === "bytes"
    ? `${formatBytes(rate)}/s`
    : `${rate < 10 ? rate.toFixed(1) : formatCount(rate)}/s`
  if (total === undefined || total <= 0) return `${options.label}: ${fmt(done)} ${rateText}`
  const pct = Math.min(100, (done / total) * 100)
  const eta = rate > 0 ? (total - done) / rate : Number.NaN
  return `${options.label}: ${fmt(done)}/${fmt(total)} ${pct.toFixed(0)}% ${rateText} ETA ${formatDuration(eta)}`
}

export const makeProgress = (options: ProgressOptions): Effect.Effect<Progress> =>
  Effect.sync(() => {
    const quiet = options.verbosity === "quiet"
    const tty = options.tty ?? process.stderr.isTTY === true
    const plainEvery = options.plainEveryMs ?? 5_000
    const write = options.write ?? ((text: string) => void process.stderr.write(text))
    const started = Date.now()
    let done = 0
    let total = options.total
    let lastDraw = 0
    let finished = false
    // What the last plain line said: the closing line is not printed again when nothing
    // moved since (a short phase would otherwise print the same count twice).
    let lastPlain: { readonly done: number; readonly total: number | undefined } | undefined

    const line = () => describeProgress(options, done, total, Date.now() - started)
    const bar = () => {
      const width = 24
      const filled = total && total > 0 ? Math.round((Math.min(done, total) / total) * width) : 0
      return `[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${line()}`
    }
    const draw = (force: boolean) => {
      if (quiet || finished) return
      const now = Date.now()
      if (tty) {
        if (!force && now - lastDraw < 100) return
        write(`\r\x1b[2K${bar()}`)
      } else {
        if (!force && now - lastDraw < plainEvery) return
        write(line() + "\n")
        lastPlain = { done, total }
      }
      lastDraw = now
    }

    return {
      advance: (n = 1) =>
        Effect.sync(() => {
          done += n
          draw(false)
        }),
      setTotal: (value) =>
        Effect.sync(() => {
          total = value
        }),
      note: (text) =>
        Effect.sync(() => {
          if (quiet) return
          write(tty ? `\r\x1b[2K${printable(text)}\n` : `${printable(text)}\n`)
          if (tty) draw(true)
        }),
      done: () =>
        Effect.sync(() => {
          if (quiet || finished) return
          finished = true
          if (tty) write(`\r\x1b[2K${bar()}\n`)
          else if (lastPlain === undefined || lastPlain.done !== done || lastPlain.total !== total) write(line() + "\n")
        })
    }
  })
