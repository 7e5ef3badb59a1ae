/** Shared helpers of the GraphQL and webhook emulator tests: real HTTP, no stubs. */
import { createServer, type IncomingMessage, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import type { AccessLevel } from "../../src/emulator/context.ts"
import type { EmulatorHandle } from "../../src/emulator/index.ts"

export interface Caller {
  readonly tokenId: string
  readonly tokenSecret: string
  readonly userId?: string
}

export interface GqlResult {
  readonly status: number
  readonly body: {
    data?: Record<string, any> | null
    errors?: Array<{ message: string; path?: Array<string | number>; extensions?: { code?: string } }>
  }
}

export const authHeaders = (caller: Caller, extra: Record<string, string> = {}) => ({
  "svc-token-id": caller.tokenId,
  "svc-token-secret": caller.tokenSecret,
  ...extra
})

export const owner = (h: EmulatorHandle): Caller => ({ tokenId: h.tokenId, tokenSecret: h.tokenSecret, userId: h.ownerUserId })

/** An ordinary GraphQL call: JSON `{query, variables}` (R-GQL-AUTH-02). */
export const gql = async (
  h: EmulatorHandle,
  query: string,
  variables: Record<string, unknown> = {},
  options: { caller?: Caller; headers?: Record<string, string> } = {}
): Promise<GqlResult> => {
  const res = await fetch(`${h.baseUrl}/graphql`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      ...authHeaders(options.caller ?? owner(h), options.headers ?? {})
    },
    body: JSON.stringify({ query, variables })
  })
  return { status: res.status, body: (await res.json()) as GqlResult["body"] }
}

export const codeOf = (r: GqlResult): string | undefined => r.body.errors?.[0]?.extensions?.code

let counter = 0
/** A new user of the seeded organization with the given levels, and their token. */
export const makeUser = (
  h: EmulatorHandle,
  options: { orgLevel?: AccessLevel; workspaces?: Record<string, AccessLevel>; email?: string } = {}
): Caller & { readonly userId: string; readonly email: string } => {
  counter += 1
  const email = options.email ?? `user${counter}.${Math.random().toString(36).slice(2, 8)}@example.test`
  const issued = h.admin.createUser({
    email,
    firstName: "Test",
    lastName: `User${counter}`,
    ...(options.orgLevel === undefined ? {} : { orgLevel: options.orgLevel }),
    ...(options.workspaces === undefined ? {} : { workspaces: options.workspaces })
  })
  return { tokenId: issued.tokenId, tokenSecret: issued.tokenSecret, userId: issued.userId, email }
}

/** A multipart GraphQL upload (R-UPLOAD-MULTIPART-01..04), through fetch's FormData. */
export const upload = async (
  h: EmulatorHandle,
  query: string,
  variables: Record<string, unknown>,
  files: ReadonlyArray<{ path: string; name: string; bytes: Uint8Array | string; type?: string }>,
  options: { caller?: Caller; headers?: Record<string, string> } = {}
): Promise<GqlResult> => {
  const form = new FormData()
  form.append("operations", JSON.stringify({ query, variables }))
  form.append("map", JSON.stringify(Object.fromEntries(files.map((f, i) => [String(i), [f.path]]))))
  files.forEach((f, i) => {
    const blob = new Blob([typeof f.bytes === "string" ? Buffer.from(f.bytes) : f.bytes], {
      type: f.type ?? "application/octet-stream"
    })
    form.append(String(i), blob, f.name)
  })
  const res = await fetch(`${h.baseUrl}/graphql`, {
    method: "POST",
    headers: authHeaders(options.caller ?? owner(h), options.headers ?? {}),
    body: form
  })
  return { status: res.status, body: (await res.json()) as GqlResult["body"] }
}

export const UPLOAD_FILE = `mutation($input: UploadFileInput!) {
  uploadFile(input: $input) { id uid name size type extension shared status createdAt project { id } folder { id } }
}`

export const UPLOAD_FILES = `mutation($input: UploadFilesInput!) {
  uploadFiles(input: $input) { id uid name size type extension shared status project { id } folder { id } }
}`

/** Uploads one small CONFIRMED file to a workspace and returns it. */
export const uploadSmall = async (h: EmulatorHandle, workspaceId: string, name = "note.txt", text = "hello") => {
  const r = await upload(h, UPLOAD_FILE, { input: { file: null, companyId: h.org, projectId: workspaceId } }, [
    { path: "variables.input.file", name, bytes: text, type: "text/plain" }
  ])
  if (r.body.errors !== undefined) throw new Error(JSON.stringify(r.body.errors))
  return r.body.data!["uploadFile"] as { id: string; uid: string; name: string; size: number; type: string; extension: string }
}

/** A REST RPC call with the owner's bearer token. */
export const rest = async (h: EmulatorHandle, operation: string, body: Record<string, unknown>, token = h.token) => {
  const res = await fetch(`${h.restUrl}/v1/${operation}`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${token}`, "svc-org-id": h.org },
    body: JSON.stringify(body)
  })
  return { status: res.status, body: (await res.json()) as any }
}

export interface ReceivedPost {
  readonly method: string
  readonly headers: IncomingMessage["headers"]
  readonly raw: Buffer
  readonly json: any
}

/**
 * A webhook receiver on 127.0.0.1:0. `answer` picks the status per request (default
 * 200); "hang" never answers. `next(n)` waits until n requests have arrived.
 */
export const receiver = async (answer: (index: number, post: ReceivedPost) => number | "hang" = () => 200) => {
  const posts: Array<ReceivedPost> = []
  const waiters: Array<{ n: number; resolve: () => void }> = []
  const closed: Array<number> = []
  const server: Server = createServer((req, res) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => {
      const raw = Buffer.concat(chunks)
      let json: unknown = null
      try {
        json = JSON.parse(raw.toString("utf8"))
      } catch {
        json = null
      }
      const post = { method: req.method ?? "", headers: req.headers, raw, json }
      posts.push(post)
      const index = posts.length - 1
      const status = answer(index, post)
      for (const w of waiters.splice(0)) {
        if (posts.length >= w.n) w.resolve()
        else waiters.push(w)
      }
      if (status === "hang") {
        // The sender gives up on its own: note when it drops the connection.
        res.on("close", () => closed.push(index))
        return
      }
      res.writeHead(status)
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  return {
    url: `http://127.0.0.1:${port}/hook`,
    posts,
    /** Indexes of unanswered requests whose connection the sender closed. */
    closed,
    /**
     * Resolves once `n` requests have arrived: waits on the server's requests, with no deadline
     * of its own (a busy machine only makes the wait longer; the test's timeout ends a wait for
     * deliveries that never come).
     */
    next: (n: number) =>
      new Promise<void>((resolve) => {
        if (posts.length >= n) return resolve()
        waiters.push({ n, resolve })
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/**
 * Polls `check` until it returns a value other than undefined. No deadline of its own: a
 * busy machine only makes the wait longer, and the test's timeout ends a wait for what
 * never comes.
 */
export const eventually = async <T>(check: () => T | undefined): Promise<T> => {
  for (;;) {
    const value = check()
    if (value !== undefined) return value
    await sleep(10)
  }
}
