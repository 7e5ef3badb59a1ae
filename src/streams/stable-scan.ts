/**
 * A stable scan of one workspace's listing (list-records, list-files) over offset paging
 * while the data may change underneath.
 *
 * Offset paging over changing data skips items (a deletion before the offset shifts
 * the rest left) and repeats them (an insertion shifts right). The scan reads the
 * first window alone (it shows the page size the service really gives), then the
 * others concurrently; windows overlap by a few items and each must share an id with
 * the one before it: a shared id proves nothing between them was skipped by a shift.
 * Where two windows do not touch, the gap is re-read: step back from the gap until a
 * page touches the earlier window, then page forward, each page stitched to the one
 * before, until the later window is reached. Ids seen twice are emitted once.
 *
 * Stitching assumes items keep their order; a record moved (move-record, a new
 * position) from the part not yet read into the part already read breaks that and
 * looks, to one pass, like an insertion behind it. So every sign that the listing
 * shifted during the pass (a window sharing more or fewer items than planned with the
 * one before, a gap, counts before and after that differ or exceed the ids seen) is
 * followed by a verification pass: the listing is read again, stitched, and ids not
 * seen yet are added (and emitted as each pass ends). An id it finds that was created
 * before the pass it was missed by began (createdAt before the newest timestamp
 * received when that pass started: a bound that needs no clock of ours) moved, or was
 * created with an earlier timestamp. The verification pass itself may have missed a
 * record that moved while it read: passes go on until one settles the scan
 * (scan-rules.ts `passSettles`: nothing older found and nothing placed behind the
 * reading that the count does not account for, or nothing shifted at all); when
 * `maxVerificationPasses` run out first, the scan fails (ScanUnstable) after emitting
 * everything it read. docs/snapshot.md gives the reasoning and the cost.
 *
 * Every loop is bounded: re-reads caused by drift (`maxRereads`), pages in all
 * (`maxPages`, scaled on the count), and pages in a row that bring no new id
 * (`maxStalledPages`: churn outrunning the reads; in a verification pass, whose pages
 * bring ids the scan has seen, pages that bring none the pass itself has not read yet).
 * Each failure is one ScanUnstable line naming the operation, the workspace and the
 * budget; the items read before it have been emitted (a caller that can use an
 * unverified listing keeps them).
 *
 * When the service answers no count (count-records' answer is not shown by the
 * documents), the scan plans from the first page alone and pages on, stitched; shifts
 * still trigger verification. A page size of 1 (or a cap that small) leaves no overlap:
 * the scan pages plainly and relies on the counts and verification passes.
 *
 * A records scan covers one `archived` filter when given (a backup scans `false`, then
 * `true`, so it is complete whether or not the service lists archived records without
 * the filter; see sync/backup.ts).
 *
 * Guarantee: every item that existed (and matched the filter) for the whole scan is
 * emitted exactly once, unless it moved behind the reading in every pass (then the scan
 * fails rather than finish short; scan-rules.ts names the limits of that check). Items
 * created or deleted during the scan may or may not be; the report says what happened.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import { RestClient } from "../client/rest-client.ts"
import type { FileItem } from "../schema/files.ts"
import { PAGE_MAX_LIMIT } from "../schema/limits.ts"
import type { RecordSummary } from "../schema/records.ts"
import { clampLimit, type FetchPage, type PageError, Paging, targeted, type Window } from "./paging.ts"
import { countRecords, DEFAULT_PAGE_CONCURRENCY, recordsFetch } from "./records.ts"
import { createdOf, needsVerification, passSettles, stampOf, stepShift } from "./scan-rules.ts"

export interface ScanReport {
  /** The listing scanned: list-records or list-files. */
  readonly operation: string
  readonly workspaceId: string
  /** The `archived` filter of the scan; null when none was sent (or the listing has none). */
  readonly archived: boolean | null
  /** The count before and after the scan; null when the service answered no count. */
  readonly countBefore: number | null
  readonly countAfter: number | null
  /** The page size the service gave. */
  readonly pageSize: number
  /** Pages requested in all (planned windows, re-reads, verification passes). */
  readonly pages: number
  /** Items received in all pages, repeats included. */
  readonly received: number
  /** Distinct ids emitted. */
  readonly unique: number
  /** Ids received more than the planned overlap explains (drift by insertions); first 50 ids kept. */
  readonly duplicates: number
  readonly duplicateIds: ReadonlyArray<string>
  /** Planned windows. */
  readonly windows: number
  /** Pages whose overlap with the one before was not the planned one: the listing shifted. */
  readonly shifts: number
  /** Gaps between windows that were re-read, and the pages read besides the planned windows. */
  readonly gapsRepaired: number
  readonly rereadPages: number
  /** Verification passes (full re-reads after a shift or counts that did not add up). */
  readonly verificationPasses: number
  /** Ids first seen by a verification pass; first 50 kept. */
  readonly foundByRepair: number
  readonly foundByRepairIds: ReadonlyArray<string>
  /** Of those, items created before the pass that missed them began: moved (or created with an earlier timestamp). */
  readonly movesDetected: number
  /** Items placed behind the reading during the last verification pass, as its pages showed (0 without one). */
  readonly lastPassGrew: number
  /** The overlap in use at the end (it grows when drift outpaces it). */
  readonly overlap: number
}

/** The data moved faster than the scan could re-read it, or a read budget ran out. */
export class ScanUnstable extends Data.TaggedError("ScanUnstable")<{
  readonly operation: string
  readonly workspaceId: string
  readonly detail: string
}> {
  override get message(): string {
    return `${this.operation} (workspace ${this.workspaceId}): ${this.detail}`
  }
}

export interface StableScanOptions {
  /** Page size; clamped to 100. */
  readonly limit?: number | undefined
  /** Windows in flight at once. Default 4. */
  readonly concurrency?: number | undefined
  /** Items each window shares with the one before it. Default 3. */
  readonly overlap?: number | undefined
  /** Re-reads caused by drift allowed before giving up. Default 200 + 2 per window. */
  readonly maxRereads?: number | undefined
  /** Verification passes allowed. Default 3. */
  readonly maxVerificationPasses?: number | undefined
  /** Pages in all. Default 200 + 4 × (passes allowed + 1) × the pages the count needs. */
  readonly maxPages?: number | undefined
  /** Pages in a row without a new id. Default 50. */
  readonly maxStalledPages?: number | undefined
  /** Told the count once it is known (for progress); not called when the service gives none. */
  readonly onCount?: ((count: number) => Effect.Effect<void>) | undefined
  /**
   * Where a run of the scan notes the ids it has emitted, made empty for each run of its
   * stream; default a set in the heap. A caller scanning a million records passes a file
   * (store/scratch-keys.ts): the set is the one thing the scan holds per record.
   */
  readonly seenIds?: (() => SeenIds) | undefined
}

/** The ids a scan has emitted (StableScanOptions `seenIds`). */
export interface SeenIds {
  /** Notes the id; true when it is new (not seen before). */
  readonly see: (id: string) => boolean
  readonly has: (id: string) => boolean
  readonly count: () => number
  /** Runs `f` with the set at hand: the scan notes a page's ids in one call, not one by one. */
  readonly batch: <A>(f: () => A) => A
}

/** The default `seenIds`: a set in the heap. */
const seenInHeap = (): SeenIds => {
  const ids = new Set<string>()
  return {
    see: (id) => ids.size < ids.add(id).size,
    has: (id) => ids.has(id),
    count: () => ids.size,
    batch: (f) => f()
  }
}

export interface StableRecordScanOptions extends StableScanOptions {
  /** Scan only records with this `archived` value (sent explicitly); omitted: no filter. */
  readonly archived?: boolean | undefined
}

export interface StableScan<A> {
  readonly records: Stream.Stream<A, PageError | ScanUnstable, RestClient>
  /** The report, complete once `records` has been run to its end. */
  readonly report: Effect.Effect<ScanReport>
}

/** What a listing offers the scan: ids and the documented timestamps. */
export interface Scannable {
  readonly id: string
  readonly createdAt: string
  readonly updatedAt: string
}

/** One listing to scan: its pages and its count (null when the service gives none). */
export interface ScanSource<A extends Scannable> {
  readonly operation: string
  readonly workspaceId: string
  readonly archived: boolean | null
  readonly fetch: FetchPage<A, PageError, never>
  readonly count: Effect.Effect<number | null, PageError>
}

const idsOf = (items: ReadonlyArray<{ readonly id: string }>): Set<string> => new Set(items.map((i) => i.id))
const touches = (items: ReadonlyArray<{ readonly id: string }>, ids: ReadonlySet<string>): boolean =>
  items.some((i) => ids.has(i.id))

/** Plans and runs the stable scan of one listing. */
export const stableScan = <A extends Scannable>(
  source: ScanSource<A>,
  options: StableScanOptions = {}
): Effect.Effect<StableScan<A>> =>
  Effect.gen(function*() {
    const { fetch, operation, workspaceId } = source
    const limit = clampLimit(options.limit, PAGE_MAX_LIMIT)
    const concurrency = Math.max(1, options.concurrency ?? DEFAULT_PAGE_CONCURRENCY)
    const maxVerify = options.maxVerificationPasses ?? 3
    const maxStalled = options.maxStalledPages ?? 50
    const reportRef = yield* Ref.make<ScanReport>({
      operation,
      workspaceId,
      archived: source.archived,
      countBefore: null,
      countAfter: null,
      pageSize: limit,
      pages: 0,
      received: 0,
      unique: 0,
      duplicates: 0,
      duplicateIds: [],
      windows: 0,
      shifts: 0,
      gapsRepaired: 0,
      rereadPages: 0,
      verificationPasses: 0,
      foundByRepair: 0,
      foundByRepairIds: [],
      movesDetected: 0,
      lastPassGrew: 0,
      overlap: 0
    })
    const unstable = (detail: string) => new ScanUnstable({ operation, workspaceId, detail })

    const records = Stream.unwrap(Effect.gen(function*() {
      const countBefore = yield* source.count
      if (options.onCount !== undefined && countBefore !== null) yield* options.onCount(countBefore)
      // Mutable scan state, fresh for each run of the stream.
      let pages = 0
      let stalled = 0
      /**
       * Ids the current verification pass has read (null outside one). Its pages bring ids
       * the scan has seen, as expected; a page bringing none this pass has not read either
       * is the pass falling back over what it read (changes outrunning it): a stall.
       */
      let passRead: Set<string> | null = null
      let budget = options.maxPages ?? Infinity
      const seen = (options.seenIds ?? seenInHeap)()
      /** Every request goes through here: the page budgets are checked before it is sent. */
      const request = (skip: number, size: number): Effect.Effect<Window<A>, PageError | ScanUnstable> =>
        Effect.suspend((): Effect.Effect<Window<A>, PageError | ScanUnstable> => {
          if (pages >= budget) {
            return Effect.fail(unstable(`read budget exceeded: ${pages} pages read, at most ${budget} allowed (the listing kept changing faster than it could be read)`))
          }
          if (stalled >= maxStalled) {
            return Effect.fail(unstable(`read budget exceeded: ${stalled} pages in a row brought no new item (changes outran the reads)`))
          }
          pages++
          return Effect.map(fetch(skip, size), (page) => {
            const known: { readonly has: (id: string) => boolean } = passRead ?? seen
            if (seen.batch(() => page.items.some((i) => !known.has(i.id)))) stalled = 0
            else stalled++
            for (const i of page.items) passRead?.add(i.id)
            return { skip, items: page.items, more: page.more }
          })
        })

      // The first window is read alone: it tells the page size the service really gives
      // (a cap below the documented maximum shows as a short page that says more follow),
      // so the other windows are planned on it.
      const first = yield* request(0, limit)
      const size = first.more && first.items.length > 0 ? Math.min(limit, first.items.length) : limit
      // A page of one item cannot overlap the one before: no stitching, counts and passes only.
      let overlap = Math.min(Math.max(1, options.overlap ?? 3), Math.floor(size / 2))
      const stride = Math.max(1, size - overlap)
      // Without a count, only the first window is planned; the rest is paged as the tail.
      const windows = countBefore === null || countBefore <= size ? 1 : Math.ceil((countBefore - size) / stride) + 1
      const maxRereads = options.maxRereads ?? 200 + 2 * windows
      if (options.maxPages === undefined) {
        budget = 200 + 4 * (maxVerify + 1) * Math.max(windows, Math.ceil((countBefore ?? 0) / size))
      }
      const readPage = (skip: number) => request(skip, size)
      const duplicateIds: Array<string> = []
      const repairIds: Array<string> = []
      let received = 0
      let duplicates = 0
      let shifts = 0
      let gapsRepaired = 0
      let rereadPages = 0
      let verificationPasses = 0
      let foundByRepair = 0
      let movesDetected = 0
      let lastPassGrew = 0
      /** How the listing moved behind the reading during the current verification pass (scan-rules.ts stepShift). */
      let signs = { grew: 0, shrank: 0 }
      let newest = -Infinity
      let prev: Window<A> | null = null

      /**
       * Drops ids already emitted. Repeats count as drift unless expected: the overlap
       * with the previous window, or pages read again on purpose.
       */
      const fresh = (items: ReadonlyArray<A>, expected: ReadonlySet<string> | "all" = new Set()): Array<A> =>
        seen.batch(() => {
          const out: Array<A> = []
          for (const item of items) {
            received++
            newest = Math.max(newest, stampOf(item))
            if (!seen.see(item.id)) {
              if (expected === "all" || expected.has(item.id)) continue
              duplicates++
              if (duplicateIds.length < 50) duplicateIds.push(item.id)
              continue
            }
            out.push(item)
          }
          return out
        })

      // Only reads caused by drift (stepping back, a page that did not touch the one
      // before) count against the drift budget; every read counts against the page budget.
      let driftReads = 0
      const reread = (skip: number, drift: boolean): Effect.Effect<Window<A>, PageError | ScanUnstable> =>
        drift && driftReads >= maxRereads
          ? Effect.fail(unstable(`re-read budget exceeded: ${driftReads} pages re-read for drift, at most ${maxRereads} allowed (items changed faster than the scan could re-read them)`))
          : Effect.map(readPage(skip), (w) => {
            rereadPages++
            if (drift) driftReads++
            return w
          })

      /** Planned items shared with the page before (fewer when that page was shorter). */
      const planned = (before: ReadonlyArray<A>) => Math.min(overlap, before.length)
      const sharedWith = (items: ReadonlyArray<A>, before: ReadonlySet<string>) =>
        items.reduce((n, i) => (before.has(i.id) ? n + 1 : n), 0)

      /**
       * Pages from a page touching `anchor` until one touching `target` (null: until the
       * end), each page sharing an id with the one before. Returns every item read. Each
       * step adds to `signs`; `passIds` (the ids this walk read, when given) tells items
       * met again after the reading passed them.
       */
      const bridge = (
        anchor: ReadonlySet<string>,
        target: ReadonlySet<string> | null,
        start: number,
        passIds: Set<string> | null = null,
        /** The page at `start`, when the caller read it already. */
        read?: Window<A>
      ): Effect.Effect<Array<A>, PageError | ScanUnstable> =>
        Effect.gen(function*() {
          let skip = Math.max(0, start)
          let back = Math.max(1, overlap)
          let page = read ?? (yield* reread(skip, false))
          // Step back until the page reaches the anchor (or the start of the list).
          while (overlap > 0 && skip > 0 && anchor.size > 0 && !touches(page.items, anchor)) {
            skip = Math.max(0, skip - back)
            back *= 2
            page = yield* reread(skip, true)
          }
          const out = [...page.items]
          for (const i of page.items) passIds?.add(i.id)
          while ((target === null || !touches(page.items, target)) && page.more && page.items.length > 0) {
            const next: Window<A> = yield* reread(page.skip + page.items.length - overlap, false)
            if (overlap === 0) {
              out.push(...next.items)
              page = next
              continue
            }
            const before = idsOf(page.items)
            const shared = sharedWith(next.items, before)
            if (next.items.length > 0) {
              if (shared !== planned(page.items)) shifts++
              const repeats = passIds === null ? 0 : next.items.filter((i) => !before.has(i.id) && passIds.has(i.id)).length
              const step = stepShift(shared, planned(page.items), repeats)
              signs = { grew: signs.grew + step.grew, shrank: signs.shrank + step.shrank }
            }
            if (shared === 0) {
              driftReads++
              // Drift between two consecutive reads outran the overlap: widen it and bridge
              // again. That walk steps back over items this one read: it tells repeats anew.
              overlap = Math.min(overlap * 2, Math.floor(size / 2))
              out.push(...(yield* bridge(before, target, next.skip, passIds === null ? null : new Set())))
              return out
            }
            for (const i of next.items) passIds?.add(i.id)
            out.push(...next.items)
            page = next
          }
          return out
        })

      /** Emits a window, re-reading the gap before it when it does not touch the previous one. */
      const stitch = (w: Window<A>): Effect.Effect<Array<A>, PageError | ScanUnstable> =>
        Effect.gen(function*() {
          const out: Array<A> = []
          const before = prev === null ? new Set<string>() : idsOf(prev.items)
          if (overlap > 0 && prev !== null && prev.more && prev.items.length > 0) {
            const shared = sharedWith(w.items, before)
            if (shared !== planned(prev.items) && w.items.length > 0) shifts++
            if (!touches(w.items, before)) {
              gapsRepaired++
              out.push(...fresh(yield* bridge(before, idsOf(w.items), w.skip - overlap), "all"))
            }
            // More shared items than the planned overlap: insertions shifted this window back.
            if (shared > overlap) duplicates += shared - overlap
          }
          out.push(...fresh(w.items, before))
          prev = w
          return out
        })

      const skips = Array.from({ length: windows - 1 }, (_, j) => (j + 1) * stride)
      // The newest timestamp received when the scan began: an item created before it
      // existed when the first pass started.
      const startedBefore = first.items.reduce((m, i) => Math.max(m, stampOf(i)), -Infinity)
      const plannedWindows = Stream.concat(
        Stream.succeed<Window<A>>(first),
        Stream.fromIterable(skips).pipe(Stream.mapEffect(readPage, { concurrency }))
      ).pipe(
        Stream.mapEffect(stitch),
        Stream.flattenIterable
      )

      // Items past the planned windows (the list grew, or the last window ended early).
      const tail = Stream.unwrap(Effect.sync(() => {
        const last = prev
        if (last === null || !last.more || last.items.length === 0) return Stream.empty
        return Stream.fromIterableEffect(
          Effect.map(bridge(idsOf(last.items), null, last.skip + last.items.length - overlap), (items) => fresh(items, "all"))
        )
      }))

      const publish = (countAfter: number | null) =>
        Ref.set(reportRef, {
          operation,
          workspaceId,
          archived: source.archived,
          countBefore,
          countAfter,
          pageSize: size,
          pages,
          received,
          unique: seen.count(),
          duplicates,
          duplicateIds: [...duplicateIds],
          windows,
          shifts,
          gapsRepaired,
          rereadPages,
          verificationPasses,
          foundByRepair,
          foundByRepairIds: [...repairIds],
          movesDetected,
          lastPassGrew,
          overlap
        })

      // Verification: after any sign that the listing shifted, read it again until a pass
      // settles the scan (scan-rules.ts). Each pass emits what it found as it ends, so a
      // scan that fails its budget has emitted everything it read.
      interface PassStart {
        /** The newest timestamp received when the pass before this one began. */
        readonly previousStarted: number
        /** The count just before this pass. */
        readonly countBefore: number | null
      }
      const verificationPass = (pass: PassStart) =>
        Effect.gen(function*() {
          if (verificationPasses >= maxVerify) {
            return yield* unstable(
              overlap === 0
                ? `verification budget exceeded: pages of ${size} item leave no overlap to stitch, and no pass of the ${maxVerify} verification passes ran under a steady count`
                : `verification budget exceeded: the listing kept changing behind the reading through ${maxVerify} verification passes (${movesDetected} items found that were older than the pass that missed them; ${lastPassGrew} placed behind the last pass)`
            )
          }
          verificationPasses++
          // Created before this, an item existed when the pass began.
          const started = newest
          signs = { grew: 0, shrank: 0 }
          passRead = new Set()
          const head = yield* reread(0, false)
          // Created after the newest item the pass's first page shows, an item counts as
          // created while the pass read: a bound that errs toward counting more (an item
          // created just before, elsewhere in the order), which only makes settling harder.
          const headNewest = head.items.reduce((m, i) => Math.max(m, stampOf(i)), started)
          const all = yield* bridge(new Set(), null, 0, new Set(), head)
          passRead = null
          const found = fresh(all, "all")
          const moved = found.filter((i) => createdOf(i) < pass.previousStarted).length
          const created = found.filter((i) => createdOf(i) > headNewest).length
          foundByRepair += found.length
          for (const i of found) if (repairIds.length < 50) repairIds.push(i.id)
          movesDetected += moved
          lastPassGrew = signs.grew
          const countAfter = yield* source.count
          yield* publish(countAfter)
          const settled = passSettles({
            overlap,
            grew: signs.grew,
            shrank: signs.shrank,
            countBefore: pass.countBefore,
            countAfter,
            seen: seen.count(),
            moved,
            created
          })
          const next = settled ? Option.none<PassStart>() : Option.some<PassStart>({ previousStarted: started, countBefore: countAfter })
          return [found, next] as const
        })

      const verify: Stream.Stream<A, PageError | ScanUnstable, RestClient> = Stream.unwrap(Effect.gen(function*() {
        const countAfter = yield* source.count
        yield* publish(countAfter)
        const shifted = needsVerification({ shifts, gapsRepaired, duplicates, countBefore, countAfter, seen: seen.count(), overlap })
        if (!shifted) return Stream.empty
        return Stream.paginate({ previousStarted: startedBefore, countBefore: countAfter }, verificationPass)
      }))

      return Stream.concat(plannedWindows, Stream.concat(tail, verify))
    }))

    return { records, report: Ref.get(reportRef) }
  })

/** Plans and runs the stable scan of one workspace's records. */
export const stableRecordScan = (
  workspaceId: string,
  options: StableRecordScanOptions = {}
): Effect.Effect<StableScan<RecordSummary>, never, RestClient> =>
  Effect.gen(function*() {
    const filter = options.archived === undefined ? { workspaceId } : { workspaceId, archived: options.archived }
    const client = yield* RestClient
    return yield* stableScan({
      operation: "list-records",
      workspaceId,
      archived: options.archived ?? null,
      fetch: yield* recordsFetch(filter),
      count: Effect.provideService(countRecords(filter), RestClient, client)
    }, options)
  })

/** list-files pages of one workspace, as `Page`s (`pageInfo.totalItems` is the total). */
export const filesFetch = (workspaceId: string): Effect.Effect<FetchPage<FileItem, PageError, never>, never, RestClient> =>
  Effect.map(RestClient, (client) =>
    targeted({ operation: "list-files", workspaceId }, (skip, limit) =>
      Effect.map(client.listFiles({ workspaceId, skip, limit }), (page) =>
        Paging.hasNextPage(page.items, page.pageInfo.hasNextPage, page.pageInfo.totalItems))))

/** Plans and runs the stable scan of one workspace's files (the count is list-files' `totalItems`). */
export const stableFileScan = (
  workspaceId: string,
  options: StableScanOptions = {}
): Effect.Effect<StableScan<FileItem>, never, RestClient> =>
  Effect.gen(function*() {
    const fetch = yield* filesFetch(workspaceId)
    return yield* stableScan({
      operation: "list-files",
      workspaceId,
      archived: null,
      fetch,
      count: Effect.map(fetch(0, 1), (page) => page.total)
    }, options)
  })
