/** Helpers for the REST conformance tests: real HTTP (global fetch) against a started emulator. */
import type { EmulatorHandle } from "../../src/emulator/index.ts"

export interface Answer<T = any> {
  readonly status: number
  readonly body: T
  readonly headers: Headers
}

export interface CallOptions {
  readonly token?: string | null
  readonly org?: string | null
  readonly headers?: Record<string, string>
}

const authHeaders = (h: EmulatorHandle, o: CallOptions): Record<string, string> => {
  const out: Record<string, string> = {}
  const token = o.token === undefined ? h.token : o.token
  if (token !== null) out["authorization"] = `Bearer ${token}`
  const org = o.org === undefined ? h.org : o.org
  if (org !== null) out["svc-org-id"] = org
  return { ...out, ...o.headers }
}

const answer = async (res: Response): Promise<Answer> => {
  const text = await res.text()
  let body: unknown = text
  try {
    body = JSON.parse(text)
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers }
}

/** RPC: POST {restUrl}/v1/<op> with a JSON body. */
export const rpc = async (h: EmulatorHandle, op: string, body: unknown = {}, o: CallOptions = {}): Promise<Answer> =>
  answer(
    await fetch(`${h.restUrl}/v1/${op}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...authHeaders(h, o) },
      body: JSON.stringify(body)
    })
  )

/** Any request under {restUrl}. */
export const rest = async (
  h: EmulatorHandle,
  method: string,
  path: string,
  body?: unknown,
  o: CallOptions = {}
): Promise<Answer> =>
  answer(
    await fetch(`${h.restUrl}${path}`, {
      method,
      headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...authHeaders(h, o) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
  )

/** Expects a 200 and returns the body. */
export const ok = async <T = any>(p: Promise<Answer<T>>): Promise<T> => {
  const a = await p
  if (a.status !== 200) throw new Error(`expected 200, got ${a.status}: ${JSON.stringify(a.body)}`)
  return a.body
}

export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/
