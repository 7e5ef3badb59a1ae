/** User operations (assumptions.ts USER_SHAPE). */
import { ListUsersInput } from "../../schema/inputs.ts"
import { PAGE_DEFAULT_LIMIT, PAGE_DEFAULT_SKIP, PAGE_MAX_LIMIT } from "../../schema/limits.ts"
import { openStruct } from "../../schema/open.ts"
import type { EmulatorContext, Principal, RestOperation } from "../context.ts"
import { requireWorkspace, callerOrgIds } from "./access.ts"
import { fullName } from "./serialize.ts"
import { all, get } from "./sql.ts"
import { decodeInput, pageLimit } from "./validate.ts"

interface UserRow {
  id: string
  first_name: string
  last_name: string
  email: string
  level: string
}

const userJson = (u: UserRow) => ({
  id: u.id,
  firstName: u.first_name,
  lastName: u.last_name,
  fullName: fullName(u.first_name, u.last_name),
  email: u.email,
  accessLevel: u.level
})

const listUsers = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  const input = decodeInput(ListUsersInput, body)
  const limit = pageLimit(input.limit, PAGE_DEFAULT_LIMIT, PAGE_MAX_LIMIT)
  const skip = input.skip ?? PAGE_DEFAULT_SKIP
  let rows: Array<UserRow>
  if (input.workspaceId !== undefined) {
    const ws = requireWorkspace(ctx, principal, input.workspaceId, "read")
    // Members with their workspace level, plus organization owners and admins (who reach every workspace).
    rows = all<UserRow>(
      ctx.db,
      `SELECT u.id, u.first_name, u.last_name, u.email, COALESCE(wm.level, om.level) AS level
         FROM users u
         LEFT JOIN workspace_members wm ON wm.user_id = u.id AND wm.workspace_id = ?
         LEFT JOIN org_members om ON om.user_id = u.id AND om.org_id = ?
        WHERE wm.user_id IS NOT NULL OR om.level IN ('OWNER', 'ADMIN')
        ORDER BY u.created_at, u.id`,
      ws.id,
      ws.org_id
    )
  } else {
    rows = all<UserRow>(
      ctx.db,
      `SELECT u.id, u.first_name, u.last_name, u.email, om.level AS level
         FROM users u JOIN org_members om ON om.user_id = u.id
        WHERE om.org_id IN (SELECT value FROM json_each(?))
        GROUP BY u.id ORDER BY u.created_at, u.id`,
      JSON.stringify(callerOrgIds(ctx, principal))
    )
  }
  return { users: rows.slice(skip, skip + limit).map(userJson), totalCount: rows.length }
}

export const GetCurrentUserInput = openStruct({})

const getCurrentUser = (ctx: EmulatorContext, principal: Principal, body: Record<string, unknown>) => {
  decodeInput(GetCurrentUserInput, body)
  const orgId = callerOrgIds(ctx, principal)[0] ?? null
  const row = get<UserRow>(
    ctx.db,
    `SELECT u.id, u.first_name, u.last_name, u.email, COALESCE(om.level, 'MEMBER') AS level
       FROM users u LEFT JOIN org_members om ON om.user_id = u.id AND om.org_id = ? WHERE u.id = ?`,
    orgId,
    principal.userId
  )!
  return userJson(row)
}

export const userOperations: ReadonlyArray<RestOperation> = [
  { name: "list-users", write: false, handle: listUsers, input: ListUsersInput, family: "users", summary: "Users of the organization or a workspace: { users, totalCount }" },
  { name: "get-current-user", write: false, handle: getCurrentUser, input: GetCurrentUserInput, family: "users", summary: "The token's user" }
]
