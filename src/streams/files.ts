/**
 * list-files: offset paging, at most 100 a page, `pageInfo {totalItems, hasNextPage}`.
 * Read through the stable scan (stable-scan.ts), as list-records is: a file deleted or
 * added during the listing never makes it skip another.
 */
import * as Effect from "effect/Effect"
import * as Stream from "effect/Stream"
import type { RestClient } from "../client/rest-client.ts"
import type { FileItem } from "../schema/files.ts"
import type { PageError } from "./paging.ts"
import type { StreamOptions } from "./records.ts"
import { type ScanUnstable, stableFileScan } from "./stable-scan.ts"

export const filesStream = (
  workspaceId: string,
  options: StreamOptions = {}
): Stream.Stream<FileItem, PageError | ScanUnstable, RestClient> =>
  Stream.unwrap(Effect.map(stableFileScan(workspaceId, options), (scan) => scan.records))
