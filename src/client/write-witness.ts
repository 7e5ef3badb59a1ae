/**
 * Whether a write of the current op may have reached the service. The pipeline tells the
 * fiber's witness when a request not safe to repeat leaves, and when its answer shows it
 * was not applied (refused, 429). The replay gives each op its own: an op stopped (SIGINT,
 * SIGTERM, a worker handing its job back) while no write of it can have been applied,
 * waiting for the limiter or for a 429's Retry-After, goes back to pending, and the next
 * run sends it at once instead of looking for it for a whole settle window.
 */
import * as Context from "effect/Context"

export interface WriteWitnessApi {
  /** A request not safe to repeat is leaving. */
  readonly leaving: () => void
  /** The answer to the request that left last shows it was not applied. */
  readonly refused: () => void
}

/** Outside a replay nobody asks: the default notes nothing. */
export const WriteWitness = Context.Reference<WriteWitnessApi>("worksync/WriteWitness", {
  defaultValue: () => ({ leaving: () => {}, refused: () => {} })
})

/** A witness counting the writes that left and were not refused. */
export interface CountingWitness extends WriteWitnessApi {
  /** Some write left and its answer did not show it unapplied (none came, or a 2xx). */
  readonly mayHaveApplied: () => boolean
}

export const countingWitness = (): CountingWitness => {
  let open = 0
  return {
    leaving: () => {
      open++
    },
    refused: () => {
      open--
    },
    mayHaveApplied: () => open > 0
  }
}
