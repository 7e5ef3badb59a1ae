/**
 * The write journal: a SQLite file holding a plan of write operations and what became
 * of each, so a write run can stop at any moment (even SIGKILL) and resume without
 * sending anything twice or losing anything planned. A PostgreSQL URL
 * (`postgres://USER@HOST:PORT/DB`, optional `?schema=NAME`) in place of the file keeps
 * the same tables with the same meanings in that schema (journal/postgres.ts).
 *
 * Tables
 * - `ops`: one row per operation, `key` UNIQUE (the caller's stable identity of the
 *   operation), `kind` ("record.create", "record.update", "record.move", "record.delete",
 *   "list.ensure", "file.copy", ...), `payload` JSON, `depends_on` (the key of an op that
 *   must be done first), `state` pending | in_flight | done | failed, `attempts`,
 *   `attempted_at` (ISO time of the latest claim), `result` JSON, `error` text,
 *   `uncertain` (1 when a request may have been applied without us learning it),
 *   `sent_at` (ISO time that request left: the settle window runs from it).
 * - `id_map`: (namespace, source_key) -> target_id, UNIQUE(namespace, source_key): what the
 *   service created for a source item, kept across runs so later runs are incremental.
 * - `meta`: free key/value pairs (target workspace, plan fingerprint, plan run counter).
 *
 * The protocol an executor follows for one op:
 *   claim(key)      pending -> in_flight, attempts+1, attempted_at = now; durable BEFORE
 *                   the request is sent, so a crash after sending leaves evidence.
 *   complete(...)   in_flight -> done, with the result and any id mappings, in one
 *                   transaction (the op is never done without its mapping).
 *   fail(...)       in_flight -> failed with the error; `outcomeUnknown` keeps `uncertain`.
 *   markUncertain   in_flight -> pending + uncertain: sent (at `sent_at`), answer lost,
 *                   check before resending.
 *   release(key)    in_flight -> pending: definitely not applied (refused before sending).
 * On start, `resetInFlight()` turns every op left in_flight by a dead process into
 * pending + uncertain, dated as sent at that moment (its request, if any, left before).
 * An executor must reconcile an uncertain op (look on the service for what it would have
 * produced) before sending it again, and looks until the settle window after `sent_at`
 * has passed.
 *
 * Durability: WAL with synchronous=FULL. A process crash (SIGKILL) loses nothing even
 * with NORMAL, but after a power cut NORMAL may roll back the latest commits, and a lost
 * claim would let a create be re-sent without the check that prevents a duplicate. FULL
 * costs one fsync per commit, so commits are grouped: planning (nothing is sent yet) runs
 * with NORMAL and rare checkpoints, and ends with a FULL checkpoint and commit
 * (`beginPlanRun` / `endPlanRun`); replay commits the transitions of concurrent ops
 * together (journal/batch.ts, `claimMany`). Planning inserts many rows per statement
 * (`INSERT OR IGNORE ... RETURNING key`): per-statement overhead, not SQLite's b-tree
 * work, is what bounded it at one insert per op.
 *
 * Files are created owner-only (0600); SQLite gives the -wal and -shm files the database
 * file's mode. No credential is ever written here: payloads hold ids and field values.
 * One process at a time: `openJournal` holds the store lock of file-lock.ts, which the
 * operating system releases when its holder dies.
 *
 * Modules (src/store/journal/): types.ts (ops, mappings, adoptions, counts), errors.ts,
 * schema.ts (tables, format, migrations through the shared opener of sqlite.ts),
 * planning.ts (plan runs, multi-row inserts), db.ts (the synchronous core:
 * transitions, queries, id map, adoptions, meta), batch.ts (group commit of transitions),
 * service.ts (the Effect service, its Layer, and the two narrow interfaces:
 * `planner` and `transitions`); schema-postgres.ts and postgres.ts (the same journal on
 * PostgreSQL).
 */
export * from "./journal/types.ts"
export { JournalError, JournalStateError } from "./journal/errors.ts"
export { JOURNAL_FORMAT, JsonText } from "./journal/schema.ts"
export { JournalDb } from "./journal/db.ts"
export type { BatchedTransitions } from "./journal/batch.ts"
export {
  describeJournalError,
  Journal,
  type JournalApi,
  makeJournalApi,
  openJournal,
  type OpenJournalOptions,
  type Planner
} from "./journal/service.ts"
