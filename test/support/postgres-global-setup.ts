/**
 * The PostgreSQL server of a test run, handed to the tests as `inject("postgresUrl")`
 * (read it through `postgresUrl()` of ./postgres.ts).
 *
 * - `WORKSYNC_TEST_POSTGRES=postgres://USER@HOST:PORT/DB` set: that server is used and
 *   nothing is started. CI sets it (see .ci/run).
 * - unset: a throwaway cluster is started with scripts/postgres-cluster.sh in a temporary
 *   directory (under a second when PostgreSQL is installed) and stopped and removed when
 *   the run ends. When it cannot start, a run with `CI` set fails here, since CI must never
 *   skip the PostgreSQL tests silently; a local run goes on without a URL and the tests
 *   that need one fail with a message saying how to provide it.
 *
 * Every project of the run (the root, reference, alt) runs its global setups in the same
 * process, so the cluster is started once and shared through a process-wide slot; the
 * setup that started it stops it.
 */
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"
import type { TestProject } from "vitest/node"

declare module "vitest" {
  export interface ProvidedContext {
    /** The URL of a PostgreSQL server whose user may create databases, when there is one. */
    postgresUrl: string | undefined
  }
}

const run = promisify(execFile)
const script = fileURLToPath(new URL("../../scripts/postgres-cluster.sh", import.meta.url))

interface Cluster {
  readonly url: string | undefined
  readonly dir: string
}

const slot = Symbol.for("worksync.test.postgres-cluster")
type Slot = { [slot]?: Promise<Cluster> }

const lastLines = (text: string, n: number) => text.trim().split("\n").slice(-n).join("\n")

const stop = async (dir: string) => {
  try {
    await run("bash", [script, "stop", dir], { timeout: 60_000 })
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr ?? String(error)
    process.stderr.write(`postgres test server: could not stop the cluster in ${dir}:\n${lastLines(stderr, 10)}\n`)
  }
}

const start = async (): Promise<Cluster> => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "worksync-pg-"))
  try {
    // Installing PostgreSQL (when it is missing and we may) takes minutes; starting, a second.
    const { stdout } = await run("bash", [script, "start", dir], { timeout: 10 * 60_000 })
    const url = stdout.trim()
    if (!url.startsWith("postgres://")) throw new Error(`unexpected output from ${script}: ${url}`)
    return { url, dir }
  } catch (error) {
    await stop(dir)
    fs.rmSync(dir, { recursive: true, force: true })
    const stderr = (error as { stderr?: string }).stderr
    const why = stderr ? lastLines(stderr, 15) : String(error)
    const message = `could not start a throwaway PostgreSQL server (scripts/postgres-cluster.sh):\n${why}`
    if (process.env.CI) {
      throw new Error(`${message}\nCI needs one: install PostgreSQL 15 or set WORKSYNC_TEST_POSTGRES=postgres://USER@HOST:PORT/DB`)
    }
    process.stderr.write(
      `${message}\nThe tests that need PostgreSQL will fail; set WORKSYNC_TEST_POSTGRES=postgres://USER@HOST:PORT/DB or install PostgreSQL 15.\n`
    )
    return { url: undefined, dir }
  }
}

export default async function setup(project: TestProject) {
  const given = process.env.WORKSYNC_TEST_POSTGRES
  if (given) {
    project.provide("postgresUrl", given)
    return
  }
  const shared = globalThis as Slot
  const owner = shared[slot] === undefined
  const cluster = shared[slot] ??= start()
  const { url, dir } = await cluster
  project.provide("postgresUrl", url)
  if (!owner) return
  return async () => {
    delete shared[slot]
    if (url !== undefined) await stop(dir)
  }
}
