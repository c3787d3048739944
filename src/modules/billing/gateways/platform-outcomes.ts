import type { ChargeOutcome, FailureCode, RefundOutcome } from './gateway.ts'

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
 * | refund quote | 201 with an online, non-store-credit method of exactly the amount | go on to the refund          |
 * | refund quote | 2xx without such a method (offline only, other amount) | failed, saying what the platform offers |
 * | refund quote | anything else: 4xx, 5xx, timeout, network error        | failed (a quote moves no money)          |
 * | refund       | 2xx with data.id, not every payment is_declined        | succeeded, gatewayRefundId = data.id     |
 * | refund       | 2xx with data.id, every payment is_declined            | failed with the declined_message         |
 * | refund       | 2xx without data.id                                    | unknown                                  |
 * | refund       | 4xx other than 429                                     | failed with the platform's title/detail  |
 * | refund       | 429, 5xx, 1xx/3xx                                      | unknown (it may have been processed)     |
 * | refund       | timeout, connection reset or closed after sending      | unknown                                  |
 * | refund       | connection refused etc. (wasNeverSent)                 | failed (nothing sent)                    |
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

/**
 * Decimal places of a currency's major unit (USD 2, JPY 0, KWD 3), as ICU knows them. Throws a
 * RangeError for a code that is not a currency.
 */
export function currencyExponent(currency: string): number {
  return new Intl.NumberFormat(undefined, { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2
}

/** Integer minor units as the decimal text of major units, built from the digits (no float): 2500 USD -> "25.00". */
export function minorToDecimal(amount: number, exponent: number): string {
  if (!Number.isSafeInteger(amount) || amount < 0) throw new RangeError(`amount must be a non-negative integer of minor units, got ${amount}`)
  if (exponent === 0) return String(amount)
  const digits = String(amount).padStart(exponent + 1, '0')
  return `${digits.slice(0, -exponent)}.${digits.slice(-exponent)}`
}

/**
 * A decimal amount of major units (a JSON number or numeric string from the platform) in integer
 * minor units, read from its digits; undefined when it is not a plain non-negative decimal or has
 * more places than the currency (so it cannot be an exact amount).
 */
export function decimalToMinor(value: unknown, exponent: number): number | undefined {
  const text = typeof value === 'number' ? (Number.isFinite(value) ? value.toFixed(Math.max(exponent, 0) + 4) : '') : typeof value === 'string' ? value.trim() : ''
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text)
  if (!match) return undefined
  const [, whole, fraction = ''] = match
  if (/[^0]/.test(fraction.slice(exponent))) return undefined
  const minor = Number(`${whole}${fraction.slice(0, exponent).padEnd(exponent, '0')}`)
  return Number.isSafeInteger(minor) ? minor : undefined
}

/** Everything the platform said about an error, for a message: titles, details, per-item errors. */
export function problemText(body: unknown): string {
  const texts: string[] = []
  const add = (value: unknown) => {
    if (typeof value === 'string' && value.trim() && !texts.includes(value.trim())) texts.push(value.trim())
  }
  const visit = (item: unknown) => {
    const b = item as { title?: unknown; detail?: unknown; error?: unknown; message?: unknown; declined_message?: unknown; errors?: unknown } | null
    if (!b || typeof b !== 'object') return
    add(b.title)
    add(b.detail)
    add(b.error)
    add(b.message)
    if (Array.isArray(b.errors)) for (const e of b.errors) visit(e)
    else if (b.errors && typeof b.errors === 'object') for (const value of Object.values(b.errors)) add(value)
  }
  visit(body)
  // The refunds endpoint wraps its errors in `data` (422: [{status, title, type}], 503: [{order_id, status, error}]).
  const data = (body as { data?: unknown } | null)?.data
  if (Array.isArray(data)) for (const item of data) visit(item)
  return texts.join('; ').slice(0, 300)
}

/** A refund method the quote offers: one payment option, online, and not store credit. */
export type RefundQuoteAnswer = { status: 'refundable'; providerId: string } | { status: 'failed'; message: string }

// Providers that "refund" without returning money to the card that paid.
const NOT_THE_CARD = new Set(['storecredit', 'giftcertificate', 'custom'])

/**
 * Which provider refunds `amount` (minor units) according to a refund quote (RefundQuote_Resp:
 * `data.refund_methods`, an array of methods, each an array of PaymentOption). A renewal order is
 * paid by one stored card, so the method wanted is a single online option of the card's provider,
 * for exactly the amount asked (the platform requires the refund to use the quoted amount).
 */
export function refundQuoteOutcome(answer: PlatformAnswer, amount: number, exponent: number): RefundQuoteAnswer {
  const { statusCode, body } = answer
  if (statusCode < 200 || statusCode >= 300) {
    const text = problemText(body)
    return { status: 'failed', message: `the platform refused the refund quote (${statusCode})${text ? `: ${text}` : ''}` }
  }
  const methods = (body as { data?: { refund_methods?: unknown } } | null)?.data?.refund_methods
  const options = (Array.isArray(methods) ? methods : []).filter((method): method is unknown[] => Array.isArray(method) && method.length === 1).map((method) => method[0] as Record<string, unknown>)
  const online = options.filter((option) => option && typeof option.provider_id === 'string' && option.provider_id !== '' && option.offline !== true && option.offline_provider !== true && !NOT_THE_CARD.has(option.provider_id))
  const exact = online.find((option) => decimalToMinor(option.amount, exponent) === amount)
  if (exact) return { status: 'refundable', providerId: exact.provider_id as string }
  if (online.length > 0) {
    const offered = online
      .map((option) => {
        const minor = decimalToMinor(option.amount, exponent)
        return `${minor === undefined ? String(option.amount) : minorToDecimal(minor, exponent)} via ${String(option.provider_id)}`
      })
      .join(', ')
    return { status: 'failed', message: `the platform would refund ${offered}, not ${minorToDecimal(amount, exponent)}` }
  }
  const reasons = options.map((option) => (typeof option?.offline_reason === 'string' && option.offline_reason ? option.offline_reason : undefined)).filter(Boolean)
  return { status: 'failed', message: `the platform offers no online refund to the card for this order${reasons.length ? `: ${reasons.join('; ')}` : ''}`.slice(0, 300) }
}

/** The outcome of the refund request (Refund_Resp on 201), from the platform's answer (rows "refund" of the table). */
export function refundOutcome(answer: PlatformAnswer): RefundOutcome {
  const { statusCode, body } = answer
  if (statusCode >= 200 && statusCode < 300) {
    const data = (body as { data?: { id?: unknown; payments?: unknown } } | null)?.data
    const id = typeof data?.id === 'number' || (typeof data?.id === 'string' && data.id !== '') ? String(data.id) : undefined
    if (!id) return { status: 'unknown', reason: `the platform answered ${statusCode} without a refund id` }
    const payments = Array.isArray(data?.payments) ? (data.payments as Array<{ is_declined?: unknown; declined_message?: unknown }>) : []
    if (payments.length > 0 && payments.every((payment) => payment?.is_declined === true)) {
      const text = payments.map((payment) => (typeof payment.declined_message === 'string' ? payment.declined_message : '')).filter(Boolean).join('; ')
      return { status: 'failed', message: `the payment provider declined the refund${text ? `: ${text}` : ''}`.slice(0, 300) }
    }
    return { status: 'succeeded', gatewayRefundId: id }
  }
  if (statusCode >= 400 && statusCode < 500 && statusCode !== 429) {
    const text = problemText(body)
    return { status: 'failed', message: `the platform refused the refund (${statusCode})${text ? `: ${text}` : ''}` }
  }
  return { status: 'unknown', reason: `the platform answered ${statusCode}; the refund may have been made` }
}
