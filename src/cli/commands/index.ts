/** Every subcommand of `worksync`, in the order `--help` lists them. */
import { versionCommand } from "./version.ts"

export const commands = [versionCommand] as const
