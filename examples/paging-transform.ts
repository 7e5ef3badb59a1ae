/**
 * Example: the paging streams with a custom transform. Streams every record summary of a
 * workspace (list-records pages, at most 100 each, fetched a few at once), keeps the
 * open ones, and folds them into "open work per list and assignee", a shape a
 * dashboard or a spreadsheet wants.
 *
 *   WORKSYNC_REST_URL=... WORKSYNC_TOKEN=... npx tsx examples/paging-transform.ts WORKSPACE_ID
 *
 * In your project the imports are from the package instead of ../src.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import { clientLayerFromEnv } from "../src/client/layer.ts"
import type { RecordSummary } from "../src/schema/records.ts"
import { listRecordsStream } from "../src/streams/records.ts"
import { pathToFileURL } from "node:url"

export interface OpenWorkRow {
  readonly list: string
  readonly assignee: string
  readonly open: number
  readonly overdue: number
}

/** One row per (list, assignee) pair of a record: unassigned records count as "(nobody)". */
const pairs = (record: RecordSummary, now: number) =>
  (record.users.length > 0 ? record.users.map((u) => u.email) : ["(nobody)"]).map((assignee) => ({
    list: record.todoList.title,
    assignee,
    overdue: record.duedAt !== null && Date.parse(record.duedAt) < now
  }))

/** Open (not done, not archived) work of a workspace per list and assignee, largest first. */
export const openWorkByList = (workspaceId: string, now = Date.now()) =>
  listRecordsStream({ workspaceId, done: false, archived: false }, { concurrency: 4 }).pipe(
    Stream.map((record) => pairs(record, now)),
    Stream.flattenIterable,
    Stream.runFold(() => new Map<string, OpenWorkRow>(), (rows, p) => {
      const key = `${p.list}\u0000${p.assignee}`
      const row = rows.get(key) ?? { list: p.list, assignee: p.assignee, open: 0, overdue: 0 }
      rows.set(key, { ...row, open: row.open + 1, overdue: row.overdue + (p.overdue ? 1 : 0) })
      return rows
    }),
    Effect.map((rows) => [...rows.values()].sort((a, b) => b.open - a.open || a.list.localeCompare(b.list)))
  )

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const workspaceId = process.argv[2]
  if (workspaceId === undefined) {
    process.stderr.write("usage: paging-transform.ts WORKSPACE_ID\n")
    process.exit(64)
  }
  const rows = await Effect.runPromise(openWorkByList(workspaceId).pipe(Effect.provide(clientLayerFromEnv), Effect.orDie))
  console.table(rows)
}
