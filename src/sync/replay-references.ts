/**
 * The executor of a description's references (references.ts): every record the text names
 * is looked up in the journal's id map (the op fails while one is not created yet: a rerun
 * writes it), the record is read, and update-record writes the text with the target ids.
 *
 * The read keeps a target edit: a description that is no longer the text written (the
 * marks of references aside) was edited on the target since, and is left as it is
 * (`{ kept: true }`). update-record sets the description to a value, so sending it again
 * repeats nothing: an op of unknown outcome is simply sent again. Its answer is not shown
 * by the documents: the record is read back, and a description that does not show the
 * targets is reported once (`{ notShown: true }`), never retried.
 */
import * as Effect from "effect/Effect"
import type { RestClientApi } from "../client/rest-client.ts"
import type { ExecFailure, Executor } from "./replay.ts"
import { recordNamespace } from "./plan.ts"
import { comparableText, REFERENCES_KIND, ReferencesPayload, referenceMark, rewriteHtml, rewriteText } from "./references.ts"
import { decode, lookupOrFail, noticeOnce } from "./replay-records.ts"

const failure = (e: { readonly _tag: string; readonly message: string }): ExecFailure => e

/** The targets of `refs`, by token: fails naming the first record not created yet. */
export const referenceTargets = (
  journal: Parameters<Executor["execute"]>[1],
  workspaceId: string,
  refs: ReadonlyArray<{ readonly token: string; readonly ref: string }>
) =>
  Effect.map(
    Effect.forEach(refs, (r) =>
      Effect.map(
        lookupOrFail(journal, recordNamespace(workspaceId), r.ref, `${r.token} names a record not created yet (${r.ref}); a rerun writes the reference`),
        (id) => [r.token, id] as const
      )),
    (pairs) => new Map(pairs)
  )

export const makeReferencesExecutor = (
  client: RestClientApi,
  options: { readonly onNotice?: (line: string) => void; readonly onRewritten?: (n: number) => void } = {}
): Executor => {
  const notice = noticeOnce(options.onNotice)
  return {
    kind: REFERENCES_KIND,
    execute: (op, journal) =>
      Effect.gen(function*() {
        const p = yield* decode(ReferencesPayload, op)
        const recordId = yield* lookupOrFail(journal, recordNamespace(p.workspaceId), p.recordRef, `the record of ${p.recordRef} was not created`)
        const targets = yield* referenceTargets(journal, p.workspaceId, p.refs)
        const written = p.html ?? p.text ?? ""
        const before = yield* client.getRecord({ workspaceId: p.workspaceId, recordId }).pipe(Effect.mapError(failure))
        const same = (d: { readonly html: string; readonly text: string }) =>
          comparableText(d.text) === comparableText(written) || comparableText(d.html) === comparableText(written)
        if (!same(before)) return { result: { id: recordId, kept: true }, mappings: [] }
        const fields = p.html !== undefined ? { descriptionHtml: rewriteHtml(p.html, targets) } : { description: rewriteText(written, targets) }
        yield* client.updateRecord({ workspaceId: p.workspaceId, recordId, ...fields }).pipe(Effect.mapError(failure))
        const after = yield* client.getRecord({ workspaceId: p.workspaceId, recordId }).pipe(Effect.mapError(failure))
        const shown = [...targets.values()].every((id) => after.text.includes(referenceMark(id).trim()) || after.html.includes(referenceMark(id).trim()))
        if (!shown) {
          notice("references: update-record answered with success but the description does not show the target records; descriptions keep their references as written")
          return { result: { id: recordId, notShown: true }, mappings: [] }
        }
        options.onRewritten?.(targets.size)
        return { result: { id: recordId, rewritten: targets.size }, mappings: [] }
      })
  }
}
