/**
 * `--preset`: `generic` maps our own field names (and the plainest synonyms) through the
 * CSV mapping; every other preset reads another tool's export with that tool's reader
 * (src/connectors/presets: Jira, Asana, Trello, ClickUp), which carries more than a
 * column mapping can (comments, attachments, checklists, people by name, archived state,
 * sub-tasks) and accounts for every column in a census.
 */
import { TOOL_PRESET_NAMES } from "../presets/index.ts"
import type { Field } from "./mapping.ts"

export interface Preset {
  readonly description: string
  readonly columns: Partial<Record<Field, ReadonlyArray<string>>>
  /** Per-field rewrite of the raw cell before validation. */
  readonly transforms: Partial<Record<Field, (value: string) => string>>
}

export const PRESET_NAMES = ["generic", ...TOOL_PRESET_NAMES] as const
export type PresetName = (typeof PRESET_NAMES)[number]

/** The column mapping of `generic`, the one preset that is a mapping. */
export const GENERIC_PRESET: Preset = {
  description: "columns named after the fields (title, description, list, startedAt, duedAt, assignees, tags, done, key)",
  columns: {
    title: ["title", "name", "summary", "task"],
    description: ["description", "notes", "details"],
    descriptionHtml: ["descriptionHtml", "description_html"],
    list: ["list", "list name", "section"],
    startedAt: ["startedAt", "started_at", "start date", "start"],
    duedAt: ["duedAt", "due_at", "due date", "due"],
    assignees: ["assignees", "assignee emails", "assignee email", "assignee"],
    tags: ["tags", "labels"],
    done: ["done", "completed", "complete"],
    key: ["key", "id"]
  },
  transforms: {}
}
