/**
 * Per-command help: a one-line description, then copyable examples (what a newcomer or
 * a cron line needs).
 *
 * @effect/cli lists a subcommand under COMMANDS with the span of its description only
 * when that description is a single paragraph, so the examples ride in the same
 * paragraph after a line break: the listing and completions show the first line.
 */
import * as HelpDoc from "@effect/cli/HelpDoc"
import * as Span from "@effect/cli/HelpDoc/Span"

export const withExamples = (description: string, examples: ReadonlyArray<string>, notes: ReadonlyArray<string> = []): HelpDoc.HelpDoc =>
  HelpDoc.p(
    Span.spans([
      Span.text(description),
      Span.text(notes.map((n) => `\n\n${n}`).join("")),
      Span.text("\n\nExamples:\n"),
      Span.text(examples.map((e) => `  ${e}`).join("\n"))
    ])
  )
