/**
 * The snapshot's own consistency rules, in the SQL both backends speak: every run
 * membership row names a stored version of the same id, every activity row belongs to a
 * stored record version, a record version holds as many activity rows as it says, every
 * object a run holds is recorded, and nothing keyed by run belongs to a run that does not
 * exist. Each rule finds the rows that break it and says each in one line.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { SnapshotQueries } from "./snapshot-reads.ts"
import { MEMBERSHIP, RUN_OWNED, type SnapshotError } from "./snapshot-types.ts"

interface Rule {
  /** What a row the query finds is, for the message. */
  readonly what: (row: Record<string, unknown>) => string
  readonly sql: string
}

const rules: ReadonlyArray<Rule> = [
  ...MEMBERSHIP.map((t): Rule => ({
    what: (r) => `run ${r.run_id} holds ${t.replace(/s$/, "")} ${r.id} as version ${r.vid}, which is not stored`,
    sql: `SELECT m.run_id AS run_id, m.id AS id, m.vid AS vid FROM run_${t} AS m LEFT JOIN ${t} AS v ON v.vid = m.vid
          WHERE v.vid IS NULL ORDER BY m.run_id, m.id`
  })),
  ...MEMBERSHIP.map((t): Rule => ({
    what: (r) => `run ${r.run_id} holds ${t.replace(/s$/, "")} ${r.id} as version ${r.vid}, a version of ${r.other}`,
    sql: `SELECT m.run_id AS run_id, m.id AS id, m.vid AS vid, v.id AS other FROM run_${t} AS m JOIN ${t} AS v ON v.vid = m.vid
          WHERE v.id <> m.id ORDER BY m.run_id, m.id`
  })),
  ...RUN_OWNED.map((t): Rule => ({
    what: (r) => `${t} has rows of run ${r.run_id}, which does not exist`,
    sql: `SELECT DISTINCT m.run_id AS run_id FROM ${t} AS m LEFT JOIN runs AS ru ON ru.id = m.run_id
          WHERE ru.id IS NULL ORDER BY m.run_id`
  })),
  {
    what: (r) => `run ${r.run_id} holds object ${r.sha256} for file ${r.file_id}, which file_objects does not record`,
    sql: `SELECT o.run_id AS run_id, o.file_id AS file_id, o.sha256 AS sha256 FROM run_file_objects AS o
          LEFT JOIN file_objects AS f ON f.sha256 = o.sha256 WHERE f.sha256 IS NULL ORDER BY o.run_id, o.file_id`
  },
  {
    what: (r) => `activity of version ${r.vid} belongs to no stored record version`,
    sql: `SELECT DISTINCT a.vid AS vid FROM activity AS a LEFT JOIN records AS r ON r.vid = a.vid
          WHERE r.vid IS NULL ORDER BY a.vid`
  },
  {
    what: (r) => `record ${r.id} (version ${r.vid}) says ${r.expected} activity items, the snapshot holds ${r.held}`,
    sql: `SELECT r.id AS id, r.vid AS vid, r.activity_count AS expected, coalesce(a.n, 0) AS held
          FROM records AS r LEFT JOIN (SELECT vid, count(*) AS n FROM activity GROUP BY vid) AS a ON a.vid = r.vid
          WHERE r.activity_count <> coalesce(a.n, 0) ORDER BY r.vid`
  }
]

export interface SnapshotConsistency {
  /**
   * One element per rule, in a fixed order: the lines saying what breaks it (none when it
   * holds). A rule is read when its element is pulled, so one rule's findings are held at a time.
   */
  readonly consistencyProblems: Stream.Stream<Array<string>, SnapshotError>
}

export const snapshotConsistency = ({ select }: SnapshotQueries): SnapshotConsistency => ({
  consistencyProblems: Stream.mapEffect(Stream.fromIterable(rules), (rule) =>
    Effect.map(
      select<Record<string, unknown>>("check the snapshot's consistency", { sql: rule.sql }),
      (rows) => rows.map(rule.what)
    ))
})
