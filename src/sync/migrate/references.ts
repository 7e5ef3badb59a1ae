/**
 * References between records in a migration (src/sync/references.ts): a description or
 * comment that names another record of the source workspace by its id names the target
 * record afterwards.
 *
 * The documents do not say what a record id looks like, so a reference is a token of the
 * text that is a record id of the source run (asked of the snapshot, a batch at a time);
 * a token of the same shape as the batch's own record ids (same length, same characters,
 * a digit among them) that is not one is a reference outside the migration, left as
 * written and counted. A record naming itself is no reference.
 *
 * Descriptions: after the records step, each source record whose description names
 * others gets a references op (replay-references.ts), keyed by the record and its text and
 * references, so a rerun sends nothing again and a pass whose text changed rewrites the
 * new one. A record deleted on the target and kept deleted gets none. Comments carry their
 * references in their op (`refs`), resolved as they are sent.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import type { JournalApi, PlanOp } from "../../store/journal.ts"
import type { SnapshotError, SnapshotStoreService } from "../../store/snapshot.ts"
import { readSource, type StoredDetail } from "../restore-source.ts"
import { distinctReferences, type Reference, REFERENCES_KIND, referencesKey, referencesOf } from "../references.ts"
import { detailBatches } from "./source-run.ts"

/** Tokens that may be record ids: runs of letters, digits, `_` and `-`. */
const TOKEN = /[A-Za-z0-9_-]+/g

/** Whether a token has the shape of these record ids (lengths and characters seen, a digit in it). */
export const idShape = (ids: Iterable<string>): ((token: string) => boolean) => {
  const lengths = new Set<number>()
  let hex = true
  for (const id of ids) {
    lengths.add(id.length)
    if (!/^[0-9a-f]+$/.test(id)) hex = false
  }
  const chars = hex ? /^[0-9a-f]+$/ : /^[A-Za-z0-9_-]+$/
  return (token) => lengths.has(token.length) && chars.test(token) && /[0-9]/.test(token)
}

/** The tokens of a text (HTML: its text between tags) that have the shape. */
const candidates = (text: string, shaped: (token: string) => boolean): Array<string> => {
  const plain = text.replace(/<[^>]*>/g, " ")
  const out = new Set<string>()
  for (const m of plain.matchAll(TOKEN)) if (shaped(m[0])) out.add(m[0])
  return [...out]
}

/**
 * A resolver for the texts of a batch of source records (`own`: their ids, which give the
 * shape): `of(text, self)` gives the text's references to other source records, and counts
 * those outside the migration in `outside`.
 */
export const referenceResolver = (
  store: SnapshotStoreService,
  runId: number,
  workspaceId: string,
  own: ReadonlyArray<string>,
  texts: ReadonlyArray<string>
): Effect.Effect<{ readonly of: (text: string, self: string) => Array<Reference>; readonly outside: () => number }, SnapshotError> =>
  Effect.gen(function*() {
    const shaped = idShape(own)
    const all = [...new Set(texts.flatMap((t) => candidates(t, shaped)))]
    const known = new Set(yield* store.recordIdsAmong(runId, workspaceId, all))
    let outside = 0
    return {
      of: (text, self) => {
        const refs: Array<Reference> = []
        for (const token of candidates(text, shaped)) {
          if (token === self) continue
          if (known.has(token)) refs.push({ token, ref: token })
          else outside++
        }
        return distinctReferences(refs)
      },
      outside: () => outside
    }
  })

/** The journal key under which a record's references ops are keyed (references.ts `referencesKey`). */
const writerKey = (target: string, sourceId: string) => `migrate:${target}:record:${sourceId}`

/**
 * The references ops of the run's descriptions, planned a batch of records at a time
 * (`plan` writes a batch's ops; nothing in a dry run). `rewritten`: references of the ops
 * not done yet (what the run writes, or would).
 */
export const planDescriptionReferences = (o: {
  readonly store: SnapshotStoreService
  readonly runId: number
  readonly sourceWorkspaceId: string
  readonly target: string
  readonly journal: JournalApi
  readonly deletedOnTarget: ReadonlySet<string>
  readonly plan: (ops: ReadonlyArray<PlanOp>) => Effect.Effect<void, unknown>
}) =>
  Effect.gen(function*() {
    let rewritten = 0
    let outside = 0
    yield* Stream.runForEach(detailBatches(o.store, o.runId, o.sourceWorkspaceId), (batch: ReadonlyArray<StoredDetail>) =>
      Effect.gen(function*() {
        const records = batch.map(readSource)
        const resolver = yield* referenceResolver(
          o.store,
          o.runId,
          o.sourceWorkspaceId,
          records.map((r) => r.id),
          records.map((r) => r.html !== "" ? r.html : r.text)
        )
        const ops: Array<PlanOp> = []
        for (const r of records) {
          const written = r.html !== "" ? { html: r.html } : { text: r.text }
          const refs = resolver.of(written.html ?? written.text ?? "", r.id)
          if (refs.length === 0 || o.deletedOnTarget.has(r.id)) continue
          const key = referencesKey(writerKey(o.target, r.id), written.html ?? written.text ?? "", refs)
          const before = yield* o.journal.get(key)
          if (Option.isSome(before) && before.value.state === "done") continue
          ops.push({ key, kind: REFERENCES_KIND, payload: { workspaceId: o.target, recordRef: r.id, ...written, refs, origin: `source record ${r.id}` } })
        }
        outside += resolver.outside()
        for (const op of ops) rewritten += referencesOf(op.payload)
        yield* o.plan(ops)
      }))
    return { rewritten, outside }
  })
