import type { PlatformAccess, PlatformCall, PlatformClient, PlatformReply } from '../../platform/index.ts'
import { checkoutOrder } from './platform-checkout.ts'
import { stockShortfall, type StockLine } from './platform-stock.ts'
import { bodyOf, is2xx, isConfigurationRefusal, platformInt, redactor, replyReason, statusOf, type Redact } from './platform-replies.ts'
import type { ChargeOutcome, ChargeRequest, OrderOutcome, PaymentGateway, RefundOutcome, RefundRequest, RenewalOrder, StockOutcome } from './gateway.ts'
import {
  currencyExponent,
  decimalToMinor,
  errorCodeOf,
  minorToDecimal,
  paymentOutcome,
  refundOutcome,
  refundQuoteOutcome,
  titleOf,
  transactionsOutcome,
} from './platform-outcomes.ts'

/**
 * BigCommerce's stored-instrument payments, as its published reference defines them
 * (docs/platform-api.md §2-§5, docs/bigcommerce.md "Renewals"):
 *
 *   order     made through the platform's checkout for the customer who owns the card, priced by
 *             the store (its tax, its shipping), Incomplete; see platform-checkout.ts. The engine keeps
 *             the cart and the order on the charge, and the priced figures;
 *   charge    the payment method holding the instrument (`GET /v3/payments/methods?order_id=`), a
 *             fresh payment access token (`is_recurring: true`), then the payment on the payments
 *             host with the stored card;
 *   lookup    the order's transactions, then the order's status.
 *
 * The platform takes no idempotency keys. Exactly once rests on three things: one order per charge
 * (found again by its cart, and never asked for while an earlier holder's request for it may still be
 * in flight: `orderRequestedAt`), the engine recording the payment as submitted before it
 * goes out (a payment is sent at most once per order; a lost answer is only looked up), and a PAT
 * being good for one payment of one order.
 *
 * The access token and payment access tokens never enter an outcome: every text from outside goes
 * through `redact`.
 */

export interface PlatformGatewayOptions {
  client: PlatformClient
  /** The store's hash and token, or undefined when the store is not connected. */
  accessOf(storeId: string): Promise<PlatformAccess | undefined>
}

export interface PlatformGateway extends PaymentGateway {
  readonly name: 'platform'
}

const NOT_CONNECTED = 'the store is not connected to the platform (app install or PUT /api/v1/admin/platform-connection)'

/**
 * The order the platform holds for a renewal, checked before anything pays it: a v2 order takes no
 * currency (the platform prices it in its store's), and the platform could recompute a price. An
 * order in another currency, or for another total, is never paid: ¥1,200 must not become $1,200.00.
 */
export function orderFitsCharge(answered: unknown, order: RenewalOrder): OrderOutcome {
  const o = answered as { id?: unknown; currency_code?: unknown; default_currency_code?: unknown; total_inc_tax?: unknown } | null
  const id = String(o?.id)
  const currency = typeof o?.currency_code === 'string' && o.currency_code ? o.currency_code : typeof o?.default_currency_code === 'string' ? o.default_currency_code : undefined
  if (currency !== undefined && currency.toUpperCase() !== order.currency.toUpperCase()) {
    return { status: 'failed', failureCode: 'gateway_configuration', failureMessage: `the platform priced renewal order ${id} in ${currency}, the subscription is in ${order.currency}: it was not paid (a BigCommerce store charges in its own currency)` }
  }
  if (o?.total_inc_tax !== undefined) {
    const total = decimalToMinor(o.total_inc_tax, currencyExponent(order.currency))
    if (total !== order.amount) {
      return { status: 'failed', failureCode: 'processing_error', failureMessage: `the platform's total for renewal order ${id} is ${String(o.total_inc_tax)}, not ${minorToDecimal(order.amount, currencyExponent(order.currency))}: it was not paid` }
    }
  }
  return { status: 'created', orderId: id }
}

/**
 * How long after an order request was marked it may still become an order: the client's longest call,
 * plus a margin for what the client cannot see or bound: the time between the mark and the request
 * leaving (a stalled process), the platform finishing a request after our client gave up on it, and the
 * clocks of two hosts. Waiting only delays the rare renewal whose order request was lost; asking early
 * can raise a second order.
 */
export const ORDER_REQUEST_MARGIN_MS = 5 * 60_000
export const orderRequestWindowMs = (client: Pick<PlatformClient, 'longestCallMs'>): number => client.longestCallMs + ORDER_REQUEST_MARGIN_MS

/** The order status a paid order moves to (orders.v2 `status_id` 11, Awaiting Fulfillment). */
const AWAITING_FULFILLMENT = 11

export function createPlatformGateway(options: PlatformGatewayOptions): PlatformGateway {
  const { client } = options

  /** The order raised for this charge key earlier, if any: lowest id first (§2.2). */
  async function findOrder(access: PlatformAccess, key: string): Promise<{ found: string; order: unknown } | { found: undefined } | { error: PlatformReply }> {
    // Whether the plain listing includes Incomplete orders is not settled (§2.2): ask both ways.
    const queries: Record<string, string | number>[] = [{ external_order_id: key }, { external_order_id: key, status_id: 0 }]
    for (const query of queries) {
      const reply = await client.call(access, { method: 'GET', path: '/v2/orders', query: { ...query, sort: 'id:asc' } })
      if (statusOf(reply) === 204) continue
      if (!is2xx(reply)) return { error: reply }
      const body = bodyOf(reply)
      const orders = Array.isArray(body) ? (body as Array<{ id?: unknown; external_order_id?: unknown }>) : []
      // The filter's matching rule is not documented: keep only exact matches.
      const matches = orders.filter((o) => o?.external_order_id === key && Number.isInteger(o.id)).sort((a, b) => (a.id as number) - (b.id as number))
      if (matches.length > 0) return { found: String(matches[0]!.id), order: matches[0] }
    }
    return { found: undefined }
  }

  /**
   * What became of the order's payment (§4): its transactions, then (none) the order's status. An
   * order still Incomplete with no transaction was never paid; one that moved on without a
   * transaction is left to a person.
   */
  async function reconcile(access: PlatformAccess, orderId: string, redact: Redact): Promise<ChargeOutcome | undefined> {
    const listed = await client.call(access, { method: 'GET', path: `/v3/orders/${encodeURIComponent(orderId)}/transactions` })
    const listedStatus = listed.sent ? listed.answer.statusCode : 0
    if (listedStatus === 404) return undefined
    if (listedStatus === 200) {
      const outcome = transactionsOutcome(bodyOf(listed), orderId)
      if (outcome) return outcome
    } else if (listedStatus !== 204) {
      return { status: 'unknown', reason: redact(replyReason("reading the order's transactions", listed)) }
    }
    const read = await client.call(access, { method: 'GET', path: `/v2/orders/${encodeURIComponent(orderId)}` })
    if (statusOf(read) === 404) return undefined
    if (!is2xx(read)) return { status: 'unknown', reason: redact(replyReason('reading the order', read)) }
    const order = bodyOf(read) as { status_id?: unknown; payment_status?: unknown } | null
    if (order?.status_id === 0) return undefined
    return { status: 'unknown', reason: `the order has no transaction but its status is ${String(order?.status_id)} (payment status ${JSON.stringify(order?.payment_status ?? '')})` }
  }

  /** The method whose stored instruments hold this token (§3.1). */
  async function methodFor(access: PlatformAccess, orderId: number, token: string, redact: Redact): Promise<{ methodId: string } | { outcome: ChargeOutcome }> {
    const reply = await client.call(access, { method: 'GET', path: '/v3/payments/methods', query: { order_id: orderId } })
    if (!is2xx(reply)) {
      if (isConfigurationRefusal(statusOf(reply)) || statusOf(reply) === 404) return { outcome: { status: 'failed', failureCode: 'gateway_configuration', failureMessage: redact(replyReason('listing payment methods', reply)) } }
      // Nothing moves money before the payment: any other trouble is asked again later.
      return { outcome: { status: 'unknown', reason: redact(replyReason('listing payment methods (nothing was paid)', reply)) } }
    }
    const methods = (bodyOf(reply) as { data?: unknown } | null)?.data
    for (const method of Array.isArray(methods) ? (methods as Array<Record<string, unknown>>) : []) {
      const stored = Array.isArray(method?.stored_instruments) ? (method.stored_instruments as Array<Record<string, unknown>>) : []
      if (typeof method.id !== 'string' || !stored.some((instrument) => instrument?.token === token)) continue
      const supported = Array.isArray(method.supported_instruments) ? (method.supported_instruments as Array<Record<string, unknown>>) : []
      // A server-side renewal has no CVV: a method that demands one for stored cards cannot renew (§3.1).
      if (supported.some((s) => s?.instrument_type === 'STORED_CARD' && s.verification_value_required === true)) {
        return { outcome: { status: 'failed', failureCode: 'gateway_configuration', failureMessage: `the payment method ${method.id} asks for the card's security code on stored cards, which a renewal cannot give` } }
      }
      return { methodId: method.id }
    }
    return { outcome: { status: 'failed', failureCode: 'instrument_invalid', failureMessage: "the stored instrument is not among the order customer's stored instruments" } }
  }

  return {
    name: 'platform',
    // The platform takes no idempotency keys: a payment sent once is only looked up (docs/money-path.md).
    honoursIdempotencyKeys: false,

    async createOrder(charge: ChargeRequest, order: RenewalOrder): Promise<OrderOutcome> {
      const access = await options.accessOf(charge.storeId)
      if (!access) return { status: 'failed', failureCode: 'gateway_configuration', failureMessage: NOT_CONNECTED }
      const redact = redactor([access.accessToken])
      // A charge whose order was asked for before renewals went through the checkout (no cart kept):
      // that v2 order carries the charge's key. Found, it is paid; possibly still in flight, it is waited out.
      if (charge.orderRequestedAt && charge.cartId === undefined) {
        const earlier = await findOrder(access, charge.idempotencyKey)
        if ('error' in earlier) return { status: 'unknown', reason: redact(replyReason('looking for the renewal order', earlier.error)) }
        if (earlier.found) return orderFitsCharge(earlier.order, order)
        if (Date.now() - charge.orderRequestedAt.getTime() < orderRequestWindowMs(client)) {
          return { status: 'unknown', reason: "an earlier request for the renewal's order may still be in flight; the order is looked for again later" }
        }
      }
      return checkoutOrder({ client, access, redact, orderRequestWindowMs: orderRequestWindowMs(client), fits: orderFitsCharge }, charge, order)
    },

    async checkStock(charge: ChargeRequest, order: RenewalOrder): Promise<StockOutcome> {
      const access = await options.accessOf(charge.storeId)
      if (!access) return { status: 'failed', failureCode: 'gateway_configuration', failureMessage: NOT_CONNECTED }
      const redact = redactor([access.accessToken])
      // Line 0 is the subscription's own, line n the n-th add-on; a line whose id is not a platform id
      // cannot be asked about (the cart refuses it with its own words).
      const lines: StockLine[] = []
      const indexes: number[] = []
      const own = platformInt(order.platformProductId)
      if (own !== undefined) {
        lines.push({ productId: own, variantId: platformInt(order.platformVariantId), quantity: order.quantity })
        indexes.push(0)
      }
      for (const [index, line] of (order.addOns ?? []).entries()) {
        const id = platformInt(line.platformProductId)
        if (id === undefined) continue
        lines.push({ productId: id, variantId: undefined, quantity: line.quantity })
        indexes.push(index + 1)
      }
      let refusedWith: PlatformReply | undefined
      let refusedWhat = ''
      const stock = await stockShortfall(async (what, path, query) => {
        const reply = await client.call(access, { method: 'GET', path, query })
        if (is2xx(reply)) return { ok: bodyOf(reply) }
        refusedWith = reply
        refusedWhat = what
        return { refused: true }
      }, lines)
      if ('short' in stock) return { status: 'checked', short: stock.short.map((item) => ({ ...item, lines: item.lines.map((line) => indexes[line]!) })) }
      const status = statusOf(refusedWith!)
      const reason = redact(replyReason(refusedWhat, refusedWith!))
      if (status === 401) return { status: 'failed', failureCode: 'gateway_configuration', failureMessage: reason }
      // A token granted before the stock scopes were asked for: the renewal goes on unchecked (the
      // cart still refuses what the platform will not sell) rather than stopping every renewal.
      if (status === 403) return { status: 'checked', short: [], unchecked: `${reason} (the store's token may lack the store_v2_products_read_only and store_inventory_read_only scopes: authorize the app again)` }
      return { status: 'unknown', reason: `${reason}; nothing was paid` }
    },

    async releaseUnpaidOrder(charge: ChargeRequest): Promise<ChargeOutcome> {
      const access = await options.accessOf(charge.storeId)
      if (!access) return { status: 'failed', failureCode: 'gateway_configuration', failureMessage: NOT_CONNECTED }
      const orderId = platformInt(charge.orderId)
      if (orderId === undefined) return { status: 'failed', failureCode: 'gateway_configuration', failureMessage: 'a platform renewal needs its order' }
      const redact = redactor([access.accessToken])
      // Awaiting Fulfillment (11), where a paid order goes (orders.v2 order statuses): what the merchant ships.
      const moved = await client.call(access, { method: 'PUT', path: `/v2/orders/${orderId}`, body: { status_id: AWAITING_FULFILLMENT } })
      if (is2xx(moved)) return { status: 'succeeded', gatewayChargeId: String(orderId) }
      if (isConfigurationRefusal(statusOf(moved)) || statusOf(moved) === 404) {
        return { status: 'failed', failureCode: 'gateway_configuration', failureMessage: redact(replyReason('releasing the renewal order, which has nothing to pay, for fulfilment', moved)) }
      }
      return { status: 'unknown', reason: redact(replyReason('releasing the renewal order, which has nothing to pay, for fulfilment', moved)) }
    },

    async charge(charge: ChargeRequest): Promise<ChargeOutcome> {
      const access = await options.accessOf(charge.storeId)
      if (!access) return { status: 'failed', failureCode: 'gateway_configuration', failureMessage: NOT_CONNECTED }
      const orderId = platformInt(charge.orderId)
      if (orderId === undefined) return { status: 'failed', failureCode: 'gateway_configuration', failureMessage: 'a platform charge needs the order it pays' }
      const secrets = [access.accessToken]
      const redact = redactor(secrets)

      const method = await methodFor(access, orderId, charge.paymentInstrumentId, redact)
      if ('outcome' in method) return method.outcome

      // A new PAT for every payment attempt: single use, one hour (§3.2). It moves no money.
      const tokenReply = await client.call(access, { method: 'POST', path: '/v3/payments/access_tokens', body: { order: { id: orderId, is_recurring: true } } })
      const pat = is2xx(tokenReply) ? (bodyOf(tokenReply) as { data?: { id?: unknown } } | null)?.data?.id : undefined
      if (typeof pat !== 'string' || pat === '') {
        const tokenStatus = statusOf(tokenReply)
        if (errorCodeOf(bodyOf(tokenReply)) === 30101 || tokenStatus === 409) {
          // The order is no longer Incomplete: after a lost answer, because it was paid.
          const found = await reconcile(access, String(orderId), redact)
          return found ?? { status: 'failed', failureCode: 'processing_error', failureMessage: redact(replyReason('the renewal order cannot be paid', tokenReply)) }
        }
        if (isConfigurationRefusal(tokenStatus) || tokenStatus === 404) {
          return { status: 'failed', failureCode: 'gateway_configuration', failureMessage: redact(replyReason('obtaining a payment access token', tokenReply)) }
        }
        if (tokenStatus === 400 || tokenStatus === 422) {
          return { status: 'failed', failureCode: 'processing_error', failureMessage: redact(replyReason('obtaining a payment access token', tokenReply)) }
        }
        return { status: 'unknown', reason: redact(replyReason('obtaining a payment access token (nothing was paid)', tokenReply)) }
      }
      secrets.push(pat)

      // From here a payment may go out: the engine records that first, so a lost answer is only
      // ever looked up. If it cannot (the lease was lost), nothing is sent.
      try {
        await charge.onSubmit?.()
      } catch (error) {
        return { status: 'unknown', reason: `the payment was not submitted: ${(error instanceof Error ? error.message : String(error)).slice(0, 200)}` }
      }
      const payment: PlatformCall = {
        method: 'POST',
        host: 'payments',
        path: '/payments',
        pat,
        body: { payment: { instrument: { type: 'stored_card', token: charge.paymentInstrumentId }, payment_method_id: method.methodId } },
      }
      const paid = await client.call(access, payment)
      // Refused before anything was done (rate limited past the budget, or never connected): this
      // order is still unpaid, and the engine may send the payment again with a fresh PAT.
      if ((paid.sent && paid.answer.statusCode === 429) || (!paid.sent && paid.neverSent)) {
        return { status: 'unknown', notSent: true, reason: redact(replyReason('submitting the payment (refused before it was processed)', paid)) }
      }
      if (!paid.sent) return (await reconcile(access, String(orderId), redact)) ?? { status: 'unknown', reason: redact(replyReason('submitting the payment', paid)) }
      const meaning = paymentOutcome(paid.answer, String(orderId))
      if (meaning.status === 'succeeded') return meaning
      if (meaning.status === 'failed') return { ...meaning, failureMessage: redact(meaning.failureMessage) }
      // Reconcile or unknown: what the order's transactions say, never a second payment.
      const found = await reconcile(access, String(orderId), redact)
      if (found && found.status !== 'unknown') return found
      return { status: 'unknown', reason: redact(meaning.reason) }
    },

    async lookup(charge: ChargeRequest): Promise<ChargeOutcome | undefined> {
      // Without an order or a connection, `charge` never sent anything, so there is nothing to find.
      const access = await options.accessOf(charge.storeId)
      if (!access || platformInt(charge.orderId) === undefined) return undefined
      return reconcile(access, charge.orderId!, redactor([access.accessToken]))
    },

    /**
     * Refunds through the order's payment actions (§5): a quote for an order-level amount tells which
     * provider can refund it online, then the refund with that provider and the same amount, both in
     * the currency's decimal major units.
     */
    async refund(refund: RefundRequest): Promise<RefundOutcome> {
      if (!Number.isSafeInteger(refund.amount) || refund.amount <= 0) throw new RangeError(`refund amount must be a positive integer of minor units, got ${refund.amount}`)
      const exponent = currencyExponent(refund.currency)
      const amount = Number(minorToDecimal(refund.amount, exponent))
      const access = await options.accessOf(refund.storeId)
      if (!access) return { status: 'failed', message: NOT_CONNECTED }
      const orderId = platformInt(refund.orderId)
      if (orderId === undefined) return { status: 'failed', message: 'a platform refund needs the order the charge paid' }
      const redact = redactor([access.accessToken])
      const actions = `/v3/orders/${orderId}/payment_actions`
      // An order-level amount (item_type ORDER, item_id = the order): tax is not recalculated.
      const item = { item_type: 'ORDER', item_id: orderId, amount, ...(refund.reason ? { reason: refund.reason.slice(0, 1000) } : {}) }

      // The quote moves no money, so every way it can fail is definite.
      const quoted = await client.call(access, { method: 'POST', path: `${actions}/refund_quotes`, body: { items: [item] } })
      if (!quoted.sent) return { status: 'failed', message: redact(`asking for a refund quote: ${quoted.reason}`) }
      const quote = refundQuoteOutcome(quoted.answer, refund.amount, exponent)
      if (quote.status === 'failed') return { status: 'failed', message: redact(quote.message) }

      try {
        await refund.onSubmit?.()
      } catch {
        return { status: 'unknown', reason: 'the refund was taken over before it was submitted; nothing was sent' }
      }
      const sent = await client.call(access, { method: 'POST', path: `${actions}/refunds`, body: { items: [item], payments: [{ provider_id: quote.providerId, amount, offline: false }] } })
      if (!sent.sent) {
        return sent.neverSent ? { status: 'failed', message: redact(`submitting the refund: ${sent.reason}`) } : { status: 'unknown', reason: redact(`submitting the refund: ${sent.reason}`) }
      }
      const outcome = refundOutcome(sent.answer)
      return outcome.status === 'failed' ? { ...outcome, message: redact(outcome.message) } : outcome.status === 'unknown' ? { ...outcome, reason: redact(outcome.reason) } : outcome
    },
  }
}
