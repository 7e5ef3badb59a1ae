/**
 * What `--help` shows, and in which order.
 *
 * A command's description is written with `withExamples`: a one-line summary, notes,
 * then copyable examples. Help takes it apart again (`partsOf`):
 * - `worksync --help` lists each command on one line (its summary), grouped by job
 *   (command-groups.ts), so the whole listing fits a screen;
 * - `worksync COMMAND --help` shows the summary and notes, the command's own flags, the
 *   connection flags every command shares as one block after them (also printed alone
 *   by `worksync help connection`), and the examples last.
 */
import * as Arr from "effect/Array"
import * as Context from "effect/Context"
import type * as CliOutput from "effect/cli/CliOutput"
import type * as HelpDoc from "effect/cli/HelpDoc"
import * as Param from "effect/cli/Param"
import * as Primitive from "effect/cli/Primitive"
import { COMMAND_GROUPS, groupOf } from "./command-groups.ts"
import { connectionOptions, targetConnectionOptions } from "./common-options.ts"

const EXAMPLES = "\n\nExamples:\n"

export const withExamples = (description: string, examples: ReadonlyArray<string>, notes: ReadonlyArray<string> = []): string =>
  description +
  notes.map((n) => `\n\n${n}`).join("") +
  EXAMPLES +
  examples.map((e) => `  ${e}`).join("\n")

/** A description as `withExamples` wrote it: its first line, all but the examples, the examples. */
export const partsOf = (description: string) => {
  const at = description.indexOf(EXAMPLES)
  const body = (at < 0 ? description : description.slice(0, at)).trim()
  const examples = at < 0
    ? []
    : description.slice(at + EXAMPLES.length).split("\n").map((e) => e.trim()).filter((e) => e !== "")
  return { summary: body.split("\n", 1)[0]!.trim(), body, examples }
}

/**
 * The single flags inside a flag definition (through optional, map, fallbacks). effect/cli
 * exports this at run time but leaves it out of its types (it is marked internal);
 * test/cli/help-output.test.ts fails if it goes away, and help then simply shows the
 * connection flags among the command's own.
 */
const singlesOf = (flag: unknown): ReadonlyArray<Param.Single<typeof Param.flagKind, unknown>> => {
  const extract = (Param as unknown as { readonly extractSingleParams?: (p: unknown) => ReadonlyArray<Param.Single<typeof Param.flagKind, unknown>> })
    .extractSingleParams
  return extract === undefined ? [] : extract(flag)
}

/** Help rows for flags that are not a command's own (the connection, for `help connection`). */
const flagDocs = (flags: Readonly<Record<string, unknown>>): Array<HelpDoc.FlagDoc> =>
  Object.values(flags).flatMap((flag) =>
    singlesOf(flag).filter((single) => !single.hidden).map((single): HelpDoc.FlagDoc => ({
      name: single.name,
      aliases: single.aliases.map((a) => (a.length === 1 ? `-${a}` : `--${a}`)),
      type: single.typeName ?? Primitive.getTypeName(single.primitiveType),
      description: single.description,
      required: false
    }))
  )

let connectionNames: ReadonlySet<string> | undefined
/** The flags of the source and the target connection (common-options.ts), by name. */
const isConnectionFlag = (flag: HelpDoc.FlagDoc): boolean =>
  (connectionNames ??= new Set([...flagDocs(connectionOptions), ...flagDocs(targetConnectionOptions)].map((f) => f.name))).has(
    flag.name
  )

/** The formatter's one extra flag section, under the title given (see `render`). */
const EXTRA_SECTION = "INHERITED FLAGS"

/**
 * Renders `doc` with effect/cli's formatter; `extra` (the connection flags) is the
 * formatter's section for flags a command did not declare itself, which comes after the
 * command's own flags and before the examples, under the title `extraTitle`.
 */
const render = (
  formatter: CliOutput.Formatter,
  doc: HelpDoc.HelpDoc,
  extra: ReadonlyArray<HelpDoc.FlagDoc>,
  extraTitle: string
): string => {
  const text = formatter.formatHelpDoc({ ...doc, inheritedFlags: extra })
  return extra.length === 0 ? text : text.replace(EXTRA_SECTION, extraTitle)
}

/** Every line after the first indented like the first (the formatter indents only the first). */
const indented = (text: string): string =>
  text.split("\n").map((line, i) => (i === 0 || line === "" ? line : `  ${line}`)).join("\n")

const summaryOf = (sub: HelpDoc.SubcommandDoc): string => sub.shortDescription ?? partsOf(sub.description).summary

/**
 * The subcommands, one line each, marked `- NAME` (what scripts and the package test
 * look for); at the top level grouped by job, in the order of command-groups.ts. A
 * command without a group is still listed, first (test/cli/help-output.test.ts forbids
 * one).
 */
const listing = (subcommands: ReadonlyArray<HelpDoc.SubcommandGroupDoc>, topLevel: boolean): Array<HelpDoc.SubcommandGroupDoc> => {
  const all = subcommands.flatMap((g) => g.commands)
  // Names padded alike, so that every group's descriptions start in the same column.
  const width = Math.max(...all.map((sub) => sub.name.length))
  const section = (group: string | undefined, members: ReadonlyArray<HelpDoc.SubcommandDoc>): Array<HelpDoc.SubcommandGroupDoc> => {
    const rows = members.map((sub) => ({ ...sub, name: `- ${sub.name.padEnd(width)}`, shortDescription: summaryOf(sub) }))
    return Arr.isArrayNonEmpty(rows) ? [{ group, commands: rows }] : []
  }
  if (!topLevel) return section(undefined, all)
  return [
    ...section(undefined, all.filter((sub) => groupOf(sub.name) === undefined)),
    ...COMMAND_GROUPS.flatMap(({ group, commands }) => section(group, commands.flatMap((name) => all.filter((sub) => sub.name === name))))
  ]
}

/** `--help` of `worksync` or of one of its commands, as described at the top of this file. */
export const renderHelp = (formatter: CliOutput.Formatter, doc: HelpDoc.HelpDoc): string => {
  const topLevel = (doc.commandPath?.length ?? 1) <= 1
  const { body, examples } = partsOf(doc.description)
  const connection = doc.flags.filter(isConnectionFlag)
  const shown: HelpDoc.HelpDoc = {
    ...doc,
    description: indented(body),
    flags: doc.flags.filter((f) => !isConnectionFlag(f)),
    ...(doc.subcommands === undefined ? {} : { subcommands: listing(doc.subcommands, topLevel) }),
    examples: [...(doc.examples ?? []), ...examples.map((command) => ({ command }))]
  }
  return render(formatter, shown, connection, "CONNECTION FLAGS (the same for every command: worksync help connection)")
}

/** `worksync help connection`: the flags every command that talks to the service shares. */
export const renderConnectionHelp = (formatter: CliOutput.Formatter): string =>
  render(
    formatter,
    {
      description: indented([
        "The connection of every command that talks to the service. Each setting comes from its flag, else from the profile of the config file (--config, --profile), else from its WORKSYNC_* environment variable.",
        "copy-files, restore and migrate also take a target connection (--to-*): each of its settings not given is the source's."
      ].join("\n\n")),
      usage: "worksync COMMAND [connection flags] [flags]",
      flags: flagDocs(connectionOptions),
      annotations: Context.empty(),
      commandPath: ["worksync", "help"],
      examples: [
        { command: "export WORKSYNC_REST_URL=https://api.example.com WORKSYNC_TOKEN=... WORKSYNC_ORG=acme; worksync doctor" },
        { command: "worksync backup --profile prod --snapshot backup.sqlite   # settings from worksync.config.json" }
      ]
    },
    flagDocs(targetConnectionOptions),
    "TARGET CONNECTION FLAGS (copy-files, restore, migrate)"
  )
