/**
 * The rows of the file an import reads, and what resolving them needs of the workspace.
 * Another tool's export is read by its own reader (src/connectors/presets), not mapped:
 * its columns are the tool's, and a mapping of them would only get in the way.
 */
import * as Effect from "effect/Effect"
import * as Result from "effect/Result"
import { isJsonFile, isToolPreset, readTrelloBoardFile, tabularReader, TOOL_PRESETS, type ToolPresetName } from "../presets/index.ts"
import type { PresetReader } from "../presets/model.ts"
import { ImportUsageError } from "./errors.ts"
import { resolveMapping } from "./mapping.ts"
import type { ImportOptions } from "./options.ts"
import { type CsvReader, type CsvRecord, openCsv } from "./read.ts"
import { type ExtractedRow, makeExtractor } from "./rows.ts"

export type RowSource =
  & {
    /** Open: the caller closes it. */
    readonly reader: CsvReader
    readonly needs: { readonly tags: boolean; readonly users: boolean }
  }
  & (
    // A tool's rows are extracted by its planner, which resolves people against the workspace.
    | { readonly tool: { readonly name: ToolPresetName; readonly reader: PresetReader }; readonly extract?: undefined }
    | { readonly tool?: undefined; readonly extract: (record: CsvRecord) => ExtractedRow }
  )

export const openRowSource = (options: ImportOptions, batchRows: number): Effect.Effect<RowSource, ImportUsageError> =>
  Effect.gen(function*() {
    const toolName = isToolPreset(options.mapping.preset) ? options.mapping.preset : undefined
    if (toolName !== undefined && ((options.mapping.flags?.length ?? 0) > 0 || options.mapping.file !== undefined)) {
      return yield* Effect.fail(
        new ImportUsageError({
          message: `--preset ${toolName} reads the export's own columns; --map and --mapping go with --preset generic or no preset`
        })
      )
    }
    const reader = yield* Effect.tryPromise({
      try: async () => {
        if (toolName !== "trello" || !isJsonFile(options.csv.file)) return openCsv(options.csv, batchRows)
        const board = readTrelloBoardFile(options.csv.file)
        if ("error" in board) throw new Error(board.error)
        return tabularReader(board, batchRows)
      },
      catch: (e) => new ImportUsageError({ message: (e as Error).message })
    })
    if (toolName !== undefined) {
      const toolReader = TOOL_PRESETS[toolName].open(reader.header)
      if ("error" in toolReader) {
        reader.close()
        return yield* Effect.fail(new ImportUsageError({ message: `--csv ${options.csv.file}: ${toolReader.error}` }))
      }
      return { reader, needs: { tags: true, users: true }, tool: { name: toolName, reader: toolReader } } satisfies RowSource
    }
    const resolved = resolveMapping(reader.header, options.mapping)
    if (Result.isFailure(resolved)) {
      reader.close()
      return yield* Effect.fail(new ImportUsageError({ message: resolved.failure.message }))
    }
    const { mapping, transforms } = resolved.success
    return {
      reader,
      needs: { tags: mapping.tags !== undefined, users: mapping.assignees !== undefined },
      extract: makeExtractor(reader.header, mapping, transforms)
    } satisfies RowSource
  })
