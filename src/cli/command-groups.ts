/**
 * The jobs `worksync --help` groups the commands by, and the commands of each, in the
 * order listed. The one place a command gets its group: help lists a command here only
 * once it is registered (commands/index.ts), and test/cli/help-output.test.ts fails when
 * a registered command has no group.
 */
export const COMMAND_GROUPS: ReadonlyArray<{ readonly group: string; readonly commands: ReadonlyArray<string> }> = [
  { group: "back up", commands: ["backup", "diff", "export", "prune", "verify", "mirror"] },
  { group: "move", commands: ["import-csv", "migrate", "restore", "copy-files", "undo"] },
  { group: "run", commands: ["worker", "emulator", "webhooks", "doctor"] },
  { group: "about", commands: ["help", "version"] }
]

/** The group of a command, if it has one. */
export const groupOf = (command: string): string | undefined => COMMAND_GROUPS.find((g) => g.commands.includes(command))?.group
