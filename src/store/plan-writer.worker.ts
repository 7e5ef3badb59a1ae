/**
 * The planning thread (see plan-writer.ts): its own connection to the journal, joined to
 * the caller's plan run, applying `planOps` to each batch in the order received.
 */
import { parentPort, workerData } from "node:worker_threads"
import { JournalDb } from "./journal.ts"
import { decodeOps, encodePlanned, type FromWorker, type ToWorker, type WorkerStart } from "./plan-writer.ts"

const port = parentPort!
const { file, run } = workerData as WorkerStart
const db = new JournalDb(file)
db.joinPlanRun()

const answer = (m: FromWorker) => port.postMessage(m)

port.on("message", (m: ToWorker) => {
  try {
    if ("close" in m) {
      db.close()
      answer({ closed: true })
      port.close()
      return
    }
    answer({ planned: encodePlanned(m.ops.keys, db.planOps(run, decodeOps(m.ops))) })
  } catch (e) {
    answer({ error: e instanceof Error ? e.message : String(e) })
  }
})
