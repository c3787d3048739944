import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
// wall clock: a receiver that answers slowly, and waitFor's poll (below).
import { setTimeout as sleep } from 'node:timers/promises'
import { Webhook } from 'standardwebhooks'

/** One request as the receiver saw it. */
export interface ReceivedRequest {
  /** 0-based, in arrival order across the receiver. */
  index: number
  method: string
  /** Path and query string. */
  url: string
  /** Lower-cased header names; repeated headers joined with ", ". */
  headers: Record<string, string>
  /** The body exactly as received (UTF-8). */
  body: string
  /** Date.now() when the whole body had arrived. */
  receivedAt: number
  /** The status the receiver answered. */
  answered: number
}

/** What the receiver answers; every field optional (200, no headers, empty body, no delay). */
export interface Answer {
  status?: number
  headers?: Record<string, string>
  body?: string
  /** Waits this long before answering (for timeouts, or to act while the delivery is in flight). */
  delayMs?: number
}

export interface RequestContext {
  /** How many requests arrived before this one. */
  before: number
  /** 1 for the first request with this webhook-id, 2 for its first retry ... */
  attemptOfId: number
}

export type Responder = (request: Omit<ReceivedRequest, 'answered'>, context: RequestContext) => Answer | Promise<Answer>

export interface WebhookReceiver {
  /** `http://127.0.0.1:<port>/hooks`: register this as the endpoint URL. */
  url: string
  port: number
  /** Every request, in arrival order. */
  requests: ReceivedRequest[]
  /** Replaces how the receiver answers from the next request on. */
  respond(responder: Responder): void
  /** Requests carrying this webhook-id, oldest first. */
  withId(webhookId: string): ReceivedRequest[]
  /** The parsed body of every request answered 2xx, first arrival of each webhook-id only, in arrival order. */
  accepted(): any[]
  /** Waits until `predicate` holds (or `count` requests arrived), up to timeoutMs, then throws. */
  waitFor(predicate: number | ((requests: ReceivedRequest[]) => boolean), timeoutMs?: number): Promise<void>
  /**
   * Verifies every recorded request with standardwebhooks against EACH of the secrets (a rotation
   * signs with both) and answers the verified payloads; throws naming the request and secret that failed.
   */
  verifyAll(secrets: string | readonly string[], options?: VerifyOptions): any[]
  close(): Promise<void>
}

export interface VerifyOptions {
  /** The receiver's clock (ms) for the timestamp tolerance check; real time when absent. */
  now?: number
}

/** Every body any receiver in this process was sent: for the card-data scan. */
const everyBody: string[] = []

export function allDeliveredBodies(): readonly string[] {
  return everyBody
}

/** A real HTTP server on 127.0.0.1 (a free port) that records every request and answers as scripted. */
export async function startWebhookReceiver(responder: Responder = () => ({ status: 200 })): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = []
  const seen = new Map<string, number>()
  let current = responder

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('error', () => {})
    req.on('end', () => {
      const headers: Record<string, string> = {}
      for (const [name, value] of Object.entries(req.headers)) {
        if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value
      }
      const id = headers['webhook-id'] ?? ''
      const attemptOfId = (seen.get(id) ?? 0) + 1
      seen.set(id, attemptOfId)
      const body = Buffer.concat(chunks).toString('utf8')
      everyBody.push(body)
      const request = { index: requests.length, method: req.method ?? '', url: req.url ?? '', headers, body, receivedAt: Date.now() }
      const record: ReceivedRequest = { ...request, answered: 0 }
      requests.push(record)
      Promise.resolve()
        .then(() => current(request, { before: request.index, attemptOfId }))
        .then(async (answer) => {
          // wall clock: a receiver that takes this long to answer, as seen over a real socket.
          if (answer.delayMs) await sleep(answer.delayMs)
          record.answered = answer.status ?? 200
          res.writeHead(record.answered, { 'content-type': 'text/plain', ...answer.headers })
          res.end(answer.body ?? '')
        })
        .catch((error: unknown) => {
          record.answered = 599
          res.writeHead(500)
          res.end(String(error))
        })
    })
  })
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => resolve())
  })
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}/hooks`,
    port,
    requests,
    respond(next) {
      current = next
    },
    withId: (webhookId) => requests.filter((request) => request.headers['webhook-id'] === webhookId),
    accepted() {
      const ids = new Set<string>()
      const out: any[] = []
      for (const request of requests) {
        const id = request.headers['webhook-id'] ?? ''
        if (request.answered < 200 || request.answered > 299 || ids.has(id)) continue
        ids.add(id)
        out.push(JSON.parse(request.body))
      }
      return out
    },
    async waitFor(predicate, timeoutMs = 10_000) {
      const test = typeof predicate === 'number' ? (list: ReceivedRequest[]) => list.length >= predicate : predicate
      const deadline = Date.now() + timeoutMs
      while (!test(requests)) {
        if (Date.now() > deadline) throw new Error(`the receiver did not get what was expected within ${timeoutMs} ms (${requests.length} requests)`)
        // wall clock: requests arrive over real sockets from another task or process; polled, with a deadline.
        await sleep(10)
      }
    },
    verifyAll(secrets, options = {}) {
      const list = typeof secrets === 'string' ? [secrets] : secrets
      assert.ok(list.length > 0, 'verifyAll needs a secret')
      return requests.map((request) => {
        let payload: unknown
        list.forEach((secret, which) => {
          try {
            payload = verifyDelivery(request, secret, options)
          } catch (error) {
            throw new assert.AssertionError({ message: `request ${request.index} (${request.headers['webhook-id']}) does not verify with secret #${which}: ${(error as Error).message}` })
          }
        })
        return payload
      })
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

/**
 * Verifies one request as a Standard Webhooks receiver would (the standardwebhooks package), with the
 * receiver's clock at `options.now` when given; answers the parsed payload or throws.
 */
export function verifyDelivery(request: Pick<ReceivedRequest, 'headers' | 'body'>, secret: string, options: VerifyOptions = {}): any {
  const webhook = new Webhook(secret)
  if (options.now === undefined) return webhook.verify(request.body, request.headers)
  const realNow = Date.now
  const now = options.now
  Date.now = () => now
  try {
    return webhook.verify(request.body, request.headers)
  } finally {
    Date.now = realNow
  }
}

export function verifiesWith(request: Pick<ReceivedRequest, 'headers' | 'body'>, secret: string, options: VerifyOptions = {}): boolean {
  try {
    verifyDelivery(request, secret, options)
    return true
  } catch {
    return false
  }
}

/** The `v1,...` entries of the webhook-signature header. */
export function signaturesOf(request: Pick<ReceivedRequest, 'headers'>): string[] {
  return (request.headers['webhook-signature'] ?? '').split(' ').filter((entry) => entry.startsWith('v1,'))
}

function luhnValid(digits: string): boolean {
  let sum = 0
  let double = false
  for (let i = digits.length - 1; i >= 0; i--) {
    let digit = digits.charCodeAt(i) - 48
    if (double) {
      digit *= 2
      if (digit > 9) digit -= 9
    }
    sum += digit
    double = !double
  }
  return sum % 10 === 0
}

/**
 * The first run of 13-19 digits (contiguous, or grouped by single spaces or dashes as card numbers are
 * written) that passes the Luhn check, or undefined. Written apart from src/lib/card-data.ts on purpose.
 */
export function findLuhnRun(text: string): string | undefined {
  for (const match of text.matchAll(/\d(?:[ -]?\d)*/g)) {
    const grouped = match[0].replace(/[ -]/g, '')
    const candidates = [grouped, ...match[0].split(/[ -]/)]
    for (const digits of candidates) {
      if (digits.length >= 13 && digits.length <= 19 && luhnValid(digits)) return digits
    }
  }
  return undefined
}

/** Asserts no body holds a card-number-like run (the run is not printed, only where it was). */
export function assertNoCardNumbers(bodies: readonly string[]): void {
  bodies.forEach((body, index) => {
    assert.equal(findLuhnRun(body) === undefined, true, `delivered body #${index} holds a 13-19 digit Luhn-valid run`)
  })
}
