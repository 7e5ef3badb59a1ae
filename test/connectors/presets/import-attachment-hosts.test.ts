/**
 * An export whose attachment URLs lead inside the importing machine's network: loopback
 * servers stand in for internal services (a metadata service, an admin page). Without
 * `attachmentHosts` (`--attachment-hosts`) nothing of them is asked, whichever way the URL
 * names them (an address, a name that resolves to loopback, an IPv4-mapped IPv6 address,
 * a redirect from an allowed host); each is listed as not fetched with the reason. Named,
 * they are fetched; one refused for its host is fetched by a later run of the same import
 * that allows the host, once. A body over the size limit is given up while it is still coming.
 * Every request goes to 127.0.0.1.
 */
import { expect, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as path from "node:path"
import { GraphqlClient } from "../../../src/client/graphql-client.ts"
import { RestClient } from "../../../src/client/rest-client.ts"
import { importCsv } from "../../../src/connectors/csv/import.ts"
import type { ImportOptions } from "../../../src/connectors/csv/options.ts"
import { Journal } from "../../../src/store/journal.ts"
import { Emulator, emulatorLayer, tempDir } from "../../support/effect.ts"
import { testClient } from "../../sync/replay-helpers.ts"
import { internalForms, jiraExport, noDir, reset, Servers, serversLayer, until } from "../../security/internal-servers.ts"

/** An import of a Jira export into a new workspace with a new journal, unless `into` names them. */
const run = (options: Partial<ImportOptions> & Pick<ImportOptions, "csv">, into?: { readonly ws: string; readonly journal: string }) =>
  Effect.gen(function*() {
    const handle = yield* Emulator
    const dir = yield* tempDir("ws-attachment-hosts-")
    const ws = into?.ws ?? handle.admin.createWorkspace({ name: "attachment hosts" }).id
    const result = yield* Effect.gen(function*() {
      return yield* importCsv(yield* RestClient, yield* Journal, { workspaceId: ws, graphql: yield* GraphqlClient, mapping: { preset: "jira" }, ...options })
    }).pipe(Effect.provide(Layer.merge(Journal.layer(into?.journal ?? path.join(dir, "j.sqlite")), testClient(handle))))
    // What reached the workspace: the files attached through comments, with their bytes.
    const files = handle.ctx.db
      .prepare("SELECT f.name, f.storage_key FROM files f JOIN comment_files cf ON cf.file_id = f.id WHERE f.workspace_id = ? ORDER BY f.name")
      .all(ws) as Array<{ name: string; storage_key: string }>
    const uploaded: Record<string, string> = {}
    for (const f of files) {
      uploaded[f.name] = yield* Effect.promise(async () => {
        const chunks: Array<Buffer> = []
        for await (const c of handle.ctx.objects.read(f.storage_key) as AsyncIterable<Buffer>) chunks.push(Buffer.from(c))
        return Buffer.concat(chunks).toString("utf8")
      })
    }
    return { result, uploaded }
  })

// Real HTTP to the emulator and the loopback servers: the live clock.
layer(Layer.merge(emulatorLayer({ seed: "empty" }), serversLayer), { timeout: 30_000, excludeTestServices: true })("attachment hosts: an export cannot reach inside", (it) => {
  it.effect("without attachmentHosts: nothing inside is asked, in any form; each attachment is listed as not fetched with the reason", () =>
    Effect.gen(function*() {
      const { gateway, internal } = yield* Servers
      reset(internal, gateway)
      const dir = yield* tempDir("ws-attachment-hosts-csv-")
      const { result, uploaded } = yield* run({ csv: { file: jiraExport(dir, internalForms(internal, gateway)) } })
      expect(result).toMatchObject({ rows: 1, created: 1, failed: 0, unknown: 0, blocked: 0, attachments: 0 })
      expect(internal.seen).toEqual([])
      expect(gateway.seen).toEqual([])
      expect(uploaded).toEqual({})
      const allow = "is not an allowed attachment host (name it in --attachment-hosts)"
      expect(result.attachmentsNotFetched).toEqual([
        { name: "direct.txt", reason: noDir(`127.0.0.1:${internal.port} ${allow}`) },
        { name: "byname.txt", reason: noDir(`localhost:${internal.port} ${allow}`) },
        { name: "mapped.txt", reason: noDir(`[::ffff:7f00:1]:${internal.port} ${allow}`) },
        { name: "redirected.txt", reason: noDir(`127.0.0.1:${gateway.port} ${allow}`) },
        { name: "iam.txt", reason: noDir(`169.254.169.254:80 ${allow}`) }
      ])
    }))

  it.effect("naming only the redirecting host: it is asked, the loopback host it redirects to is not", () =>
    Effect.gen(function*() {
      const { gateway, internal } = yield* Servers
      reset(internal, gateway)
      const dir = yield* tempDir("ws-attachment-hosts-csv-")
      const { result, uploaded } = yield* run({
        csv: { file: jiraExport(dir, [`http://127.0.0.1:${gateway.port}/anything/redirected.txt`]) },
        attachmentHosts: [`127.0.0.1:${gateway.port}`]
      })
      expect(gateway.seen.map((s) => s.url)).toEqual(["/anything/redirected.txt"])
      expect(internal.seen).toEqual([])
      expect(uploaded).toEqual({})
      expect(result.attachmentsNotFetched).toEqual([
        { name: "redirected.txt", reason: noDir(`after a redirect, localhost:${internal.port} is not an allowed attachment host (name it in --attachment-hosts)`) }
      ])
    }))

  it.effect("named, each form is fetched and uploaded (no credential sent); what is not named stays unasked", () =>
    Effect.gen(function*() {
      const { gateway, internal } = yield* Servers
      reset(internal, gateway)
      const dir = yield* tempDir("ws-attachment-hosts-csv-")
      const { result, uploaded } = yield* run({
        csv: { file: jiraExport(dir, internalForms(internal, gateway)) },
        attachmentHosts: [`127.0.0.1:${internal.port},localhost:${internal.port}`, `127.0.0.1:${gateway.port}`]
      })
      expect(result).toMatchObject({ created: 1, failed: 0, attachments: 3 })
      expect(uploaded).toEqual({
        "byname.txt": "internal bytes of byname.txt",
        "direct.txt": "internal bytes of direct.txt",
        "redirected.txt": "internal bytes of redirected.txt"
      })
      expect(internal.seen.map((s) => s.url).sort()).toEqual(["/files/byname.txt", "/files/direct.txt", "/files/redirected.txt"])
      expect([...internal.seen, ...gateway.seen].every((s) => s.authorization === undefined)).toBe(true)
      // `127.0.0.1` named is not `[::ffff:7f00:1]`, and the metadata address was never named.
      expect(result.attachmentsNotFetched).toEqual([
        { name: "mapped.txt", reason: noDir(`[::ffff:7f00:1]:${internal.port} is not an allowed attachment host (name it in --attachment-hosts)`) },
        { name: "iam.txt", reason: noDir("169.254.169.254:80 is not an allowed attachment host (name it in --attachment-hosts)") }
      ])
    }))

  it.effect("refused for its host, an attachment waits for the rerun that allows it: a rerun with the same flags reports it again and sends nothing; the one that allows it uploads it once; the next sends nothing", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const { gateway, internal } = yield* Servers
      reset(internal, gateway)
      const dir = yield* tempDir("ws-attachment-hosts-csv-")
      const ws = handle.admin.createWorkspace({ name: "attachment hosts rerun" }).id
      const into = { ws, journal: path.join(dir, "rerun.sqlite") }
      const csv = { file: jiraExport(dir, [`http://127.0.0.1:${internal.port}/files/later.txt`]) }
      const refused = [{ name: "later.txt", reason: noDir(`127.0.0.1:${internal.port} is not an allowed attachment host (name it in --attachment-hosts)`) }]
      const files = () => (handle.ctx.db.prepare("SELECT COUNT(*) AS n FROM files WHERE workspace_id = ?").get(ws) as { n: number }).n
      const comments = () =>
        (handle.ctx.db.prepare("SELECT text FROM activity WHERE workspace_id = ? AND kind = 'COMMENT' AND deleted_at IS NULL ORDER BY created_at, id").all(ws) as Array<{ text: string }>)
          .map((c) => c.text)
      const graphqlCalls = () => handle.stats().byRoute["/graphql"] ?? 0
      const allowed = { attachmentHosts: [`127.0.0.1:${internal.port}`] }

      // Refused: the comment says which file and why, and the run finishes.
      const first = yield* run({ csv }, into)
      expect(first.result).toMatchObject({ created: 1, failed: 0, unknown: 0, blocked: 0, attachments: 0 })
      expect(first.result.attachmentsNotFetched).toEqual(refused)
      expect(internal.seen).toEqual([])
      expect(files()).toBe(0)
      expect(comments()).toEqual([expect.stringContaining("(not attached: 127.0.0.1:")])

      // The same flags again: reported the same way, nothing asked or sent.
      handle.resetStats()
      const same = yield* run({ csv }, into)
      expect(same.result).toMatchObject({ created: 0, failed: 0, unknown: 0, blocked: 0, attachments: 0 })
      expect(same.result.attachmentsNotFetched).toEqual(refused)
      expect(graphqlCalls()).toBe(0)
      expect(internal.seen).toEqual([])
      expect(files()).toBe(0)

      // The host allowed: fetched once, uploaded once, embedded in a comment of its own.
      handle.resetStats()
      const fetched = yield* run({ csv, ...allowed }, into)
      expect(fetched.result).toMatchObject({ created: 0, failed: 0, unknown: 0, blocked: 0, attachments: 1 })
      expect(fetched.result.attachmentsNotFetched).toEqual([])
      expect(internal.seen.map((s) => s.url)).toEqual(["/files/later.txt"])
      expect(files()).toBe(1)
      expect(fetched.uploaded).toEqual({ "later.txt": "internal bytes of later.txt" })
      // The upload, then the comment that embeds it.
      expect(graphqlCalls()).toBe(2)
      expect(comments()).toHaveLength(2)
      expect(comments()[1]).not.toContain("not attached")

      // Once more, allowed or not: nothing asked, sent or reported.
      for (const flags of [allowed, {}]) {
        handle.resetStats()
        const after = yield* run({ csv, ...flags }, into)
        expect(after.result).toMatchObject({ created: 0, failed: 0, unknown: 0, blocked: 0, attachments: 0 })
        expect(after.result.attachmentsNotFetched).toEqual([])
        expect(graphqlCalls()).toBe(0)
        expect(internal.seen).toHaveLength(1)
        expect(files()).toBe(1)
      }
    }))

  it.effect("a body over the size limit is given up while it is still coming, never read whole; a declared size over it is not read at all (R-LIMIT-01 bounds the limit)", () =>
    Effect.gen(function*() {
      const { internal } = yield* Servers
      reset(internal)
      internal.endless.written = 0
      internal.endless.closed = false
      const dir = yield* tempDir("ws-attachment-hosts-csv-")
      const endless = yield* run({
        csv: { file: jiraExport(dir, [`http://127.0.0.1:${internal.port}/endless/huge.bin`]) },
        attachmentHosts: [`127.0.0.1:${internal.port}`],
        attachmentMaxBytes: 1_000_000
      })
      // The body never ends: the import finished only because it stopped reading.
      expect(endless.result.attachmentsNotFetched).toEqual([{ name: "huge.bin", reason: noDir("larger than 1 MB (--attachment-max-mb raises the limit)") }])
      expect(endless.uploaded).toEqual({})
      yield* Effect.promise(() => until(() => internal.endless.closed))
      // What the server got written before the hang-up: the limit plus what the sockets buffer.
      expect(internal.endless.written).toBeLessThan(64_000_000)

      internal.endless.closed = false
      const dir2 = yield* tempDir("ws-attachment-hosts-csv-")
      const declared = yield* run({
        csv: { file: jiraExport(dir2, [`http://127.0.0.1:${internal.port}/declared/big.bin`]) },
        attachmentHosts: [`127.0.0.1:${internal.port}`]
      })
      expect(declared.result.attachmentsNotFetched).toEqual([{ name: "big.bin", reason: noDir("larger than 25 MB (--attachment-max-mb raises the limit)") }])
      yield* Effect.promise(() => until(() => internal.endless.closed))
      // The limit cannot pass what an upload takes (R-LIMIT-01: 256 MB a file).
      const over = yield* run({ csv: { file: jiraExport(dir2, [`http://127.0.0.1:${internal.port}/files/a.txt`]) }, attachmentMaxBytes: 300_000_000 }).pipe(Effect.flip)
      expect(over).toMatchObject({ _tag: "ImportUsageError" })
      expect((over as { message: string }).message).toContain("attachment size limit 300000000")
    }))

  it.effect("a bad attachmentHosts value fails before anything is read or sent", () =>
    Effect.gen(function*() {
      const handle = yield* Emulator
      const dir = yield* tempDir("ws-attachment-hosts-csv-")
      handle.resetStats()
      const failed = yield* run({ csv: { file: jiraExport(dir, ["http://127.0.0.1:1/files/a.txt"]) }, attachmentHosts: ["http://jira.example.com"] }).pipe(Effect.flip)
      expect(failed).toMatchObject({ _tag: "ImportUsageError" })
      expect((failed as { message: string }).message).toBe(
        "--attachment-hosts http://jira.example.com: not a host name, *.domain or IP address; give HOST[:PORT][,...], e.g. jira.example.com:8443,*.atlassian.net"
      )
      expect(Object.entries(handle.stats().byRoute).filter(([route]) => /create|upload|graphql/i.test(route))).toEqual([])
    }))
})
