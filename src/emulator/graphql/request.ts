/** What every resolver receives: the emulator, the caller, and the request's uploads. */
import type { EmulatorContext, Principal } from "../context.ts"

/** A multipart file part, already streamed into the object store under `storageKey`. */
export interface UploadedPart {
  readonly kind: "upload"
  readonly uid: string
  readonly storageKey: string
  readonly filename: string
  readonly mimeType: string
  readonly size: number
  /** Set once a resolver has made the object a file row; unclaimed objects are removed. */
  claimed: boolean
}

export interface GqlContext {
  readonly ctx: EmulatorContext
  readonly principal: Principal
}

export const isUploadedPart = (value: unknown): value is UploadedPart =>
  typeof value === "object" && value !== null && (value as { kind?: unknown }).kind === "upload"
