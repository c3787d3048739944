import type { ChargeOutcome, FailureCode } from './gateway.ts'

/**
 * How the platform's answers become outcomes. Pure, so the HTTP code stays thin. The rule behind
 * every row: 'failed' only when no money can have moved, 'unknown' whenever it might have.
 *
 * | step         | the platform answers                                  | outcome                                  |
 * |--------------|-------------------------------------------------------|------------------------------------------|
 * | access token | 2xx with data.id                                      | go on to the payment                     |
 * | access token | 401, 403                                              | failed gateway_configuration             |
 * | access token | 409, 422 (order not payable: perhaps paid already)    | reconcile on the order's transactions    |
 * | access token | 404                                                   | failed gateway_configuration             |
 * | access token | anything else, timeout, network error                 | failed processing_error (a token moves no money) |
 * | payment      | 2xx, data.status success (or none) and data.id        | succeeded, gatewayChargeId = data.id     |
 * | payment      | 2xx, data.status declined / failed                    | failed, code from the body (card_declined) |
 * | payment      | 2xx, pending or without an id                         | unknown                                  |
 * | payment      | 400 / 402 / 422 with a known decline code             | failed with that code (DECLINE_CODES)    |
 * | payment      | 402 / 422 without a known code                        | failed card_declined                     |
 * | payment      | 401, 403 (payment access token refused)               | failed gateway_configuration             |
 * | payment      | 409 (this idempotency key is in flight)               | unknown                                  |
 * | payment      | other 4xx (400, 404, 429...)                          | failed processing_error                  |
 * | payment      | 3xx, 5xx                                              | unknown (it may have been processed)     |
 * | payment      | timeout, connection reset or closed after sending     | unknown                                  |
 * | either       | connection refused, DNS failure, connect timeout      | failed processing_error (nothing sent)   |
 */

/** The platform's error codes (and common processor codes it passes through) in our vocabulary. */
export const DECLINE_CODES: Record<string, FailureCode> = {
  card_declined: 'card_declined',
  declined: 'card_declined',
  generic_decline: 'card_declined',
  do_not_honor: 'card_declined',
  fraudulent: 'card_declined',
  lost_card: 'card_declined',
  stolen_card: 'card_declined',
  insufficient_funds: 'insufficient_funds',
  expired_card: 'expired_card',
  card_expired: 'expired_card',
  invalid_instrument: 'instrument_invalid',
  instrument_not_found: 'instrument_invalid',
  invalid_card: 'instrument_invalid',
  incorrect_number: 'instrument_invalid',
  processing_error: 'processing_error',
}

// Errors raised before a single byte of the request left: nothing can have been charged.
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'UND_ERR_CONNECT_TIMEOUT'])

export function wasNeverSent(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code
  return typeof code === 'string' && NOT_SENT_CODES.has(code)
}

/** A short description of a transport error, for outcomes; never the request (it carries credentials). */
export function describeTransportError(error: unknown): string {
  const e = error as { name?: unknown; code?: unknown } | null
  if (e?.name === 'TimeoutError' || e?.code === 'UND_ERR_HEADERS_TIMEOUT' || e?.code === 'UND_ERR_BODY_TIMEOUT') return 'timed out'
  if (typeof e?.code === 'string') return `network error ${e.code}`
  return `network error ${typeof e?.name === 'string' ? e.name : 'unknown'}`
}

export interface PlatformAnswer {
  statusCode: number
  /** Parsed JSON body, or undefined when it was not JSON. */
  body: unknown
}

function errorCodesOf(body: unknown): string[] {
  const codes: string[] = []
  const b = body as { code?: unknown; errors?: unknown; data?: { code?: unknown } } | null
  if (typeof b?.code === 'string') codes.push(b.code)
  if (typeof b?.data?.code === 'string') codes.push(b.data.code)
  const errors = Array.isArray(b?.errors) ? b.errors : []
  for (const item of errors) if (typeof item?.code === 'string') codes.push(item.code)
  return codes.map((code) => code.toLowerCase())
}

export function titleOf(body: unknown): string {
  const b = body as { title?: unknown; errors?: Array<{ message?: unknown }> } | null
  const first = Array.isArray(b?.errors) ? b.errors.find((item) => typeof item?.message === 'string')?.message : undefined
  const text = typeof b?.title === 'string' ? b.title : typeof first === 'string' ? first : ''
  return text.slice(0, 200)
}

function declineCode(body: unknown): FailureCode | undefined {
  for (const code of errorCodesOf(body)) if (DECLINE_CODES[code]) return DECLINE_CODES[code]
  return undefined
}

const failed = (failureCode: FailureCode, failureMessage: string): ChargeOutcome => ({ status: 'failed', failureCode, failureMessage })

/** The outcome of the payment request, from the platform's answer (rows "payment" of the table). */
export function paymentOutcome(answer: PlatformAnswer): ChargeOutcome {
  const { statusCode, body } = answer
  const detail = titleOf(body)
  if (statusCode >= 200 && statusCode < 300) {
    const data = (body as { data?: { id?: unknown; status?: unknown } } | null)?.data
    const id = typeof data?.id === 'string' || typeof data?.id === 'number' ? String(data.id) : undefined
    const status = typeof data?.status === 'string' ? data.status.toLowerCase() : 'success'
    if (status === 'declined' || status === 'failed') return failed(declineCode(body) ?? 'card_declined', detail || 'The payment was declined.')
    if (status === 'success' && id) return { status: 'succeeded', gatewayChargeId: id }
    return { status: 'unknown', reason: `the platform answered ${statusCode} with payment status ${status}${id ? '' : ' and no transaction id'}` }
  }
  if (statusCode === 401 || statusCode === 403) return failed('gateway_configuration', `the platform refused the payment access token (${statusCode})`)
  if (statusCode === 409) return { status: 'unknown', reason: 'the platform reports a payment with this idempotency key in progress (409)' }
  if (statusCode === 400 || statusCode === 402 || statusCode === 422) {
    const code = declineCode(body)
    if (code) return failed(code, detail || `declined (${statusCode})`)
    if (statusCode !== 400) return failed('card_declined', detail || `declined (${statusCode})`)
  }
  if (statusCode >= 400 && statusCode < 500) return failed('processing_error', `the platform refused the payment (${statusCode})${detail ? `: ${detail}` : ''}`)
  return { status: 'unknown', reason: `the platform answered ${statusCode}; the payment may have been processed` }
}

/**
 * What an order's transaction list says about its payment: a settled purchase wins; a pending one
 * means not yet known; none means the order is unpaid, so paying it again cannot charge twice.
 */
export function transactionsOutcome(body: unknown): ChargeOutcome | undefined {
  const data = (body as { data?: unknown } | null)?.data
  const transactions = Array.isArray(data) ? (data as Array<Record<string, unknown>>) : []
  const paid = transactions.find((t) => (t.event === 'purchase' || t.event === 'capture') && t.status === 'ok')
  if (paid) {
    const id = paid.gateway_transaction_id ?? paid.id
    return { status: 'succeeded', gatewayChargeId: String(id) }
  }
  if (transactions.some((t) => t.event === 'pending' || t.status === 'pending')) return { status: 'unknown', reason: 'the order has a payment pending' }
  return undefined
}
