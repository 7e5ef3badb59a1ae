/**
 * How a module starts its thread's code: `NAME.cjs` next to the module in a build (the
 * bundles and the threads' files share dist/), or the TypeScript source `NAME.ts` next to
 * it, loaded through tsx, when running from the sources. Undefined when neither is there
 * (worksync bundled into someone else's build): the caller then works on its own thread.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export interface WorkerEntry {
  /** A file, or code to evaluate (`eval`). */
  readonly source: string
  readonly eval: boolean
}

/** The entry of thread code `name` (e.g. "plan-writer.worker") for the module at `moduleUrl` (its import.meta.url). */
export const workerEntry = (moduleUrl: string, name: string): WorkerEntry | undefined => {
  const here = fileURLToPath(moduleUrl)
  const dir = path.dirname(here)
  const built = path.join(dir, `${name}.cjs`)
  if (fs.existsSync(built)) return { source: built, eval: false }
  const source = path.join(dir, `${name}.ts`)
  if (!here.endsWith(".ts") || !fs.existsSync(source)) return undefined
  let tsx: string
  try {
    tsx = createRequire(here).resolve("tsx/cjs/api")
  } catch {
    return undefined
  }
  // tsx's require hook, registered in the worker, compiles the source on the fly.
  return { source: `require(${JSON.stringify(tsx)}).register(); require(${JSON.stringify(source)})`, eval: true }
}
