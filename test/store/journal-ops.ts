/** What a journal file holds, for tests that compare plans: its ops in seq order. */
import Database from "better-sqlite3"

/** The ops as planning decides them (seq itself left out: it may differ in gaps). */
export const journalOps = (journalFile: string, options: { readonly withPlanRun?: boolean } = {}) => {
  const db = new Database(journalFile, { readonly: true })
  try {
    return db.prepare(`SELECT key, kind, payload, depends_on, state${options.withPlanRun === true ? ", plan_run" : ""} FROM ops ORDER BY seq`).all()
  } finally {
    db.close()
  }
}
