/**
 * File custom field values of a migration: each file a source record's FILE field holds
 * is attached to the target record's field of the same name with the copied file's uid
 * (`createRecordCustomFieldFile`). The documents give no operation that creates a custom
 * field: a field the target workspace lacks is reported, never dropped silently.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Schema } from "effect"
import type { GraphqlClientApi } from "../../client/graphql-client.ts"
import type { RestClientApi } from "../../client/rest-client.ts"
import { relinkCustomFields, type UidLookup } from "../../connectors/files/relink.ts"
import type { PlanOp } from "../../store/journal.ts"
import { recordNamespace } from "../plan.ts"
import type { ExecFailure, Executor } from "../replay.ts"
import { decode, lookupOrFail } from "../replay-records.ts"

export const CF_FILE_KIND = "custom-field.file"

const Str = Schema.String
export const CustomFieldFilePayload = Schema.Struct({ workspaceId: Str, recordRef: Str, customFieldId: Str, fileUid: Str })

interface SourceField {
  readonly name: string
  readonly type: string
  readonly text: string | null
}

const fieldsOf = (detail: Record<string, unknown>): Array<SourceField> =>
  (Array.isArray(detail.customFields) ? (detail.customFields as Array<Record<string, unknown>>) : []).map((f) => ({
    name: typeof f.name === "string" ? f.name : "",
    type: typeof f.type === "string" ? f.type : "",
    text: typeof f.text === "string" ? f.text : null
  }))

const uidsOf = (text: string | null): Array<string> => {
  if (text === null || text === "") return []
  try {
    const parsed: unknown = JSON.parse(text)
    const all = Array.isArray(parsed) ? parsed : [parsed]
    return all.filter((u): u is string => typeof u === "string")
  } catch {
    return []
  }
}

/** What a batch of source records' file values gave (summed over a run by `addCounts`). */
export interface CustomFieldFileCounts {
  /** File values the source holds. */
  readonly source: number
  /** Values whose field the target lacks. */
  readonly noField: number
  /** Values whose file was not copied. */
  readonly notCopied: number
}

export const NO_COUNTS: CustomFieldFileCounts = { source: 0, noField: 0, notCopied: 0 }

export const addCounts = (a: CustomFieldFileCounts, b: CustomFieldFileCounts): CustomFieldFileCounts => ({
  source: a.source + b.source,
  noField: a.noField + b.noField,
  notCopied: a.notCopied + b.notCopied
})

/** Values not carried, with why (for the report's notCarried). */
export const notCarriedOf = (counts: CustomFieldFileCounts): ReadonlyArray<{ readonly what: string; readonly count: number; readonly why: string }> => [
  ...(counts.noField > 0
    ? [{ what: "file custom field values", count: counts.noField, why: "the target workspace has no FILE custom field of that name, and no documented operation creates one" }]
    : []),
  ...(counts.notCopied > 0 ? [{ what: "file custom field values", count: counts.notCopied, why: "the file was not copied (see files)" }] : [])
]

/**
 * Plans one op per file value of a batch of source records (the plan is the same whatever
 * the batches: each op depends on its record only). `targetFields` maps a field name to
 * the target's FILE field id (read from a target record's detail).
 */
export const planCustomFieldFiles = (
  details: ReadonlyArray<Record<string, unknown>>,
  targetWs: string,
  targetFields: ReadonlyMap<string, string>,
  uids: UidLookup
): { readonly ops: ReadonlyArray<PlanOp>; readonly counts: CustomFieldFileCounts } => {
  const ops: Array<PlanOp> = []
  let source = 0
  let noField = 0
  let notCopied = 0
  for (const d of details) {
    const recordId = String(d.id)
    const fields = fieldsOf(d).filter((f) => f.type === "FILE")
    const relinked = relinkCustomFields(fields, uids).value
    fields.forEach((f, i) => {
      const from = uidsOf(f.text)
      const to = uidsOf(relinked[i]!.text)
      source += from.length
      const fieldId = targetFields.get(f.name)
      from.forEach((uid, j) => {
        if (fieldId === undefined) return void noField++
        const targetUid = to[j]
        if (targetUid === undefined || targetUid === uid) return void notCopied++
        ops.push({
          key: `migrate:${targetWs}:cf:${recordId}:${f.name}:${uid}`,
          kind: CF_FILE_KIND,
          payload: { workspaceId: targetWs, recordRef: recordId, customFieldId: fieldId, fileUid: targetUid }
        })
      })
    })
  }
  return { ops, counts: { source, noField, notCopied } }
}

/** Record details read at most to find the target's FILE fields when the service cannot list them. */
const DETAILS_TO_READ = 20

/**
 * The target's FILE custom fields by name: from list-custom-fields (beyond the
 * documents), else from the details of records of the target (`recordIds`, read only
 * then, at most DETAILS_TO_READ of them), which show every field of the workspace in one
 * reading and only the fields set on the record in the other.
 */
export const targetFileFields = <E>(
  rest: RestClientApi,
  workspaceId: string,
  recordIds: (atMost: number) => Effect.Effect<ReadonlyArray<string>, E>
) =>
  rest.listCustomFields({ workspaceId }).pipe(
    Effect.map((defs) => new Map(defs.filter((f) => f.type === "FILE").map((f) => [f.name, f.id] as const))),
    Effect.catchTag("NotAvailable", () =>
      Effect.flatMap(recordIds(DETAILS_TO_READ), (ids) =>
        Effect.reduce(ids.slice(0, DETAILS_TO_READ), () => new Map<string, string>(), (found, recordId) =>
        Effect.map(rest.getRecord({ workspaceId, recordId }), (d) => {
          for (const f of d.customFields) if (f.type === "FILE" && !found.has(f.name)) found.set(f.name, f.id)
          return found
        }))))
  )

const failure = (e: { readonly _tag: string; readonly message: string }): ExecFailure => e

/** Whether the target record's field already holds the file (an attach whose answer was lost). */
const holds = (rest: RestClientApi, workspaceId: string, recordId: string, fieldId: string, uid: string) =>
  Effect.map(rest.getRecord({ workspaceId, recordId }), (d) =>
    d.customFields.some((f) => f.id === fieldId && uidsOf(typeof f.text === "string" ? f.text : null).includes(uid)))

export const makeCustomFieldFileExecutor = (rest: RestClientApi, graphql: GraphqlClientApi): Executor => {
  const prepare = (op: Parameters<Executor["execute"]>[0], journal: Parameters<Executor["execute"]>[1]) =>
    Effect.gen(function*() {
      const p = yield* decode(CustomFieldFilePayload, op)
      const recordId = yield* lookupOrFail(journal, recordNamespace(p.workspaceId), p.recordRef, `the record of ${p.recordRef} was not created`)
      return { p, recordId }
    })
  return {
    kind: CF_FILE_KIND,
    execute: (op, journal) =>
      Effect.gen(function*() {
        const { p, recordId } = yield* prepare(op, journal)
        yield* graphql
          .createRecordCustomFieldFile({ todoId: recordId, customFieldId: p.customFieldId, fileUid: p.fileUid })
          .pipe(Effect.mapError(failure))
        return { result: { recordId }, mappings: [] }
      }),
    reconcile: (op, journal) =>
      Effect.gen(function*() {
        const { p, recordId } = yield* prepare(op, journal)
        const found = yield* holds(rest, p.workspaceId, recordId, p.customFieldId, p.fileUid).pipe(Effect.mapError(failure))
        return found ? Option.some({ result: { recordId }, mappings: [] }) : Option.none()
      })
  }
}
