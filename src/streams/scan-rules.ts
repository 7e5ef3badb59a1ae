/**
 * The stable scan's decisions (stable-scan.ts), as pure functions of what its pages
 * showed: how two consecutive pages shifted, whether the first pass needs verifying, and
 * whether a verification pass settles the scan. docs/snapshot.md gives the reasoning.
 */

/** The documented timestamps a listing's items carry. */
export interface Stamped {
  readonly createdAt: string
  readonly updatedAt: string
}

/** The newest of an item's timestamps (-Infinity when neither parses). */
export const stampOf = (item: Stamped): number => {
  const c = Date.parse(item.createdAt)
  const u = Date.parse(item.updatedAt)
  return Math.max(Number.isNaN(c) ? -Infinity : c, Number.isNaN(u) ? -Infinity : u)
}

/** An item's createdAt (NaN when it does not parse). */
export const createdOf = (item: Stamped): number => Date.parse(item.createdAt)

/**
 * How the listing moved under two consecutive reads, from the items the later page shares
 * with the earlier one (`planned` when nothing moved): `grew` items were placed behind the
 * reading (insertions, or records moved there), `shrank` items were taken away behind it
 * (deletions). `repeats` are items of the later page read earlier in the pass but not on
 * the page just before: they were behind the reading and now are ahead of it (moved
 * forward, or pushed there by more insertions than a page holds), and count as grown.
 */
export const stepShift = (
  shared: number,
  planned: number,
  repeats: number
): { readonly grew: number; readonly shrank: number } => ({
  grew: Math.max(0, shared - planned) + repeats,
  shrank: Math.max(0, planned - shared)
})

/** What the first pass saw, for deciding whether it needs verifying. */
export interface FirstPassFacts {
  /** Pages whose overlap with the one before was not the planned one. */
  readonly shifts: number
  readonly gapsRepaired: number
  /** Repeats beyond the planned overlaps. */
  readonly duplicates: number
  readonly countBefore: number | null
  readonly countAfter: number | null
  /** Distinct ids emitted. */
  readonly seen: number
  /** Items each page shares with the one before (0: pages of one item). */
  readonly overlap: number
}

/**
 * Any sign that the listing shifted while the first pass read it: then a record may have
 * moved from the part not read yet into the part already read, unseen.
 */
export const needsVerification = (f: FirstPassFacts): boolean =>
  f.shifts > 0 || f.gapsRepaired > 0 || f.duplicates > 0 || f.countAfter !== f.countBefore ||
  (f.countAfter !== null && f.seen < f.countAfter) || (f.overlap === 0 && f.countBefore === null)

/** What one verification pass saw. */
export interface PassFacts {
  /** Items each page shares with the one before (0: pages of one item, no shift shows). */
  readonly overlap: number
  /** Items placed behind the reading during the pass, as its pages showed (`stepShift`). */
  readonly grew: number
  /** Items taken away behind the reading during the pass. */
  readonly shrank: number
  /** The count just before and just after the pass (null when the service gives none). */
  readonly countBefore: number | null
  readonly countAfter: number | null
  /** Distinct ids the scan has seen, this pass included. */
  readonly seen: number
  /**
   * Ids this pass found that no pass had seen, created before the pass before it began:
   * they were there and that pass missed them (moved behind it, or created with an
   * earlier timestamp: the two look alike).
   */
  readonly moved: number
  /** Ids this pass found that were created after it began (so ahead of it, not behind). */
  readonly created: number
}

/**
 * Whether the scan may stop after this verification pass: whether the pass can have
 * missed no item that existed throughout it. A record is missed only by moving from the
 * part not read yet into the part already read; on the pages that shows as items placed
 * behind the reading (`grew`), which an insertion behind it shows too. So the pass settles
 * when:
 * - nothing shifted under it (no item placed or taken away behind it, the count still):
 *   it read everything, what it found included;
 * - or it found no item older than the pass before it (nothing keeps moving behind the
 *   reading), and either nothing was placed behind it, or all that was is accounted for
 *   by the count: the count grew by at least the items placed behind, plus the items it
 *   saw created ahead of it. A move changes no count, so one hidden among insertions
 *   leaves the count short.
 * Pages of one item show no shift: there only a pass over which the count stood still,
 * with every counted id seen and nothing older found, settles the scan.
 *
 * Limits: a move and a deletion behind the reading between the same two reads cancel on
 * the pages (the count then drops, and is not checked for deletions: they are the common
 * change and miss nothing); creations between a pass's last page and the count after it
 * widen the account by as many.
 */
export const passSettles = (f: PassFacts): boolean => {
  const countSteady = f.countBefore !== null && f.countAfter !== null && f.countAfter === f.countBefore
  if (f.overlap === 0) return f.moved === 0 && countSteady && f.seen >= f.countAfter!
  const still = f.grew === 0 && f.shrank === 0 && (countSteady || (f.countBefore === null && f.countAfter === null))
  if (still) return true
  if (f.moved > 0) return false
  if (f.grew === 0) return true
  if (f.countBefore === null || f.countAfter === null) return false
  return f.grew <= f.countAfter - f.countBefore - f.created
}
