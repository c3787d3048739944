import type { ChargeOutcome, FailureCode, RefundOutcome } from './gateway.ts'
import { currencyExponent, decimalToMinor, minorToDecimal } from '../../../lib/money.ts'
import { problemText, type PlatformAnswer } from '../../platform/index.ts'

/**
 * How the platform's answers become outcomes (docs/platform-api.md §3, §4, §5; docs/bigcommerce.md,
 * Renewals). Pure, so the HTTP code stays thin. The rule behind every row: 'failed' only when no
 * money can have moved, 'unknown' whenever it might have. A 429 never reaches these functions as a
 * decline: the client waits it out, and one past its budget is 'unknown' with nothing sent.
 *
 * | step         | the platform answers                                        | outcome                                  |
 * |--------------|-------------------------------------------------------------|------------------------------------------|
 * | payment      | 201, data.status success (purchase or authorization)        | succeeded                                |
 * | payment      | 201, data.status pending, or without a status               | unknown: reconcile on the transactions   |
 * | payment      | code 30102, 30104                                           | failed card_declined                     |
 * | payment      | code 30103                                                  | failed expired_card                      |
 * | payment      | code 30106                                                  | failed insufficient_funds                |
 * | payment      | code 30051, 30107                                           | failed instrument_invalid                |
 * | payment      | code 30000, 30001, 30002, 30003                             | failed gateway_configuration             |
 * | payment      | code 10001, 30004, 30100                                    | failed processing_error                  |
 * | payment      | code 30101 (order not Incomplete), 30105 (duplicate)        | reconcile: never pay again               |
 * | payment      | code 10000 (try again), any 5xx, 429 past the budget        | unknown: reconcile before anything else  |
 * | payment      | 422 without a code                                          | failed card_declined                     |
 * | payment      | 401, 403 (payment access token refused)                     | failed gateway_configuration             |
 * | payment      | other 4xx                                                   | failed processing_error                  |
 * | payment      | timeout, connection reset or closed after sending           | unknown                                  |
 * | payment      | connection refused, DNS failure (nothing sent)              | failed processing_error                  |
 * | transactions | an ok purchase, capture, settled or authorization           | succeeded                                |
 * | transactions | an `event: pending`                                         | unknown                                  |
 * | transactions | only declined (`status: error`) payments                    | failed card_declined                     |
 * | transactions | 204, none                                                   | no trace (the order is read next)        |
 * | refund quote | 201 with an online, non-store-credit method of exactly the amount | go on to the refund                |
 * | refund quote | 2xx without such a method (offline only, other amount)      | failed, saying what the platform offers  |
 * | refund quote | anything else: 4xx, 5xx, timeout, network error             | failed (a quote moves no money)          |
 * | refund       | 2xx with data.id, not every payment is_declined             | succeeded, gatewayRefundId = data.id     |
 * | refund       | 2xx with data.id, every payment is_declined                 | failed with the declined_message         |
 * | refund       | 2xx without data.id                                         | unknown                                  |
 * | refund       | 4xx other than 429                                          | failed with the platform's title/detail  |
 * | refund       | 429, 5xx, 1xx/3xx                                           | unknown (it may have been processed)     |
 */

export type { PlatformAnswer }
export { problemText }

/** The payments host's integer error codes (PAY "Error codes"), in our vocabulary. */
export const PAYMENT_ERROR_CODES: Readonly<Record<number, FailureCode | 'reconcile' | 'unknown'>> = {
  10000: 'unknown',
  10001: 'processing_error',
  30000: 'gateway_configuration',
  30001: 'gateway_configuration',
  30002: 'gateway_configuration',
  30003: 'gateway_configuration',
  30004: 'processing_error',
  30051: 'instrument_invalid',
  30100: 'processing_error',
  30101: 'reconcile',
  30102: 'card_declined',
  30103: 'expired_card',
  30104: 'card_declined',
  30105: 'reconcile',
  30106: 'insufficient_funds',
  30107: 'instrument_invalid',
}

/** The integer `code` of a v3 or payments error body (also tolerated as a digit string). */
export function errorCodeOf(body: unknown): number | undefined {
  const code = (body as { code?: unknown } | null)?.code
  if (typeof code === 'number' && Number.isInteger(code)) return code
  if (typeof code === 'string' && /^\d{1,6}$/.test(code)) return Number(code)
  return undefined
}

export function titleOf(body: unknown): string {
  return problemText(body).slice(0, 200)
}

const failed = (failureCode: FailureCode, failureMessage: string): ChargeOutcome => ({ status: 'failed', failureCode, failureMessage })

/** What the payment request's answer means; 'reconcile' asks the caller to read the order's transactions. */
export type PaymentAnswerMeaning = ChargeOutcome | { status: 'reconcile'; reason: string }

/** The outcome of the payment request (rows "payment" of the table). `gatewayChargeId` is the caller's. */
export function paymentOutcome(answer: PlatformAnswer, gatewayChargeId: string): PaymentAnswerMeaning {
  const { statusCode, body } = answer
  const detail = titleOf(body)
  if (statusCode >= 200 && statusCode < 300) {
    const data = (body as { data?: { status?: unknown } } | null)?.data
    const status = typeof data?.status === 'string' ? data.status.toLowerCase() : ''
    if (status === 'success') return { status: 'succeeded', gatewayChargeId }
    return { status: 'unknown', reason: `the platform answered ${statusCode} with payment status ${status || '(none)'}` }
  }
  const code = errorCodeOf(body)
  const meaning = code === undefined ? undefined : PAYMENT_ERROR_CODES[code]
  const said = `${detail || `the platform answered ${statusCode}`}${code === undefined ? '' : ` (code ${code})`}`
  if (meaning === 'reconcile') return { status: 'reconcile', reason: said }
  if (meaning === 'unknown' || statusCode >= 500 || statusCode === 429 || statusCode < 200 || (statusCode >= 300 && statusCode < 400)) {
    return { status: 'unknown', reason: `${said}; the payment may have been processed` }
  }
  if (meaning) return failed(meaning, said)
  if (statusCode === 401 || statusCode === 403) return failed('gateway_configuration', `the platform refused the payment access token (${statusCode})`)
  // PROC: 422 is "missing, invalid data or declined by payment provider"; without a code it is a decline.
  if (statusCode === 422) return failed('card_declined', said)
  return failed('processing_error', `the platform refused the payment: ${said}`)
}

// Events that mean money was taken or is held for this order (O3 `Transaction.event`).
const PAID_EVENTS = new Set(['purchase', 'capture', 'settled', 'authorization'])

/**
 * What an order's transaction list says about its payment (§4): an ok purchase, capture, settled or
 * authorization is paid (an authorization holds the money: paying again would hold it twice); an
 * `event: pending` is not yet known; only declined attempts is a decline; none is no trace.
 */
export function transactionsOutcome(body: unknown, gatewayChargeId: string): ChargeOutcome | undefined {
  const data = (body as { data?: unknown } | null)?.data
  const transactions = Array.isArray(data) ? (data as Array<Record<string, unknown>>) : []
  if (transactions.some((t) => typeof t?.event === 'string' && PAID_EVENTS.has(t.event) && t.status === 'ok')) return { status: 'succeeded', gatewayChargeId }
  if (transactions.some((t) => t?.event === 'pending')) return { status: 'unknown', reason: 'the order has a payment pending' }
  if (transactions.some((t) => (t?.event === 'purchase' || t?.event === 'authorization') && t.status === 'error')) {
    return failed('card_declined', 'the payment was declined (found when the order was reconciled)')
  }
  return undefined
}

export { currencyExponent, decimalToMinor, minorToDecimal }

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
