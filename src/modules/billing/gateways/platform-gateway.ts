import { Agent, request, type Dispatcher } from 'undici'
import type { ChargeOutcome, ChargeRequest, OrderOutcome, PaymentGateway, RefundOutcome, RefundRequest, RenewalOrder } from './gateway.ts'
import {
  currencyExponent,
  describeTransportError,
  minorToDecimal,
  paymentOutcome,
  refundOutcome,
  refundQuoteOutcome,
  titleOf,
  transactionsOutcome,
  wasNeverSent,
  type PlatformAnswer,
} from './platform-outcomes.ts'

/** One store's credentials for the platform, from configuration. */
export interface PlatformStoreConfig {
  /** The store's REST API base, e.g. `https://api.example.com/stores/{hash}/v3`. */
  apiBaseUrl: string
  /** Where payments are submitted; the platform serves them from their own host. Defaults to apiBaseUrl. */
  paymentsBaseUrl?: string | undefined
  accessToken: string
}

export interface PlatformGatewayOptions {
  /** The store's credentials, or undefined when the store has none configured. */
  configFor(storeId: string): PlatformStoreConfig | undefined | Promise<PlatformStoreConfig | undefined>
  /** Per request, from sending to the last byte of the answer. */
  timeoutMs?: number
  /** Tests and the server may share a pool; otherwise the gateway keeps its own keep-alive pool. */
  dispatcher?: Dispatcher
}

export interface PlatformGateway extends PaymentGateway {
  readonly name: 'platform'
  close(): Promise<void>
}

const DEFAULT_TIMEOUT_MS = 15_000

type Sent = { ok: true; answer: PlatformAnswer } | { ok: false; neverSent: boolean; reason: string }

/**
 * A decimal amount written into the JSON body exactly as given ("25.00" stays 25.00 on the wire),
 * so money never passes through a float on its way out.
 */
function decimalJson(text: string): unknown {
  const rawJSON = (JSON as { rawJSON?: (text: string) => unknown }).rawJSON
  return rawJSON ? rawJSON(text) : Number(text)
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 200)
}

/**
 * The commerce platform's stored-instrument payments API: obtain a payment access token for the
 * order, then submit the payment with the vaulted instrument's token. Outcomes per platform-outcomes.ts.
 * Credentials never enter an outcome or an error: every text from outside goes through `redact`.
 */
export function createPlatformGateway(options: PlatformGatewayOptions): PlatformGateway {
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  const ownAgent = options.dispatcher ? undefined : new Agent({ keepAliveTimeout: 10_000, connect: { timeout: Math.min(timeoutMs, 10_000) } })
  const dispatcher = options.dispatcher ?? ownAgent!

  async function send(method: 'GET' | 'POST', url: string, headers: Record<string, string>, body?: unknown): Promise<Sent> {
    try {
      const response = await request(url, {
        method,
        dispatcher,
        headers: { accept: 'application/json', ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        body: body === undefined ? null : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      })
      const text = await response.body.text()
      let parsed: unknown
      try {
        parsed = text ? JSON.parse(text) : undefined
      } catch {
        parsed = undefined
      }
      return { ok: true, answer: { statusCode: response.statusCode, body: parsed } }
    } catch (error) {
      return { ok: false, neverSent: wasNeverSent(error), reason: describeTransportError(error) }
    }
  }

  async function transactionsOfOrder(config: PlatformStoreConfig, orderId: string, redact: (text: string) => string): Promise<ChargeOutcome | undefined> {
    const sent = await send('GET', `${trimSlash(config.apiBaseUrl)}/orders/${encodeURIComponent(orderId)}/transactions`, { 'x-auth-token': config.accessToken })
    if (!sent.ok) return { status: 'unknown', reason: redact(`looking up the order's transactions: ${sent.reason}`) }
    if (sent.answer.statusCode < 200 || sent.answer.statusCode >= 300) return { status: 'unknown', reason: `looking up the order's transactions: the platform answered ${sent.answer.statusCode}` }
    return transactionsOutcome(sent.answer.body)
  }

  return {
    name: 'platform',
    // The platform takes no idempotency keys (docs/money-path.md, Exactly once): a payment sent once is only looked up.
    honoursIdempotencyKeys: false,

    async createOrder(charge: ChargeRequest, order: RenewalOrder): Promise<OrderOutcome> {
      const config = await options.configFor(charge.storeId)
      if (!config) return { status: 'failed', failureCode: 'gateway_configuration', failureMessage: 'no platform credentials are configured for this store' }
      const redact = (text: string) => text.replaceAll(config.accessToken, '[redacted]')
      const sent = await send(
        'POST',
        `${trimSlash(config.apiBaseUrl)}/orders`,
        { 'x-auth-token': config.accessToken, 'idempotency-key': `${charge.idempotencyKey}:order` },
        {
          status: 'pending',
          external_source: 'subscription-billing',
          external_id: charge.idempotencyKey,
          currency_code: order.currency,
          customer_email: order.email,
          products: [{ product_id: /^\d+$/.test(order.platformProductId) ? Number(order.platformProductId) : order.platformProductId, quantity: order.quantity }],
          // Minor units: the platform must not recompute the price from its catalogue.
          total_minor_units: order.amount,
          shipping_address: order.shippingAddress,
        },
      )
      if (!sent.ok) {
        return sent.neverSent
          ? { status: 'failed', failureCode: 'processing_error', failureMessage: redact(`creating the renewal order: ${sent.reason}`) }
          : { status: 'unknown', reason: redact(`creating the renewal order: ${sent.reason}`) }
      }
      const { statusCode, body } = sent.answer
      const id = (body as { data?: { id?: unknown } } | null)?.data?.id
      if (statusCode >= 200 && statusCode < 300 && (typeof id === 'number' || (typeof id === 'string' && id !== ''))) return { status: 'created', orderId: String(id) }
      if (statusCode >= 500 || statusCode === 409 || statusCode === 429) return { status: 'unknown', reason: `creating the renewal order: the platform answered ${statusCode}` }
      const code = statusCode === 401 || statusCode === 403 || statusCode === 404 ? 'gateway_configuration' : 'processing_error'
      return { status: 'failed', failureCode: code, failureMessage: redact(`creating the renewal order: the platform answered ${statusCode} ${titleOf(body)}`.trim()) }
    },

    async charge(charge: ChargeRequest): Promise<ChargeOutcome> {
      const config = await options.configFor(charge.storeId)
      if (!config) return { status: 'failed', failureCode: 'gateway_configuration', failureMessage: 'no platform credentials are configured for this store' }
      if (!charge.orderId) return { status: 'failed', failureCode: 'gateway_configuration', failureMessage: 'a platform charge needs the order it pays' }
      const secrets = [config.accessToken]
      const redact = (text: string) => secrets.reduce((out, secret) => (secret ? out.replaceAll(secret, '[redacted]') : out), text)
      const idempotency = { 'idempotency-key': charge.idempotencyKey }

      // Step 1: a payment access token for the order. It moves no money, so its failures are definite.
      const orderId = /^\d+$/.test(charge.orderId) ? Number(charge.orderId) : charge.orderId
      const tokenSent = await send('POST', `${trimSlash(config.apiBaseUrl)}/payments/access_tokens`, { 'x-auth-token': config.accessToken, ...idempotency }, { order: { id: orderId, is_recurring: true } })
      if (!tokenSent.ok) return { status: 'failed', failureCode: 'processing_error', failureMessage: redact(`obtaining a payment access token: ${tokenSent.reason}`) }
      const { statusCode, body } = tokenSent.answer
      if (statusCode === 409 || statusCode === 422) {
        // The platform will not let this order be paid; after a lost answer that is because it was paid.
        const reconciled = await transactionsOfOrder(config, charge.orderId, redact)
        return reconciled ?? { status: 'failed', failureCode: 'gateway_configuration', failureMessage: redact(`the order cannot be paid (${statusCode}): ${titleOf(body)}`) }
      }
      const pat = (body as { data?: { id?: unknown } } | null)?.data?.id
      if (statusCode < 200 || statusCode >= 300 || typeof pat !== 'string' || !pat) {
        const code = statusCode === 401 || statusCode === 403 || statusCode === 404 ? 'gateway_configuration' : 'processing_error'
        return { status: 'failed', failureCode: code, failureMessage: redact(`obtaining a payment access token: the platform answered ${statusCode} ${titleOf(body)}`.trim()) }
      }
      secrets.push(pat)

      // Step 2: the payment. From here on, anything short of a clear answer is 'unknown'.
      const paymentsBase = trimSlash(config.paymentsBaseUrl ?? config.apiBaseUrl)
      // The platform takes no idempotency key: the engine records that the payment is about to go
      // out, so a lost answer is only ever looked up. If it cannot (lease lost), nothing is sent.
      try {
        await charge.onSubmit?.()
      } catch (error) {
        return { status: 'unknown', reason: redact(`the payment was not submitted: recording the submission failed (${messageOf(error)})`) }
      }
      const paid = await send(
        'POST',
        `${paymentsBase}/payments`,
        { authorization: `PAT ${pat}`, accept: 'application/vnd.bc.v1+json', ...idempotency },
        { payment: { instrument: { type: 'stored_card', token: charge.paymentInstrumentId }, payment_method_id: 'stored_card' } },
      )
      if (!paid.ok) {
        if (paid.neverSent) return { status: 'failed', failureCode: 'processing_error', failureMessage: redact(`submitting the payment: ${paid.reason}`) }
        return { status: 'unknown', reason: redact(`submitting the payment: ${paid.reason}`) }
      }
      const outcome = paymentOutcome(paid.answer)
      return outcome.status === 'failed' ? { ...outcome, failureMessage: redact(outcome.failureMessage) } : outcome.status === 'unknown' ? { ...outcome, reason: redact(outcome.reason) } : outcome
    },

    async lookup(charge: ChargeRequest): Promise<ChargeOutcome | undefined> {
      // Without an order or credentials, `charge` never sent anything, so there is nothing to find.
      const config = await options.configFor(charge.storeId)
      if (!config || !charge.orderId) return undefined
      return transactionsOfOrder(config, charge.orderId, (text) => text.replaceAll(config.accessToken, '[redacted]'))
    },

    /**
     * Refunds through the order's payment actions (reference/orders.v3.yml): a refund quote for an
     * order-level amount tells which provider can refund it online, then the refund itself with that
     * provider and the same amount, both in the currency's decimal major units.
     */
    async refund(refund: RefundRequest): Promise<RefundOutcome> {
      if (!Number.isSafeInteger(refund.amount) || refund.amount <= 0) throw new RangeError(`refund amount must be a positive integer of minor units, got ${refund.amount}`)
      const exponent = currencyExponent(refund.currency)
      const amount = decimalJson(minorToDecimal(refund.amount, exponent))
      const config = await options.configFor(refund.storeId)
      if (!config) return { status: 'failed', message: 'no platform credentials are configured for this store' }
      if (!refund.orderId) return { status: 'failed', message: 'a platform refund needs the order the charge paid' }
      const redact = (text: string) => (config.accessToken ? text.replaceAll(config.accessToken, '[redacted]') : text)
      const auth = { 'x-auth-token': config.accessToken }
      const actions = `${trimSlash(config.apiBaseUrl)}/orders/${encodeURIComponent(refund.orderId)}/payment_actions`
      const orderId = /^\d+$/.test(refund.orderId) ? Number(refund.orderId) : refund.orderId
      // An order-level amount (item_type ORDER, item_id = the order): tax is not recalculated.
      const item = { item_type: 'ORDER', item_id: orderId, amount, ...(refund.reason ? { reason: refund.reason.slice(0, 1000) } : {}) }

      // Step 1: the quote. It moves no money, so every way it can fail is definite.
      const quoted = await send('POST', `${actions}/refund_quotes`, auth, { items: [item] })
      if (!quoted.ok) return { status: 'failed', message: redact(`asking for a refund quote: ${quoted.reason}`) }
      const quote = refundQuoteOutcome(quoted.answer, refund.amount, exponent)
      if (quote.status === 'failed') return { status: 'failed', message: redact(quote.message) }

      // Step 2: the refund. From here on, anything short of a clear answer is 'unknown'.
      try {
        await refund.onSubmit?.()
      } catch {
        return { status: 'unknown', reason: 'the refund was taken over before it was submitted; nothing was sent' }
      }
      const sent = await send('POST', `${actions}/refunds`, auth, { items: [item], payments: [{ provider_id: quote.providerId, amount, offline: false }] })
      if (!sent.ok) {
        return sent.neverSent ? { status: 'failed', message: redact(`submitting the refund: ${sent.reason}`) } : { status: 'unknown', reason: redact(`submitting the refund: ${sent.reason}`) }
      }
      const outcome = refundOutcome(sent.answer)
      return outcome.status === 'failed' ? { ...outcome, message: redact(outcome.message) } : outcome.status === 'unknown' ? { ...outcome, reason: redact(outcome.reason) } : outcome
    },

    async close() {
      await ownAgent?.close()
    },
  }
}

function trimSlash(url: string): string {
  return url.endsWith('/') ? url.slice(0, -1) : url
}
