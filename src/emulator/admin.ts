/**
 * Test and rehearsal helpers that reach past the public interface: users with chosen
 * levels, membership and role switches, organization suspension and seat limits, and
 * record churn for incremental-backup tests.
 */
import type { AccessLevel, EmulatorContext } from "./context.ts"
import { insertWorkspace, uniqueSlug } from "./core/workspaces.ts"
import { insertOrganization, insertUser, setOrgMember, setWorkspaceMember, type IssuedToken } from "./core/people.ts"
import { trashRecord } from "./core/records.ts"
import { all, get, run } from "./core/sql.ts"

export interface CreateUserOptions {
  readonly email: string
  readonly firstName: string
  readonly lastName: string
  /** Organization level; default MEMBER. */
  readonly orgLevel?: AccessLevel
  /** Organization; default the seeded one. */
  readonly orgId?: string
  /** Workspace memberships: workspace id to level. */
  readonly workspaces?: Readonly<Record<string, AccessLevel>>
}

export interface EmulatorAdmin {
  /** A further organization (with no members); returns its id. */
  createOrganization(options: { name: string; slug: string }): string
  createUser(options: CreateUserOptions): IssuedToken
  setOrgLevel(userId: string, level: AccessLevel, orgId?: string): void
  setWorkspaceLevel(workspaceId: string, userId: string, level: AccessLevel): void
  removeWorkspaceMember(workspaceId: string, userId: string): void
  setFilesDisabled(workspaceId: string, userId: string, disabled: boolean): void
  banOrganization(orgId?: string, banned?: boolean): void
  /** Seat limit of the organization (null: unlimited). */
  setSeatLimit(seats: number | null, orgId?: string): void
  createWorkspace(options: { name: string; slug?: string; orgId?: string }): { id: string; slug: string }
  /** Bumps `updatedAt` of the first `count` records (list order) of a workspace (default: the first); returns their ids. */
  touchRecords(count: number, workspaceId?: string): Array<string>
  /** Moves records to the trash: the first `count` (list order) or the given ids; returns their ids. */
  deleteRecords(target: number | ReadonlyArray<string>, workspaceId?: string): Array<string>
  /** Number of live (not deleted) records, in one workspace or all. */
  countRecords(workspaceId?: string): number
}

export const makeAdmin = (ctx: EmulatorContext, defaults: { orgId: string; workspaceIds: ReadonlyArray<string> }): EmulatorAdmin => {
  const workspaceOf = (workspaceId?: string) => {
    const id = workspaceId ?? defaults.workspaceIds[0]
    if (id === undefined) throw new Error("No workspace")
    return id
  }
  return {
    createOrganization(options) {
      return insertOrganization(ctx, options)
    },
    createUser(options) {
      return ctx.db.transaction(() => {
        const issued = insertUser(ctx, { email: options.email, firstName: options.firstName, lastName: options.lastName })
        setOrgMember(ctx, options.orgId ?? defaults.orgId, issued.userId, options.orgLevel ?? "MEMBER")
        for (const [workspaceId, level] of Object.entries(options.workspaces ?? {})) {
          setWorkspaceMember(ctx, workspaceId, issued.userId, level)
        }
        return issued
      })()
    },
    setOrgLevel(userId, level, orgId) {
      setOrgMember(ctx, orgId ?? defaults.orgId, userId, level)
    },
    setWorkspaceLevel(workspaceId, userId, level) {
      setWorkspaceMember(ctx, workspaceId, userId, level)
    },
    removeWorkspaceMember(workspaceId, userId) {
      run(ctx.db, "DELETE FROM workspace_members WHERE workspace_id = ? AND user_id = ?", workspaceId, userId)
    },
    setFilesDisabled(workspaceId, userId, disabled) {
      run(ctx.db, "UPDATE workspace_members SET files_disabled = ? WHERE workspace_id = ? AND user_id = ?", disabled ? 1 : 0, workspaceId, userId)
    },
    banOrganization(orgId, banned = true) {
      run(ctx.db, "UPDATE organizations SET banned = ? WHERE id = ?", banned ? 1 : 0, orgId ?? defaults.orgId)
    },
    setSeatLimit(seats, orgId) {
      run(ctx.db, "UPDATE organizations SET seat_limit = ? WHERE id = ?", seats, orgId ?? defaults.orgId)
      ctx.limits.seats = seats
    },
    createWorkspace(options) {
      const owner = get<{ user_id: string }>(
        ctx.db,
        "SELECT user_id FROM org_members WHERE org_id = ? AND level = 'OWNER'",
        options.orgId ?? defaults.orgId
      )
      const row = ctx.db.transaction(() =>
        insertWorkspace(ctx, {
          orgId: options.orgId ?? defaults.orgId,
          name: options.name,
          slug: options.slug ?? uniqueSlug(ctx, options.name),
          creatorId: owner?.user_id ?? null
        })
      )()
      return { id: row.id, slug: row.slug }
    },
    touchRecords(count, workspaceId) {
      const ids = all<{ id: string }>(
        ctx.db,
        "SELECT id FROM records WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY position, id LIMIT ?",
        workspaceOf(workspaceId),
        count
      ).map((r) => r.id)
      const now = ctx.clock.iso()
      ctx.db.transaction(() => {
        for (const id of ids) run(ctx.db, "UPDATE records SET updated_at = ? WHERE id = ?", now, id)
      })()
      return ids
    },
    deleteRecords(target, workspaceId) {
      const ws = workspaceOf(workspaceId)
      const ids =
        typeof target === "number"
          ? all<{ id: string }>(
              ctx.db,
              "SELECT id FROM records WHERE workspace_id = ? AND deleted_at IS NULL ORDER BY position, id LIMIT ?",
              ws,
              target
            ).map((r) => r.id)
          : [...target]
      for (const id of ids) {
        const owner = get<{ workspace_id: string }>(ctx.db, "SELECT workspace_id FROM records WHERE id = ?", id)
        if (owner !== undefined) trashRecord(ctx, owner.workspace_id, id)
      }
      return ids
    },
    countRecords(workspaceId) {
      return workspaceId === undefined
        ? get<{ n: number }>(ctx.db, "SELECT count(*) AS n FROM records WHERE deleted_at IS NULL")!.n
        : get<{ n: number }>(ctx.db, "SELECT count(*) AS n FROM records WHERE deleted_at IS NULL AND workspace_id = ?", workspaceId)!.n
    }
  }
}

