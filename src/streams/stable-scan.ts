/**
 * A stable scan of one workspace's records over offset paging while the data may
 * change underneath.
 *
 * Offset paging over changing data skips items (a deletion before the offset shifts
 * the rest left) and repeats them (an insertion shifts right). The scan reads the
 * first window alone (it shows the page size the service really gives), then the
 * others concurrently; windows overlap by a few items and each must share an id with
 * the one before it: a shared id proves nothing between them was skipped, whatever
 * moved in between (the service's order is stable). Where two windows do not touch,
 * the gap is re-read: step back from the gap until a page touches the earlier
 * window, then page forward, each page stitched to the one before, until the later
 * window is reached. Ids seen twice are emitted once. At the end the record count is
 * taken again; if it did not move and fewer ids were seen than it reports, the
 * workspace is read again and the missing ids are added. When count-records answers
 * no count (its answer is not shown by the documents), the scan plans from the first
 * page alone and pages on, each page stitched to the one before, without verification.
 *
 * A scan covers one `archived` filter when given (a backup scans `false`, then `true`,
 * so it is complete whether or not the service lists archived records without the
 * filter; see sync/backup.ts).
 *
 * Guarantee: every record that existed (and matched the filter) for the whole scan is
 * emitted exactly once.
 * Records created or deleted during the scan may or may not be; the report says how
 * much drift there was.
 */
import * as Data from "effect/Data"
import * as Effect from "effect/Effect"
import * as Ref from "effect/Ref"
import * as Stream from "effect/Stream"
import type { RestClient } from "../client/rest-client.ts"
import { PAGE_MAX_LIMIT } from "../schema/limits.ts"
import type { RecordSummary } from "../schema/records.ts"
import { clampLimit, type FetchPage, type PageError } from "./paging.ts"
import { countRecords, DEFAULT_PAGE_CONCURRENCY, recordsFetch } from "./records.ts"

export interface ScanReport {
  readonly workspaceId: string
  /** The `archived` filter of the scan; null when none was sent. */
  readonly archived: boolean | null
  /** count-records before and after the scan; null when the service answered no count. */
  readonly countBefore: number | null
  readonly countAfter: number | null
  /** Items received in all pages, repeats included. */
  readonly received: number
  /** Distinct ids emitted. */
  readonly unique: number
  /** Ids received more than the planned overlap explains (drift by insertions); first 50 ids kept. */
  readonly duplicates: number
  readonly duplicateIds: ReadonlyArray<string>
  /** Planned windows. */
  readonly windows: number
  /** Gaps between windows that were re-read, and the pages read besides the planned windows. */
  readonly gapsRepaired: number
  readonly rereadPages: number
  /** Full re-reads because the counts did not add up. */
  readonly verificationPasses: number
  /** The overlap in use at the end (it grows when drift outpaces it). */
  readonly overlap: number
}

/** The data moved faster than the scan could re-read it. */
export class ScanUnstable extends Data.TaggedError("ScanUnstable")<{
  readonly workspaceId: string
  readonly detail: string
}> {
  override get message(): string {
    return `list-records (workspace ${this.workspaceId}): records changed faster than the scan could re-read them: ${this.detail}`
  }
}

export interface StableScanOptions {
  /** Scan only records with this `archived` value (sent explicitly); omitted: no filter. */
  readonly archived?: boolean | undefined
  /** Page size; clamped to 100. */
  readonly limit?: number | undefined
  /** Windows in flight at once. Default 4. */
  readonly concurrency?: number | undefined
  /** Items each window shares with the one before it. Default 3. */
  readonly overlap?: number | undefined
  /** Re-reads caused by drift allowed before giving up. Default 200 + 2 per window. */
  readonly maxRereads?: number | undefined
  /** Full re-reads allowed when counts do not add up. Default 2. */
  readonly maxVerificationPasses?: number | undefined
  /** Told the record count once it is known (for progress); not called when the service gives none. */
  readonly onCount?: ((count: number) => Effect.Effect<void>) | undefined
}

export interface StableScan {
  readonly records: Stream.Stream<RecordSummary, PageError | ScanUnstable, RestClient>
  /** The report, complete once `records` has been run to its end. */
  readonly report: Effect.Effect<ScanReport>
}

interface Win {
  readonly skip: number
  readonly items: ReadonlyArray<RecordSummary>
  readonly more: boolean
}

const idsOf = (items: ReadonlyArray<{ readonly id: string }>): Set<string> => new Set(items.map((i) => i.id))
const touches = (items: ReadonlyArray<{ readonly id: string }>, ids: ReadonlySet<string>): boolean =>
  items.some((i) => ids.has(i.id))

/** Plans and runs the stable scan of one workspace. */
export const stableRecordScan = (workspaceId: string, options: StableScanOptions = {}): Effect.Effect<StableScan, never, RestClient> =>
  Effect.gen(function*() {
    const filter = options.archived === undefined ? { workspaceId } : { workspaceId, archived: options.archived }
    const fetch: FetchPage<RecordSummary, PageError, never> = yield* recordsFetch(filter)
    const limit = clampLimit(options.limit, PAGE_MAX_LIMIT)
    const concurrency = Math.max(1, options.concurrency ?? DEFAULT_PAGE_CONCURRENCY)
    const maxVerify = options.maxVerificationPasses ?? 2
    const reportRef = yield* Ref.make<ScanReport>({
      workspaceId,
      archived: options.archived ?? null,
      countBefore: null,
      countAfter: null,
      received: 0,
      unique: 0,
      duplicates: 0,
      duplicateIds: [],
      windows: 0,
      gapsRepaired: 0,
      rereadPages: 0,
      verificationPasses: 0,
      overlap: 0
    })

    const records = Stream.unwrap(Effect.gen(function*() {
      const countBefore = yield* countRecords(filter)
      if (options.onCount !== undefined && countBefore !== null) yield* options.onCount(countBefore)
      // The first window is read alone: it tells the page size the service really gives
      // (a cap below the documented maximum shows as a short page that says more follow),
      // so the other windows are planned on it.
      const first = yield* fetch(0, limit)
      const size = first.more && first.items.length > 0 ? Math.min(limit, first.items.length) : limit
      // Mutable scan state, fresh for each run of the stream.
      let overlap = Math.min(Math.max(1, options.overlap ?? 3), Math.floor(size / 2))
      const stride = Math.max(1, size - overlap)
      // Without a count, only the first window is planned; the rest is paged as the tail.
      const windows = countBefore === null || countBefore <= size ? 1 : Math.ceil((countBefore - size) / stride) + 1
      const maxRereads = options.maxRereads ?? 200 + 2 * windows
      /** One request; a short page that says more follow is left short (the next stitch re-reads the gap). */
      const readPage = (skip: number): Effect.Effect<Win, PageError> =>
        Effect.map(fetch(skip, size), (page) => ({ skip, items: page.items, more: page.more }))
      const seen = new Set<string>()
      const duplicateIds: Array<string> = []
      let received = 0
      let duplicates = 0
      let gapsRepaired = 0
      let rereadPages = 0
      let verificationPasses = 0
      let prev: Win | null = null

      /**
       * Drops ids already emitted. Repeats count as drift unless expected: the overlap
       * with the previous window, or pages read again on purpose.
       */
      const fresh = (items: ReadonlyArray<RecordSummary>, expected: ReadonlySet<string> | "all" = new Set()): Array<RecordSummary> => {
        const out: Array<RecordSummary> = []
        for (const item of items) {
          received++
          if (seen.has(item.id)) {
            if (expected === "all" || expected.has(item.id)) continue
            duplicates++
            if (duplicateIds.length < 50) duplicateIds.push(item.id)
            continue
          }
          seen.add(item.id)
          out.push(item)
        }
        return out
      }

      // Every re-read counts in the report; only reads caused by drift (stepping back,
      // a page that did not touch the one before) count against the give-up budget, so
      // plain forward paging past the planned windows is never cut short.
      let driftReads = 0
      const reread = (skip: number, drift: boolean): Effect.Effect<Win, PageError | ScanUnstable> =>
        drift && driftReads >= maxRereads
          ? Effect.fail(new ScanUnstable({ workspaceId, detail: `gave up after ${driftReads} re-read pages` }))
          : Effect.map(readPage(skip), (w) => {
            rereadPages++
            if (drift) driftReads++
            return w
          })

      /**
       * Pages from a page touching `anchor` until one touching `target` (null: until the
       * end), each page sharing an id with the one before. Returns every item read.
       */
      const bridge = (
        anchor: ReadonlySet<string>,
        target: ReadonlySet<string> | null,
        start: number
      ): Effect.Effect<Array<RecordSummary>, PageError | ScanUnstable> =>
        Effect.gen(function*() {
          let skip = Math.max(0, start)
          let back = overlap
          let page = yield* reread(skip, false)
          // Step back until the page reaches the anchor (or the start of the list).
          while (skip > 0 && !touches(page.items, anchor)) {
            skip = Math.max(0, skip - back)
            back *= 2
            page = yield* reread(skip, true)
          }
          const out = [...page.items]
          while ((target === null || !touches(page.items, target)) && page.more && page.items.length > 0) {
            const next: Win = yield* reread(page.skip + page.items.length - overlap, false)
            if (!touches(next.items, idsOf(page.items))) {
              driftReads++
              // Drift between two consecutive reads outran the overlap: widen it and bridge again.
              overlap = Math.min(overlap * 2, Math.floor(size / 2))
              out.push(...(yield* bridge(idsOf(page.items), target, next.skip)))
              return out
            }
            out.push(...next.items)
            page = next
          }
          return out
        })

      /** Emits a window, re-reading the gap before it when it does not touch the previous one. */
      const stitch = (w: Win): Effect.Effect<Array<RecordSummary>, PageError | ScanUnstable> =>
        Effect.gen(function*() {
          const out: Array<RecordSummary> = []
          const before = prev === null ? new Set<string>() : idsOf(prev.items)
          if (prev !== null && prev.more && prev.items.length > 0 && !touches(w.items, before)) {
            gapsRepaired++
            out.push(...fresh(yield* bridge(before, idsOf(w.items), w.skip - overlap), "all"))
          }
          // More shared items than the planned overlap: insertions shifted this window back.
          const shared = w.items.reduce((n, i) => (before.has(i.id) ? n + 1 : n), 0)
          if (shared > overlap) duplicates += shared - overlap
          out.push(...fresh(w.items, before))
          prev = w
          return out
        })

      const skips = Array.from({ length: windows - 1 }, (_, j) => (j + 1) * stride)
      const planned = Stream.concat(
        Stream.succeed<Win>({ skip: 0, items: first.items, more: first.more }),
        Stream.fromIterable(skips).pipe(Stream.mapEffect(readPage, { concurrency }))
      ).pipe(
        Stream.mapEffect(stitch),
        Stream.mapConcat((items) => items)
      )

      // Items past the planned windows (the list grew, or the last window ended early).
      const tail = Stream.unwrap(Effect.sync(() => {
        const last = prev
        if (last === null || !last.more || last.items.length === 0) return Stream.empty
        return Stream.fromIterableEffect(
          Effect.map(bridge(idsOf(last.items), null, last.skip + last.items.length - overlap), (items) => fresh(items, "all"))
        )
      }))

      // The count did not move, yet fewer ids were seen than it reports: read again.
      const verify: Stream.Stream<RecordSummary, PageError | ScanUnstable, RestClient> = Stream.unwrap(Effect.gen(function*() {
        const extra: Array<RecordSummary> = []
        for (;;) {
          const countAfter = countBefore === null ? null : yield* countRecords(filter)
          yield* Ref.set(reportRef, {
            workspaceId,
            archived: options.archived ?? null,
            countBefore,
            countAfter,
            received,
            unique: seen.size,
            duplicates,
            duplicateIds: [...duplicateIds],
            windows,
            gapsRepaired,
            rereadPages,
            verificationPasses,
            overlap
          })
          if (
            countBefore === null || countAfter === null || countAfter !== countBefore || seen.size >= countAfter ||
            verificationPasses >= maxVerify
          ) break
          verificationPasses++
          const all = yield* bridge(new Set(), null, 0)
          extra.push(...fresh(all, "all"))
        }
        return Stream.fromIterable(extra)
      }))

      return Stream.concat(planned, Stream.concat(tail, verify))
    }))

    return { records, report: Ref.get(reportRef) }
  })
