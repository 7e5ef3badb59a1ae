/**
 * The plan of fixed CSV files, pinned byte for byte: every op the journal gets (seq, key,
 * kind, payload text, dependency, state, plan run), the journal's meta, the rejects file
 * and the figures of the result, on one thread and with the planning thread, and again
 * after a rerun. Speed work on reading, validating and planning must leave all of it as
 * it is; a change that means to alter a plan updates the pins (`vitest -u`) in its own
 * commit, saying why.
 *
 * The files cover what reading and planning decide: a byte order mark, quoted delimiters,
 * quotes and line breaks, blank and whitespace lines, a quote inside an unquoted cell,
 * a closing quote followed by text (the CSV parser's own reading), CRLF and a lone CR,
 * rows of too few and too many cells, repeated rows (occurrence keys) and keys, every
 * rejection, lists and tags found and to be made, assignees, the date and `done`
 * spellings; a Jira export through its preset; and a generated file of 1,700 rows over
 * several batches, whose plan is pinned by its hash. Ids the emulator hands out are
 * replaced by names, so the pins do not depend on its id sequence. A PostgreSQL journal
 * gets the same ops as a file.
 */
import Database from "better-sqlite3"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, layer } from "@effect/vitest"
import { RestClient } from "../../src/client/rest-client.ts"
import type { ImportOptions } from "../../src/connectors/csv/options.ts"
import { planCsvImport } from "../../src/connectors/csv/plan.ts"
import type { ImportResult } from "../../src/connectors/csv/result.ts"
import { Journal } from "../../src/store/journal.ts"
import { parsePostgresUrl } from "../../src/store/postgres.ts"
import { Emulator, emulatorLayer, tempDir } from "../support/effect.ts"
import { freshSchema, pgClient, query } from "../support/postgres.ts"
import { testClient } from "../sync/replay-helpers.ts"

const fixtures = path.join(import.meta.dirname, "..", "fixtures")
const pins = path.join(import.meta.dirname, "__pins__")

/** The journal's ops in seq order and its meta, one line each. */
const dumpJournal = (file: string): string => {
  const db = new Database(file, { readonly: true })
  try {
    const ops = db
      .prepare("SELECT seq, key, kind, payload, depends_on, state, attempts, plan_run FROM ops ORDER BY seq")
      .raw()
      .all() as Array<Array<unknown>>
    const meta = db.prepare("SELECT key, value FROM meta ORDER BY key").raw().all() as Array<Array<unknown>>
    return [...ops.map((r) => r.join("\t")), "-- meta", ...meta.map((r) => r.join("\t"))].join("\n")
  } finally {
    db.close()
  }
}

/** What a result says about the plan (the rejects file's path left out). */
const figures = ({ rejectsFile: _, ...rest }: ImportResult) => JSON.stringify(rest, null, 1)

/** Ids the emulator chose, replaced by what they stand for. */
const named = (text: string, names: ReadonlyMap<string, string>) => {
  let out = text
  for (const [id, name] of names) out = out.replaceAll(id, name)
  return out
}

interface Setup {
  readonly ws: string
  readonly names: Map<string, string>
}

const PEOPLE = [["ada@example.com", "Ada", "Lovelace"], ["grace@example.com", "Grace", "Hopper"]] as const
/** E-mail -> user id, of the people made so far. */
const people = new Map<string, string>()

/** A workspace of its own, with a list, a tag and two people the fixtures name. */
const setUp = (label: string) =>
  Effect.gen(function*() {
    const handle = yield* Emulator
    const ws = handle.admin.createWorkspace({ name: `pin-${label}` }).id
    const names = new Map<string, string>([[ws, "<workspace>"]])
    for (const [email, first, last] of PEOPLE) {
      // A person is made once (e-mails are unique on the service) and joins each workspace.
      let userId = people.get(email)
      if (userId === undefined) {
        userId = handle.admin.createUser({ email, firstName: first, lastName: last }).userId
        people.set(email, userId)
      }
      handle.admin.setWorkspaceLevel(ws, userId, "MEMBER")
      names.set(userId, `<user ${email}>`)
    }
    const { list, tag } = yield* Effect.gen(function*() {
      const client = yield* RestClient
      return {
        list: yield* client.createList({ workspaceId: ws, title: "Backlog" }),
        tag: yield* client.createTag({ workspaceId: ws, title: "old" })
      }
    }).pipe(Effect.provide(testClient(handle)))
    names.set(list.id, "<list Backlog>")
    names.set(tag.id, "<tag old>")
    return { ws, names } satisfies Setup
  })

/** Plans `csv` into `journal` (nothing sent); the result, or the failure's message. */
const plan = (journal: string, options: ImportOptions) =>
  Effect.gen(function*() {
    const handle = yield* Emulator
    return yield* Effect.gen(function*() {
      return yield* planCsvImport(yield* RestClient, yield* Journal, options)
    }).pipe(Effect.provide(Layer.merge(Journal.layer(journal), testClient(handle))))
  })

/** Everything a plan leaves: the journal, the rejects file, the result. */
const outcome = (setup: Setup, journal: string, rejects: string, result: ImportResult) =>
  named(
    [
      dumpJournal(journal),
      "-- rejects",
      fs.existsSync(rejects) ? fs.readFileSync(rejects, "utf8") : "(none)",
      "-- result",
      figures(result)
    ].join("\n"),
    setup.names
  ) + "\n"

/**
 * Plans `csv` on one thread and on the planning thread into fresh journals (the same
 * outcome), then again into the first (a rerun, on one thread): both outcomes, one after
 * the other.
 */
const planTwice = (label: string, csv: string, mapping: ImportOptions["mapping"]) =>
  Effect.gen(function*() {
    const setup = yield* setUp(label)
    const dir = yield* tempDir("ws-plan-pin-")
    const options = (thread: boolean, rejectsFile: string): ImportOptions => ({
      workspaceId: setup.ws,
      csv: { file: csv },
      mapping,
      planThread: thread,
      rejectsFile
    })
    const once = (name: string, thread: boolean, journal = path.join(dir, `${name}.sqlite`)) =>
      Effect.map(plan(journal, options(thread, path.join(dir, `${name}.rejects.csv`))), (result) =>
        outcome(setup, journal, path.join(dir, `${name}.rejects.csv`), result))
    const single = yield* once("single", false)
    const threaded = yield* once("threaded", true)
    expect(threaded).toBe(single)
    const rerun = yield* once("rerun", false, path.join(dir, "single.sqlite"))
    return { setup, dir, text: `${single}== rerun\n${rerun}` }
  })

/**
 * Keyless rows (content-hash keys), 1,700 of them over four batches and seven insert chunks:
 * every 7th row the same (occurrences across chunks and batches), every 97th without a
 * title, every 101st with a bad date, lists found and to be made; `to` rows of them.
 */
const generated = (to: number) =>
  ["title,description,list,duedAt,done,tags"].concat(
    Array.from({ length: to }, (_, i) => {
      if (i % 7 === 3) return "Same row,,Backlog,,,"
      if (i % 97 === 5) return `,no title ${i},Backlog,2024-01-01,,`
      if (i % 101 === 7) return `Bad date ${i},,Doing,2024-13-45,,`
      return `Task ${i},"line ${i}, quoted",${["Backlog", "Doing", "Review"][i % 3]},2024-03-${String(1 + (i % 28)).padStart(2, "0")},${i % 4 === 0 ? "yes" : "no"},t${i % 5};shared`
    })
  ).join("\n") + "\n"

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex")

// Planning threads and HTTP to the emulator run in real time: the live clock.
layer(emulatorLayer({ seed: "empty" }), { timeout: 60_000, excludeTestServices: true })("import-csv plans, pinned", (it) => {
  it.effect("R-REST-RECORD-27: a keyless file (content-hash keys, occurrences, every rejection) plans exactly as pinned", () =>
    Effect.gen(function*() {
      const { text } = yield* planTwice("keyless", path.join(fixtures, "plan-pin", "keyless.csv"), { preset: "generic" })
      yield* Effect.promise(() => expect(text).toMatchFileSnapshot(path.join(pins, "keyless.txt")))
    }))

  it.effect("R-REST-RECORD-27: a keyed CRLF file with a lone CR, repeated and empty keys plans exactly as pinned", () =>
    Effect.gen(function*() {
      const { text } = yield* planTwice("keyed-crlf", path.join(fixtures, "plan-pin", "keyed-crlf.csv"), { preset: "generic" })
      yield* Effect.promise(() => expect(text).toMatchFileSnapshot(path.join(pins, "keyed-crlf.txt")))
    }))

  it.effect("a semicolon file with quotes the parser reads its own way plans exactly as pinned", () =>
    Effect.gen(function*() {
      const { text } = yield* planTwice("semicolon", path.join(fixtures, "plan-pin", "semicolon-odd-quotes.csv"), { preset: "generic" })
      yield* Effect.promise(() => expect(text).toMatchFileSnapshot(path.join(pins, "semicolon-odd-quotes.txt")))
    }))

  it.effect("a Jira export plans its records, comments, attachments and sub-tasks exactly as pinned", () =>
    Effect.gen(function*() {
      const { text } = yield* planTwice("jira", path.join(fixtures, "presets", "jira.csv"), { preset: "jira" })
      yield* Effect.promise(() => expect(text).toMatchFileSnapshot(path.join(pins, "jira.txt")))
    }))

  it.effect("a quote never closed fails the plan with the parser's line, nothing planned", () =>
    Effect.gen(function*() {
      const setup = yield* setUp("unclosed")
      const dir = yield* tempDir("ws-plan-pin-")
      const journal = path.join(dir, "j.sqlite")
      const error = yield* Effect.flip(plan(journal, {
        workspaceId: setup.ws,
        csv: { file: path.join(fixtures, "plan-pin", "unclosed-quote.csv") },
        mapping: { preset: "generic" }
      }))
      const text = `${error._tag}: ${named(error.message, setup.names).replace(path.join(fixtures, "plan-pin"), "<fixtures>")}\n${named(dumpJournal(journal), setup.names)}\n`
      yield* Effect.promise(() => expect(text).toMatchFileSnapshot(path.join(pins, "unclosed-quote.txt")))
    }))

  it.effect("R-REST-RECORD-27: 1,400 generated rows, then 300 more appended, plan exactly as pinned (by hash)", () =>
    Effect.gen(function*() {
      const dir = yield* tempDir("ws-plan-pin-")
      const csv = path.join(dir, "generated.csv")
      fs.writeFileSync(csv, generated(1_400))
      const first = yield* planTwice("generated", csv, { preset: "generic" })
      fs.writeFileSync(csv, generated(1_700))
      const options: ImportOptions = { workspaceId: first.setup.ws, csv: { file: csv }, mapping: { preset: "generic" } }
      const appended = yield* plan(path.join(first.dir, "single.sqlite"), options)
      const text = `${first.text}== appended\n${outcome(first.setup, path.join(first.dir, "single.sqlite"), "", appended)}`
      yield* Effect.promise(() =>
        expect(`${text.split("\n").length} lines, sha256 ${sha256(text)}\n`).toMatchFileSnapshot(path.join(pins, "generated.txt"))
      )
    }), 180_000)

  it.effect("R-REST-RECORD-27: into a PostgreSQL journal the fixtures plan the same ops in the same order as into a file, a rerun too", () =>
    Effect.gen(function*() {
      for (const name of ["keyless.csv", "keyed-crlf.csv"]) {
        const setup = yield* setUp(`pg-${name}`)
        const dir = yield* tempDir("ws-plan-pin-")
        const options: ImportOptions = { workspaceId: setup.ws, csv: { file: path.join(fixtures, "plan-pin", name) }, mapping: { preset: "generic" } }
        const file = path.join(dir, "j.sqlite")
        const location = yield* freshSchema
        for (const journal of [file, file, location, location]) yield* plan(journal, options)
        const { schema, url } = parsePostgresUrl(location)
        const client = yield* pgClient(url)
        const pgRows = yield* query<Record<string, unknown>>(
          client,
          `SELECT key, kind, payload, depends_on, state, plan_run::int AS plan_run FROM ${schema}.ops ORDER BY seq`
        )
        const db = new Database(file, { readonly: true })
        const fileRows = db.prepare("SELECT key, kind, payload, depends_on, state, plan_run FROM ops ORDER BY seq").all()
        db.close()
        expect(pgRows).toEqual(fileRows)
      }
    }).pipe(Effect.scoped), 120_000)
})
