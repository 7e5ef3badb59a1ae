/**
 * Which runs of a snapshot a retention policy keeps: restic's `forget` rules, pure (no
 * store, no clock), so they are tested against restic's documented examples.
 *
 * - Runs are grouped by scope, as restic groups snapshots by host and paths: a policy
 *   never trades the runs of one set of workspaces for those of another.
 * - In each group the complete runs are walked newest first (by start time in UTC). Each
 *   rule is a bucket with a count: `keep-last` gives every run its own bucket, `keep-daily`
 *   one per UTC day, `keep-weekly` one per ISO week (Monday to Sunday, the ISO year's week
 *   number), `keep-monthly` one per UTC month. A run whose bucket differs from the bucket
 *   of the run kept before it is kept, while the rule's count lasts: so only the newest
 *   run of each day, week or month counts, and only days, weeks or months that have a
 *   run are counted.
 * - A rule whose count outlasts its buckets also keeps the oldest run of the group
 *   (restic since 0.17: the longest history the counts allow), with reason
 *   `keep-daily (oldest)` and so on.
 * - A run is kept when any rule keeps it, with every rule that does listed.
 * - The newest complete run of the snapshot (the highest id: the one diff and export call
 *   the latest) is always kept.
 * - Running and failed runs are left alone: neither counted by any rule nor forgotten.
 */
import type { RunStatus } from "../store/snapshot.ts"

export interface RetentionPolicy {
  readonly keepLast?: number | undefined
  readonly keepDaily?: number | undefined
  readonly keepWeekly?: number | undefined
  readonly keepMonthly?: number | undefined
}

/** What the decision reads of a run. */
export interface RetentionRun {
  readonly id: number
  readonly scope: string
  /** ISO timestamp of the run's start. */
  readonly started: string
  readonly status: RunStatus
}

export interface RetentionDecision {
  readonly runId: number
  readonly startedAt: string
  readonly keep: boolean
  /** Every rule that keeps the run, in the order of RULES; empty when it is forgotten. */
  readonly reasons: ReadonlyArray<string>
}

export const NEWEST_REASON = "newest complete run"
export const leftAloneReason = (status: RunStatus): string => `${status} run, left alone`

const DAY_MS = 86_400_000

/** YYYYMMDD of the UTC day. */
const utcDay = (t: Date): number => t.getUTCFullYear() * 10_000 + (t.getUTCMonth() + 1) * 100 + t.getUTCDate()

/** YYYYWW of the ISO week: the week's Thursday decides its year. */
export const isoWeek = (t: Date): number => {
  const day = Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate())
  const weekday = (new Date(day).getUTCDay() + 6) % 7
  const thursday = new Date(day + (3 - weekday) * DAY_MS)
  const year = thursday.getUTCFullYear()
  const week = 1 + Math.floor((thursday.getTime() - Date.UTC(year, 0, 1)) / (7 * DAY_MS))
  return year * 100 + week
}

/** YYYYMM of the UTC month. */
const utcMonth = (t: Date): number => t.getUTCFullYear() * 100 + t.getUTCMonth() + 1

interface Rule {
  readonly name: string
  readonly count: (p: RetentionPolicy) => number | undefined
  /** The run's bucket; `nr` is its place in the group, newest first. */
  readonly bucket: (t: Date, nr: number) => number
}

const RULES: ReadonlyArray<Rule> = [
  { name: "keep-last", count: (p) => p.keepLast, bucket: (_t, nr) => nr },
  { name: "keep-daily", count: (p) => p.keepDaily, bucket: utcDay },
  { name: "keep-weekly", count: (p) => p.keepWeekly, bucket: isoWeek },
  { name: "keep-monthly", count: (p) => p.keepMonthly, bucket: utcMonth }
]

/** A policy with no rule of at least 1 keeps everything: prune refuses it (restic does too). */
export const isEmptyPolicy = (p: RetentionPolicy): boolean => RULES.every((r) => (r.count(p) ?? 0) <= 0)

/** Newest first: start time, then run id (two runs started in the same millisecond). */
const newestFirst = (a: { t: number; run: RetentionRun }, b: { t: number; run: RetentionRun }) =>
  b.t - a.t || b.run.id - a.run.id

/** The decision for every run, in run id order. */
export const decideRetention = (
  runs: ReadonlyArray<RetentionRun>,
  policy: RetentionPolicy
): Array<RetentionDecision> => {
  const reasons = new Map<number, Array<string>>()
  const groups = new Map<string, Array<{ t: number; run: RetentionRun }>>()
  for (const run of runs) {
    if (run.status !== "complete") {
      reasons.set(run.id, [leftAloneReason(run.status)])
      continue
    }
    reasons.set(run.id, [])
    const group = groups.get(run.scope) ?? []
    group.push({ t: Date.parse(run.started), run })
    groups.set(run.scope, group)
  }

  for (const group of groups.values()) {
    group.sort(newestFirst)
    const state = RULES.map((rule) => ({ rule, left: Math.max(0, Math.floor(rule.count(policy) ?? 0)), last: NaN }))
    group.forEach(({ t, run }, nr) => {
      const oldest = nr === group.length - 1
      for (const s of state) {
        if (s.left <= 0) continue
        const bucket = s.rule.bucket(new Date(t), nr)
        if (bucket === s.last && !oldest) continue
        reasons.get(run.id)!.push(bucket === s.last ? `${s.rule.name} (oldest)` : s.rule.name)
        s.last = bucket
        s.left--
      }
    })
  }

  // The latest complete run, as diff, export and restore name it: the highest id, whatever
  // the clock said when it started.
  const newest = runs.reduce<RetentionRun | undefined>(
    (best, r) => (r.status === "complete" && (best === undefined || r.id > best.id) ? r : best),
    undefined
  )
  if (newest !== undefined) reasons.get(newest.id)!.push(NEWEST_REASON)

  return [...runs].sort((a, b) => a.id - b.id).map((run) => {
    const why = reasons.get(run.id)!
    return { runId: run.id, startedAt: run.started, keep: why.length > 0, reasons: why }
  })
}
