/** Reads a preset fixture through the import's own CSV reader (BOM, CRLF, quoting as in a real import). */
import * as path from "node:path"
import { openCsv } from "../../../src/connectors/csv/read.ts"
import type { Preset, PresetReader } from "../../../src/connectors/presets/model.ts"

export const fixture = (name: string) => path.join(import.meta.dirname, "../../fixtures/presets", name)

export const readFixture = async (name: string) => {
  const reader = await openCsv({ file: fixture(name) })
  const rows: Array<ReadonlyArray<string>> = []
  for await (const batch of reader.batches) for (const r of batch) rows.push(r.values)
  return { header: reader.header, rows }
}

export const openWith = (preset: Preset, header: ReadonlyArray<string>): PresetReader => {
  const r = preset.open(header)
  if ("error" in r) throw new Error(r.error)
  return r
}
