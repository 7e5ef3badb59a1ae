/**
 * What a preset reads from another tool's export, in the tool's terms, before anything is
 * resolved against the service. One contract, one reader per tool (jira.ts, asana.ts,
 * trello-csv.ts, trello-json.ts, clickup.ts): the import (src/connectors/csv/preset-plan.ts)
 * turns a `PresetRow` into a record create plus its follow-ups (archive, comments,
 * attachments, checklists), and the census tells the user, column by column, what was
 * carried and what was left behind.
 *
 * Readers do no I/O and never throw on a cell: a cell they cannot read is reported in the
 * row's `problems` (the row is imported without that value) unless the row cannot exist
 * without it (no title), in which case `title` is empty and the import rejects the row.
 */

/** Someone named in the export: by e-mail when the tool writes one, else by display name. */
export interface PersonRef {
  readonly email?: string
  readonly name?: string
}

export interface SourceComment {
  /** Display name (or e-mail) of the original author, as the export writes it. */
  readonly author: string
  /** When it was written: ISO 8601 (`2025-11-05T17:16:00Z`) or a bare date; undefined if the export has none. */
  readonly date: string | undefined
  /** The body as plain text (newlines kept). */
  readonly body: string
}

export interface SourceAttachment {
  /** The file name, as the export names it (used to find it under `--attachments DIR`). */
  readonly name: string
  /** Where the tool serves it; undefined when the export has only a name. */
  readonly url: string | undefined
  readonly author?: string | undefined
  readonly date?: string | undefined
}

export interface SourceChecklistItem {
  readonly title: string
  readonly done: boolean
}

export interface SourceChecklist {
  readonly title: string
  readonly items: ReadonlyArray<SourceChecklistItem>
}

/**
 * The fields of the service a column can be carried to. `key` is the row's identity;
 * `parent` links a sub-task to its parent's key; `attribution` marks columns read only
 * to attribute comments (e.g. a reporter).
 */
export type CarriedField =
  | "title"
  | "description"
  | "list"
  | "startedAt"
  | "duedAt"
  | "done"
  | "archived"
  | "tags"
  | "assignees"
  | "comments"
  | "attachments"
  | "checklists"
  | "parent"
  | "key"

/** What one column of the file is used for: carried to a field, or left behind and why. */
export type ColumnUse =
  | { readonly column: string; readonly carried: true; readonly field: CarriedField }
  | { readonly column: string; readonly carried: false; readonly reason: string }

/** One row of a tool's export, read. */
export interface PresetRow {
  /** The tool's own id of the item (Jira `Issue id`, Asana `Task ID`, ...), or undefined. */
  readonly id: string | undefined
  /** Trimmed; empty when the row has none (the import rejects it). */
  readonly title: string
  readonly description: string | undefined
  /** The list the record goes to, by title (Jira status, Asana section, Trello list, ClickUp status). */
  readonly list: string | undefined
  /** `YYYY-MM-DD` or an ISO 8601 timestamp with a zone; undefined when absent or unreadable. */
  readonly startedAt: string | undefined
  readonly duedAt: string | undefined
  readonly done: boolean
  readonly archived: boolean
  /** Tag titles, trimmed, without duplicates (labels, plus e.g. Jira priority and issue type). */
  readonly tags: ReadonlyArray<string>
  /** Assignees (and other people the record is given to). */
  readonly assignees: ReadonlyArray<PersonRef>
  /** Oldest first. */
  readonly comments: ReadonlyArray<SourceComment>
  readonly attachments: ReadonlyArray<SourceAttachment>
  readonly checklists: ReadonlyArray<SourceChecklist>
  /** The tool's id of the parent item (a sub-task), or undefined. */
  readonly parentId: string | undefined
  /**
   * Other names the export's texts give this item besides `id` (Jira's issue key, a
   * Trello card's short link): a reference to one of them names this row (references.ts).
   */
  readonly names?: ReadonlyArray<string>
  /** Cells that could not be read, one line each naming the column: the row is imported without them. */
  readonly problems: ReadonlyArray<string>
}

/** A reader settled for one file's header. */
export interface PresetReader {
  /** One entry per header column, in header order (repeated columns each have their entry). */
  readonly columns: ReadonlyArray<ColumnUse>
  /** Reads one row (`values` in header order; may be shorter or longer than the header). */
  readonly read: (values: ReadonlyArray<string>) => PresetRow
}

/** A tool's export format. */
export interface Preset {
  readonly name: string
  /** One line for `--help` and errors. */
  readonly description: string
  /**
   * Settles the reader for a header, or says in one line why the file is not this tool's
   * export (e.g. `no "Summary" column: is this a Jira CSV export?`).
   */
  readonly open: (header: ReadonlyArray<string>) => PresetReader | { readonly error: string }
}

/** An export that is not CSV (Trello's board JSON) presented as header + rows for a `Preset`. */
export interface TabularExport {
  readonly header: ReadonlyArray<string>
  readonly rows: ReadonlyArray<{ readonly line: number; readonly values: ReadonlyArray<string> }>
}

/** The census: every column of the file, carried (to which field) or not (and why), with its count of cells holding a value. */
export interface Census {
  readonly carried: ReadonlyArray<{ readonly column: string; readonly field: CarriedField; readonly count: number }>
  readonly notCarried: ReadonlyArray<{ readonly column: string; readonly count: number; readonly reason: string }>
}

/** An empty row, for readers to spread over. */
export const EMPTY_ROW: PresetRow = {
  id: undefined,
  title: "",
  description: undefined,
  list: undefined,
  startedAt: undefined,
  duedAt: undefined,
  done: false,
  archived: false,
  tags: [],
  assignees: [],
  comments: [],
  attachments: [],
  checklists: [],
  parentId: undefined,
  problems: []
}
