/**
 * Delta passes and their plans, as import-csv and migrate share them (contract: "Delta
 * passes and plans"): what a pass did not write and why (`Kept`: a field edited on the
 * target since the last pass, a record gone from it), and what `--plan` reports
 * (`PlanReport`: the run that follows does what it says), and which entries of the
 * mapping files given a pass uses (`Mappings`).
 */
import type { ReferenceCounts } from "./references.ts"

/** One thing a pass did not write, or would not: as the plan's `conflicts` and the run's `kept`. */
export interface Kept {
  readonly what: string
  readonly item: string
  readonly why: string
}

/** What `--plan` reports: with `--json`, exactly `{"plan": PlanReport}`. */
export interface PlanReport {
  readonly create: number
  readonly update: number
  readonly unchanged: number
  readonly delete: number
  readonly lists: ReadonlyArray<string>
  readonly tags: ReadonlyArray<string>
  readonly invite: ReadonlyArray<{ readonly email: string; readonly level: string }>
  readonly unresolved: ReadonlyArray<string>
  readonly notCarried: ReadonlyArray<{ readonly what: string; readonly count: number; readonly why: string }>
  readonly conflicts: ReadonlyArray<Kept>
  /** References between records (references.ts): to rewrite to name target records, and naming items outside the migration. */
  readonly references?: ReferenceCounts
  /** Only with a mapping file (`--people FILE`, `--title-map`): which of its entries the run uses. */
  readonly mappings?: Mappings
}

/** An entry of a mapping file (mapping-files.ts): a person, or a list or tag title. */
export interface MappingEntry {
  readonly kind: "person" | "list" | "tag"
  readonly from: string
  readonly to: string
}

/** A mapping file's entries, by whether the run met what they name. */
export interface MappingUse {
  readonly used: ReadonlyArray<MappingEntry>
  readonly unused: ReadonlyArray<MappingEntry>
}

/** As the plan and the run's report give it: a key for each mapping file given. */
export interface Mappings {
  readonly people?: MappingUse
  readonly titles?: MappingUse
}

/** Why a field edited on the target since the last pass was kept (`--overwrite-target-edits` replaces it). */
export const keptEditWhy = (where: string): string =>
  `edited on the target (${where}) since the last pass; kept (--overwrite-target-edits replaces it)`

/** Why a record deleted on the target since the last pass stays deleted (`--overwrite-target-edits` makes it again). */
export const keptDeletionWhy = (recordId: string): string =>
  `record ${recordId} was deleted on the target since the last pass; kept deleted (--overwrite-target-edits makes it again)`
