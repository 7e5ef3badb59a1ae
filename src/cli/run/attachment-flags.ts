/**
 * `--attachment-hosts` and `--attachment-max-mb` of import-csv, checked before anything
 * is read or sent: one line and the usage exit code for a bad value.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Result from "effect/Result"
import { ATTACHMENT_MAX_BYTES_CEILING, parseAttachmentHosts } from "../../connectors/presets/attachment-hosts.ts"
import type { ImportCsvFlags } from "../commands/import-csv.ts"
import { type CliExit, usageError } from "../exit.ts"

/** `--attachment-max-mb` counts megabytes of 1,000,000 bytes, as the limits it is checked against. */
const MB = 1_000_000

/** The import options the two flags give (none when neither is given). */
export const attachmentFetchOptions = (
  flags: Pick<ImportCsvFlags, "attachmentHosts" | "attachmentMaxMb">,
  tool: boolean
): Effect.Effect<{ readonly attachmentHosts?: ReadonlyArray<string>; readonly attachmentMaxBytes?: number }, CliExit> =>
  Effect.gen(function*() {
    const hosts = Option.getOrUndefined(flags.attachmentHosts)
    const maxMb = Option.getOrUndefined(flags.attachmentMaxMb)
    if ((hosts !== undefined || maxMb !== undefined) && !tool) {
      return yield* Effect.fail(usageError("--attachment-hosts and --attachment-max-mb go with --preset trello, asana, jira or clickup"))
    }
    if (maxMb !== undefined && (maxMb < 1 || maxMb * MB > ATTACHMENT_MAX_BYTES_CEILING)) {
      return yield* Effect.fail(usageError(`--attachment-max-mb ${maxMb}: must be 1 to ${ATTACHMENT_MAX_BYTES_CEILING / MB} (the largest file an upload takes)`))
    }
    if (hosts !== undefined) {
      const parsed = parseAttachmentHosts([hosts])
      if (Result.isFailure(parsed)) return yield* Effect.fail(usageError(parsed.failure))
    }
    return {
      ...(hosts !== undefined ? { attachmentHosts: [hosts] } : {}),
      ...(maxMb !== undefined ? { attachmentMaxBytes: maxMb * MB } : {})
    }
  })
