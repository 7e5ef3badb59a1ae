/**
 * Whether a list's records are in the source's order on the target, judged as a
 * migration's verification reads the run (migrate/verify.ts): a list at a time by
 * position, so a list's order is kept when each target record read sorts after the one
 * read before it (restore-target.ts `byPosition`). Only the last target record is held
 * per list, not the list's pairs of positions.
 */
import { byPosition } from "../restore-target.ts"

/** What the order within a list is judged by (restore-target.ts `byPosition`). */
export interface Positioned {
  readonly position: unknown
  readonly id: unknown
}

/** A record of a list: which source list (in the order read), its source and its target. */
export interface OrderPair {
  readonly list: number
  readonly source: Positioned
  readonly target: Positioned
}

/**
 * The order check of one list title, fed its records in the order the run is read (by
 * source list, then by position): the target records, in that order, must each sort after
 * the one before. Records of one list at the same position (or none) come by id as the
 * store orders ids, which `byPosition` may not: they are held until the position changes
 * and checked in `byPosition`'s order (one record each, unless positions repeat).
 */
export interface OrderCheck {
  kept: boolean
  /** The last target record checked. */
  last: Positioned | undefined
  /** Records of one list and one source position, not checked yet. */
  ties: Array<OrderPair>
}

/** The source position as `byPosition` sorts it (anything without a number last). */
const sortPosition = (p: Positioned): number =>
  typeof p.position === "number" && Number.isFinite(p.position) ? p.position : Number.POSITIVE_INFINITY

export const orderCheckOf = (pair: OrderPair): OrderCheck => ({ kept: true, last: undefined, ties: [pair] })

const checkTies = (check: OrderCheck): void => {
  for (const { target } of check.ties.sort((a, b) => byPosition(a.source, b.source))) {
    if (check.last !== undefined && byPosition(check.last, target) > 0) check.kept = false
    check.last = target
  }
  check.ties = []
}

export const orderCheckAdd = (check: OrderCheck, pair: OrderPair): void => {
  const tie = check.ties[0]
  if (tie !== undefined && (tie.list !== pair.list || sortPosition(tie.source) !== sortPosition(pair.source))) checkTies(check)
  check.ties.push(pair)
}

/** Whether the list's records are in the source's order on the target. */
export const orderCheckKept = (check: OrderCheck): boolean => {
  checkTies(check)
  return check.kept
}
