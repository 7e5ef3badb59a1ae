/**
 * A migration's source records as the mapping files put them on the target
 * (mapping-files.ts): list and tag titles renamed (`--title-map`; two source titles may
 * land on one), assignees under the e-mail `--people FILE` gives them, and those it maps
 * to `skip` left out. Every step that reads a source record (the ordered creates, the
 * restore, the verification) reads it through the same mapping, so they agree.
 */
import { type PeopleMap, SKIP, type TitleMap } from "../mapping-files.ts"
import type { SourceRecord } from "../restore-source.ts"

export interface SourceMapping {
  readonly record: (r: SourceRecord) => SourceRecord
  /** The target e-mail of a source e-mail (itself when not mapped), or `SKIP`. */
  readonly email: (e: string) => string
}

const sorted = (values: Iterable<string>) => [...new Set(values)].sort()

/**
 * The mapping of a migration; undefined when there is nothing to map. `members`: the
 * source members the people file names (source e-mail -> target e-mail or `SKIP`), as
 * people.ts `planPeople` resolved them, by e-mail or display name; another assignee is
 * looked up by e-mail.
 */
export const sourceMapping = (
  people: PeopleMap | undefined,
  members: ReadonlyMap<string, string>,
  titles: TitleMap | undefined
): SourceMapping | undefined => {
  if (people === undefined && titles === undefined) return undefined
  const email = (e: string): string => members.get(e) ?? people?.target({ email: e }) ?? e
  return {
    email,
    record: (r) => ({
      ...r,
      listTitle: r.listTitle === null || titles === undefined ? r.listTitle : titles.list(r.listTitle),
      tags: titles === undefined ? r.tags : sorted(r.tags.map(titles.tag)),
      emails: people === undefined ? r.emails : sorted(r.emails.map(email).filter((e) => e !== SKIP))
    })
  }
}
