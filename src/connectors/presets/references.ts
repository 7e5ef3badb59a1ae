/**
 * How each tool's texts name another item of the same export (src/sync/references.ts
 * rewrites them to name the target record): the tokens a description or comment holds,
 * each with the name it gives the item, and the names each row is known by.
 *
 * - Jira: an issue key (`ABC-123`), bare or in a browse URL;
 * - Trello: a card URL (`https://trello.com/c/SHORTLINK/12-card-name`), or its short form
 *   without the name; a card is known by the short link of its `Card URL` (the board JSON's
 *   `url` or `shortUrl`);
 * - Asana: a task URL (`https://app.asana.com/0/PROJECT/TASK`, `/f` or not, or
 *   `.../task/TASK`); a task by its `Task ID`;
 * - ClickUp: a task URL (`https://app.clickup.com/t/TASKID`, or `/t/TEAM/TASKID`); a task by
 *   its `Task ID`.
 * A token that names no row of the export is a reference outside the migration: left as
 * written and counted.
 */
import type { PresetRow } from "./model.ts"
import type { ToolPresetName } from "./index.ts"

/** A reference as found in a text: the token as written, and the name of the item it refers to. */
export interface FoundReference {
  readonly token: string
  readonly name: string
}

/** Where a URL ends in running text: whitespace, or a closing bracket or quote. */
const URL_TAIL = "[^\\s<>()\\[\\]\"'`]*"

const FINDERS: Readonly<Record<ToolPresetName, ReadonlyArray<{ readonly pattern: RegExp; readonly name: (m: RegExpExecArray) => string }>>> = {
  jira: [{ pattern: /(?<![A-Za-z0-9_])[A-Z][A-Z0-9_]+-[1-9][0-9]*(?![A-Za-z0-9_]|-\d)/g, name: (m) => m[0] }],
  trello: [{ pattern: new RegExp(`https?://(?:www\\.)?trello\\.com/c/([A-Za-z0-9]+)(?:/${URL_TAIL})?`, "g"), name: (m) => m[1]! }],
  asana: [
    { pattern: new RegExp(`https?://app\\.asana\\.com/0/[0-9]+/([0-9]+)(?:/${URL_TAIL})?`, "g"), name: (m) => m[1]! },
    { pattern: new RegExp(`https?://app\\.asana\\.com/${URL_TAIL}/task/([0-9]+)(?:/${URL_TAIL})?`, "g"), name: (m) => m[1]! }
  ],
  clickup: [{ pattern: new RegExp(`https?://app\\.clickup\\.com/t/(?:[0-9]+/)?([A-Za-z0-9_-]+)(?:/${URL_TAIL})?`, "g"), name: (m) => m[1]! }]
}

/** The references of a text, in the order they appear (a URL's trailing full stop or comma is not part of it). */
export const findReferences = (tool: ToolPresetName, text: string | undefined): Array<FoundReference> => {
  if (text === undefined || text === "") return []
  const out: Array<FoundReference> = []
  for (const { name, pattern } of FINDERS[tool]) {
    for (const m of text.matchAll(pattern)) {
      const token = m[0].replace(/[.,;:!?]+$/, "")
      if (!out.some((r) => r.token === token)) out.push({ token, name: name(m as RegExpExecArray) })
    }
  }
  return out
}

/** The Trello short link of a card URL, if it is one. */
export const trelloShortLink = (url: string | undefined): string | undefined =>
  url === undefined ? undefined : /trello\.com\/c\/([A-Za-z0-9]+)/.exec(url)?.[1]

/** The names other rows' texts use for this row: its own id and what the reader adds (`PresetRow.names`). */
export const namesOf = (row: PresetRow): Array<string> => [...(row.id !== undefined ? [row.id] : []), ...(row.names ?? [])]
