/**
 * How replay runs the ops of one phase: `concurrency` workers, each taking the next op
 * and advancing it a step (replay.ts says what a step does). A step either ends the op or
 * parks it until a time: an op of unknown outcome waiting out its settle window between
 * looks. A parked op holds no worker; when its time comes it is taken before any op not
 * started yet. Ops of one group run one after another (the next starts when the previous
 * ended, parked time included); an op that ends unsettled holds its group back for the
 * next run.
 *
 * Ops are read from the journal in plan order a batch at a time, each past the last one
 * read (a cursor), so an op is read and decoded once however long it queues behind its
 * group. An op whose dependency is not done yet is kept by the key it waits for, and
 * taken when that op ends done here; ops added past the cursor (follow-ups) are read when
 * the op that added them ends. When nothing is ready, running, parked or left past the
 * cursor, and an op ended since the pass began, the phase reads once more from the start
 * (something may have become runnable behind the cursor that no end here announced:
 * another session's work, a row committed late); it ends when such a pass takes nothing.
 *
 * What the phase holds is bounded, not the journal's size: a group queues at most
 * `holdPerGroup` ops. An op of a group whose queue is full is left in the journal (the
 * group's spill: the lowest seq left there), and so is every later op of that group, so
 * its order holds; when the queue is down to half, the group is read again from its spill
 * (a refill: up to the cursor, until the queue is full again). Ops waiting for one left so
 * are left too (a refill reads them again). The cursor reads on past a full group, so the
 * lists of a restore (one group each, planned a list at a time) still run side by side;
 * it pauses while the phase holds `holdLimit` ops (ready, queued or waiting). A restore of
 * 100,000 creates in three lists held every op it had read (about 200 MB).
 */
import * as Clock from "effect/Clock"
import * as Duration from "effect/Duration"
import * as Effect from "effect/Effect"
import type { Op, PendingOp } from "../store/journal.ts"

/** What one step of an op came to: it ended, or it waits (holding no worker) until `untilMs`. */
export type Step<End> =
  | { readonly _tag: "ended"; readonly end: End }
  | { readonly _tag: "parked"; readonly untilMs: number }

/** Groups held back for the next run, and their ops: shared by the phases of one run. */
export interface Deferred {
  readonly groups: Set<string>
  readonly ops: Set<string>
}

export interface PhaseOptions<Task, End, E, R> {
  readonly concurrency: number
  /** Ops read from the journal at a time. */
  readonly batchSize: number
  /** Ops a group queues at most; more are read again later (see the module's comment). */
  readonly holdPerGroup: number
  /** Ops held (ready, queued behind their group, waiting) past which the cursor pauses. */
  readonly holdLimit: number
  /** Up to `limit` pending ops of the phase after `afterSeq`, in plan order, with what each waits for. */
  readonly read: (afterSeq: number, limit: number) => Effect.Effect<ReadonlyArray<PendingOp>, E>
  /** The op's group; undefined: none. */
  readonly groupOf: (op: Op) => string | undefined
  /** Where an op read from the journal starts. */
  readonly start: (op: Op) => Task
  readonly advance: (task: Task) => Effect.Effect<Step<End>, E, R>
  /** An op that ended so is unsettled: the later ops of its group wait for the next run. */
  readonly unsettled: (end: End) => boolean
  /** An op that ended so is done: the ops waiting for it may run. */
  readonly done: (end: End) => boolean
  /** An op that ended so added ops to the journal (past the cursor): read on. */
  readonly grew: (end: End) => boolean
  readonly deferred: Deferred
}

interface Entry<Task> {
  readonly key: string
  readonly group: string | undefined
  readonly task: Task
}

/** Runs one phase to its end (see the module's comment). */
export const runPhase = <Task, End, E, R>(options: PhaseOptions<Task, End, E, R>): Effect.Effect<void, E, R> =>
  Effect.gen(function*() {
    const { deferred } = options
    const ready: Array<Entry<Task>> = []
    const due: Array<Entry<Task>> = []
    /** Ops of a group behind its running, parked or ready op; a group present here is busy. */
    const groups = new Map<string, Array<Op>>()
    /** Keys of the ops the phase holds (ready, running, parked, queued behind their group). */
    const owned = new Set<string>()
    /** Ops read whose dependency was not done, by the key they wait for (not owned). */
    const waiting = new Map<string, Array<Op>>()
    const waitingKeys = new Set<string>()
    let running = 0
    let parked = 0
    /** While the journal is read: the ops that end meanwhile, and whether done (the read may show them pending). */
    let endedWhileReading: Map<string, boolean> | undefined
    /** Seq of the last op read in this pass. */
    let cursor = 0
    /** The journal may hold ops of the phase past the cursor. */
    let ahead = true
    /** An op ended since this pass began. */
    let endedInPass = false
    /** Groups with ops left in the journal, each with the lowest seq left: read again from there. */
    const spill = new Map<string, number>()
    const spillBefore = (seq: number) => {
      for (const s of spill.values()) if (s < seq) return true
      return false
    }

    // Idle workers wait for a change; `epoch` counts changes, so none is missed between a
    // worker's look at the state and its wait.
    let epoch = 0
    let waiters: Array<() => void> = []
    const changed = () => {
      epoch++
      const wake = waiters
      waiters = []
      for (const w of wake) w()
    }
    const changeAfter = (seen: number) =>
      Effect.callback<void>((resume) => {
        if (epoch !== seen) return resume(Effect.void)
        const w = () => resume(Effect.void)
        waiters.push(w)
        return Effect.sync(() => {
          waiters = waiters.filter((x) => x !== w)
        })
      })

    const entryOf = (op: Op, group: string | undefined): Entry<Task> => ({ key: op.key, group, task: options.start(op) })

    const unwait = (op: Op, waitsFor: string) => {
      waitingKeys.delete(op.key)
      const list = waiting.get(waitsFor)
      if (list === undefined) return
      const rest = list.filter((o) => o.key !== op.key)
      if (rest.length === 0) waiting.delete(waitsFor)
      else waiting.set(waitsFor, rest)
    }

    /**
     * Takes an op read (or released) as pending, unless the phase holds it already, it
     * waits behind an unsettled group, or it ended while it was read. `waitsFor`: the key
     * of its dependency while that is not done.
     */
    const take = (op: Op, waitsFor: string | null, ended: ReadonlyMap<string, boolean>) => {
      if (owned.has(op.key) || deferred.ops.has(op.key) || ended.has(op.key)) return
      if (waitsFor !== null && ended.get(waitsFor) !== true) {
        if (waitingKeys.has(op.key)) return
        // Its dependency is not held here and may be an op left in the journal: a refill
        // from that spill reads this one again.
        if (!owned.has(waitsFor) && !waitingKeys.has(waitsFor) && spillBefore(op.seq)) return
        waitingKeys.add(op.key)
        const list = waiting.get(waitsFor)
        if (list === undefined) waiting.set(waitsFor, [op])
        else list.push(op)
        return
      }
      // Kept as waiting and now runnable (its dependency done elsewhere): taken here.
      if (waitingKeys.has(op.key) && op.dependsOn !== null) unwait(op, op.dependsOn)
      const group = options.groupOf(op)
      if (group !== undefined && deferred.groups.has(group)) {
        deferred.ops.add(op.key)
        return
      }
      const queue = group === undefined ? undefined : groups.get(group)
      if (group !== undefined) {
        const left = spill.get(group)
        if (left !== undefined || (queue !== undefined && queue.length >= options.holdPerGroup)) {
          spill.set(group, Math.min(left ?? op.seq, op.seq))
          return
        }
      }
      owned.add(op.key)
      if (group === undefined) return void ready.push(entryOf(op, group))
      if (queue !== undefined) return void queue.push(op)
      groups.set(group, [])
      ready.push(entryOf(op, group))
    }

    const none: ReadonlyMap<string, boolean> = new Map()

    /** Ops held: ready, running, parked, queued behind their group, waiting for a dependency. */
    const held = () => owned.size + waitingKeys.size

    /** A group left in the journal whose queue is down to half: read again from its spill. */
    const refillDue = (): string | undefined => {
      for (const group of spill.keys()) {
        if ((groups.get(group)?.length ?? 0) <= options.holdPerGroup / 2) return group
      }
      return undefined
    }

    /**
     * Reads `group` again from its spill, up to the cursor (what lies past it the cursor
     * reads), until the group is left in the journal again: ops of other groups and those
     * waiting are taken on the way as by any read.
     */
    const refill = (group: string) =>
      Effect.gen(function*() {
        const from = spill.get(group)!
        spill.delete(group)
        const ended = new Map<string, boolean>()
        endedWhileReading = ended
        let after = from - 1
        for (let more = true; more;) {
          const page = yield* options.read(after, options.batchSize)
          more = page.length >= options.batchSize
          for (const p of page) {
            if (p.op.seq > cursor || spill.has(group)) {
              more = false
              break
            }
            take(p.op, p.waitsFor, ended)
            after = p.op.seq
          }
        }
        endedWhileReading = undefined
        changed()
      })

    const read = Effect.gen(function*() {
      const ended = new Map<string, boolean>()
      endedWhileReading = ended
      // Cleared before reading: an op adding ops meanwhile asks for another read.
      ahead = false
      const page = yield* options.read(cursor, options.batchSize)
      endedWhileReading = undefined
      for (const p of page) take(p.op, p.waitsFor, ended)
      if (page.length > 0) cursor = page[page.length - 1]!.op.seq
      // A full page: read on once these are taken, whether or not any op ends (they may all park).
      if (page.length >= options.batchSize) ahead = true
      changed()
    })

    const finish = (entry: Entry<Task>, end: End) => {
      owned.delete(entry.key)
      const done = options.done(end)
      endedWhileReading?.set(entry.key, done)
      endedInPass = true
      if (options.grew(end)) ahead = true
      const dependants = waiting.get(entry.key)
      if (dependants !== undefined) {
        // Not done: they stay pending (blocked) and this run forgets them.
        waiting.delete(entry.key)
        for (const op of dependants) {
          waitingKeys.delete(op.key)
          if (done) take(op, null, none)
        }
      }
      if (entry.group !== undefined) {
        const queue = groups.get(entry.group) ?? []
        if (options.unsettled(end)) {
          deferred.groups.add(entry.group)
          for (const op of queue) {
            owned.delete(op.key)
            deferred.ops.add(op.key)
          }
          groups.delete(entry.group)
          // Those left in the journal are deferred when the next pass reads them.
          spill.delete(entry.group)
        } else {
          const next = queue.shift()
          if (next === undefined) groups.delete(entry.group)
          else ready.unshift(entryOf(next, entry.group))
        }
      }
      changed()
    }

    /** Puts a parked op (counted in `parked` by its worker) back among the due ones at `untilMs`. */
    const wake = (entry: Entry<Task>, untilMs: number) =>
      Effect.gen(function*() {
        const wait = untilMs - (yield* Clock.currentTimeMillis)
        yield* Effect.forkScoped(
          Effect.andThen(
            Effect.sleep(Duration.millis(Math.max(0, wait))),
            Effect.sync(() => {
              parked--
              due.push(entry)
              changed()
            })
          )
        )
      })

    const worker = Effect.gen(function*() {
      for (;;) {
        const seen = epoch
        const entry = due.shift() ?? ready.shift()
        if (entry !== undefined) {
          running++
          const step = yield* options.advance(entry.task)
          // Counted as parked before it stops counting as running: another worker never
          // sees the phase empty in between.
          if (step._tag === "parked") parked++
          running--
          if (step._tag === "ended") finish(entry, step.end)
          else yield* wake(entry, step.untilMs)
          continue
        }
        const refilled = endedWhileReading === undefined ? refillDue() : undefined
        if (endedWhileReading !== undefined) {
          yield* changeAfter(seen)
        } else if (refilled !== undefined) {
          yield* refill(refilled)
        } else if (ahead && (held() < options.holdLimit || owned.size === 0)) {
          yield* read
        } else if (!ahead && running === 0 && parked === 0) {
          if (endedInPass) {
            // Another pass from the start, for what no end here announced.
            endedInPass = false
            cursor = 0
            ahead = true
            continue
          }
          // Nothing ready, running, parked or left to read: wake the others to end too.
          changed()
          return
        } else {
          yield* changeAfter(seen)
        }
      }
    })

    yield* Effect.all(Array.from({ length: Math.max(1, options.concurrency) }, () => worker), {
      concurrency: "unbounded",
      discard: true
    })
  }).pipe(Effect.scoped)
