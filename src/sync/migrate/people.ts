/**
 * Custom roles and people of a migration: roles created on the target by name with the
 * toggles the source shows; members invited to the target workspace at their level,
 * following every `inviteUser` rule of the documents before anything is sent:
 * - levels an inviter may assign: OWNER all six; ADMIN all but OWNER; MEMBER: MEMBER,
 *   CLIENT, COMMENT_ONLY, VIEW_ONLY; CLIENT: CLIENT, COMMENT_ONLY, VIEW_ONLY;
 *   COMMENT_ONLY and VIEW_ONLY cannot invite (refused here, nothing sent);
 * - an organization owner added to a workspace is always ADMIN, and ownership is one
 *   slot: a source OWNER is invited as ADMIN;
 * - invitations are to the workspace (`projectId`): organization-level invites are the
 *   OWNER's alone and are never needed to give access to one workspace.
 * The service's answers: `USER_ALREADY_IN_THE_PROJECT` and `ADD_SELF` count as done
 * (already a member); `PLAN_LIMIT_REACHED` is reported with the seats in use and the
 * limit read from its message. Inviting again is harmless (a pending invitation is
 * refreshed), so an invite of unknown outcome is simply sent again.
 * With `--people FILE` (mapping-files.ts) a member the file names, by e-mail or display
 * name, is invited under the target e-mail it gives at their level, or not at all (`skip`).
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import { Schema } from "effect"
import type { GraphqlClientApi } from "../../client/graphql-client.ts"
import { type AccessLevel, accessLevelRank, type GraphqlUser } from "../../schema/users.ts"
import type { PlanOp } from "../../store/journal.ts"
import { type PeopleMap, SKIP } from "../mapping-files.ts"
import type { ExecFailure, Executor } from "../replay.ts"
import { decode } from "../replay-records.ts"

export const PEOPLE_KINDS = { roleCreate: "role.create", personInvite: "person.invite" } as const

/** Role name -> target role id. */
export const roleNamespace = (workspaceId: string) => `role:${workspaceId}`

const Str = Schema.String
export const RoleCreatePayload = Schema.Struct({
  workspaceId: Str,
  name: Str,
  toggles: Schema.Record(Str, Schema.Boolean)
})
export type RoleCreatePayload = typeof RoleCreatePayload.Type

export const InvitePayload = Schema.Struct({ workspaceId: Str, email: Str, accessLevel: Str })
export type InvitePayload = typeof InvitePayload.Type

/** How an invite ended: invited, already a member, or refused by the service (with why). */
export type InviteOutcome =
  | { readonly invited: true }
  | { readonly alreadyMember: string }
  | { readonly refused: string; readonly detail: string; readonly current?: number; readonly limit?: number }

/** Levels each inviter level may assign (`inviteUser` rule 2). */
export const ASSIGNABLE: Readonly<Record<AccessLevel, ReadonlyArray<AccessLevel>>> = {
  OWNER: ["OWNER", "ADMIN", "MEMBER", "CLIENT", "COMMENT_ONLY", "VIEW_ONLY"],
  ADMIN: ["ADMIN", "MEMBER", "CLIENT", "COMMENT_ONLY", "VIEW_ONLY"],
  MEMBER: ["MEMBER", "CLIENT", "COMMENT_ONLY", "VIEW_ONLY"],
  CLIENT: ["CLIENT", "COMMENT_ONLY", "VIEW_ONLY"],
  COMMENT_ONLY: [],
  VIEW_ONLY: []
}

/** Every member of a workspace with their level there. */
export const membersOf = (graphql: GraphqlClientApi, projectId: string) =>
  Effect.gen(function*() {
    const out: Array<GraphqlUser> = []
    for (let skip = 0;; skip += 100) {
      const page = yield* graphql.workspaceUserList({ projectId, first: 100, ...(skip > 0 ? { skip } : {}), withLevel: true })
      const fresh = page.users.filter((u) => !out.some((o) => o.id === u.id))
      out.push(...fresh)
      if (fresh.length === 0 || !page.pageInfo.hasNextPage || out.length >= page.totalCount) return out
    }
  })

export interface PeoplePlan {
  readonly ops: ReadonlyArray<PlanOp>
  readonly source: number
  /** Already members of the target (or the caller): nothing to send. */
  readonly alreadyMember: ReadonlyArray<string>
  /** Refused before sending, by the documented rules. */
  readonly refused: ReadonlyArray<{ readonly email: string; readonly code: string }>
  /** Members the people file maps to `skip`: not invited (their source e-mails). */
  readonly skipped: ReadonlyArray<string>
  /** Source e-mail -> target e-mail or `SKIP`, for the members the people file names. */
  readonly targetOf: ReadonlyMap<string, string>
}

export const inviteKey = (target: string, email: string) => `migrate:${target}:person:${email}`

/** Plans the invites of the source's members into the target workspace (under the e-mails `map` gives them). */
export const planPeople = (source: GraphqlClientApi, target: GraphqlClientApi, sourceWs: string, targetWs: string, map?: PeopleMap) =>
  Effect.gen(function*() {
    const members = yield* membersOf(source, sourceWs)
    const present = new Map((yield* membersOf(target, targetWs)).map((u) => [u.email.toLowerCase(), u] as const))
    const me = yield* target.currentUser()
    const myLevel: AccessLevel = present.get(me.email.toLowerCase())?.projectLevel ?? "VIEW_ONLY"
    const ops: Array<PlanOp> = []
    const alreadyMember: Array<string> = []
    const refused: Array<{ email: string; code: string }> = []
    const skipped: Array<string> = []
    const targetOf = new Map<string, string>()
    for (const m of [...members].sort((a, b) => accessLevelRank(a.projectLevel ?? "MEMBER") - accessLevelRank(b.projectLevel ?? "MEMBER"))) {
      const mapped = map?.target({ email: m.email, name: m.fullName })
      if (mapped !== undefined) targetOf.set(m.email.toLowerCase(), mapped)
      if (mapped === SKIP) {
        skipped.push(m.email.toLowerCase())
        continue
      }
      const email = mapped ?? m.email.toLowerCase()
      if (email === me.email.toLowerCase() || present.has(email)) {
        alreadyMember.push(email)
        continue
      }
      // Ownership is one slot per organization; an owner added to a workspace is ADMIN.
      const level: AccessLevel = m.projectLevel === "OWNER" ? "ADMIN" : m.projectLevel ?? "MEMBER"
      if (!ASSIGNABLE[myLevel].includes(level)) {
        refused.push({ email, code: ASSIGNABLE[myLevel].length === 0 ? `${myLevel}_CANNOT_INVITE` : `${myLevel}_CANNOT_ASSIGN_${level}` })
        continue
      }
      // Two members the file maps onto one e-mail: invited once, at the higher level (members are met highest first).
      if (ops.some((op) => op.key === inviteKey(targetWs, email))) continue
      ops.push({ key: inviteKey(targetWs, email), kind: PEOPLE_KINDS.personInvite, payload: { workspaceId: targetWs, email, accessLevel: level } })
    }
    return { ops, source: members.length, alreadyMember, refused, skipped, targetOf } satisfies PeoplePlan
  })

/** Plans the custom roles the target lacks (by name); none when the source shows no roles. */
export const planRoles = (source: GraphqlClientApi, target: GraphqlClientApi, sourceWs: string, targetWs: string) =>
  Effect.gen(function*() {
    const roles = yield* source.workspaceUserRoles(sourceWs)
    if (Option.isNone(roles)) return { ops: [] as Array<PlanOp>, source: 0, skipped: 0, available: false, names: [] as Array<string> }
    const existing = new Set(Option.getOrElse(yield* target.workspaceUserRoles(targetWs), () => []).map((r) => r.name))
    const ops: Array<PlanOp> = []
    let skipped = 0
    for (const role of roles.value) {
      if (existing.has(role.name)) {
        skipped++
        continue
      }
      const toggles = Object.fromEntries(
        Object.entries(role).filter((e): e is [string, boolean] => typeof e[1] === "boolean")
      )
      ops.push({ key: `migrate:${targetWs}:role:${role.name}`, kind: PEOPLE_KINDS.roleCreate, payload: { workspaceId: targetWs, name: role.name, toggles } })
    }
    return { ops, source: roles.value.length, skipped, available: true, names: roles.value.map((r) => r.name) }
  })

/**
 * The members whose custom role cannot be carried. Which custom role a member holds is
 * shown by no documented read (`workspaceUserList` gives the access level only), so a
 * member is invited at their level, with no `roleId`. When the source has custom roles
 * (or cannot list them), every member invited may have held one: each is named, with the
 * roles, for the user to give on the target. Without custom roles nothing is lost.
 */
export const customRolesNotCarried = (
  roles: { readonly available: boolean; readonly names: ReadonlyArray<string> },
  invites: ReadonlyArray<PlanOp>
) => {
  if (invites.length === 0 || (roles.available && roles.names.length === 0)) return undefined
  const emails = invites.map((op) => (op.payload as InvitePayload).email)
  const held = roles.available
    ? `the source has custom roles (${roles.names.map((n) => JSON.stringify(n)).join(", ")})`
    : "the source may have custom roles (it lists none: workspaceUserRoles)"
  return {
    emails,
    notCarried: {
      what: "members' custom roles",
      count: emails.length,
      why: `${held}, but no documented read shows which member holds one: invited at their access level, give them their role on the target: ${emails.join(", ")}`
    }
  }
}

const failure = (e: { readonly _tag: string; readonly message: string }): ExecFailure => e

/** "Seat limit reached: 5 of 5 seats are in use" -> the two numbers, when the message has them. */
export const seatsOf = (message: string): { current?: number; limit?: number } => {
  const m = /(\d+)\s+of\s+(\d+)/.exec(message)
  return m === null ? {} : { current: Number(m[1]), limit: Number(m[2]) }
}

export const makePeopleExecutors = (graphql: GraphqlClientApi): ReadonlyArray<Executor> => [
  {
    kind: PEOPLE_KINDS.roleCreate,
    execute: (op) =>
      Effect.gen(function*() {
        const p = yield* decode(RoleCreatePayload, op)
        const role = yield* graphql
          .createWorkspaceUserRole({ projectId: p.workspaceId, name: p.name, ...p.toggles })
          .pipe(
            Effect.map(Option.some),
            // Refused (the caller may not manage roles there): reported, not retried forever.
            Effect.catchIf((e) => e._tag === "GraphqlError" && (e as unknown as { code: string }).code === "FORBIDDEN", () => Effect.succeed(Option.none())),
            Effect.mapError(failure)
          )
        if (Option.isNone(role)) return { result: { refused: "FORBIDDEN" }, mappings: [] }
        return { result: { id: role.value.id }, mappings: [{ namespace: roleNamespace(p.workspaceId), sourceKey: p.name, targetId: role.value.id }] }
      }),
    // A role whose answer was lost is found by its name.
    reconcile: (op) =>
      Effect.gen(function*() {
        const p = yield* decode(RoleCreatePayload, op)
        const roles = yield* graphql.workspaceUserRoles(p.workspaceId).pipe(Effect.mapError(failure))
        const found = Option.getOrElse(roles, () => []).find((r) => r.name === p.name)
        return found === undefined
          ? Option.none()
          : Option.some({ result: { id: found.id }, mappings: [{ namespace: roleNamespace(p.workspaceId), sourceKey: p.name, targetId: found.id }] })
      })
  },
  {
    kind: PEOPLE_KINDS.personInvite,
    execute: (op) =>
      Effect.gen(function*() {
        const p = yield* decode(InvitePayload, op)
        const outcome: InviteOutcome = yield* graphql
          .inviteUser({ email: p.email, projectId: p.workspaceId, accessLevel: p.accessLevel as AccessLevel })
          .pipe(
            Effect.as<InviteOutcome>({ invited: true }),
            Effect.catchIf(
              (e) => e._tag === "GraphqlError",
              (e): Effect.Effect<InviteOutcome, ExecFailure> => {
                const { code, serverMessage } = e as unknown as { code: string; serverMessage: string }
                if (code === "USER_ALREADY_IN_THE_PROJECT" || code === "ADD_SELF") return Effect.succeed({ alreadyMember: code })
                if (code === "PLAN_LIMIT_REACHED" || code === "FORBIDDEN") {
                  return Effect.succeed({ refused: code, detail: serverMessage, ...seatsOf(serverMessage) })
                }
                return Effect.fail(failure(e))
              }
            ),
            Effect.mapError(failure)
          )
        return { result: outcome, mappings: [] }
      })
  }
]
