/**
 * The values each variant serves where the documents leave a number open
 * (src/schema/assumptions.ts): "reference" takes our choices, "alt" another plausible
 * value of each. Shape and behaviour differences of the alt variant are branches on
 * `ctx.variant` beside the code they change (helpers in ./alt/).
 */
import {
  DOWNLOAD_URL_TTL_SECONDS,
  INVITATION_TTL_DAYS,
  PRESIGN_TTL_SECONDS,
  SIZE_UNITS,
  WEBHOOK_RETRY_BACKOFF_MS,
  WEBHOOKS_PER_ORGANIZATION
} from "../schema/assumptions.ts"
import { FORM_MAX_FILE_BYTES, PRESIGN_MAX_FILE_BYTES } from "../schema/limits.ts"
import type { EmulatorContext } from "./context.ts"

export interface Reading {
  /** PRESIGN_TTL_SECONDS */
  readonly presignTtlSeconds: number
  /** DOWNLOAD_URL_TTL_SECONDS */
  readonly downloadUrlTtlSeconds: number
  /** WEBHOOK_RETRY_BACKOFF_MS: the wait after failed attempt 1, 2, ... */
  readonly webhookRetryBackoffMs: ReadonlyArray<number>
  /** INVITATION_TTL_DAYS */
  readonly invitationTtlDays: number
  /** WEBHOOKS_PER_ORGANIZATION */
  readonly webhooksPerOrganization: number
  /** PLAN_LIMITS_DEFAULT: limits when no emulator option sets them (null: unlimited). */
  readonly planLimits: {
    readonly storageBytes: number | null
    readonly perFileBytes: number | null
    readonly seats: number | null
  }
  /** SIZE_UNITS: the presigned flow's 4.8 GB and the form upload's 500 MB, in bytes. */
  readonly presignMaxFileBytes: number
  readonly formMaxFileBytes: number
}

export const REFERENCE_READING: Reading = {
  presignTtlSeconds: PRESIGN_TTL_SECONDS,
  downloadUrlTtlSeconds: DOWNLOAD_URL_TTL_SECONDS,
  webhookRetryBackoffMs: WEBHOOK_RETRY_BACKOFF_MS,
  invitationTtlDays: INVITATION_TTL_DAYS,
  webhooksPerOrganization: WEBHOOKS_PER_ORGANIZATION,
  planLimits: { storageBytes: null, perFileBytes: null, seats: null },
  presignMaxFileBytes: PRESIGN_MAX_FILE_BYTES,
  formMaxFileBytes: FORM_MAX_FILE_BYTES
}

/** The unit the reference does not use: binary when SIZE_UNITS is decimal, and back. */
const OTHER_MB = SIZE_UNITS.MB === 1024 * 1024 ? 1_000_000 : 1024 * 1024
const OTHER_GB = SIZE_UNITS.GB === 1024 * 1024 * 1024 ? 1_000_000_000 : 1024 * 1024 * 1024

export const ALT_READING: Reading = {
  presignTtlSeconds: 5 * 60,
  downloadUrlTtlSeconds: 60,
  // Still a backoff (each wait longer than the last), but linear.
  webhookRetryBackoffMs: [5_000, 10_000, 15_000, 20_000],
  invitationTtlDays: 14,
  webhooksPerOrganization: 10,
  // A finite plan, large enough for every rehearsal: 100 GB stored, 4 GB a file, 50 seats.
  planLimits: { storageBytes: 100_000_000_000, perFileBytes: 4_000_000_000, seats: 50 },
  presignMaxFileBytes: Math.floor(4.8 * OTHER_GB),
  formMaxFileBytes: 500 * OTHER_MB
}

export const readingOf = (ctx: Pick<EmulatorContext, "variant">): Reading =>
  ctx.variant === "alt" ? ALT_READING : REFERENCE_READING

/** True for the alt variant (the other plausible reading, documented fields only). */
export const isAlt = (ctx: Pick<EmulatorContext, "variant">): boolean => ctx.variant === "alt"
