/**
 * Which CSV column feeds which record field. A mapping comes from `--map FIELD=COLUMN`
 * flags, a `--mapping file.json` and/or a `--preset`; explicit entries win over the
 * file, the file over the preset. It is checked against the header before any row is
 * read: an explicit column that the file does not have is an error.
 */
import { Schema, SchemaIssue } from "effect"
import * as Data from "effect/Data"
import * as Result from "effect/Result"
import { GENERIC_PRESET, type Preset, type PresetName } from "./presets.ts"
import { parseJsonText } from "../../schema/json-text.ts"

export const FIELDS = [
  "title",
  "description",
  "descriptionHtml",
  "list",
  "startedAt",
  "duedAt",
  "assignees",
  "tags",
  "done",
  "key"
] as const
export const Field = Schema.Literals(FIELDS)
export type Field = typeof Field.Type

// The message is spelled out: an empty column in a `--mapping` file keeps the wording users depend on.
const Column = Schema.String.check(
  Schema.isMinLength(1, { message: "Expected a string at least 1 character(s) long, actual \"\"" })
)
const opt = Schema.optionalKey(Column)

/** `{"title": "Name", ...}`: the shape of a `--mapping` file (unknown fields are errors). */
export const MappingFile = Schema.Struct({
  title: opt,
  description: opt,
  descriptionHtml: opt,
  list: opt,
  startedAt: opt,
  duedAt: opt,
  assignees: opt,
  tags: opt,
  done: opt,
  key: opt
})
export type MappingSpec = Partial<Record<Field, string>>

export class MappingError extends Data.TaggedError("MappingError")<{ readonly message: string }> {}

/** Parses one `--map FIELD=COLUMN` value. */
export const parseMapFlag = (value: string): Result.Result<readonly [Field, string], MappingError> => {
  const eq = value.indexOf("=")
  if (eq <= 0 || eq === value.length - 1) {
    return Result.fail(new MappingError({ message: `--map ${value}: expected FIELD=COLUMN, e.g. --map title=Name` }))
  }
  const field = value.slice(0, eq).trim()
  const column = value.slice(eq + 1)
  if (!(FIELDS as ReadonlyArray<string>).includes(field)) {
    return Result.fail(new MappingError({ message: `--map ${value}: unknown field "${field}"; fields are ${FIELDS.join(", ")}` }))
  }
  return Result.succeed([field as Field, column] as const)
}

/** Decodes the JSON text of a `--mapping` file. */
export const parseMappingFile = (name: string, text: string): Result.Result<MappingSpec, MappingError> => {
  const parsed = parseJsonText(text)
  if (Result.isFailure(parsed)) return Result.fail(new MappingError({ message: `--mapping ${name}: ${parsed.failure}` }))
  return Schema.decodeUnknownResult(MappingFile, { onExcessProperty: "error", reportInput: true })(parsed.success).pipe(
    Result.mapError(
      (e) =>
        new MappingError({
          message: `--mapping ${name}: expected {"FIELD": "COLUMN", ...} with FIELD one of ${FIELDS.join(", ")}: ${
            formatMappingIssue(e.issue)
              .issues
              .map((i) => `${(i.path ?? []).join(".")}: ${i.message}`)
              .join("; ")
          }`
        })
    )
  )
}

/** A rejected value as the `--mapping` messages print it (`actual ...`): its JSON text. */
const actualText = (u: unknown): string => {
  try {
    return JSON.stringify(u) ?? String(u)
  } catch {
    return String(u)
  }
}

/**
 * Leaf messages in the wording users of `--mapping` depend on (`is unexpected, expected: ...`,
 * `Expected string, actual ...`), not Effect's default: an unknown field, a non-string column,
 * a non-object.
 */
const formatMappingIssue = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => {
    switch (issue._tag) {
      case "UnexpectedKey":
        return `is unexpected, expected: ${FIELDS.map((f) => JSON.stringify(f)).join(" | ")}`
      case "InvalidType":
        return issue.ast._tag === "String"
          ? `Expected string, actual ${actualText(issue.input)}`
          : `Expected { ${FIELDS.map((f) => `readonly ${f}?: minLength(1)`).join("; ")} }, actual ${actualText(issue.input)}`
      default:
        return SchemaIssue.defaultLeafHook(issue)
    }
  }
})

/** A column of the header, resolved to every index carrying that name (Jira repeats `Labels`). */
export interface ResolvedColumn {
  readonly name: string
  readonly indexes: ReadonlyArray<number>
}

/** The mapping, resolved against a header. */
export type ResolvedMapping = Partial<Record<Field, ResolvedColumn>>

export interface MappingInput {
  readonly preset?: PresetName | undefined
  readonly file?: MappingSpec | undefined
  readonly flags?: ReadonlyArray<readonly [Field, string]> | undefined
}

const norm = (s: string) => s.trim().toLowerCase()

/**
 * Resolves the mapping against `header`. Explicit columns (flags, file) must exist exactly
 * (after trimming; case-insensitive as a fallback); preset columns are used when present
 * (exports differ by version). `title` must end up mapped.
 */
export const resolveMapping = (
  header: ReadonlyArray<string>,
  input: MappingInput
): Result.Result<{ readonly mapping: ResolvedMapping; readonly transforms: Preset["transforms"] }, MappingError> => {
  const exact = new Map<string, Array<number>>()
  const loose = new Map<string, Array<number>>()
  header.forEach((h, i) => {
    const t = h.trim()
    ;(exact.get(t) ?? exact.set(t, []).get(t)!).push(i)
    ;(loose.get(norm(t)) ?? loose.set(norm(t), []).get(norm(t))!).push(i)
  })
  const find = (column: string): ResolvedColumn | undefined => {
    const idx = exact.get(column.trim()) ?? loose.get(norm(column))
    return idx === undefined ? undefined : { name: column, indexes: idx }
  }
  const mapping: ResolvedMapping = {}
  // Tool presets never reach here (their readers read the export); generic is a mapping.
  const preset = input.preset === "generic" ? GENERIC_PRESET : undefined
  if (preset !== undefined) {
    for (const [field, candidates] of Object.entries(preset.columns) as Array<[Field, ReadonlyArray<string>]>) {
      for (const c of candidates) {
        const found = find(c)
        if (found !== undefined) {
          mapping[field] = found
          break
        }
      }
    }
  }
  const explicit: Array<readonly [Field, string, string]> = [
    ...Object.entries(input.file ?? {}).map(([f, c]) => [f as Field, c as string, "--mapping"] as const),
    ...(input.flags ?? []).map(([f, c]) => [f, c, "--map"] as const)
  ]
  const missing: Array<string> = []
  for (const [field, column, source] of explicit) {
    const found = find(column)
    if (found === undefined) missing.push(`${source} ${field}=${column}`)
    else mapping[field] = found
  }
  const shown = header.map((h) => JSON.stringify(h)).join(", ")
  if (missing.length > 0) {
    return Result.fail(
      new MappingError({ message: `unknown column in the mapping: ${missing.join(", ")}; the CSV header has ${shown}` })
    )
  }
  if (mapping.title === undefined) {
    const hint = preset !== undefined
      ? `preset ${input.preset} expects a title column named ${preset.columns.title?.map((c) => JSON.stringify(c)).join(" or ")}`
      : "map one with --map title=COLUMN, --mapping or --preset"
    return Result.fail(new MappingError({ message: `no column is mapped to title: ${hint}; the CSV header has ${shown}` }))
  }
  return Result.succeed({ mapping, transforms: preset?.transforms ?? {} })
}
