/** Shared by the import planning tests: planning into a journal against the emulator. */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { RestClient } from "../../src/client/rest-client.ts"
import type { ImportOptions } from "../../src/connectors/csv/options.ts"
import { planCsvImport } from "../../src/connectors/csv/plan.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"
import { Journal } from "../../src/store/journal.ts"
import { testClient } from "../sync/replay-helpers.ts"

/** Plans a CSV import into `journalFile` against the emulator (nothing is sent). */
export const planInto = (handle: EmulatorHandle, journalFile: string, options: ImportOptions) =>
  Effect.gen(function*() {
    return yield* planCsvImport(yield* RestClient, yield* Journal, options)
  }).pipe(Effect.provide(Layer.merge(Journal.layer(journalFile), testClient(handle))))
