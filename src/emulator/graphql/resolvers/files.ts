/**
 * uploadFile, uploadFiles, createFile (R-UPLOAD-MULTIPART-05..24, R-FILE-STATUS-02) and
 * the plan and role checks of uploads (R-GQL-ERR-05/06/08).
 */
import { extensionOf, FALLBACK_MIME, mimeOf } from "../../uploads/mime.ts"
import { filesDisabledFor } from "../../uploads/access.ts"
import { getFileByUid, getFolder, insertFile, orgStorageBytes, storageKeyFor } from "../../uploads/files.ts"
import { requireOrg, requireWorkspace, type OrgScope, type WorkspaceScope } from "../access.ts"
import { badInput, gqlError, projectNotFound } from "../errors.ts"
import { fileModel } from "../models.ts"
import { isUploadedPart, type GqlContext, type UploadedPart } from "../request.ts"
import { one } from "../sql.ts"

interface UploadFileArgs {
  readonly input: { readonly file: unknown; readonly companyId: string; readonly projectId?: string | null }
}

interface UploadFilesArgs {
  readonly input: { readonly files: ReadonlyArray<unknown>; readonly companyId: string; readonly projectId: string }
}

interface CreateFileArgs {
  readonly input: {
    readonly uid: string
    readonly name: string
    readonly size: number
    readonly type: string
    readonly extension: string
    readonly companyId: string
    readonly projectId: string
    readonly folderId?: string | null
    readonly documentId?: string | null
    readonly shared?: boolean | null
  }
}

/** The workspace of an upload, which must belong to the organization named beside it. */
const workspaceInOrg = (g: GqlContext, org: OrgScope, projectRef: string): WorkspaceScope => {
  const scope = requireWorkspace(g, projectRef)
  if (scope.workspace.org_id !== org.org.id) throw projectNotFound("The workspace is not in this organization")
  return scope
}

const checkFilesEnabled = (g: GqlContext, scope: WorkspaceScope | null): void => {
  if (scope !== null && filesDisabledFor(g.ctx, scope.workspace.id, g.principal.userId)) {
    throw gqlError("FILES_DISABLED_FOR_ROLE", "File uploads are disabled for your role in this workspace")
  }
}

/** Storage allowance and per-file tier cap: the organization's own, else the emulator's (ctx.limits). */
const checkPlan = (g: GqlContext, orgId: string, sizes: ReadonlyArray<number>): void => {
  const perFile = g.ctx.limits.perFileBytes
  for (const size of sizes) {
    if (perFile !== null && size > perFile) {
      throw gqlError("PLAN_LIMIT_REACHED", `A file of ${size} bytes exceeds the plan's per-file limit of ${perFile} bytes`)
    }
  }
  const own = one<{ storage_limit: number | null }>(g.ctx.db, "SELECT storage_limit FROM organizations WHERE id = ?", orgId)
  const allowance = own?.storage_limit ?? g.ctx.limits.storageBytes
  if (allowance === null) return
  const used = orgStorageBytes(g.ctx.db, orgId)
  const adding = sizes.reduce((a, b) => a + b, 0)
  if (used + adding > allowance) {
    throw gqlError(
      "PLAN_LIMIT_REACHED",
      `The upload would exceed the organization's storage allowance: ${used} + ${adding} bytes of ${allowance}`
    )
  }
}

const uploadOf = (value: unknown, where: string): UploadedPart => {
  if (!isUploadedPart(value)) throw badInput(`${where} must be a file part of a multipart request`)
  return value
}

/** MIME type and extension: the part's own type unless it is missing or generic, then the name's. */
const typeOf = (part: UploadedPart): { type: string; extension: string } => {
  const extension = extensionOf(part.filename) ?? ""
  const own = part.mimeType.trim().toLowerCase()
  const type = own !== "" && own !== FALLBACK_MIME ? own : extension !== "" ? mimeOf(extension) : FALLBACK_MIME
  return { type, extension }
}

const storeUpload = (g: GqlContext, org: OrgScope, scope: WorkspaceScope | null, part: UploadedPart) => {
  const { extension, type } = typeOf(part)
  const row = insertFile(g.ctx, {
    uid: part.uid,
    storageKey: part.storageKey,
    name: part.filename,
    size: part.size,
    type,
    extension,
    orgId: org.org.id,
    workspaceId: scope?.workspace.id ?? null,
    status: "CONFIRMED",
    shared: false,
    folderId: null,
    userId: g.principal.userId
  })
  part.claimed = true
  return fileModel(g.ctx, row)
}

export const fileMutations = {
  uploadFile: (_: unknown, args: UploadFileArgs, g: GqlContext) => {
    const org = requireOrg(g, args.input.companyId)
    const projectRef = args.input.projectId ?? null
    const scope = projectRef === null || projectRef.trim() === "" ? null : workspaceInOrg(g, org, projectRef)
    checkFilesEnabled(g, scope)
    const part = uploadOf(args.input.file, "input.file")
    checkPlan(g, org.org.id, [part.size])
    return storeUpload(g, org, scope, part)
  },

  uploadFiles: (_: unknown, args: UploadFilesArgs, g: GqlContext) => {
    const org = requireOrg(g, args.input.companyId)
    const scope = workspaceInOrg(g, org, args.input.projectId)
    checkFilesEnabled(g, scope)
    const parts = args.input.files.map((f, i) => uploadOf(f, `input.files.${i}`))
    if (parts.length === 0) throw badInput("input.files is empty")
    checkPlan(
      g,
      org.org.id,
      parts.map((p) => p.size)
    )
    const stored = g.ctx.db.transaction(() => parts.map((part) => storeUpload(g, org, scope, part)))()
    // UPLOAD_FILES_RESULT_ORDER: the parts' order; the alt variant answers in reverse.
    return g.ctx.variant === "alt" ? stored.reverse() : stored
  },

  createFile: (_: unknown, args: CreateFileArgs, g: GqlContext) => {
    const input = args.input
    const org = requireOrg(g, input.companyId)
    const scope = workspaceInOrg(g, org, input.projectId)
    checkFilesEnabled(g, scope)
    if (!Number.isFinite(input.size) || input.size < 0) throw badInput("input.size must be a byte count")
    const extension = input.extension.replace(/^\.+/, "")
    if (g.ctx.objects.stat(storageKeyFor(input.uid)) === null) {
      throw badInput(`No stored object has uid ${input.uid}`)
    }
    if (getFileByUid(g.ctx.db, input.uid) !== null) throw badInput(`A file with uid ${input.uid} already exists`)
    const folderId = input.folderId ?? null
    if (folderId !== null) {
      const folder = getFolder(g.ctx.db, folderId)
      if (folder === null || folder.workspaceId !== scope.workspace.id) throw badInput("Folder not found in this workspace")
    }
    const documentId = input.documentId ?? null
    if (documentId !== null) {
      const doc = one<{ id: string }>(
        g.ctx.db,
        "SELECT id FROM documents WHERE id = ? AND workspace_id = ? AND deleted_at IS NULL",
        documentId,
        scope.workspace.id
      )
      if (doc === undefined) throw badInput("Document not found in this workspace")
    }
    checkPlan(g, org.org.id, [input.size])
    const row = insertFile(g.ctx, {
      uid: input.uid,
      name: input.name,
      size: input.size,
      type: input.type,
      extension,
      orgId: org.org.id,
      workspaceId: scope.workspace.id,
      status: "CONFIRMED",
      shared: input.shared === true,
      folderId,
      documentId,
      userId: g.principal.userId
    })
    return fileModel(g.ctx, row)
  }
}
