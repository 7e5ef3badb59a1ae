import * as Cause from "effect/Cause"
import type * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Exit from "effect/Exit"

/** Runs an Effect for a Promise-based caller: its failure as it is, not wrapped. */
export const toPromise = <A, E>(context: Context.Context<never>, effect: Effect.Effect<A, E>): Promise<A> =>
  Effect.runPromiseExitWith(context)(effect).then((exit) => {
    if (Exit.isSuccess(exit)) return exit.value
    throw Cause.squash(exit.cause)
  })
