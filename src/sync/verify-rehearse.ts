/**
 * `verify --rehearse`: restores a run into a fresh emulator, with the real restore
 * (restore.ts, through its public function), then compares what the emulator holds with
 * the run: proof that a restore gives the records back, and a count of what it would not.
 *
 * The rehearsal's emulator runs in this process on 127.0.0.1, seeded empty; each of the
 * run's workspaces is restored into a workspace of its own there, whose members are the
 * run's users (by e-mail, so assignees can be matched as on a real target).
 *
 * What fails a check is what restore promises to carry (the contract's restore: title,
 * description, list, dates, done, archived, colour, assignees, tags; files with
 * `--files DIR`) and did not, unless the restore itself said
 * it left that out (its `notRestored` and notices: a service without tag operations,
 * assignees with no user). Everything else the run holds and no restore carries (comments,
 * checklists, lists that hold no record, files without `--files`...) is counted in
 * `notCarried`: reported, never silently missing, and not a failure. The position order
 * within each list is compared like a field: restore creates a list's records in the
 * run's order, so the restored list keeps it.
 */
import * as Cause from "effect/Cause"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"
import * as Layer from "effect/Layer"
import * as Option from "effect/Option"
import * as Stream from "effect/Stream"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { RestClient, type RestClientApi } from "../client/rest-client.ts"
import type { RecordDetail } from "../schema/records.ts"
import { type RestUser, restUserEmail } from "../schema/users.ts"
import { workspaceFilesFromServices } from "../connectors/files/workspace-files.ts"
import { stableFileScan } from "../streams/stable-scan.ts"
import { openObjectStore } from "../store/object-store.ts"
import { openJournal } from "../store/journal.ts"
import type { RunRow, SnapshotError, SnapshotStoreService } from "../store/snapshot.ts"
import { recordNamespace } from "./plan.ts"
import { restore, type RestoreResult } from "./restore.ts"
import { FILE_RECORDS_NOT_KEPT } from "./restore-files.ts"
import { readSource } from "./restore-source.ts"
import { readTarget } from "./restore-target.ts"
import { brokenCheck, type CheckResult, type NotCarried, Tally } from "./verify-check.ts"
import { clip, firstDifference } from "./verify-compare.ts"

export interface RehearseOptions {
  readonly run: RunRow
  /** `--files DIR`: files are then compared too (a restore carries them only with their bytes). */
  readonly filesDir?: string | undefined
  /** One line of progress for people (stderr). */
  readonly log?: ((line: string) => Effect.Effect<void>) | undefined
}

export interface RehearseResult {
  readonly checks: ReadonlyArray<CheckResult>
  readonly notCarried: ReadonlyArray<NotCarried>
}

/**
 * Where the rehearsal's journals go: they are thrown away at its end, so a memory-backed
 * directory (Linux's /dev/shm) when there is one, where the journal's flushes to disk cost
 * nothing (a third of a 10,000-record rehearsal's time on a disk); else the temp directory.
 */
const scratchRoot = (): string => {
  try {
    fs.accessSync("/dev/shm", fs.constants.W_OK)
    return "/dev/shm"
  } catch {
    return os.tmpdir()
  }
}

/** Reads of the rehearsal: many at once, the emulator is local. */
const READ_CONCURRENCY = 16

interface WorkspacePlan {
  readonly sourceId: string
  readonly records: ReadonlyArray<Record<string, unknown>>
  readonly lists: ReadonlyArray<string>
  readonly files: ReadonlyArray<Record<string, unknown>>
}

/** Every stored item (JSON text) of a read, parsed: the comparison holds them all. */
const objectsOf = (items: Stream.Stream<string, SnapshotError>) =>
  Effect.map(Stream.runCollect(items), (texts) => Array.from(texts, (t) => JSON.parse(t) as Record<string, unknown>))

/** The run's workspaces with what a comparison needs: record details, list titles, confirmed files. */
const readRun = (store: SnapshotStoreService, runId: number) =>
  Effect.gen(function*() {
    const workspaces = yield* store.runMemberIds("workspaces", runId)
    const plans: Array<WorkspacePlan> = []
    for (const ws of workspaces) {
      const records = yield* objectsOf(store.runItems("records", runId, ws))
      const lists = (yield* objectsOf(store.runItems("lists", runId, ws)))
        .map((l) => l.title).filter((t): t is string => typeof t === "string")
      const files = (yield* objectsOf(store.runItems("files", runId, ws)))
        .filter((f) => f.status === undefined || f.status === "CONFIRMED")
      plans.push({ sourceId: ws, records, lists, files })
    }
    const users = yield* objectsOf(store.runItems("users", runId))
    return { plans, users }
  })

/** Adds up `notCarried` entries of the same kind (several workspaces). */
const addUp = (entries: ReadonlyArray<NotCarried>): Array<NotCarried> => {
  const by = new Map<string, NotCarried>()
  for (const e of entries) {
    const seen = by.get(e.what)
    by.set(e.what, seen === undefined ? e : { ...seen, count: seen.count + e.count })
  }
  return [...by.values()]
}

/** The categories a restore said it left out (`notRestored` entries, notices), by name. */
const declaredOf = (r: RestoreResult): Set<string> =>
  new Set([...r.notRestored.map((n) => n.what), ...r.notices.map((line) => line.slice(0, line.indexOf(":")))])

/** What a restore that cannot keep a list's order names in its `notRestored`. */
const ORDER_NOT_KEPT = "record order within lists"

/**
 * The first break of the run's order among a list's restored records (`members` by
 * position in the run, ties in any order), judged within each target list they landed
 * in; undefined when the order holds. A record not restored fails elsewhere.
 */
const orderBroken = (
  members: ReadonlyArray<{ readonly id: string; readonly position: number }>,
  restored: (sourceId: string) => RecordDetail | undefined
): string | undefined => {
  interface Seen {
    previousMax: number
    groupMax: number
    groupPosition: number | undefined
    previousId: string | undefined
    lastId: string | undefined
  }
  const byTarget = new Map<string, Seen>()
  for (const m of members) {
    const t = restored(m.id)
    if (t === undefined) continue
    const seen = byTarget.get(t.todoList.id) ?? { previousMax: -Infinity, groupMax: -Infinity, groupPosition: undefined, previousId: undefined, lastId: undefined }
    byTarget.set(t.todoList.id, seen)
    if (m.position !== seen.groupPosition) {
      seen.previousMax = Math.max(seen.previousMax, seen.groupMax)
      seen.groupMax = -Infinity
      seen.groupPosition = m.position
      seen.previousId = seen.lastId
    }
    if (t.position <= seen.previousMax) {
      return `record ${m.id} comes after ${seen.previousId ?? "another"} in the run, before it after a restore`
    }
    seen.groupMax = Math.max(seen.groupMax, t.position)
    seen.lastId = m.id
  }
  return undefined
}

/** Checks of one restored workspace, added to the tallies. */
interface Tallies {
  readonly records: Tally
  readonly order: Tally
  readonly lists: Tally
  readonly tags: Tally
  readonly comments: Tally
  readonly files: Tally
}

const compareWorkspace = (
  client: RestClientApi,
  plan: WorkspacePlan,
  targetId: string,
  mapping: ReadonlyMap<string, string>,
  result: RestoreResult,
  tallies: Tallies,
  notCarried: Array<NotCarried>,
  filesDir: string | undefined
) =>
  Effect.gen(function*() {
    const declared = declaredOf(result)
    const unknownEmails = new Set(result.unknownAssignees)
    const now = yield* readTarget(client, targetId)
    const details = new Map<string, RecordDetail>()
    yield* Effect.forEach(
      [...mapping.values()].filter((id) => now.records.has(id)),
      (id) => Effect.map(client.getRecord({ workspaceId: targetId, recordId: id }), (d) => void details.set(id, d)),
      { concurrency: READ_CONCURRENCY, discard: true }
    )

    // Records: each one back, with restore's fields as the run has them.
    for (const detail of plan.records) {
      const s = readSource(detail)
      const where = `record ${s.id} (${clip(s.title)}) of workspace ${plan.sourceId}`
      const targetIdOf = mapping.get(s.id)
      const t = targetIdOf === undefined ? undefined : details.get(targetIdOf)
      if (t === undefined) {
        tallies.records.fail(`${where}: not restored`)
        continue
      }
      const emails = s.emails.filter((e) => !unknownEmails.has(e))
      const difference = firstDifference(s, t, emails, declared)
      if (difference !== undefined) tallies.records.fail(`${where}: ${difference}`)
      else tallies.records.pass()

      const comments = typeof detail.commentCount === "number" ? detail.commentCount : 0
      if (comments > 0 || t.commentCount > 0) {
        if (t.commentCount === comments || declared.has("comments")) tallies.comments.pass()
        else tallies.comments.fail(`${where}: ${comments} comments in the run, ${t.commentCount} after a restore`)
      }
    }

    // Position order within each list: the run's order, ties left as they fall. Restore
    // creates a list's records one at a time in that order, so they come back in it
    // wherever the service appends; a list the service could not make leaves its records
    // in the first list, still in their order among themselves. Judged per target list.
    const byList = new Map<string, Array<{ id: string; position: number }>>()
    for (const detail of plan.records) {
      const s = readSource(detail)
      if (s.listTitle === null || typeof detail.position !== "number") continue
      const list = byList.get(s.listTitle) ?? []
      list.push({ id: s.id, position: detail.position })
      byList.set(s.listTitle, list)
    }
    let orderLost = 0
    let firstOrderLost: string | undefined
    for (const [title, members] of byList) {
      if (members.length < 2) continue
      members.sort((a, b) => a.position - b.position)
      const broken = orderBroken(members, (id) => details.get(mapping.get(id) ?? ""))
      if (broken === undefined) {
        tallies.order.pass()
        continue
      }
      const where = `list ${clip(title)} of workspace ${plan.sourceId}: ${broken}`
      // Only a restore that said it cannot keep the order (a service that does not append)
      // has it counted as not carried; otherwise a lost order is a failed restore.
      if (!declared.has(ORDER_NOT_KEPT)) {
        tallies.order.fail(where)
        continue
      }
      tallies.order.pass()
      orderLost++
      firstOrderLost ??= where
    }
    if (orderLost > 0) {
      notCarried.push({ what: ORDER_NOT_KEPT, count: orderLost, why: `the target does not keep the order records are created in (first: ${firstOrderLost})` })
    }

    // Lists: those holding records come back (restore makes them); empty ones are not carried.
    const used = new Set(plan.records.map((d) => readSource(d).listTitle).filter((t): t is string => t !== null))
    const empty = plan.lists.filter((t) => !used.has(t) && !now.lists.has(t))
    for (const title of used) {
      if (now.lists.has(title) || declared.has("lists")) tallies.lists.pass()
      else tallies.lists.fail(`list ${clip(title)} of workspace ${plan.sourceId}: not on the restored workspace`)
    }
    if (empty.length > 0) {
      notCarried.push({ what: "lists without records", count: empty.length, why: "a restore makes the lists its records use" })
    }

    // Tags: every tag the run's records use exists after a restore (unless the service has none).
    const tagTitles = new Set(plan.records.flatMap((d) => readSource(d).tags))
    for (const title of tagTitles) {
      if (declared.has("tags")) continue
      if (Option.isSome(now.tags) && now.tags.value.has(title)) tallies.tags.pass()
      else tallies.tags.fail(`tag ${clip(title)} of workspace ${plan.sourceId}: not on the restored workspace`)
    }

    // Files: compared when a restore can carry them (with their bytes); counted otherwise.
    if (plan.files.length > 0) {
      if (filesDir === undefined) {
        // The restore counts them in its notRestored (added below).
        if (!declared.has("files")) {
          notCarried.push({ what: "files", count: plan.files.length, why: "a restore uploads files only from their bytes (verify and restore with --files DIR)" })
        }
      } else {
        const scan = yield* stableFileScan(targetId).pipe(Effect.provideService(RestClient, client))
        const restored = yield* Stream.runCollect(scan.records).pipe(Effect.provideService(RestClient, client))
        // A restore uploads files to the workspace; when it said they lose their record, the record is not compared.
        const withRecord = !declared.has(FILE_RECORDS_NOT_KEPT)
        const key = (name: unknown, size: unknown, record: string | null) =>
          `${String(name)}\u0000${String(size)}\u0000${withRecord ? record ?? "" : ""}`
        const present = new Set([...restored].map((f) => key(f.name, f.size, f.todo?.id ?? null)))
        for (const f of plan.files) {
          const sourceRecord = (f.todo as { id?: unknown } | null | undefined)?.id
          const record = typeof sourceRecord === "string" ? mapping.get(sourceRecord) ?? `unmapped ${sourceRecord}` : null
          if (present.has(key(f.name, f.size, record)) || declared.has("files")) tallies.files.pass()
          else tallies.files.fail(`file ${String(f.id)} (${clip(f.name)}) of workspace ${plan.sourceId}: not on the restored workspace`)
        }
      }
    }
    notCarried.push(...result.notRestored)
  })

/** Restores the run into a fresh in-process emulator and compares; the checks named `rehearse.*`. */
export const rehearse = (store: SnapshotStoreService, options: RehearseOptions): Effect.Effect<RehearseResult, SnapshotError> =>
  Effect.scoped(Effect.gen(function*() {
    const log = options.log ?? (() => Effect.void)
    const run = options.run
    const { plans, users } = yield* readRun(store, run.id)
    const emulator = yield* Effect.promise(() => import("../emulator/index.ts"))
    const handle = yield* Effect.acquireRelease(
      Effect.promise(() => emulator.startEmulator({ host: "127.0.0.1", seed: "empty" })),
      (h) => Effect.promise(() => h.close())
    )
    const dir = yield* Effect.acquireRelease(
      Effect.sync(() => fs.mkdtempSync(path.join(scratchRoot(), "worksync-rehearsal-"))),
      (d) => Effect.sync(() => fs.rmSync(d, { recursive: true, force: true }))
    )
    const targets = plans.map((p, i) => handle.admin.createWorkspace({ name: `Rehearsal ${i + 1} of workspace ${p.sourceId}` }).id)
    const members = Object.fromEntries(targets.map((id) => [id, "MEMBER" as const]))
    for (const u of users) {
      const email = restUserEmail(u as RestUser)
      if (email === undefined) continue
      const name = typeof u.fullName === "string" ? u.fullName : email
      try {
        handle.admin.createUser({ email, firstName: name, lastName: "", workspaces: members })
      } catch {
        // The rehearsal's own owner has this e-mail: an organization owner, assignable anywhere.
      }
    }
    const { clientLayer } = yield* Effect.promise(() => import("../client/layer.ts"))
    // Built in this scope: the client (its connection pool) lives as long as the rehearsal.
    const services = yield* Layer.build(
      clientLayer({
        restUrl: handle.restUrl,
        baseUrl: handle.baseUrl,
        token: handle.token,
        tokenId: handle.tokenId,
        tokenSecret: handle.tokenSecret,
        org: handle.org,
        // The emulator is local and unlimited: no need to pace.
        limiter: { initialRps: 2000, maxInFlight: READ_CONCURRENCY }
      })
    )
    const client = Context.get(services, RestClient)

    const tallies: Tallies = {
      records: new Tally("rehearse.records"),
      order: new Tally("rehearse.order"),
      lists: new Tally("rehearse.lists"),
      tags: new Tally("rehearse.tags"),
      comments: new Tally("rehearse.comments"),
      files: new Tally("rehearse.files")
    }
    const notCarried: Array<NotCarried> = []
    const broken: Array<CheckResult> = []
    for (const [i, plan] of plans.entries()) {
      const target = targets[i]!
      yield* log(`rehearsal: restoring ${plan.records.length} record(s) of workspace ${plan.sourceId} into a fresh emulator`)
      const outcome = yield* Effect.scoped(Effect.gen(function*() {
        const journal = yield* openJournal(path.join(dir, `workspace-${i + 1}.journal`))
        // With the files directory, the restore uploads the run's files from it, as `restore --files` does.
        const files = options.filesDir === undefined ? undefined : {
          objects: yield* openObjectStore(options.filesDir),
          target: yield* Effect.provide(workspaceFilesFromServices, services)
        }
        const result = yield* restore(store, client, journal, {
          run,
          sourceWorkspaceId: plan.sourceId,
          targetWorkspaceId: target,
          ...(files !== undefined ? { files } : {})
        })
        const mapping = new Map((yield* journal.mappings(recordNamespace(target))).map((m) => [m.sourceKey, m.targetId] as const))
        yield* log(`rehearsal: comparing workspace ${plan.sourceId} with the run`)
        yield* compareWorkspace(client, plan, target, mapping, result, tallies, notCarried, options.filesDir)
      })).pipe(Effect.exit)
      if (Exit.isFailure(outcome)) {
        broken.push(brokenCheck("rehearse.records", { message: `workspace ${plan.sourceId}: ${causeText(outcome.cause)}` }, tallies.records.checked))
        break
      }
    }
    const checks = broken.length > 0 ? broken : [
      tallies.records.result(),
      tallies.order.result(),
      tallies.lists.result(),
      tallies.tags.result(),
      tallies.comments.result(),
      ...(options.filesDir !== undefined ? [tallies.files.result()] : [])
    ]
    return { checks, notCarried: addUp(notCarried) }
  }))

/** A failure of the rehearsal itself (the restore or a read of the emulator), as one line. */
const causeText = (cause: Cause.Cause<unknown>): string => {
  const e = Cause.squash(cause)
  return typeof e === "object" && e !== null && "message" in e ? String((e as { message: unknown }).message) : String(e)
}
