/**
 * Example: worksync from a plain async program (no Effect), through the Promise and
 * AsyncIterable facade. Backs up one workspace, prints what changed since the last run,
 * and exports the records that are overdue to a JSON file.
 *
 *   WORKSYNC_REST_URL=... WORKSYNC_TOKEN=... npx tsx examples/promise-facade.ts WORKSPACE_ID backup.sqlite
 *
 * In your project: `import { connect, isWorksyncError, rootCause } from "worksync/promise"`.
 */
import * as fs from "node:fs"
import { type ConnectionInput, connect, isWorksyncError, rootCause } from "../src/facade/index.ts"
import { pathToFileURL } from "node:url"

export interface NightlyReport {
  readonly runId: string
  readonly changed: number
  readonly overdue: number
}

export const nightly = async (connection: ConnectionInput, workspaceId: string, snapshot: string, overdueFile: string): Promise<NightlyReport> => {
  const ws = connect(connection)
  try {
    const run = await ws.backup({ snapshot, workspaces: [workspaceId] })
    let changed = 0
    for await (const change of ws.changes({ snapshot })) {
      if (change.entity === "record") changed++
    }
    const overdue: Array<{ id: string; title: string; duedAt: string }> = []
    const now = Date.now()
    for await (const record of ws.records({ workspaceId, done: false })) {
      if (record.duedAt !== null && Date.parse(record.duedAt) < now) overdue.push({ id: record.id, title: record.title, duedAt: record.duedAt })
    }
    fs.writeFileSync(overdueFile, JSON.stringify(overdue, null, 2))
    return { runId: run.runId, changed, overdue: overdue.length }
  } finally {
    await ws.close()
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [workspaceId, snapshot = "backup.sqlite"] = process.argv.slice(2)
  const env = process.env
  if (workspaceId === undefined || env.WORKSYNC_REST_URL === undefined) {
    process.stderr.write("usage: WORKSYNC_REST_URL=... WORKSYNC_TOKEN=... promise-facade.ts WORKSPACE_ID [SNAPSHOT]\n")
    process.exit(64)
  }
  try {
    const report = await nightly(
      { restUrl: env.WORKSYNC_REST_URL, baseUrl: env.WORKSYNC_BASE_URL ?? new URL(env.WORKSYNC_REST_URL).origin, token: env.WORKSYNC_TOKEN, org: env.WORKSYNC_ORG },
      workspaceId,
      snapshot,
      "overdue.json"
    )
    console.log(report)
  } catch (error) {
    // Tagged errors keep their tags through the Promise: branch on what happened.
    const cause = rootCause(error)
    if (isWorksyncError(cause, "Unauthorized")) process.stderr.write("the token was refused: check WORKSYNC_TOKEN\n")
    else process.stderr.write(`${isWorksyncError(error) ? `${error._tag}: ` : ""}${error instanceof Error ? error.message : String(error)}\n`)
    process.exitCode = 1
  }
}
