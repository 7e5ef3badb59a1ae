/** `--plan` without `--json` (import-csv, migrate): the plan, one line each, for stderr. */
import type { MappingEntry, Mappings, PlanReport } from "../sync/pass-plan.ts"

const titles = (ts: ReadonlyArray<string>) => ts.map((t) => JSON.stringify(t)).join(", ")

export const planLines = (p: PlanReport): Array<string> => [
  `plan: ${p.create} to create, ${p.update} to update, ${p.unchanged} unchanged, ${p.delete} to delete`,
  ...(p.lists.length > 0 ? [`plan: lists to create: ${titles(p.lists)}`] : []),
  ...(p.tags.length > 0 ? [`plan: tags to create: ${titles(p.tags)}`] : []),
  ...(p.invite.length > 0 ? [`plan: people to invite: ${p.invite.map((i) => `${i.email} (${i.level})`).join(", ")}`] : []),
  ...(p.unresolved.length > 0 ? [`plan: people not found (records created without them): ${p.unresolved.join(", ")}`] : []),
  ...p.notCarried.map((n) => `plan: not carried: ${n.what} (${n.count}): ${n.why}`),
  ...(p.references !== undefined && p.references.rewritten + p.references.outside > 0
    ? [`plan: references: ${p.references.rewritten} to rewrite to name the target record, ${p.references.outside} to items outside the migration (left as written)`]
    : []),
  ...p.conflicts.map((c) => `plan: conflict: ${c.what} ${JSON.stringify(c.item)}: ${c.why}`),
  ...(p.mappings !== undefined ? mappingLines(p.mappings).map((l) => `plan: ${l}`) : [])
]

const entry = (e: MappingEntry) => `${e.kind} ${JSON.stringify(e.from)} -> ${e.kind === "person" ? e.to : JSON.stringify(e.to)}`

/** The entries of the mapping files, used and not (the plan's lines, and the run's). */
export const mappingLines = (m: Mappings): Array<string> =>
  [m.people, m.titles].flatMap((use) =>
    use === undefined ? [] : [
      ...(use.used.length > 0 ? [`mappings used: ${use.used.map(entry).join(", ")}`] : []),
      ...(use.unused.length > 0 ? [`mappings not used: ${use.unused.map(entry).join(", ")}`] : [])
    ]
  )
