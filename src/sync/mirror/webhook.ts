/**
 * The mirror's webhook: registered once for the public URL, scoped to the mirrored
 * workspaces, and reused by later starts. Its secret lives in a file beside the snapshot
 * (`<snapshot>.webhook.json`, owner-only), or the file the caller names, never in output,
 * logs or the snapshot.
 *
 * A webhook is reused when the file names it and the service still has it. Otherwise a
 * new one is created (the service shows a secret only when it creates the webhook), the
 * secrets of the one it replaces stay accepted until that one is deleted, so no delivery
 * in between is refused.
 */
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as Redacted from "effect/Redacted"
import * as fs from "node:fs"
import type { GraphqlClientApi } from "../../client/graphql-client.ts"
import type { Webhook } from "../../schema/webhooks.ts"
import { isPostgresUrl } from "../../store/postgres-url.ts"

export interface SecretFile {
  readonly webhookId: string
  readonly url: string
  /** The current secret first; earlier ones while their webhook may still deliver. */
  readonly secrets: ReadonlyArray<string>
}

export const secretFileOf = (snapshot: string): string => `${snapshot}.webhook.json`

/**
 * Where a mirror of `snapshot` keeps its webhook's secret: the file named, else beside a
 * snapshot file. A snapshot in PostgreSQL has no "beside", and its URL is no path (two
 * URLs differing only in their password would even share one): none unless named.
 */
export const mirrorSecretFile = (snapshot: string, named?: string): string | undefined =>
  named ?? (isPostgresUrl(snapshot) ? undefined : secretFileOf(snapshot))

export const readSecretFile = (file: string): SecretFile | undefined => {
  try {
    const parsed = JSON.parse(fs.readFileSync(file, "utf8")) as Partial<SecretFile>
    if (typeof parsed.webhookId !== "string" || typeof parsed.url !== "string" || !Array.isArray(parsed.secrets)) return undefined
    return { webhookId: parsed.webhookId, url: parsed.url, secrets: parsed.secrets.filter((s): s is string => typeof s === "string") }
  } catch {
    return undefined
  }
}

/** Written owner-only, through a temporary file, so a crash never leaves half a secret. */
export const writeSecretFile = (file: string, content: SecretFile): void => {
  const tmp = `${file}.tmp`
  fs.writeFileSync(tmp, JSON.stringify(content), { mode: 0o600 })
  fs.chmodSync(tmp, 0o600)
  fs.renameSync(tmp, file)
}

export interface MirrorWebhook {
  readonly id: string
  /** The secrets deliveries may be signed with now. */
  readonly secrets: () => ReadonlyArray<Redacted.Redacted<string>>
  /** Whether the webhook was found disabled or UNHEALTHY (and re-enabled): deliveries were missed. */
  readonly missed: boolean
}

const sameScope = (w: Webhook, workspaces: ReadonlyArray<string>): boolean => {
  const ids = [...(w.projectIds ?? w.metadata?.projectIds ?? [])].sort()
  return ids.join(",") === [...workspaces].sort().join(",")
}

/** Registers or reuses the mirror's webhook; re-enables it when the service disabled it. */
export const ensureWebhook = (graphql: GraphqlClientApi, options: {
  readonly url: string
  readonly workspaces: ReadonlyArray<string>
  readonly secretFile: string
  readonly log: (line: string) => void
}) =>
  Effect.gen(function*() {
    const saved = readSecretFile(options.secretFile)
    const all = (yield* graphql.webhooks()).items
    const mine = saved === undefined ? undefined : all.find((w) => w.id === saved.webhookId)
    let secrets = saved?.secrets ?? []
    if (mine !== undefined && saved !== undefined && saved.secrets.length > 0) {
      const disabled = mine.enabled === false || mine.status === "UNHEALTHY"
      if (disabled || mine.url !== options.url || !sameScope(mine, options.workspaces)) {
        yield* graphql.updateWebhook({ id: mine.id, url: options.url, projectIds: [...options.workspaces], enabled: true })
      }
      if (disabled) options.log(`webhook ${mine.id} was ${mine.enabled === false ? "disabled" : "UNHEALTHY"}: re-enabled`)
      return { id: mine.id, secrets: () => secrets.map((s) => Redacted.make(s)), missed: disabled } satisfies MirrorWebhook
    }
    const created = yield* graphql.createWebhook({ url: options.url, name: "worksync mirror", projectIds: [...options.workspaces] })
    const hook = Option.getOrUndefined(created)
    const secret = hook?.secret ?? null
    if (hook === undefined || secret === null) {
      return yield* Effect.fail(new Error("createWebhook answered without the webhook's secret: deliveries could not be verified"))
    }
    // The old secrets stay accepted while the old webhook may still deliver.
    secrets = [secret, ...secrets]
    writeSecretFile(options.secretFile, { webhookId: hook.id, url: options.url, secrets })
    options.log(`webhook ${hook.id} registered for ${options.url}`)
    // Ours by URL but without a secret we hold: it can never be verified, so it goes.
    for (const stale of all.filter((w) => w.url === options.url && w.id !== hook.id)) {
      yield* graphql.deleteWebhook(stale.id).pipe(Effect.ignore)
    }
    secrets = [secret]
    writeSecretFile(options.secretFile, { webhookId: hook.id, url: options.url, secrets })
    return { id: hook.id, secrets: () => secrets.map((s) => Redacted.make(s)), missed: false } satisfies MirrorWebhook
  })

/** Whether the service disabled the webhook or marked it UNHEALTHY (then re-enabled here). */
export const checkWebhook = (graphql: GraphqlClientApi, id: string, log: (line: string) => void) =>
  Effect.gen(function*() {
    const hook = Option.getOrUndefined(yield* graphql.webhook(id))
    if (hook === undefined) return "gone" as const
    if (hook.enabled === false || hook.status === "UNHEALTHY") {
      yield* graphql.updateWebhook({ id, enabled: true })
      log(`webhook ${id} was ${hook.enabled === false ? "disabled" : "UNHEALTHY"}: re-enabled`)
      return "missed" as const
    }
    return "ok" as const
  })
