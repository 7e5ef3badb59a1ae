import type { Census } from "../presets/model.ts"
import type { Adoption } from "../../store/journal.ts"
import type { Kept, Mappings, PlanReport } from "../../sync/pass-plan.ts"
import type { ReferenceCounts } from "../../sync/references.ts"

export interface PlanPreviewRow {
  readonly row: number
  readonly key: string
  readonly title: string
  readonly list: string | null
  readonly done: boolean
}

export interface ImportResult {
  /** Data rows read. */
  readonly rows: number
  /** Records created by this run (including ones found created by an interrupted attempt). */
  readonly created: number
  /** Rows already imported by an earlier run. */
  readonly skipped: number
  /** Rows that failed validation or resolution, or repeat a key of the file. */
  readonly rejected: number
  /** Ops that failed in this run; a rerun retries them. */
  readonly failed: number
  /** Ops whose outcome could not be settled; a rerun reconciles them. */
  readonly unknown: number
  /** Ops still pending: waiting on an op that failed, or behind an unknown one. */
  readonly blocked: number
  /** The first failures, one line each. */
  readonly failures: ReadonlyArray<string>
  /**
   * What was left out because the service lacks an operation beyond the documents, or
   * answered a write with success and did not carry it out, one line each. Lists the
   * service could not make are named in the line about lists.
   */
  readonly notices: ReadonlyArray<string>
  /** Titles of the lists the service could not make (this run or an earlier one): their rows' records are in the first list. */
  readonly listsNotMade?: ReadonlyArray<string>
  /**
   * Records found on the service by title and taken as the ones this run's creates of
   * unknown outcome made (reconciliation; the journal's `adoptions`). Such a record may
   * be someone else's (docs/journal.md, "Limits"): each is reported.
   */
  readonly adopted: ReadonlyArray<Adoption>
  readonly rejectsFile: string | null
  /** A tool preset's census: every column carried (to which field) or left behind (and why). */
  readonly census?: Census
  /** Tool presets: comments created by this run (planned, for a dry run), attachments uploaded. */
  readonly comments?: number
  readonly attachments?: number
  /**
   * Attachments that could not be fetched this run, with the reason (each has a comment
   * naming it), and those an earlier run refused for a host this run does not allow either.
   */
  readonly attachmentsNotFetched?: ReadonlyArray<{ readonly name: string; readonly reason: string }>
  /** People of the export the workspace does not know: records were created without them. */
  readonly people?: { readonly unresolved: ReadonlyArray<string> }
  /** Cells of the export that could not be read (rows imported without them), the first ones. */
  readonly problems?: ReadonlyArray<string>
  /** Dry run only: new ops per kind and the first planned rows. */
  readonly plan?: { readonly ops: Readonly<Record<string, number>>; readonly first: ReadonlyArray<PlanPreviewRow> }
  /** Which pass of the journal this is: 1 for the first (a resumed pass keeps its number). */
  readonly pass: number
  /** Rows whose record this run updated (planned to, for a dry run). */
  readonly updated: number
  /** Rows gone from the export whose records stay on the target (no `deleteMissing`). */
  readonly missing: number
  /** Records of rows gone from the export deleted by this run (planned to, for a dry run). */
  readonly deleted: number
  /** Fields edited on the target since the last pass and kept, and records no longer there. */
  readonly kept: ReadonlyArray<Kept>
  /** `planReport` only: what the run would do. */
  readonly planReport?: PlanReport
  /** Tool presets: references between rows rewritten to name target records, and those naming items outside the export. */
  readonly references?: ReferenceCounts
  /** With `people` or `titles`: which of their entries the rows used. */
  readonly mappings?: Mappings
}
