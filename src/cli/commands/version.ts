import * as Command from "effect/cli/Command"
import * as Effect from "effect/Effect"
import { VERSION } from "../version.ts"

export const versionCommand = Command.make("version", {}, () =>
  Effect.sync(() => process.stdout.write(`worksync ${VERSION}\n`))
).pipe(Command.withDescription("print the version"))
