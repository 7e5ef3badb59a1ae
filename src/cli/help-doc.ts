/**
 * Per-command help: a one-line description, then copyable examples (what a newcomer or
 * a cron line needs).
 *
 * effect/cli lists a subcommand under SUBCOMMANDS with its whole description when it
 * has no short one, so the notes and examples ride in the description after a line
 * break: `worksync --help` shows every command's examples, and a command's own help
 * shows them under DESCRIPTION.
 */
export const withExamples = (description: string, examples: ReadonlyArray<string>, notes: ReadonlyArray<string> = []): string =>
  description +
  notes.map((n) => `\n\n${n}`).join("") +
  "\n\nExamples:\n" +
  examples.map((e) => `  ${e}`).join("\n")
