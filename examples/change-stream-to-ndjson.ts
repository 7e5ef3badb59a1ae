/**
 * Example: consume the change stream of a backup as an Effect `Stream` and write it to
 * another sink, here an ndjson file of `{entity, kind, id, workspaceId, title}` lines
 * (swap `sink` for a queue, a warehouse loader or an HTTP call).
 *
 *   WORKSYNC_REST_URL=... WORKSYNC_TOKEN=... npx tsx examples/change-stream-to-ndjson.ts backup.sqlite changes.ndjson
 *
 * Each run backs up into the snapshot, then streams what changed since the previous run.
 * The stream reads SQLite page by page, so memory stays flat however large the diff.
 * In your project the imports are from the package instead of ../src.
 */
import * as Effect from "effect/Effect"
import * as Sink from "effect/Sink"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import { clientLayerFromEnv } from "../src/client/layer.ts"
import { SnapshotStore } from "../src/store/snapshot.ts"
import { backup } from "../src/sync/backup.ts"
import { type Change, changesBetween } from "../src/sync/changes.ts"
import { pathToFileURL } from "node:url"

/** What the downstream system wants of a change: small, flat, one line each. */
export const toLine = (change: Change): string =>
  JSON.stringify({
    entity: change.entity,
    kind: change.kind,
    id: change.id,
    workspaceId: change.workspaceId,
    // Records carry `title`, files `name`; a deleted one only has its `before`.
    title: (change.after ?? change.before)?.[change.entity === "record" ? "title" : "name"] ?? null
  }) + "\n"

/** A sink appending lines to a file, one write per chunk; its result is the number of lines. */
export const ndjsonFileSink = (file: string): Sink.Sink<number, string> =>
  Sink.foldArray(() => 0, () => true, (n, lines: ReadonlyArray<string>) =>
    Effect.sync(() => {
      fs.appendFileSync(file, lines.join(""))
      return n + lines.length
    }))

/** Backs up, then writes the changes since the previous complete run; returns how many. */
export const backupAndExportChanges = (snapshot: string, out: string) =>
  Effect.gen(function*() {
    const run = yield* backup()
    fs.writeFileSync(out, "")
    const written = yield* changesBetween({ to: run.runId }).pipe(
      Stream.map(toLine),
      Stream.run(ndjsonFileSink(out))
    )
    return { runId: run.runId, written }
  }).pipe(Effect.provide(SnapshotStore.layer(snapshot)))

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [snapshot = "backup.sqlite", out = "changes.ndjson"] = process.argv.slice(2)
  const result = await Effect.runPromise(backupAndExportChanges(snapshot, out).pipe(Effect.provide(clientLayerFromEnv), Effect.orDie))
  process.stderr.write(`run ${result.runId}: ${result.written} change(s) written to ${out}\n`)
}
