/** `--plan` without `--json` (import-csv, migrate): the plan, one line each, for stderr. */
import type { PlanReport } from "../sync/pass-plan.ts"

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
  ...p.conflicts.map((c) => `plan: conflict: ${c.what} ${JSON.stringify(c.item)}: ${c.why}`)
]
