import * as Command from "@effect/cli/Command"
import * as Effect from "effect/Effect"

export const versionCommand = Command.make("version", {}, () =>
  Effect.sync(() => process.stdout.write("worksync 0.1.0\n"))
).pipe(Command.withDescription("print the version"))
