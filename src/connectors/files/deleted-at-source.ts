/**
 * Files deleted at the source during a copy (the contract: reported, not counted as
 * failed). A file whose source said it is not there (`SourceMissing`) is only a
 * candidate: a 404 may have other causes, and the documents do not say what a deleted
 * file's download answers. It is confirmed gone at the end of the copy:
 * - a workspace's files by one fresh read of the workspace's listing (one for all of
 *   them: the listing is the only way the documents give to know a file is gone), and
 *   only a listing verified complete can show a file is absent;
 * - a directory's files by looking at the disk again.
 * A confirmed file is done in the journal with a result saying so (a rerun does not try
 * it again); any other fails with the reason, and a rerun retries it.
 */
import * as Effect from "effect/Effect"
import * as Schema from "effect/Schema"
import { detailOf } from "./errors.ts"
import type { SourceFile } from "./plan.ts"
import type { WorkspaceFiles } from "./ports.ts"
import { onDisk, readListing } from "./source.ts"

/** The result a done `file.copy` op holds when its source file was deleted during the copy. */
export const DeletedAtSource = Schema.Struct({
  deletedAtSource: Schema.Literal(true),
  /** What the source answered when the file was read. */
  detail: Schema.String
})
export type DeletedAtSource = typeof DeletedAtSource.Type

export const isDeletedAtSource = Schema.is(DeletedAtSource)

/**
 * Whether a candidate is gone; if not, why (added to its failure): still there, or the
 * source could not tell (a listing that failed or could not be verified complete).
 */
export type Verdict =
  | { readonly _tag: "Gone" }
  | { readonly _tag: "StillThere"; readonly why: string }
  | { readonly _tag: "Unconfirmed"; readonly why: string }

/** The verdict on each of `files` (all of one source), in order. */
export const confirmGone = (
  source: WorkspaceFiles | undefined,
  files: ReadonlyArray<SourceFile>
): Effect.Effect<ReadonlyArray<Verdict>> => {
  const workspaceIds = new Set(files.flatMap((f) => (f.kind === "workspace" ? [f.workspaceId] : [])))
  return Effect.gen(function*() {
    // One listing per workspace, read only when one of its files is a candidate.
    const listings = new Map<string, Verdict | ReadonlySet<string>>()
    for (const workspaceId of workspaceIds) {
      const read = yield* Effect.result(readListing(source!, workspaceId))
      listings.set(
        workspaceId,
        read._tag === "Failure"
          ? { _tag: "Unconfirmed", why: `the listing read to confirm it was deleted failed: ${detailOf(read.failure)}` }
          : read.success.unverified !== null
          // A listing that may be short cannot show a file is absent.
          ? { _tag: "Unconfirmed", why: `the listing could not be verified complete to confirm it was deleted (${read.success.unverified.detail})` }
          : new Set(read.success.items.map((item) => item.uid))
      )
    }
    return yield* Effect.forEach(files, (file): Effect.Effect<Verdict> => {
      // An object of a files directory is a restore's source: never deleted while it runs.
      if (file.kind === "object") return Effect.succeed<Verdict>({ _tag: "StillThere", why: "the stored object is still there" })
      if (file.kind === "dir") {
        return onDisk(file).pipe(
          Effect.map((there): Verdict => (there ? { _tag: "StillThere", why: "the file is still there" } : { _tag: "Gone" })),
          Effect.catch((e) => Effect.succeed<Verdict>({ _tag: "Unconfirmed", why: detailOf(e) }))
        )
      }
      const listing = listings.get(file.workspaceId)!
      if (!(listing instanceof Set)) return Effect.succeed(listing as Verdict)
      return Effect.succeed<Verdict>(
        listing.has(file.uid) ? { _tag: "StillThere", why: "the file is still listed at the source" } : { _tag: "Gone" }
      )
    })
  })
}
