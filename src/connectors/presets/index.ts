/**
 * The presets that read other tools' exports (one contract, model.ts; one reader per
 * tool). `generic` is not here: it maps our own field names through the CSV mapping
 * (src/connectors/csv/presets.ts).
 */
import * as fs from "node:fs"
import type { CsvReader } from "../csv/read.ts"
import { asana } from "./asana.ts"
import { clickup } from "./clickup.ts"
import { jira } from "./jira.ts"
import type { Preset, TabularExport } from "./model.ts"
import { readTrelloBoard } from "./trello-board.ts"
import { trello } from "./trello.ts"

export const TOOL_PRESET_NAMES = ["trello", "asana", "jira", "clickup"] as const
export type ToolPresetName = (typeof TOOL_PRESET_NAMES)[number]

export const TOOL_PRESETS: Readonly<Record<ToolPresetName, Preset & { readonly label: string }>> = {
  trello: { ...trello, label: "Trello" },
  asana: { ...asana, label: "Asana" },
  jira: { ...jira, label: "Jira" },
  clickup: { ...clickup, label: "ClickUp" }
}

export const isToolPreset = (name: string | undefined): name is ToolPresetName =>
  name !== undefined && (TOOL_PRESET_NAMES as ReadonlyArray<string>).includes(name)

/** Whether a file holds JSON rather than CSV (Trello's board export): its first character. */
export const isJsonFile = (file: string): boolean => {
  const fd = fs.openSync(file, "r")
  try {
    const head = Buffer.alloc(64)
    const n = fs.readSync(fd, head, 0, 64, 0)
    return /^\uFEFF?\s*[{[]/.test(head.subarray(0, n).toString("utf8"))
  } finally {
    fs.closeSync(fd)
  }
}

/** An export read whole (a board JSON) as the CSV reader's batches. */
export const tabularReader = (t: TabularExport, batchSize: number): CsvReader => ({
  header: t.header,
  delimiter: ",",
  encoding: "utf-8",
  batches: (async function*() {
    for (let i = 0; i < t.rows.length; i += batchSize) yield t.rows.slice(i, i + batchSize)
  })(),
  close: () => {}
})

/** Reads a Trello board JSON file, or says why it cannot. */
export const readTrelloBoardFile = (file: string): TabularExport | { readonly error: string } => {
  const board = readTrelloBoard(fs.readFileSync(file, "utf8"))
  return "error" in board ? { error: `--csv ${file}: ${board.error}` } : board
}
