/**
 * Planning a copy: what the source holds, one journal op per file (kind `file.copy`),
 * and for a directory target the local name of each file, decided once and kept in the
 * op so a rerun writes every file where it wrote it before.
 */
import { createHash } from "node:crypto"
import * as Schema from "effect/Schema"
import { type Endpoint } from "./spec.ts"
import { SafeNamer, uploadNameFor } from "./safe-name.ts"

export const FILE_COPY_KIND = "file.copy"
/** id_map namespace of source uid -> target uid (used by re-linking). */
export const FILE_NAMESPACE = "file"
/** id_map namespace of op key -> uid of the latest presigned upload, written before its PUT. */
export const FILE_ATTEMPT_NAMESPACE = "file.attempt"

export const WorkspaceSource = Schema.Struct({
  kind: Schema.Literal("workspace"),
  workspaceId: Schema.String,
  id: Schema.String,
  uid: Schema.String,
  name: Schema.String,
  size: Schema.Number
})
export const DirSource = Schema.Struct({
  kind: Schema.Literal("dir"),
  root: Schema.String,
  relPath: Schema.String,
  size: Schema.Number
})
/**
 * A file's bytes as `backup --files DIR` stored them (an object named by its sha256),
 * uploaded by `restore --files DIR`; `uid` and `name` are the backed-up file's.
 */
export const ObjectSource = Schema.Struct({
  kind: Schema.Literal("object"),
  sha256: Schema.String,
  uid: Schema.String,
  name: Schema.String,
  size: Schema.Number
})
export const SourceFile = Schema.Union([WorkspaceSource, DirSource, ObjectSource])
export type SourceFile = typeof SourceFile.Type

/** The payload of a `file.copy` op. */
export const CopyPayload = Schema.Struct({
  v: Schema.Literal(1),
  source: SourceFile,
  /** Local name in a directory target. */
  localName: Schema.NullOr(Schema.String),
  /** Name sent to the presign step for a workspace target. */
  uploadName: Schema.NullOr(Schema.String)
})
export type CopyPayload = typeof CopyPayload.Type

export const decodePayload = Schema.decodeUnknownSync(CopyPayload)

/** The result stored with a done op. */
export const CopyResult = Schema.Struct({
  /** Local path (directory target) or target uid (workspace target). */
  path: Schema.NullOr(Schema.String),
  uid: Schema.NullOr(Schema.String),
  size: Schema.Number,
  /** Null when an interrupted upload was found confirmed without its bytes passing us again. */
  sha256: Schema.NullOr(Schema.String)
})
export type CopyResult = typeof CopyResult.Type

/** The display name of a source file: its server name, or its path under the source directory. */
export const nameOf = (source: SourceFile): string => (source.kind === "dir" ? source.relPath : source.name)

/** The key of the source file in id_map's `file` namespace (its uid, or its absolute path). */
export const sourceKeyOf = (source: SourceFile): string =>
  source.kind === "dir" ? `dir:${source.root}/${source.relPath}` : source.uid

/**
 * A short fingerprint of the copy's two ends: ops of different copies sharing one journal
 * file never mix. `origin` strings name the accounts (no secrets).
 */
export const jobIdOf = (
  from: Endpoint,
  to: Endpoint,
  origins: { readonly source: string | null; readonly target: string | null }
): string =>
  createHash("sha256")
    .update(JSON.stringify([from, origins.source, to, origins.target]))
    .digest("hex")
    .slice(0, 12)

export const opKeyOf = (jobId: string, source: SourceFile): string =>
  source.kind === "dir" ? `${FILE_COPY_KIND}:${jobId}:path:${source.relPath}` : `${FILE_COPY_KIND}:${jobId}:uid:${source.uid}`

/**
 * Local names for a directory target. Names recorded by earlier runs (in the ops,
 * `knownNames`: every one of them, before any new name is given) are kept; new files avoid
 * those, every manifest path and every name already in the directory (`taken`), then take
 * their safe name in the order they are asked for.
 */
export const localNamer = (
  knownNames: Iterable<string>,
  taken: Iterable<string>
): (file: { readonly source: SourceFile; readonly knownName: string | null }) => string => {
  const namer = new SafeNamer()
  for (const name of knownNames) namer.reserve(name)
  for (const name of taken) namer.reserve(name)
  return (file) => file.knownName ?? namer.next(nameOf(file.source))
}

/** The name a workspace target receives: the source name (relative path for a directory source). */
export const uploadNameOf = (source: SourceFile): string => uploadNameFor(nameOf(source))
