/**
 * Who may presign and confirm: an authenticated user acting in an organization and a
 * workspace, or an anonymous form. Statuses follow the presign/confirm table of the
 * GraphQL document (400 missing headers, 401 no valid token, 403 uploads disabled,
 * 404 company or project not found) and assumptions.ts (403 for a known token without
 * access).
 */
import type { IncomingMessage } from "node:http"
import {
  authenticateApp,
  authenticateRest,
  firstHeader,
  header,
  orgHeaderNames,
  orgLevel,
  resolveOrganization,
  resolveWorkspace,
  tokenKeyOf,
  workspaceHeaderNames,
  workspaceLevel
} from "../auth.ts"
import type { EmulatorContext } from "../context.ts"
import { get } from "../core/sql.ts"
import { badRequest, forbidden, HttpError, noAccess, unauthorized } from "../http.ts"
import { type FormRow, getForm } from "./files.ts"

export type Mount = "rest" | "base"

/** The side of an upload: a user in a workspace, or an anonymous form of a workspace. */
export type Uploader =
  | { readonly kind: "user"; readonly userId: string; readonly orgId: string; readonly workspaceId: string }
  | { readonly kind: "form"; readonly form: FormRow; readonly orgId: string; readonly workspaceId: string }

export const BOTH_IDS_REQUIRED = "Both the organization ID and the workspace ID are required"

export const companyNotFound = () => new HttpError(404, "COMPANY_NOT_FOUND", "Organization not found")
export const projectNotFound = () => new HttpError(404, "PROJECT_NOT_FOUND", "Workspace not found")
export const formNotFound = () => new HttpError(404, "FORM_NOT_FOUND", "Form not found")
export const filesDisabled = () =>
  forbidden("File uploads are disabled for your role in this workspace", "FILES_DISABLED_FOR_ROLE")

/**
 * Organization and workspace headers as sent, undefined when absent: either spelling on
 * either mount, or (alt variant, CANONICAL_ORG_HEADER) only the mount's documented names.
 */
const scopeHeaders = (ctx: EmulatorContext, req: IncomingMessage, mount: Mount) => {
  const surface = mount === "rest" ? "rest-uploads" : "app"
  const workspaceNames = workspaceHeaderNames(ctx, surface)
  return {
    org: firstHeader(req, orgHeaderNames(ctx, surface)),
    // The REST mount's own name first, as it always was.
    workspace: firstHeader(req, ctx.variant === "alt" ? workspaceNames : [...workspaceNames].reverse())
  }
}

/** 401 unless the request carries a known token of the mount's kind. */
const requireToken = (ctx: EmulatorContext, req: IncomingMessage, mount: Mount): string => {
  if (mount === "rest") {
    if (tokenKeyOf(ctx, req) === null || header(req, "authorization") === undefined) throw unauthorized()
    return authenticateRestUser(ctx, req, mount)
  }
  return authenticateApp(ctx, req).userId
}

/**
 * The REST caller's user id. An organization header that does not resolve is a 404 here
 * (uploads answer COMPANY_NOT_FOUND), checked before the generic REST authentication
 * turns it into a 403.
 */
const authenticateRestUser = (ctx: EmulatorContext, req: IncomingMessage, mount: Mount): string => {
  const { org } = scopeHeaders(ctx, req, mount)
  if (org !== undefined && resolveOrganization(ctx, org) === null) {
    // Token first: an unknown token is 401 whatever else is wrong.
    if (tokenKeyOf(ctx, req) === null) throw unauthorized()
    throw companyNotFound()
  }
  return authenticateRest(ctx, req, "rest-uploads").userId
}

export const filesDisabledFor = (ctx: EmulatorContext, workspaceId: string, userId: string): boolean =>
  (get<{ files_disabled: number }>(
    ctx.db,
    "SELECT files_disabled FROM workspace_members WHERE workspace_id = ? AND user_id = ?",
    workspaceId,
    userId
  )?.files_disabled ?? 0) !== 0

/** A form that takes anonymous uploads: 404 when unknown, 403 when not active (R-LIMIT-06). */
export const activeForm = (ctx: EmulatorContext, formId: string): FormRow => {
  const form = getForm(ctx.db, formId)
  if (form === null) throw formNotFound()
  if (!form.active) throw forbidden("The form is not active", "FORM_INACTIVE")
  return form
}

const orgOfWorkspace = (ctx: EmulatorContext, workspaceId: string): { id: string; banned: number } => {
  const row = get<{ id: string; banned: number }>(
    ctx.db,
    "SELECT o.id AS id, o.banned AS banned FROM workspaces w JOIN organizations o ON o.id = w.org_id WHERE w.id = ?",
    workspaceId
  )
  if (row === undefined) throw projectNotFound()
  return row
}

/**
 * The uploader of a presign request (R-GQL-AUTH-11/12, R-REST-AUTH-07,
 * R-UPLOAD-PRESIGN-05/19/23/24/29).
 */
export const presignUploader = (ctx: EmulatorContext, req: IncomingMessage, url: URL, mount: Mount): Uploader => {
  const formId = url.searchParams.get("formId")
  if (formId !== null && formId !== "") {
    const form = activeForm(ctx, formId)
    const org = orgOfWorkspace(ctx, form.workspaceId)
    if (org.banned) throw forbidden("The organization account is suspended", "COMPANY_BANNED")
    return { kind: "form", form, orgId: org.id, workspaceId: form.workspaceId }
  }
  const userId = requireToken(ctx, req, mount)
  const scope = scopeHeaders(ctx, req, mount)
  if (scope.org === undefined || scope.workspace === undefined) throw badRequest(BOTH_IDS_REQUIRED)
  return { kind: "user", userId, ...userScope(ctx, userId, scope.org, scope.workspace) }
}

/** Resolves and checks an organization and workspace pair for a user. */
const userScope = (
  ctx: EmulatorContext,
  userId: string,
  orgRef: string,
  workspaceRef: string
): { orgId: string; workspaceId: string } => {
  const org = resolveOrganization(ctx, orgRef)
  if (org === null) throw companyNotFound()
  if (orgLevel(ctx, org.id, userId) === null) throw noAccess("The token has no access to this organization")
  if (org.banned) throw forbidden("The organization account is suspended", "COMPANY_BANNED")
  const workspace = resolveWorkspace(ctx, workspaceRef)
  if (workspace === null || workspace.org_id !== org.id) throw projectNotFound()
  if (workspaceLevel(ctx, workspace.id, userId) === null) throw noAccess("The token has no access to this workspace")
  if (filesDisabledFor(ctx, workspace.id, userId)) throw filesDisabled()
  return { orgId: org.id, workspaceId: workspace.id }
}

/** The confirming side: a user (scope headers optional), or a form named by `?formId=`. */
export type Confirmer =
  | { readonly kind: "user"; readonly userId: string }
  | { readonly kind: "form"; readonly formId: string }

/**
 * Authenticates a confirm (R-UPLOAD-PRESIGN-15/17/22/24/31). Scope headers are optional
 * (the file names its workspace) but, when sent, must resolve.
 */
export const confirmer = (ctx: EmulatorContext, req: IncomingMessage, url: URL, mount: Mount): Confirmer => {
  const formId = url.searchParams.get("formId")
  if (formId !== null && formId !== "") {
    if (getForm(ctx.db, formId) === null) throw formNotFound()
    return { kind: "form", formId }
  }
  const userId = requireToken(ctx, req, mount)
  const scope = scopeHeaders(ctx, req, mount)
  if (scope.org !== undefined && resolveOrganization(ctx, scope.org) === null) throw companyNotFound()
  if (scope.workspace !== undefined && resolveWorkspace(ctx, scope.workspace) === null) throw projectNotFound()
  return { kind: "user", userId }
}

/** May this user confirm a file of this workspace (organization-level files: any member)? */
export const checkConfirmAccess = (ctx: EmulatorContext, userId: string, workspaceId: string | null, orgId: string) => {
  if (workspaceId === null) {
    if (orgLevel(ctx, orgId, userId) === null) throw noAccess("The token has no access to this organization")
    return
  }
  if (workspaceLevel(ctx, workspaceId, userId) === null) throw noAccess("The token has no access to this workspace")
  if (filesDisabledFor(ctx, workspaceId, userId)) throw filesDisabled()
}
