import { setTimeout as sleep } from 'node:timers/promises'
import { Agent, request, type Dispatcher } from 'undici'
import { storableText } from '../../lib/printable-text.ts'
import type { PlatformAccess } from './connections.ts'

/**
 * HTTP to one store's BigCommerce REST API (`{PLATFORM_API_URL}/stores/{hash}/v2|v3/...`) and its
 * payments host (`{PLATFORM_PAYMENTS_URL}/stores/{hash}/payments`), as docs/platform-api.md §0
 * describes them: headers, three error shapes, and rate limits.
 *
 * A 429 is the platform refusing the request before doing anything, so it is always safe to send
 * again: the client waits what the answer names (`X-Rate-Limit-Time-Reset-Ms`, else `X-Retry-After`
 * seconds, else a back-off) and sends again, up to a budget; a 429 past the budget is returned to
 * the caller, never turned into a decline or an error about the request.
 *
 * The access token and a payment access token never appear in a reason or an error.
 */

export type PlatformHost = 'api' | 'payments'

export interface PlatformAnswer {
  statusCode: number
  /** Parsed JSON, or undefined for an empty or non-JSON body. */
  body: unknown
  headers: Record<string, string | string[] | undefined>
}

export type PlatformReply =
  | { sent: true; answer: PlatformAnswer; rateLimitedFor: number }
  /** `neverSent`: the request did not leave (connection refused, DNS): the platform did nothing. */
  | { sent: false; neverSent: boolean; reason: string; rateLimitedFor: number }

export interface PlatformCall {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  /** Relative to the store: `/v2/orders`, `/v3/hooks`, or `/payments` on the payments host. */
  path: string
  query?: Record<string, string | number> | undefined
  body?: unknown
  host?: PlatformHost
  /** The payment access token, for the payments host (`Authorization: PAT ...`). */
  pat?: string | undefined
  /** Overrides the client's budget for waiting out 429s on this call (0: return the first 429). */
  rateLimitBudgetMs?: number | undefined
}

export interface PlatformClientOptions {
  apiUrl: string
  paymentsUrl: string
  timeoutMs?: number
  /** Longest total wait for 429s in one call before the 429 is handed back. Default 30 s. */
  rateLimitBudgetMs?: number
  dispatcher?: Dispatcher
  /** Told of every request sent and every answer of a store's REST host: the stores' shared budgets. */
  budget?: { observe(storeHash: string, answer: PlatformAnswer): void; countCall(): void } | undefined
}

export interface PlatformClient {
  call(access: PlatformAccess, call: PlatformCall): Promise<PlatformReply>
  /**
   * How long after a call starts its request may still reach the platform: the last attempt starts
   * within the 429 budget and is abandoned after the timeout. Past this, a call started earlier is over.
   */
  readonly longestCallMs: number
  close(): Promise<void>
}

const DEFAULT_TIMEOUT_MS = 15_000
const DEFAULT_RATE_LIMIT_BUDGET_MS = 30_000
// A 429 without headers means the platform is under load (§0 "Rate limits"): back off from 1 s.
const BACKOFF_START_MS = 1_000

// Between two tries of a rate-limited request, even when the platform says the window is open again.
const MIN_RETRY_MS = 250
/** No answer of the endpoints used is near this (a page of order products is well under 1 MiB). */
export const MAX_ANSWER_BYTES = 4 * 1024 * 1024

/** The body as text, or undefined (and the stream destroyed) once it passes `limit` bytes. */
async function readBounded(body: AsyncIterable<Buffer> & { destroy(error?: Error): unknown }, limit: number): Promise<string | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of body) {
    size += chunk.length
    if (size > limit) {
      body.destroy()
      return undefined
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

// Errors raised before a byte of the request left: the platform cannot have acted on it.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT'])

export function wasNeverSent(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && NOT_SENT_CODES.has(code)
}

/** A short description of a transport error; never the request (it carries credentials). */
export function describeTransportError(error: unknown): string {
  const e = error as { name?: unknown; code?: unknown } | null
  if (e?.name === 'TimeoutError' || e?.code === 'UND_ERR_HEADERS_TIMEOUT' || e?.code === 'UND_ERR_BODY_TIMEOUT') return 'timed out'
  if (typeof e?.code === 'string') return `network error ${e.code}`
  return `network error ${typeof e?.name === 'string' ? e.name : 'unknown'}`
}

function header(headers: PlatformAnswer['headers'], name: string): string | undefined {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

/**
 * How long a 429 asks to wait: `X-Rate-Limit-Time-Reset-Ms`, else `X-Retry-After` (seconds), else
 * undefined (no headers: back off). Capped at a minute so a lying header cannot park a worker.
 */
export function rateLimitWaitMs(headers: PlatformAnswer['headers']): number | undefined {
  const resetMs = Number(header(headers, 'x-rate-limit-time-reset-ms'))
  if (Number.isFinite(resetMs) && resetMs >= 0 && header(headers, 'x-rate-limit-time-reset-ms')?.trim()) return Math.min(resetMs, 60_000)
  const retryAfter = Number(header(headers, 'x-retry-after'))
  if (Number.isFinite(retryAfter) && retryAfter >= 0 && header(headers, 'x-retry-after')?.trim()) return Math.min(retryAfter * 1000, 60_000)
  return undefined
}

/** Every text the platform put in an error body (the v2 array, the v3 object, refunds' `data`). */
export function problemText(body: unknown): string {
  const texts: string[] = []
  const add = (value: unknown) => {
    if (typeof value === 'string' && value.trim() && !texts.includes(value.trim())) texts.push(value.trim())
  }
  const visit = (item: unknown) => {
    const b = item as { title?: unknown; detail?: unknown; error?: unknown; message?: unknown; errors?: unknown } | null
    if (!b || typeof b !== 'object') return
    add(b.title)
    add(b.detail)
    add(b.error)
    add(b.message)
    if (Array.isArray(b.errors)) for (const e of b.errors) visit(e)
    else if (b.errors && typeof b.errors === 'object') for (const value of Object.values(b.errors)) add(value)
  }
  if (Array.isArray(body)) for (const item of body) visit(item)
  else visit(body)
  const data = (body as { data?: unknown } | null)?.data
  if (Array.isArray(data)) for (const item of data) visit(item)
  // Another system's words: stored in charges and reviews, so nothing PostgreSQL refuses (NUL).
  return storableText(texts.join('; ').slice(0, 300))
}

export function createPlatformClient(options: PlatformClientOptions): PlatformClient {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const budgetMs = options.rateLimitBudgetMs ?? DEFAULT_RATE_LIMIT_BUDGET_MS
  const ownAgent = options.dispatcher ? undefined : new Agent({ keepAliveTimeout: 10_000, connect: { timeout: Math.min(timeoutMs, 10_000) } })
  const dispatcher = options.dispatcher ?? ownAgent!
  const apiUrl = options.apiUrl.replace(/\/+$/, '')
  const paymentsUrl = options.paymentsUrl.replace(/\/+$/, '')

  function urlOf(access: PlatformAccess, call: PlatformCall): string {
    const base = `${call.host === 'payments' ? paymentsUrl : apiUrl}/stores/${encodeURIComponent(access.storeHash)}`
    const query = call.query ? new URLSearchParams(Object.entries(call.query).map(([k, v]): [string, string] => [k, String(v)])).toString() : ''
    return `${base}${call.path}${query ? `?${query}` : ''}`
  }

  function headersOf(access: PlatformAccess, call: PlatformCall): Record<string, string> {
    const json: Record<string, string> = call.body === undefined ? {} : { 'content-type': 'application/json' }
    // The payments host takes the PAT and only this Accept (PROC `AcceptPaymentResponse`); no X-Auth-Token there.
    if (call.host === 'payments') return { accept: 'application/vnd.bc.v1+json', authorization: `PAT ${call.pat ?? ''}`, ...json }
    return { accept: 'application/json', 'x-auth-token': access.accessToken, ...json }
  }

  async function once(access: PlatformAccess, call: PlatformCall): Promise<{ sent: true; answer: PlatformAnswer } | { sent: false; neverSent: boolean; reason: string }> {
    try {
      const response = await request(urlOf(access, call), {
        method: call.method,
        dispatcher,
        headers: headersOf(access, call),
        body: call.body === undefined ? null : JSON.stringify(call.body),
        signal: AbortSignal.timeout(timeoutMs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      })
      const text = await readBounded(response.body, MAX_ANSWER_BYTES)
      if (text === undefined) return { sent: false, neverSent: false, reason: `the answer was larger than ${MAX_ANSWER_BYTES >> 20} MiB` }
      let body: unknown
      try {
        body = text ? JSON.parse(text) : undefined
      } catch {
        body = undefined
      }
      return { sent: true, answer: { statusCode: response.statusCode, body, headers: response.headers } }
    } catch (error) {
      return { sent: false, neverSent: wasNeverSent(error), reason: describeTransportError(error) }
    }
  }

  return {
    longestCallMs: budgetMs + timeoutMs,
    async call(access, call) {
      const budget = call.rateLimitBudgetMs ?? budgetMs
      // The budget bounds the whole call, the attempts' own time included: a platform answering
      // 429 slowly with a zero reset cannot stretch one call to hours.
      const started = Date.now()
      let backoff = BACKOFF_START_MS
      for (;;) {
        // The store's REST quota is what the budget keeps; the payments host has a limit of its own.
        if (call.host !== 'payments') options.budget?.countCall()
        const reply = await once(access, call)
        if (reply.sent && call.host !== 'payments') options.budget?.observe(access.storeHash, reply.answer)
        const spent = Date.now() - started
        if (!reply.sent || reply.answer.statusCode !== 429) return { ...reply, rateLimitedFor: spent }
        const asked = rateLimitWaitMs(reply.answer.headers)
        // Never earlier than asked, nor sooner than MIN_RETRY_MS; without headers, back off.
        const wait = asked === undefined ? backoff : Math.max(asked + 50, MIN_RETRY_MS)
        backoff = Math.min(backoff * 2, 30_000)
        if (spent + wait > budget) return { ...reply, rateLimitedFor: spent }
        await sleep(wait)
      }
    },
    close: async () => {
      await ownAgent?.close()
    },
  }
}
