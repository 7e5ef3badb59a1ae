/**
 * Writes a service may answer with success and not carry out: a list create (create-list,
 * `POST /v1/lists`, whose shapes the documents do not show) that makes no list, a tag
 * create (beyond the documents) that makes no tag, an update-record that takes `archived`
 * (not among its documented fields) and ignores it. A 2xx is not proof: replay reads such
 * a write back where the documents allow (list-lists, list-tags, get-record). When the
 * effect is missing, or the service has no such operation at all, the capability is
 * missing for the rest of the run and for every later run of the same journal (meta
 * `capability.missing:<name>`, holding the line that says so): the write is not sent
 * again, what needed it is done without it (records in the first list, without the tag,
 * with their archived state as it is) and the reports name it.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import type { JournalApi } from "../store/journal.ts"
import { LEFT_OUT, listNamespace } from "./plan.ts"

/** The capabilities replay confirms, by the operation (and field) they need. */
export const CAPABILITY = {
  lists: "create-list",
  tags: "create-tag",
  archived: "update-record archived"
} as const
export type Capability = (typeof CAPABILITY)[keyof typeof CAPABILITY]

const META_PREFIX = "capability.missing:"

/** One line: the write was answered with success, yet reading back shows no effect. */
export const noEffectLine = (feature: string, write: string, readBack: string, consequence: string): string =>
  `${feature}: ${write} answered success but ${readBack}: not possible on this service; ${consequence}`

interface JournalMeta {
  readonly getMeta: JournalApi["getMeta"]
  readonly setMeta: JournalApi["setMeta"]
}

/**
 * What one set of executors knows of the service's capabilities: read from the journal
 * once per capability, then kept in memory (a replay runs many ops against one journal).
 */
export const capabilityMemory = () => {
  const known = new Map<Capability, string | null>()
  const lineOf = (journal: JournalMeta, name: Capability) =>
    known.has(name)
      ? Effect.succeed(known.get(name) ?? null)
      : Effect.map(journal.getMeta(META_PREFIX + name), (v) => {
        const line = Option.getOrNull(v)
        // Only a missing capability is final; a present one is confirmed write by write.
        if (line !== null) known.set(name, line)
        return line
      })
  return {
    /** The line saying why the capability is missing, or null while it is not known missing. */
    missing: (journal: JournalMeta, name: Capability) => lineOf(journal, name),
    /** Remembers, for this run and every later run of the journal, that the capability is missing. */
    markMissing: (journal: JournalMeta, name: Capability, line: string) =>
      Effect.suspend(() => {
        known.set(name, line)
        return journal.setMeta(META_PREFIX + name, line)
      })
  }
}
export type CapabilityMemory = ReturnType<typeof capabilityMemory>

/** Every capability the journal's runs found missing, with the line that says so. */
export const missingCapabilities = (journal: JournalMeta) =>
  Effect.gen(function*() {
    const out = new Map<Capability, string>()
    for (const name of Object.values(CAPABILITY)) {
      const line = yield* journal.getMeta(META_PREFIX + name)
      if (Option.isSome(line)) out.set(name, line.value)
    }
    return out
  })

/**
 * List titles of the target workspace the journal's runs could not make (mapped to
 * LEFT_OUT): their records are in the workspace's first list.
 */
export const listsNotMade = (journal: Pick<JournalApi, "mappings">, workspaceId: string) =>
  Effect.map(journal.mappings(listNamespace(workspaceId)), (all) =>
    all.filter((m) => m.targetId === LEFT_OUT).map((m) => m.sourceKey).sort())
