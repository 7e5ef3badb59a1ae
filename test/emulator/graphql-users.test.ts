import { describe, expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import type { AccessLevel } from "../../src/emulator/context.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Emulator, emulatorLayer } from "../support/effect.ts"
import { codeOf, gql, makeUser, upload, UPLOAD_FILE, type Caller } from "./graphql-support.ts"

let h: EmulatorHandle
let ws: string

// The helpers below read the file's emulator, and what the set-up derives from it, from these
// bindings: the layer fills them once the emulator is up and closes it after the last test.
const fileLayer = Layer.effectDiscard(
  Effect.gen(function* () {
    h = yield* Emulator
    ws = h.workspaces[0]!
  })
).pipe(Layer.provideMerge(emulatorLayer({ variant: "reference" })))

const LEVELS: Array<AccessLevel> = ["OWNER", "ADMIN", "MEMBER", "CLIENT", "COMMENT_ONLY", "VIEW_ONLY"]
const INVITE = `mutation($i: InviteUserInput!) { inviteUser(input: $i) }`
let seq = 0
const email = () => `invitee${++seq}.${Math.random().toString(36).slice(2, 7)}@example.test`
const freshWorkspace = () => h.admin.createWorkspace({ name: `Users ${++seq}` }).id

const invite = (i: Record<string, unknown>, caller?: Caller) => gql(h, INVITE, { i }, caller ? { caller } : {})

const levelIn = (workspaceId: string, userId: string) =>
  (h.ctx.db.prepare("SELECT level FROM workspace_members WHERE workspace_id = ? AND user_id = ?").get(workspaceId, userId) as
    | { level: string }
    | undefined)?.level

const invitationOf = (address: string) =>
  h.ctx.db.prepare("SELECT * FROM invitations WHERE lower(email) = lower(?) ORDER BY created_at DESC").get(address) as
    | Record<string, unknown>
    | undefined

// Real HTTP and real waits: the live clock (no TestClock), so timers and time scales run.
layer(fileLayer, { timeout: 30_000, excludeTestServices: true })((it) => {
  describe("users", () => {
    it.effect("R-USER-01: UserAccessLevel has exactly the six levels in descending capability", () => Effect.promise(async () => {
      const r = await gql(h, `{ __type(name: "UserAccessLevel") { enumValues { name } } }`)
      expect(r.body.data?.["__type"].enumValues.map((v: { name: string }) => v.name)).toEqual(LEVELS)
    }))

    it.effect("R-USER-02: workspaceUserList(projectId, first) returns at most `first` users of that workspace", () => Effect.promise(async () => {
      const w = freshWorkspace()
      for (let i = 0; i < 4; i++) makeUser(h, { workspaces: { [w]: "MEMBER" } })
      const outsider = makeUser(h, { workspaces: { [ws]: "MEMBER" } })
      const page = await gql(h, `query($p: String!) { workspaceUserList(projectId: $p, first: 2) { users { id } totalCount } }`, { p: w })
      expect(page.body.data?.["workspaceUserList"].users).toHaveLength(2)
      const all = await gql(h, `query($p: String!) { workspaceUserList(projectId: $p, first: 50) { users { id } } }`, { p: w })
      const ids = all.body.data?.["workspaceUserList"].users.map((u: { id: string }) => u.id)
      expect(ids).not.toContain(outsider.userId)
      expect(ids).toContain(h.ownerUserId)
    }))

    it.effect("R-USER-03: ProjectUserList has users, pageInfo {totalItems, hasNextPage} and totalCount", () => Effect.promise(async () => {
      const w = freshWorkspace()
      for (let i = 0; i < 2; i++) makeUser(h, { workspaces: { [w]: "CLIENT" } })
      const q = `query($p: String!, $f: Int) { workspaceUserList(projectId: $p, first: $f) { users { id } pageInfo { totalItems hasNextPage } totalCount } }`
      const first = (await gql(h, q, { p: w, f: 2 })).body.data?.["workspaceUserList"]
      expect(first.pageInfo).toEqual({ totalItems: 3, hasNextPage: true })
      expect(first.totalCount).toBe(3)
      const whole = (await gql(h, q, { p: w, f: 3 })).body.data?.["workspaceUserList"]
      expect(whole.pageInfo).toEqual({ totalItems: 3, hasNextPage: false })
    }))

    it.effect("R-USER-04: User has id, fullName, email, image {medium} and projectLevel(projectId)", () => Effect.promise(async () => {
      const r = await gql(h, `query($p: String!) { currentUser { id fullName email image { medium } projectLevel(projectId: $p) } }`, { p: ws })
      const me = r.body.data?.["currentUser"]
      expect(me).toMatchObject({ id: h.ownerUserId, fullName: expect.any(String), email: expect.stringContaining("@") })
      const avatar = await fetch(me.image.medium)
      expect(avatar.status).toBe(200)
      expect(avatar.headers.get("content-type")).toBe("image/png")
      expect(LEVELS).toContain(me.projectLevel)
    }))

    it.effect("R-USER-05: projectLevel(projectId) is the user's level in that workspace", () => Effect.promise(async () => {
      const w = freshWorkspace()
      const client = makeUser(h, { workspaces: { [w]: "CLIENT" } })
      const viewer = makeUser(h, { workspaces: { [w]: "VIEW_ONLY" } })
      const r = await gql(h, `query($p: String!) { workspaceUserList(projectId: $p) { users { id projectLevel(projectId: $p) } } }`, { p: w })
      const levels = Object.fromEntries(r.body.data?.["workspaceUserList"].users.map((u: { id: string; projectLevel: string }) => [u.id, u.projectLevel]))
      expect(levels[client.userId]).toBe("CLIENT")
      expect(levels[viewer.userId]).toBe("VIEW_ONLY")
    }))

    it.effect("R-USER-06: assignees lists the workspace users who can be assigned to records", () => Effect.promise(async () => {
      const w = freshWorkspace()
      const member = makeUser(h, { workspaces: { [w]: "MEMBER" } })
      const viewer = makeUser(h, { workspaces: { [w]: "VIEW_ONLY" } })
      const r = await gql(h, `query($p: String!) { assignees(projectId: $p) { id } }`, { p: w })
      const ids = r.body.data?.["assignees"].map((u: { id: string }) => u.id)
      expect(ids).toContain(member.userId)
      expect(ids).not.toContain(viewer.userId)
    }))

    it.effect("R-USER-07: currentUser returns the authenticated user", () => Effect.promise(async () => {
      const someone = makeUser(h, { orgLevel: "MEMBER" })
      const r = await gql(h, `{ currentUser { id email } }`, {}, { caller: someone })
      expect(r.body.data?.["currentUser"]).toEqual({ id: someone.userId, email: someone.email })
    }))

    it.effect("R-USER-08: removeProjectUser returns a MutationResult {success, operationId} and removes the membership", () => Effect.promise(async () => {
      const w = freshWorkspace()
      const member = makeUser(h, { workspaces: { [w]: "MEMBER" } })
      const r = await gql(h, `mutation($i: RemoveProjectUserInput!) { removeProjectUser(input: $i) { success operationId } }`, {
        i: { projectId: w, userId: member.userId }
      })
      expect(r.body.data?.["removeProjectUser"]).toEqual({ success: true, operationId: expect.any(String) })
      expect(levelIn(w, member.userId)).toBeUndefined()
    }))

    it.effect("R-USER-09: removeOrganizationUser returns a nullable Boolean and removes the user from the organization", () => Effect.promise(async () => {
      const r0 = await gql(h, `{ __type(name: "Mutation") { fields { name type { kind name } } } }`)
      const field = r0.body.data?.["__type"].fields.find((f: { name: string }) => f.name === "removeOrganizationUser")
      expect(field.type).toEqual({ kind: "SCALAR", name: "Boolean" })
      const member = makeUser(h, { orgLevel: "MEMBER", workspaces: { [ws]: "MEMBER" } })
      const r = await gql(h, `mutation($i: RemoveOrganizationUserInput!) { removeOrganizationUser(input: $i) }`, {
        i: { companyId: h.orgSlug, userId: member.userId }
      })
      expect(r.body.data?.["removeOrganizationUser"]).toBe(true)
      expect(h.ctx.db.prepare("SELECT 1 FROM org_members WHERE user_id = ?").get(member.userId)).toBeUndefined()
      expect(levelIn(ws, member.userId)).toBeUndefined()
    }))

    it.effect("R-USER-10: a user at level OWNER cannot be removed", () => Effect.promise(async () => {
      const fromOrg = await gql(h, `mutation($i: RemoveOrganizationUserInput!) { removeOrganizationUser(input: $i) }`, {
        i: { companyId: h.org, userId: h.ownerUserId }
      })
      expect(codeOf(fromOrg)).toBe("FORBIDDEN")
      const admin = makeUser(h, { orgLevel: "ADMIN", workspaces: { [ws]: "ADMIN" } })
      const fromWorkspace = await gql(h, `mutation($i: RemoveProjectUserInput!) { removeProjectUser(input: $i) { success } }`, {
        i: { projectId: ws, userId: h.ownerUserId }
      }, { caller: admin })
      expect(codeOf(fromWorkspace)).toBe("FORBIDDEN")
      expect(h.ctx.db.prepare("SELECT level FROM org_members WHERE user_id = ?").get(h.ownerUserId)).toEqual({ level: "OWNER" })
    }))

    it.effect("R-GQL-ERR-17: removing a user who does not exist is USER_NOT_FOUND", () => Effect.promise(async () => {
      const r = await gql(h, `mutation($i: RemoveProjectUserInput!) { removeProjectUser(input: $i) { success } }`, {
        i: { projectId: ws, userId: "000000000000000000000000" }
      })
      expect(codeOf(r)).toBe("USER_NOT_FOUND")
      const org = await gql(h, `mutation($i: RemoveOrganizationUserInput!) { removeOrganizationUser(input: $i) }`, {
        i: { companyId: h.org, userId: "000000000000000000000000" }
      })
      expect(codeOf(org)).toBe("USER_NOT_FOUND")
    }))

    it.effect("R-GQL-ERR-18: removing a user outside the operation's scope is USER_NOT_FOUND", () => Effect.promise(async () => {
      const w = freshWorkspace()
      const elsewhere = makeUser(h, { workspaces: { [ws]: "MEMBER" } })
      const r = await gql(h, `mutation($i: RemoveProjectUserInput!) { removeProjectUser(input: $i) { success } }`, {
        i: { projectId: w, userId: elsewhere.userId }
      })
      expect(codeOf(r)).toBe("USER_NOT_FOUND")
      expect(levelIn(ws, elsewhere.userId)).toBe("MEMBER")
    }))
  })

  describe("inviteUser", () => {
    it.effect("R-INVITE-01: inviteUser takes email, projectId, companyId, projectIds, accessLevel, roleId and returns Boolean! with no selection", () => Effect.promise(async () => {
      const r = await gql(h, `{ __type(name: "InviteUserInput") { inputFields { name } } }`)
      expect(r.body.data?.["__type"].inputFields.map((f: { name: string }) => f.name).sort()).toEqual(
        ["accessLevel", "companyId", "email", "projectId", "projectIds", "roleId"].sort()
      )
      const ok = await invite({ email: email(), projectId: ws, accessLevel: "MEMBER" })
      expect(ok.body.data).toEqual({ inviteUser: true })
      const selected = await gql(h, `mutation($i: InviteUserInput!) { inviteUser(input: $i) { id } }`, {
        i: { email: email(), projectId: ws, accessLevel: "MEMBER" }
      })
      expect(codeOf(selected)).toBe("GRAPHQL_VALIDATION_FAILED")
    }))

    it.effect("R-INVITE-02: with projectId the invitation is to that one workspace", () => Effect.promise(async () => {
      const w = freshWorkspace()
      const address = email()
      await invite({ email: address, projectId: w, accessLevel: "CLIENT" })
      expect(invitationOf(address)).toMatchObject({ workspace_id: w, access_level: "CLIENT", status: "PENDING", project_ids: "[]" })
      const existing = makeUser(h, { orgLevel: "MEMBER" })
      await invite({ email: existing.email, projectId: w, accessLevel: "MEMBER" })
      expect(levelIn(w, existing.userId)).toBe("MEMBER")
      expect(levelIn(ws, existing.userId)).toBeUndefined()
    }))

    it.effect("R-INVITE-03: with companyId (and projectIds) the invitation is organization-level", () => Effect.promise(async () => {
      const w1 = freshWorkspace()
      const w2 = freshWorkspace()
      const address = email()
      expect((await invite({ email: address, companyId: h.orgSlug, projectIds: [w1, w2], accessLevel: "MEMBER" })).body.data).toEqual({ inviteUser: true })
      const row = invitationOf(address)!
      expect(row).toMatchObject({ org_id: h.org, workspace_id: null })
      expect(JSON.parse(String(row["project_ids"]))).toEqual([w1, w2])
      const existing = makeUser(h, { orgLevel: "MEMBER" })
      h.ctx.db.prepare("DELETE FROM org_members WHERE user_id = ?").run(existing.userId)
      await invite({ email: existing.email, companyId: h.org, projectIds: [w1], accessLevel: "CLIENT" })
      expect(h.ctx.db.prepare("SELECT level FROM org_members WHERE user_id = ?").get(existing.userId)).toEqual({ level: "CLIENT" })
      expect(levelIn(w1, existing.userId)).toBe("CLIENT")
    }))

    it.effect("R-INVITE-04: only the organization OWNER may invite at organization level", () => Effect.promise(async () => {
      const admin = makeUser(h, { orgLevel: "ADMIN" })
      expect(codeOf(await invite({ email: email(), companyId: h.org, accessLevel: "MEMBER" }, admin))).toBe("FORBIDDEN")
      expect((await invite({ email: email(), companyId: h.org, accessLevel: "MEMBER" })).body.data).toEqual({ inviteUser: true })
    }))

    const allowedFor = async (inviterLevel: AccessLevel) => {
      const w = freshWorkspace()
      const inviter = makeUser(h, { orgLevel: inviterLevel === "OWNER" ? "ADMIN" : "MEMBER", workspaces: { [w]: inviterLevel } })
      const allowed: Array<AccessLevel> = []
      for (const level of LEVELS) {
        const r = await invite({ email: email(), projectId: w, accessLevel: level }, inviter)
        if (r.body.data?.["inviteUser"] === true) allowed.push(level)
        else expect(codeOf(r)).toBe("FORBIDDEN")
      }
      return allowed
    }

    it.effect("R-INVITE-05: an OWNER may assign all six levels", () => Effect.promise(async () => {
      expect(await allowedFor("OWNER")).toEqual(LEVELS)
    }))

    it.effect("R-INVITE-06: an ADMIN may assign every level but OWNER", () => Effect.promise(async () => {
      expect(await allowedFor("ADMIN")).toEqual(["ADMIN", "MEMBER", "CLIENT", "COMMENT_ONLY", "VIEW_ONLY"])
    }))

    it.effect("R-INVITE-07: a MEMBER may assign MEMBER, CLIENT, COMMENT_ONLY or VIEW_ONLY", () => Effect.promise(async () => {
      expect(await allowedFor("MEMBER")).toEqual(["MEMBER", "CLIENT", "COMMENT_ONLY", "VIEW_ONLY"])
    }))

    it.effect("R-INVITE-08: a CLIENT may assign CLIENT, COMMENT_ONLY or VIEW_ONLY", () => Effect.promise(async () => {
      expect(await allowedFor("CLIENT")).toEqual(["CLIENT", "COMMENT_ONLY", "VIEW_ONLY"])
    }))

    it.effect("R-INVITE-09: COMMENT_ONLY and VIEW_ONLY users cannot invite", () => Effect.promise(async () => {
      expect(await allowedFor("COMMENT_ONLY")).toEqual([])
      expect(await allowedFor("VIEW_ONLY")).toEqual([])
    }))

    it.effect("R-INVITE-10: an existing organization owner added to a workspace is always ADMIN", () => Effect.promise(async () => {
      for (const level of ["MEMBER", "VIEW_ONLY"] as const) {
        const w = freshWorkspace()
        h.ctx.db.prepare("DELETE FROM workspace_members WHERE workspace_id = ? AND user_id = ?").run(w, h.ownerUserId)
        const admin = makeUser(h, { orgLevel: "ADMIN", workspaces: { [w]: "ADMIN" } })
        const r = await invite({ email: (h.ctx.db.prepare("SELECT email FROM users WHERE id = ?").get(h.ownerUserId) as { email: string }).email, projectId: w, accessLevel: level }, admin)
        expect(r.body.data).toEqual({ inviteUser: true })
        expect(levelIn(w, h.ownerUserId)).toBe("ADMIN")
      }
    }))

    it.effect("R-LIMIT-10: an organization keeps one owner: an OWNER invited at organization level does not become a second owner", () => Effect.promise(async () => {
      const existing = makeUser(h, { orgLevel: "MEMBER" })
      h.ctx.db.prepare("DELETE FROM org_members WHERE user_id = ?").run(existing.userId)
      await invite({ email: existing.email, companyId: h.org, accessLevel: "OWNER" })
      const owners = h.ctx.db.prepare("SELECT user_id FROM org_members WHERE org_id = ? AND level = 'OWNER'").all(h.org)
      expect(owners).toEqual([{ user_id: h.ownerUserId }])
    }))

    it.effect("R-GQL-ERR-13: inviting above one's own level is FORBIDDEN", () => Effect.promise(async () => {
      const w = freshWorkspace()
      const member = makeUser(h, { workspaces: { [w]: "MEMBER" } })
      const r = await invite({ email: email(), projectId: w, accessLevel: "ADMIN" }, member)
      expect(codeOf(r)).toBe("FORBIDDEN")
    }))

    it.effect("R-GQL-ERR-14: an organization-level invitation by a non-OWNER is FORBIDDEN", () => Effect.promise(async () => {
      const member = makeUser(h, { orgLevel: "MEMBER" })
      expect(codeOf(await invite({ email: email(), companyId: h.org, accessLevel: "VIEW_ONLY" }, member))).toBe("FORBIDDEN")
    }))

    it.effect("R-GQL-ERR-15: inviting someone already in the workspace is USER_ALREADY_IN_THE_PROJECT", () => Effect.promise(async () => {
      const member = makeUser(h, { workspaces: { [ws]: "MEMBER" } })
      expect(codeOf(await invite({ email: member.email.toUpperCase(), projectId: ws, accessLevel: "MEMBER" }))).toBe("USER_ALREADY_IN_THE_PROJECT")
    }))

    it.effect("R-GQL-ERR-16: inviting one's own address is ADD_SELF", () => Effect.promise(async () => {
      const me = makeUser(h, { orgLevel: "MEMBER", workspaces: { [ws]: "ADMIN" } })
      expect(codeOf(await invite({ email: me.email, projectId: ws, accessLevel: "MEMBER" }, me))).toBe("ADD_SELF")
    }))

    it.effect("R-GQL-ERR-19: a roleId that does not exist in the target workspace is PROJECT_USER_ROLE_NOT_FOUND", () => Effect.promise(async () => {
      const w = freshWorkspace()
      const other = freshWorkspace()
      const role = (await gql(h, `mutation($i: CreateWorkspaceUserRoleInput!) { createWorkspaceUserRole(input: $i) { id } }`, {
        i: { projectId: other, name: "Elsewhere" }
      })).body.data?.["createWorkspaceUserRole"].id
      expect(codeOf(await invite({ email: email(), projectId: w, accessLevel: "MEMBER", roleId: role }))).toBe("PROJECT_USER_ROLE_NOT_FOUND")
      expect(codeOf(await invite({ email: email(), projectId: w, accessLevel: "MEMBER", roleId: "nope" }))).toBe("PROJECT_USER_ROLE_NOT_FOUND")
      expect((await invite({ email: email(), projectId: other, accessLevel: "MEMBER", roleId: role })).body.data).toEqual({ inviteUser: true })
    }))

    it.effect("R-GQL-ERR-07: an invitation beyond the seat limit is PLAN_LIMIT_REACHED, reporting current and limit", () => Effect.promise(async () => {
      const used = (h.ctx.db.prepare(
        "SELECT (SELECT count(*) FROM org_members WHERE org_id = ?) + (SELECT count(DISTINCT lower(email)) FROM invitations WHERE org_id = ? AND status = 'PENDING') AS n"
      ).get(h.org, h.org) as { n: number }).n
      h.admin.setSeatLimit(used + 1)
      try {
        expect((await invite({ email: email(), projectId: ws, accessLevel: "MEMBER" })).body.data).toEqual({ inviteUser: true })
        const r = await invite({ email: email(), projectId: ws, accessLevel: "MEMBER" })
        expect(codeOf(r)).toBe("PLAN_LIMIT_REACHED")
        expect(r.body.errors?.[0]?.message).toContain(`${used + 1} of ${used + 1}`)
        // Someone already in the organization needs no new seat.
        const inOrg = makeUser(h, { orgLevel: "MEMBER" })
        expect((await invite({ email: inOrg.email, projectId: ws, accessLevel: "MEMBER" })).body.data).toEqual({ inviteUser: true })
      } finally {
        h.admin.setSeatLimit(null)
      }
    }))
  })

  describe("invitations", () => {
    const LIST = `query($p: String, $pending: Boolean) { invitations(projectId: $p, pending: $pending) { id email accessLevel expiredAt invitedBy { fullName } } }`

    it.effect("R-INVITE-11: invitations(projectId) lists that workspace's invitations", () => Effect.promise(async () => {
      const w = freshWorkspace()
      const a = email()
      await invite({ email: a, projectId: w, accessLevel: "MEMBER" })
      await invite({ email: email(), projectId: ws, accessLevel: "MEMBER" })
      const r = await gql(h, LIST, { p: w })
      expect(r.body.data?.["invitations"].map((i: { email: string }) => i.email)).toEqual([a])
    }))

    it.effect("R-INVITE-12: pending: true returns only unaccepted invitations", () => Effect.promise(async () => {
      const w = freshWorkspace()
      const pending = email()
      await invite({ email: pending, projectId: w, accessLevel: "MEMBER" })
      const existing = makeUser(h, { orgLevel: "MEMBER" })
      await invite({ email: existing.email, projectId: w, accessLevel: "MEMBER" })
      const all = await gql(h, LIST, { p: w })
      expect(all.body.data?.["invitations"].map((i: { email: string }) => i.email).sort()).toEqual([pending, existing.email].sort())
      const onlyPending = await gql(h, LIST, { p: w, pending: true })
      expect(onlyPending.body.data?.["invitations"].map((i: { email: string }) => i.email)).toEqual([pending])
    }))

    it.effect("R-INVITE-13: myInvitations returns the invitations addressed to the caller", () => Effect.promise(async () => {
      const address = email()
      await invite({ email: address, projectId: ws, accessLevel: "CLIENT" })
      // The invitee signs up later (same address, another case).
      const invitee = h.admin.createUser({ email: address.toUpperCase(), firstName: "New", lastName: "Comer" })
      const r = await gql(h, `{ myInvitations { email accessLevel } }`, {}, { caller: invitee })
      expect(r.body.data?.["myInvitations"]).toEqual([{ email: address, accessLevel: "CLIENT" }])
      const mine = await gql(h, `{ myInvitations { id } }`)
      expect(mine.body.data?.["myInvitations"]).toEqual([])
    }))

    it.effect("R-INVITE-14: Invitation has id, email, accessLevel, expiredAt and invitedBy {fullName}", () => Effect.promise(async () => {
      const address = email()
      await invite({ email: address, projectId: ws, accessLevel: "VIEW_ONLY" })
      const r = await gql(h, LIST, { p: ws, pending: true })
      const inv = r.body.data?.["invitations"].find((i: { email: string }) => i.email === address)
      const ownerName = h.ctx.db.prepare("SELECT first_name || ' ' || last_name AS n FROM users WHERE id = ?").get(h.ownerUserId) as { n: string }
      expect(inv).toEqual({ id: expect.any(String), email: address, accessLevel: "VIEW_ONLY", expiredAt: expect.any(String), invitedBy: { fullName: ownerName.n } })
      expect(Date.parse(inv.expiredAt)).toBeGreaterThan(Date.now())
    }))

    it.effect("R-INVITE-15: resendInvitation keeps it pending, re-sends the email, refreshes the expiry and returns it", () => Effect.promise(async () => {
      const address = email()
      await invite({ email: address, projectId: ws, accessLevel: "MEMBER" })
      const row = invitationOf(address)!
      h.ctx.db.prepare("UPDATE invitations SET expired_at = ? WHERE id = ?").run("2020-01-01T00:00:00.000Z", row["id"])
      const r = await gql(h, `mutation($id: String!) { resendInvitation(id: $id) { id email expiredAt } }`, { id: row["id"] })
      expect(r.body.data?.["resendInvitation"]).toMatchObject({ id: row["id"], email: address })
      expect(Date.parse(r.body.data?.["resendInvitation"].expiredAt)).toBeGreaterThan(Date.now())
      expect(invitationOf(address)).toMatchObject({ status: "PENDING" })
      const mails = h.ctx.db.prepare("SELECT kind FROM email_outbox WHERE ref_id = ? ORDER BY created_at").all(row["id"])
      expect(mails).toEqual([{ kind: "INVITATION" }, { kind: "INVITATION_RESENT" }])
    }))

    it.effect("R-INVITE-16: cancelInvitation revokes a pending invitation and returns true", () => Effect.promise(async () => {
      const address = email()
      await invite({ email: address, projectId: ws, accessLevel: "MEMBER" })
      const id = invitationOf(address)!["id"]
      const r = await gql(h, `mutation($id: String!) { cancelInvitation(id: $id) }`, { id })
      expect(r.body.data).toEqual({ cancelInvitation: true })
      expect(invitationOf(address)).toMatchObject({ status: "REVOKED" })
      const listed = await gql(h, LIST, { p: ws })
      expect(listed.body.data?.["invitations"].map((i: { id: string }) => i.id)).not.toContain(id)
      expect(codeOf(await gql(h, `mutation($id: String!) { resendInvitation(id: $id) { id } }`, { id }))).toBe("INVITATION_NOT_FOUND")
    }))
  })

  describe("custom roles", () => {
    const ROLE = "id name projectId isRecordsEnabled canCreateRecords canDeleteRecords isFilesEnabled"

    it.effect("R-ROLE-01: a custom role is scoped to the workspace it was created in", () => Effect.promise(async () => {
      const w = freshWorkspace()
      const created = await gql(h, `mutation($i: CreateWorkspaceUserRoleInput!) { createWorkspaceUserRole(input: $i) { ${ROLE} } }`, {
        i: { projectId: w, name: "Reviewer" }
      })
      const role = created.body.data?.["createWorkspaceUserRole"]
      expect(role.projectId).toBe(w)
      const inW = await gql(h, `query($p: String!) { workspaceUserRoles(projectId: $p) { id } }`, { p: w })
      expect(inW.body.data?.["workspaceUserRoles"]).toEqual([{ id: role.id }])
      const inOther = await gql(h, `query($p: String!) { workspaceUserRoles(projectId: $p) { id } }`, { p: ws })
      expect(inOther.body.data?.["workspaceUserRoles"].map((r: { id: string }) => r.id)).not.toContain(role.id)
    }))

    it.effect("R-ROLE-02: createWorkspaceUserRole takes projectId, name and Boolean toggles and returns a ProjectUserRole", () => Effect.promise(async () => {
      const r = await gql(h, `mutation($i: CreateWorkspaceUserRoleInput!) { createWorkspaceUserRole(input: $i) { ${ROLE} } }`, {
        i: { projectId: ws, name: "Limited", isRecordsEnabled: true, canCreateRecords: false, canDeleteRecords: false }
      })
      expect(r.body.data?.["createWorkspaceUserRole"]).toMatchObject({
        name: "Limited",
        isRecordsEnabled: true,
        canCreateRecords: false,
        canDeleteRecords: false,
        isFilesEnabled: true
      })
    }))

    it.effect("R-ROLE-03: the toggles are flat input fields, with no nested permissions object", () => Effect.promise(async () => {
      const r = await gql(h, `{ __type(name: "CreateWorkspaceUserRoleInput") { inputFields { name type { kind ofType { kind } } } } }`)
      const fields = r.body.data?.["__type"].inputFields as Array<{ name: string; type: { kind: string; ofType: { kind: string } | null } }>
      expect(fields.map((f) => f.name)).toEqual(expect.arrayContaining(["projectId", "name", "isRecordsEnabled", "canCreateRecords", "canDeleteRecords"]))
      for (const f of fields) expect([f.type.kind, f.type.ofType?.kind]).not.toContain("INPUT_OBJECT")
      const nested = await gql(h, `mutation { createWorkspaceUserRole(input: { projectId: "${ws}", name: "x", permissions: { canCreateRecords: true } }) { id } }`)
      expect(codeOf(nested)).toBe("GRAPHQL_VALIDATION_FAILED")
    }))

    it.effect("R-ROLE-04: ProjectUserRole has id, name, canCreateRecords and canDeleteRecords", () => Effect.promise(async () => {
      const r = await gql(h, `{ __type(name: "ProjectUserRole") { fields { name } } }`)
      expect(r.body.data?.["__type"].fields.map((f: { name: string }) => f.name)).toEqual(
        expect.arrayContaining(["id", "name", "canCreateRecords", "canDeleteRecords"])
      )
    }))

    it.effect("R-ROLE-05: updateWorkspaceUserRole, deleteWorkspaceUserRole, workspaceUserRole and workspaceUserRoles work", () => Effect.promise(async () => {
      const w = freshWorkspace()
      const id = (await gql(h, `mutation($i: CreateWorkspaceUserRoleInput!) { createWorkspaceUserRole(input: $i) { id } }`, {
        i: { projectId: w, name: "Draft" }
      })).body.data?.["createWorkspaceUserRole"].id
      const updated = await gql(h, `mutation($i: UpdateWorkspaceUserRoleInput!) { updateWorkspaceUserRole(input: $i) { ${ROLE} } }`, {
        i: { id, name: "Final", canDeleteRecords: false }
      })
      expect(updated.body.data?.["updateWorkspaceUserRole"]).toMatchObject({ id, name: "Final", canDeleteRecords: false, canCreateRecords: true })
      const one = await gql(h, `query($id: String!) { workspaceUserRole(id: $id) { id name } }`, { id })
      expect(one.body.data?.["workspaceUserRole"]).toEqual({ id, name: "Final" })
      const list = await gql(h, `query($p: String!) { workspaceUserRoles(projectId: $p) { id name } }`, { p: w })
      expect(list.body.data?.["workspaceUserRoles"]).toEqual([{ id, name: "Final" }])
      expect((await gql(h, `mutation($id: String!) { deleteWorkspaceUserRole(id: $id) }`, { id })).body.data).toEqual({ deleteWorkspaceUserRole: true })
      expect(codeOf(await gql(h, `query($id: String!) { workspaceUserRole(id: $id) { id } }`, { id }))).toBe("PROJECT_USER_ROLE_NOT_FOUND")
    }))

    it.effect("R-GQL-ERR-08: a role with file uploads disabled makes its members' uploads FILES_DISABLED_FOR_ROLE", () => Effect.promise(async () => {
      const w = freshWorkspace()
      const role = (await gql(h, `mutation($i: CreateWorkspaceUserRoleInput!) { createWorkspaceUserRole(input: $i) { id } }`, {
        i: { projectId: w, name: "No files", canUploadFiles: false }
      })).body.data?.["createWorkspaceUserRole"].id
      const existing = makeUser(h, { orgLevel: "MEMBER" })
      await invite({ email: existing.email, projectId: w, accessLevel: "MEMBER", roleId: role })
      const up = () =>
        upload(h, UPLOAD_FILE, { input: { file: null, companyId: h.org, projectId: w } }, [{ path: "variables.input.file", name: "r.txt", bytes: "r" }], {
          caller: existing
        })
      expect(codeOf(await up())).toBe("FILES_DISABLED_FOR_ROLE")
      await gql(h, `mutation($i: UpdateWorkspaceUserRoleInput!) { updateWorkspaceUserRole(input: $i) { id } }`, { i: { id: role, canUploadFiles: true } })
      expect((await up()).body.errors).toBeUndefined()
    }))
  })
})
