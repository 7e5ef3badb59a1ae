/**
 * The retention decision of `worksync prune` (src/sync/retention.ts) against the examples
 * of restic's `forget` documentation ("Removing snapshots according to a policy") and the
 * calendar cases its rules imply: UTC days, ISO weeks, only the newest run of a bucket
 * counting, a count outlasting its buckets keeping the oldest run, groups by scope, and
 * running and failed runs left alone.
 */
import { describe, expect, it } from "vitest"
import { decideRetention, isEmptyPolicy, isoWeek, type RetentionPolicy, type RetentionRun } from "../../src/sync/retention.ts"

/** Complete runs of one scope at the given start times, ids in time order. */
const runsAt = (times: ReadonlyArray<string>, scope = "*"): Array<RetentionRun> =>
  times.map((started, i) => ({ id: i + 1, scope, started, status: "complete" }))

const kept = (runs: ReadonlyArray<RetentionRun>, policy: RetentionPolicy) =>
  decideRetention(runs, policy).filter((d) => d.keep).map((d) => d.startedAt)

describe("retention: restic's documented examples", () => {
  it("one backup every Sunday for 12 weeks, --keep-daily 4: the last four Sundays stay, the other eight go", () => {
    const sundays = [
      "2019-09-01", "2019-09-08", "2019-09-15", "2019-09-22", "2019-09-29", "2019-10-06",
      "2019-10-13", "2019-10-20", "2019-10-27", "2019-11-03", "2019-11-10", "2019-11-17"
    ].map((d) => `${d}T11:00:00.000Z`)
    const decisions = decideRetention(runsAt(sundays), { keepDaily: 4 })
    expect(decisions.filter((d) => d.keep).map((d) => d.startedAt.slice(0, 10))).toEqual([
      "2019-10-27", "2019-11-03", "2019-11-10", "2019-11-17"
    ])
    expect(decisions.filter((d) => !d.keep)).toHaveLength(8)
    expect(decisions.find((d) => d.startedAt.startsWith("2019-10-27"))!.reasons).toEqual(["keep-daily"])
    // The newest is kept by the rule and, always, as the newest complete run.
    expect(decisions.at(-1)!.reasons).toEqual(["keep-daily", "newest complete run"])
    expect(decisions.filter((d) => !d.keep).every((d) => d.reasons.length === 0)).toBe(true)
  })

  it("a backup every day, --keep-daily 7 --keep-weekly 5 --keep-monthly 12: 7 daily, 4 more weekly (the dailies hold one), 11 or 12 monthly", () => {
    const days: Array<string> = []
    for (let t = Date.UTC(2022, 0, 1); t <= Date.UTC(2024, 5, 9); t += 86_400_000) days.push(new Date(t + 3_600_000).toISOString())
    const decisions = decideRetention(runsAt(days), { keepDaily: 7, keepWeekly: 5, keepMonthly: 12 })
    const keptOnly = decisions.filter((d) => d.keep)
    const by = (reason: string) => keptOnly.filter((d) => d.reasons.includes(reason)).length
    expect(by("keep-daily")).toBe(7)
    expect(by("keep-weekly")).toBe(5)
    expect(by("keep-monthly")).toBe(12)
    const weeklyOnly = keptOnly.filter((d) => d.reasons.includes("keep-weekly") && !d.reasons.includes("keep-daily"))
    expect(weeklyOnly).toHaveLength(4)
    const monthlyOnly = keptOnly.filter((d) => d.reasons.length === 1 && d.reasons[0] === "keep-monthly")
    expect([11, 12]).toContain(monthlyOnly.length)
    expect(keptOnly).toHaveLength(7 + 4 + monthlyOnly.length)
    // 2024-06-09 is a Sunday, so the seven dailies are one ISO week (restic's example says
    // they hold one weekly); the other weekly ones are the four Sundays before.
    expect(weeklyOnly.map((d) => d.startedAt.slice(0, 10))).toEqual(["2024-05-12", "2024-05-19", "2024-05-26", "2024-06-02"])
    // The last day of each month before June 2024 (June's newest run is a daily one).
    expect(monthlyOnly.map((d) => d.startedAt.slice(0, 10)).at(-1)).toBe("2024-05-31")
  })

  it("--keep-last 3 keeps the three newest runs whatever their days", () => {
    const runs = runsAt(["2024-01-01T10:00:00Z", "2024-01-01T11:00:00Z", "2024-01-01T12:00:00Z", "2024-01-01T13:00:00Z", "2024-01-01T14:00:00Z"])
    const d = decideRetention(runs, { keepLast: 3 })
    expect(d.map((x) => x.keep)).toEqual([false, false, true, true, true])
    expect(d[2]!.reasons).toEqual(["keep-last"])
  })
})

describe("retention: buckets", () => {
  it("only the newest run of a day counts; days without a run are not counted", () => {
    const runs = runsAt([
      "2024-03-01T08:00:00Z", "2024-03-01T20:00:00Z",
      "2024-03-05T08:00:00Z", "2024-03-05T09:00:00Z", "2024-03-05T23:59:59Z"
    ])
    expect(kept(runs, { keepDaily: 2 })).toEqual(["2024-03-01T20:00:00Z", "2024-03-05T23:59:59Z"])
  })

  it("days are UTC days: 23:30Z and 00:30Z the next day are two days", () => {
    const runs = runsAt(["2024-03-01T23:30:00.000Z", "2024-03-02T00:30:00.000Z"])
    expect(kept(runs, { keepDaily: 2 })).toHaveLength(2)
    // An offset in the stored time is read as the instant it names.
    const shifted = runsAt(["2024-03-02T01:00:00+02:00", "2024-03-01T23:30:00.000Z"])
    expect(decideRetention(shifted, { keepDaily: 1 }).map((d) => d.keep)).toEqual([false, true])
  })

  it("ISO weeks: 2020-12-28 to 2021-01-03 is one week (2020-W53), 2021-01-04 starts 2021-W01", () => {
    expect(isoWeek(new Date("2020-12-31T12:00:00Z"))).toBe(202053)
    expect(isoWeek(new Date("2021-01-03T23:59:59Z"))).toBe(202053)
    expect(isoWeek(new Date("2021-01-04T00:00:00Z"))).toBe(202101)
    expect(isoWeek(new Date("2019-12-30T00:00:00Z"))).toBe(202001)
    expect(isoWeek(new Date("2024-12-29T00:00:00Z"))).toBe(202452)
    const runs = runsAt(["2020-12-28T10:00:00Z", "2020-12-31T10:00:00Z", "2021-01-03T10:00:00Z", "2021-01-04T10:00:00Z"])
    expect(kept(runs, { keepWeekly: 2 })).toEqual(["2021-01-03T10:00:00Z", "2021-01-04T10:00:00Z"])
  })

  it("months: the newest run of each month that has one", () => {
    const runs = runsAt(["2024-01-10T00:00:00Z", "2024-01-31T23:00:00Z", "2024-03-01T00:00:00Z", "2024-03-15T00:00:00Z"])
    expect(kept(runs, { keepMonthly: 2 })).toEqual(["2024-01-31T23:00:00Z", "2024-03-15T00:00:00Z"])
  })

  it("a count that outlasts its buckets also keeps the oldest run (restic 0.17)", () => {
    const runs = runsAt(["2024-03-05T08:00:00Z", "2024-03-05T09:00:00Z", "2024-03-05T10:00:00Z"])
    const d = decideRetention(runs, { keepDaily: 5 })
    expect(d.map((x) => x.reasons)).toEqual([["keep-daily (oldest)"], [], ["keep-daily", "newest complete run"]])
    // A count used up by the buckets keeps no extra run.
    expect(decideRetention(runs, { keepDaily: 1 }).map((x) => x.keep)).toEqual([false, false, true])
  })

  it("a run kept by several rules lists each", () => {
    const runs = runsAt(["2024-01-31T12:00:00Z", "2024-02-01T12:00:00Z"])
    const d = decideRetention(runs, { keepLast: 1, keepDaily: 2, keepMonthly: 2 })
    expect(d[0]!.reasons).toEqual(["keep-daily", "keep-monthly"])
    expect(d[1]!.reasons).toEqual(["keep-last", "keep-daily", "keep-monthly", "newest complete run"])
  })
})

describe("retention: what is never forgotten or counted", () => {
  it("running and failed runs are left alone and take no place of a complete run", () => {
    const runs: Array<RetentionRun> = [
      { id: 1, scope: "*", started: "2024-01-01T00:00:00Z", status: "complete" },
      { id: 2, scope: "*", started: "2024-01-02T00:00:00Z", status: "complete" },
      { id: 3, scope: "*", started: "2024-01-03T00:00:00Z", status: "failed" },
      { id: 4, scope: "*", started: "2024-01-04T00:00:00Z", status: "complete" },
      { id: 5, scope: "*", started: "2024-01-05T00:00:00Z", status: "running" }
    ]
    const d = decideRetention(runs, { keepLast: 2 })
    expect(d.map((x) => [x.runId, x.keep, x.reasons])).toEqual([
      [1, false, []],
      [2, true, ["keep-last"]],
      [3, true, ["failed run, left alone"]],
      [4, true, ["keep-last", "newest complete run"]],
      [5, true, ["running run, left alone"]]
    ])
  })

  it("rules apply per scope, as restic groups by host and paths", () => {
    const runs: Array<RetentionRun> = [
      { id: 1, scope: "*", started: "2024-01-01T00:00:00Z", status: "complete" },
      { id: 2, scope: "ws-a", started: "2024-01-02T00:00:00Z", status: "complete" },
      { id: 3, scope: "*", started: "2024-01-03T00:00:00Z", status: "complete" },
      { id: 4, scope: "ws-a", started: "2024-01-04T00:00:00Z", status: "complete" }
    ]
    expect(decideRetention(runs, { keepLast: 1 }).map((x) => x.keep)).toEqual([false, false, true, true])
  })

  it("the newest complete run (the highest id) is kept even when its clock ran behind an older run's", () => {
    const runs: Array<RetentionRun> = [
      { id: 1, scope: "*", started: "2024-01-05T00:00:00Z", status: "complete" },
      { id: 2, scope: "*", started: "2024-01-04T00:00:00Z", status: "complete" }
    ]
    expect(decideRetention(runs, { keepLast: 1 }).map((x) => x.reasons)).toEqual([["keep-last"], ["newest complete run"]])
    // Two runs started in the same instant: the later id is the newer one for the rules too.
    const same = runsAt(["2024-01-05T00:00:00Z", "2024-01-05T00:00:00Z"])
    expect(decideRetention(same, { keepLast: 1 }).map((x) => x.keep)).toEqual([false, true])
  })

  it("a policy needs a rule of at least 1", () => {
    expect(isEmptyPolicy({})).toBe(true)
    expect(isEmptyPolicy({ keepLast: 0, keepDaily: 0 })).toBe(true)
    expect(isEmptyPolicy({ keepWeekly: 1 })).toBe(false)
  })
})
