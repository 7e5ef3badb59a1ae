/**
 * Deterministic seeds: the same options give the same ids, names and content.
 * - empty: one organization, one OWNER user with tokens, one workspace with one list;
 * - demo: "Acme Studio" with three users, two workspaces and ~60 varied records;
 * - sized: W workspaces of N records, inserted in one transaction with prepared statements.
 * Each area then seeds its own part (files come from the uploads area).
 */
import { CUSTOM_FIELD_TYPES } from "../schema/assumptions.ts"
import type { EmulatorArea, EmulatorContext, SeedPlan } from "./context.ts"
import { Prng } from "./ids.ts"
import { insertList } from "./core/lists.ts"
import { insertOrganization, insertUser, setOrgMember, setWorkspaceMember, type IssuedToken } from "./core/people.ts"
import { all, get, run } from "./core/sql.ts"
import { insertTag } from "./core/tags.ts"
import { insertWorkspace } from "./core/workspaces.ts"
import { insertComment, insertRecord, POSITION_STEP, recordAction } from "./core/writes.ts"
import { textToHtml } from "./core/html.ts"
import type { SeedShape } from "./options.ts"

export interface SeedResult {
  readonly orgId: string
  readonly orgSlug: string
  readonly workspaceIds: ReadonlyArray<string>
  readonly owner: IssuedToken
}

const MINUTE = 60_000

const isoAt = (ms: number) => new Date(ms).toISOString()

const TAG_COLORS = ["#e74c3c", "#3498db", "#2ecc71", "#f1c40f", "#9b59b6"]

/** Records of a sized seed: cheap, varied enough for filters (done, archived, assignees, tags). */
const seedSized = (ctx: EmulatorContext, shape: SeedShape, orgId: string, owner: IssuedToken, base: number): Array<string> => {
  const member = insertUser(ctx, { email: "member@load.test", firstName: "Morgan", lastName: "Member", at: isoAt(base - 10 * MINUTE) })
  setOrgMember(ctx, orgId, member.userId, "MEMBER", isoAt(base - 10 * MINUTE))
  const prng = new Prng(42)
  const workspaceIds: Array<string> = []
  const total = shape.workspaces * shape.recordsPerWorkspace
  let n = 0
  for (let w = 1; w <= shape.workspaces; w++) {
    const at = isoAt(base - (total + 1000 + shape.workspaces - w) * 1000)
    const ws = insertWorkspace(ctx, { orgId, name: `Workspace ${w}`, slug: `ws-${w}`, creatorId: owner.userId, at, firstList: null })
    setWorkspaceMember(ctx, ws.id, member.userId, "MEMBER", at)
    workspaceIds.push(ws.id)
    const lists = ["Backlog", "In progress", "Done"].map((title) => insertList(ctx, ws.id, title, at))
    const tags = ["bug", "feature", "urgent", "later", "design"].map((title, i) => insertTag(ctx, ws.id, title, TAG_COLORS[i]!, at))
    for (let i = 0; i < shape.recordsPerWorkspace; i++) {
      const createdMs = base - (total - n) * 1000
      n++
      const list = lists[i % lists.length]!
      const roll = prng.next()
      const assignees = roll % 3 === 0 ? [owner.userId] : roll % 3 === 1 ? [member.userId] : []
      const tagIds = roll % 5 === 0 ? [] : [tags[roll % tags.length]!.id]
      const { id } = insertRecord(ctx, {
        workspaceId: ws.id,
        listId: list.id,
        title: `Record ${w}-${i + 1}`,
        text: i % 4 === 0 ? `Notes for record ${w}-${i + 1}` : "",
        html: i % 4 === 0 ? `<p>Notes for record ${w}-${i + 1}</p>` : "",
        done: list.title === "Done" || roll % 7 === 0,
        archived: roll % 50 === 0,
        position: (i + 1) * POSITION_STEP,
        duedAt: roll % 4 === 0 ? { iso: `${isoAt(createdMs + 7 * 86_400_000).slice(0, 10)}T00:00:00.000Z`, allDay: true } : null,
        createdBy: owner.userId,
        createdAt: isoAt(createdMs),
        assigneeIds: assignees,
        tagIds
      })
      recordAction(ctx, { workspaceId: ws.id, recordId: id, userId: owner.userId, type: "CREATE", newValue: `Record ${w}-${i + 1}`, at: isoAt(createdMs) })
    }
  }
  return workspaceIds
}

const DEMO_TITLES = [
  "Draft the launch announcement",
  "Fix login redirect loop on Safari",
  "Café menu photos — retake in daylight",
  "Über-wide hero banner for the München office page",
  "数据迁移计划 (data migration plan)",
  "Prepare Q3 roadmap review 🚀",
  "Résumé parser: handle accented names like Zoë and Søren",
  "A deliberately long title that keeps going to check that nothing in the pipeline truncates, wraps or otherwise mangles titles which are far longer than anyone would sensibly type into a task tracker on a Monday morning",
  "Update privacy policy (GDPR §13)",
  "Set up staging database backups",
  "Write onboarding checklist for new designers",
  "Investigate 500s on /api/v2/orders",
  "Renew TLS certificates",
  "Client feedback: \"make the logo pop\"",
  "Plan team offsite in Kraków",
  "Migrate icons to SVG sprites",
  "Accessibility audit: contrast & focus states",
  "Translate FAQ into Español, Français, Deutsch",
  "Kick-off meeting notes <draft>",
  "Archive old campaign assets",
  "Ship dark mode",
  "Benchmark image CDN options",
  "Refactor checkout form validation",
  "Customer interview #7 — Ōsaka retailer",
  "Emoji reactions in comments 👍🎉",
  "Quarterly invoice reconciliation",
  "Replace cron jobs with scheduled workers",
  "Hire a part-time copywriter",
  "Polish 404 page copy",
  "Sunset the legacy export endpoint"
]

const DEMO_DESCRIPTIONS = [
  "<p>Keep it <strong>short</strong> and link the changelog.</p><ul><li>Headline</li><li>Three bullets</li></ul>",
  "<p>Steps to reproduce:</p><ol><li>Open Safari 17</li><li>Sign in</li></ol><p>Expected: dashboard. Actual: loop.</p>",
  "<p>See <a href=\"https://example.com/brief\">the brief</a>.</p>",
  "<blockquote>Make it feel friendly, not corporate.</blockquote><p>— the client</p>",
  ""
]

/** The demo seed: a readable organization with varied records. */
const seedDemo = (ctx: EmulatorContext, orgId: string, owner: IssuedToken, base: number): Array<string> => {
  const day = 86_400_000
  const admin = insertUser(ctx, { email: "grace@acme.test", firstName: "Grace", lastName: "Hopper", at: isoAt(base - 90 * day) })
  const member = insertUser(ctx, { email: "linus@acme.test", firstName: "Linus", lastName: "Øberg", at: isoAt(base - 80 * day) })
  setOrgMember(ctx, orgId, admin.userId, "ADMIN", isoAt(base - 90 * day))
  setOrgMember(ctx, orgId, member.userId, "MEMBER", isoAt(base - 80 * day))
  const people = [owner.userId, admin.userId, member.userId]
  const workspaceIds: Array<string> = []
  const specs = [
    { name: "Website Relaunch", slug: "website", lists: ["Backlog", "In progress", "Review", "Done"] },
    { name: "Mobile App", slug: "mobile", lists: ["Ideas", "Doing", "Done"] }
  ]
  let recordNo = 0
  specs.forEach((spec, w) => {
    const at = isoAt(base - (70 - w) * day)
    const ws = insertWorkspace(ctx, { orgId, name: spec.name, slug: spec.slug, creatorId: owner.userId, at, firstList: null })
    workspaceIds.push(ws.id)
    setWorkspaceMember(ctx, ws.id, admin.userId, "ADMIN", at)
    setWorkspaceMember(ctx, ws.id, member.userId, "MEMBER", at)
    const lists = spec.lists.map((title) => insertList(ctx, ws.id, title, at))
    const tags = [
      insertTag(ctx, ws.id, "bug", "#e74c3c", at),
      insertTag(ctx, ws.id, "feature", "#3498db", at),
      insertTag(ctx, ws.id, "urgent", "#f1c40f", at),
      insertTag(ctx, ws.id, "design", null, at)
    ]
    // One custom field of each type (assumptions.ts CUSTOM_FIELD_TYPES).
    const fields = CUSTOM_FIELD_TYPES.map((type, i) => {
      const id = ctx.ids.id()
      const columns =
        type === "TABLE"
          ? [
              { id: ctx.ids.id(), name: "Item", type: "TEXT" },
              { id: ctx.ids.id(), name: "Hours", type: "NUMBER" }
            ]
          : []
      run(
        ctx.db,
        "INSERT INTO custom_fields (id, workspace_id, name, type, position, table_columns, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        id,
        ws.id,
        { TEXT: "Notes", NUMBER: "Estimate", CHECKBOX: "Approved", DATE: "Launch date", SELECT_SINGLE: "Priority", SELECT_MULTI: "Platforms", FILE: "Attachments", TABLE: "Time log" }[type],
        type,
        (i + 1) * POSITION_STEP,
        JSON.stringify(columns),
        at,
        at
      )
      const options =
        type === "SELECT_SINGLE"
          ? ["Low", "Medium", "High"]
          : type === "SELECT_MULTI"
            ? ["iOS", "Android", "Web"]
            : []
      const optionIds = options.map((title, j) => {
        const optionId = ctx.ids.id()
        run(
          ctx.db,
          "INSERT INTO custom_field_options (id, custom_field_id, title, color, position) VALUES (?, ?, ?, ?, ?)",
          optionId,
          id,
          title,
          TAG_COLORS[j] ?? null,
          j + 1
        )
        return optionId
      })
      return { id, type, columns, optionIds }
    })
    for (let i = 0; i < 30; i++) {
      const title = DEMO_TITLES[i]!
      const createdMs = base - (60 - recordNo) * day + w * 1000
      recordNo++
      const html = DEMO_DESCRIPTIONS[i % DEMO_DESCRIPTIONS.length]!
      const list = lists[i % lists.length]!
      const done = list.title === "Done"
      const { id } = insertRecord(ctx, {
        workspaceId: ws.id,
        listId: list.id,
        title: w === 1 ? `${title} (app)` : title,
        text: html === "" ? "" : html.replace(/<[^>]+>/g, " ").replace(/\s+/g, " ").trim(),
        html,
        done,
        archived: i % 11 === 10,
        position: (i + 1) * POSITION_STEP,
        startedAt: i % 5 === 1 ? { iso: isoAt(createdMs + day + 9 * 3_600_000), allDay: false } : null,
        duedAt: i % 3 === 0 ? { iso: `${isoAt(createdMs + 14 * day).slice(0, 10)}T00:00:00.000Z`, allDay: true } : null,
        color: i % 6 === 0 ? "#ff8800" : null,
        createdBy: people[i % 3]!,
        createdAt: isoAt(createdMs),
        updatedAt: isoAt(createdMs + (i % 4) * day),
        assigneeIds: i % 4 === 3 ? [] : people.slice(0, (i % 3) + 1),
        tagIds: tags.filter((_, t) => (i + t) % 3 === 0).map((t) => t.id)
      })
      recordAction(ctx, { workspaceId: ws.id, recordId: id, userId: people[i % 3]!, type: "CREATE", newValue: title, at: isoAt(createdMs) })
      if (i % 2 === 0) {
        const checklistId = ctx.ids.id()
        run(
          ctx.db,
          "INSERT INTO checklists (id, record_id, title, position, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)",
          checklistId,
          id,
          "Steps",
          POSITION_STEP,
          isoAt(createdMs),
          isoAt(createdMs)
        )
        ;["Outline", "Review with team", "Ship it"].forEach((itemTitle, k) =>
          run(
            ctx.db,
            "INSERT INTO checklist_items (id, checklist_id, title, done, position, dued_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            ctx.ids.id(),
            checklistId,
            itemTitle,
            k < i % 4 ? 1 : 0,
            (k + 1) * POSITION_STEP,
            k === 2 ? isoAt(createdMs + 10 * day) : null,
            isoAt(createdMs),
            isoAt(createdMs)
          )
        )
      }
      // Custom values on every third record: one of each type.
      if (i % 3 === 0) {
        for (const f of fields) {
          const value = {
            text: f.type === "TEXT" ? `Note ${i}` : f.type === "DATE" ? isoAt(createdMs + 30 * day) : null,
            number: f.type === "NUMBER" ? (i % 8) + 0.5 : null,
            checked: f.type === "CHECKBOX" ? (i % 2 === 0 ? 1 : 0) : null,
            option_ids:
              f.type === "SELECT_SINGLE" ? JSON.stringify([f.optionIds[i % 3]]) : f.type === "SELECT_MULTI" ? JSON.stringify(f.optionIds.slice(0, 2)) : null,
            table_rows:
              f.type === "TABLE"
                ? JSON.stringify([
                    { position: 1, cells: [{ columnId: f.columns[0]!.id, value: "Design" }, { columnId: f.columns[1]!.id, value: 3 }] },
                    { position: 2, cells: [{ columnId: f.columns[0]!.id, value: "Build" }, { columnId: f.columns[1]!.id, value: 5.5 }] }
                  ])
                : null
          }
          if (f.type === "FILE") continue
          run(
            ctx.db,
            "INSERT INTO record_custom_values (record_id, custom_field_id, text, number, checked, option_ids, table_rows, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            id,
            f.id,
            value.text,
            value.number,
            value.checked,
            value.option_ids,
            value.table_rows,
            isoAt(createdMs)
          )
        }
      }
      if (i % 4 === 1) {
        insertComment(ctx, {
          workspaceId: ws.id,
          recordId: id,
          userId: people[(i + 1) % 3]!,
          html: textToHtml(`Looks good — one question about "${title.slice(0, 20)}" & the timeline.`),
          text: `Looks good — one question about "${title.slice(0, 20)}" & the timeline.`,
          at: isoAt(createdMs + 2 * day)
        })
      }
      // The first record has a long history: more than 24 activity items (comments and actions).
      if (w === 0 && i === 0) {
        for (let k = 0; k < 15; k++) {
          const text = `Update ${k + 1}: progress noted.`
          insertComment(ctx, { workspaceId: ws.id, recordId: id, userId: people[k % 3]!, html: `<p>${text}</p>`, text, at: isoAt(createdMs + (k + 1) * 3_600_000) })
          recordAction(ctx, {
            workspaceId: ws.id,
            recordId: id,
            userId: people[(k + 1) % 3]!,
            type: k % 2 === 0 ? "UPDATE_TITLE" : "UPDATE_DUE_DATE",
            oldValue: k % 2 === 0 ? `${title} v${k}` : null,
            newValue: k % 2 === 0 ? `${title} v${k + 1}` : isoAt(createdMs + (k + 10) * day),
            at: isoAt(createdMs + (k + 1) * 3_600_000 + 60_000)
          })
        }
        recordAction(ctx, { workspaceId: ws.id, recordId: id, userId: owner.userId, type: "ADD_ASSIGNEE", affectedUserId: member.userId, at: isoAt(createdMs + 20 * 3_600_000) })
      }
    }
  })
  return workspaceIds
}

/** Seeds the database and each area's part; returns the organization, workspaces and owner. */
export const seed = (ctx: EmulatorContext, shape: SeedShape, areas: ReadonlyArray<EmulatorArea>): SeedResult => {
  const base = ctx.clock.now()
  const result = ctx.db.transaction((): SeedResult => {
    const demo = shape.kind === "demo"
    const orgName = demo ? "Acme Studio" : shape.kind === "sized" ? "Load Test Org" : "Emulator Org"
    const orgSlug = demo ? "acme" : shape.kind === "sized" ? "load" : "emulator"
    const createdAt = isoAt(base - 100 * 86_400_000)
    const orgId = insertOrganization(ctx, { name: orgName, slug: orgSlug, at: createdAt })
    const owner = demo
      ? insertUser(ctx, { email: "ada@acme.test", firstName: "Ada", lastName: "Lovelace", at: createdAt })
      : insertUser(ctx, { email: "owner@example.test", firstName: "Olivia", lastName: "Owner", at: createdAt })
    setOrgMember(ctx, orgId, owner.userId, "OWNER", createdAt)
    let workspaceIds: Array<string>
    if (demo) workspaceIds = seedDemo(ctx, orgId, owner, base)
    else if (shape.kind === "sized") workspaceIds = seedSized(ctx, shape, orgId, owner, base)
    else {
      const ws = insertWorkspace(ctx, { orgId, name: "Main", slug: "main", creatorId: owner.userId, at: createdAt, firstList: "To do" })
      workspaceIds = [ws.id]
    }
    return { orgId, orgSlug, workspaceIds, owner }
  })()
  const plan: SeedPlan = {
    kind: shape.kind,
    workspaces: result.workspaceIds.length,
    recordsPerWorkspace: shape.recordsPerWorkspace,
    orgId: result.orgId,
    workspaceIds: result.workspaceIds,
    ownerUserId: result.owner.userId
  }
  for (const area of areas) {
    if (area.seed !== undefined) ctx.db.transaction(() => area.seed!(ctx, plan))()
  }
  return result
}

/** Reads back what a reopened database was seeded with (the first organization and its owner). */
export const readSeeded = (ctx: EmulatorContext): SeedResult => {
  const org = get<{ id: string; slug: string }>(ctx.db, "SELECT id, slug FROM organizations ORDER BY created_at, id LIMIT 1")!
  const owner = get<{ user_id: string; token: string; token_id: string; token_secret: string }>(
    ctx.db,
    `SELECT t.user_id, t.token, t.token_id, t.token_secret FROM org_members om JOIN tokens t ON t.user_id = om.user_id
      WHERE om.org_id = ? AND om.level = 'OWNER' ORDER BY t.created_at LIMIT 1`,
    org.id
  )!
  const workspaceIds = all<{ id: string }>(ctx.db, "SELECT id FROM workspaces WHERE org_id = ? ORDER BY created_at, id", org.id).map((r) => r.id)
  return {
    orgId: org.id,
    orgSlug: org.slug,
    workspaceIds,
    owner: { userId: owner.user_id, token: owner.token, tokenId: owner.token_id, tokenSecret: owner.token_secret }
  }
}
