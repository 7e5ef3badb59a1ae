/** Every subcommand of `worksync`, in the order `--help` lists them. */
import { backupCommand } from "./backup.ts"
import { copyFilesCommand } from "./copy-files.ts"
import { diffCommand } from "./diff.ts"
import { doctorCommand } from "./doctor.ts"
import { emulatorCommand } from "./emulator.ts"
import { exportCommand } from "./export.ts"
import { helpCommand } from "./help.ts"
import { importCsvCommand } from "./import-csv.ts"
import { migrateCommand } from "./migrate.ts"
import { mirrorCommand } from "./mirror.ts"
import { pruneCommand } from "./prune.ts"
import { restoreCommand } from "./restore.ts"
import { undoCommand } from "./undo.ts"
import { verifyCommand } from "./verify.ts"
import { versionCommand } from "./version.ts"
import { webhooksCommand } from "./webhooks.ts"
import { workerCommand } from "./worker.ts"

export const commands = [
  backupCommand,
  diffCommand,
  exportCommand,
  pruneCommand,
  verifyCommand,
  importCsvCommand,
  copyFilesCommand,
  restoreCommand,
  migrateCommand,
  undoCommand,
  mirrorCommand,
  webhooksCommand,
  workerCommand,
  emulatorCommand,
  doctorCommand,
  versionCommand,
  helpCommand
] as const
