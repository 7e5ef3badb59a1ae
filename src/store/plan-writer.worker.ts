/**
 * The planning thread (see plan-writer.ts): its own connection to the journal, joined to
 * the caller's plan run, applying `planOps` to each batch in the order received.
 */
import { parentPort, workerData } from "node:worker_threads"
import { JournalDb } from "./journal/db.ts"
import { decodeOps, encodePlanned, type FromWorker, type ToWorker, type WorkerStart } from "./plan-writer.ts"

const port = parentPort!
const { file, run } = workerData as WorkerStart
const opened = (): JournalDb => {
  try {
    const db = new JournalDb(file)
    db.joinPlanRun()
    return db
  } catch (e) {
    // Thrown on as a plain Error: the caller gets the thread's uncaught error serialized,
    // and an Effect error (StoreOpenError) serializes as its fields, without its message.
    throw new Error(e instanceof Error ? e.message : String(e))
  }
}
const db = opened()

const answer = (m: FromWorker) => port.postMessage(m)

// After a batch fails, the later ones are refused, not planned: the plan stays a prefix
// of what was sent, as it does on one thread.
let refused: string | undefined

port.on("message", (m: ToWorker) => {
  try {
    if ("close" in m) {
      db.close()
      answer({ closed: true })
      port.close()
      return
    }
    if (refused !== undefined) return answer({ error: refused })
    answer({ planned: encodePlanned(m.ops.keys, db.planOps(run, decodeOps(m.ops))) })
  } catch (e) {
    refused = e instanceof Error ? e.message : String(e)
    answer({ error: refused })
  }
})
