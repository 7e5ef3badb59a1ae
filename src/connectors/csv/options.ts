import type * as Effect from "effect/Effect"
import type { GraphqlClientApi } from "../../client/graphql-client.ts"
import type { PeopleMap, TitleMap } from "../../sync/mapping-files.ts"
import type { OpEnd } from "../../sync/replay.ts"
import type { MappingInput } from "./mapping.ts"
import type { CsvSourceOptions } from "./read.ts"

export interface ImportOptions {
  readonly workspaceId: string
  readonly csv: CsvSourceOptions
  readonly mapping: MappingInput
  readonly dryRun?: boolean
  /** Rejected rows go here (original columns plus `row` and `error`). */
  readonly rejectsFile?: string | undefined
  readonly concurrency?: number
  readonly batchSize?: number
  /** Progress hooks (all optional). */
  readonly onRowsRead?: (n: number) => Effect.Effect<void>
  readonly onReplayStart?: (total: number) => Effect.Effect<void>
  readonly onOpEnd?: (end: OpEnd) => Effect.Effect<void>
  /** Reconciliation clock-skew margin, ms. */
  readonly skewMs?: number
  /**
   * How long after sending a create whose outcome is unknown reconciliation keeps looking
   * before it sends again (see `ReplayOptions.settleWindowMs`); default: the client's
   * request timeout.
   */
  readonly settleWindowMs?: number
  /**
   * Plan the journal's inserts on a second thread while this one reads the next rows;
   * by default for CSV files of 4 MiB or more. Same journal either way.
   */
  readonly planThread?: boolean
  /**
   * The GraphQL client: comments and attachments of a tool's export are written through
   * it (createComment, uploadFile). Without it they are planned but not sent (each such
   * op fails naming what is missing, and a rerun with it sends them).
   */
  readonly graphql?: GraphqlClientApi | undefined
  /** Where attachments named in a tool's export are found by file name (`--attachments`). */
  readonly attachmentsDir?: string | undefined
  /**
   * The only hosts attachment URLs are fetched from, each `HOST[:PORT]` (comma-separated
   * lists too): a loopback, private or link-local address only for a host named here.
   * Default: the exporting tool's own hosts (presets/attachment-hosts.ts).
   */
  readonly attachmentHosts?: ReadonlyArray<string> | undefined
  /** Attachments larger than this many bytes are not fetched; default 25 MB. */
  readonly attachmentMaxBytes?: number | undefined
  /** `--people FILE`: people of a tool's export by display name or e-mail (sync/mapping-files.ts). */
  readonly people?: PeopleMap | undefined
  /** `--title-map FILE.json`: each row's list and tags under the titles it maps them to (two may merge). */
  readonly titles?: TitleMap | undefined
  /** Delta passes: the records of rows gone from the export are deleted on the target. */
  readonly deleteMissing?: boolean
  /** Delta passes: fields edited on the target since the last pass are replaced, not kept. */
  readonly overwriteTargetEdits?: boolean
  /**
   * `--plan` (with `dryRun`): also read what the run would meet on the target (records of
   * the same title in a row's list) and report the plan (`ImportResult.planReport`).
   */
  readonly planReport?: boolean
}
