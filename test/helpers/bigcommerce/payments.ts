/**
 * Payments: accepted methods (§3.1), payment access tokens (§3.2), processing on the payments host (§3.3).
 * "§n" refers to docs/platform-api.md; "(simulator's reading)" marks a choice the reference leaves open.
 */
import { createHmac, randomUUID } from 'node:crypto'
import type { Ctx, Reply } from './context.ts'
import { FieldErrors, Refusal, isInt, isObject, minorOf, parseJson, requireAccept, requireJsonContentType } from './http.ts'
import { instrumentView, type SimOrder, type SimPat, type SimTransaction, type StoredInstrument } from './state.ts'

/** HTTP status of each payments-host code (§3.3 leaves it open except "422 ... declined"; simulator's reading). */
export function paymentCodeStatus(code: number): number {
  if (code === 10000) return 500 // "difficulty processing ... try again": PROC `default` (Internal server error)
  if (code === 30003) return 404
  return 422 // PROC 422 "missing, invalid data or declined by payment provider"
}

const CODE_TITLES: Record<number, string> = {
  10000: "We're experiencing difficulty processing your transaction. Please try again later.",
  10001: 'Invalid or missing data in the transaction.',
  30000: 'Merchant payment configuration could not be found.',
  30001: 'Merchant payment configuration is not configured correctly.',
  30002: 'Vaulting service is currently not available.',
  30003: 'Order could not be found.',
  30004: 'The validation on line item and grand total does not match.',
  30050: 'Payment instrument could not be saved.',
  30051: 'That stored payment instrument could not be found. Please try a different payment option.',
  30100: 'Payment access token could not be created.',
  30101: 'Order is invalid.',
  30102: 'Your card details could not be verified. Please double check them and try again.',
  30103: 'Your card has expired. Please try again with a valid card.',
  30104: 'There was a problem processing your card. Please contact your card issuer.',
  30105: 'This is a duplicate transaction. Please contact us to confirm your order. Do not try to pay again.',
  30106: 'The payment was declined due to insufficient funds.',
  30107: 'The authorization for this transaction has been revoked.',
}

export function paymentRefusal(code: number, kind: 'body' | 'state', status = paymentCodeStatus(code), detail?: string, platformOutcome = false): Refusal {
  const title = CODE_TITLES[code] ?? 'Payment error'
  return new Refusal(status, kind, detail ?? title, { code, title, platformOutcome })
}

function instrumentsFor(ctx: Ctx, order: SimOrder): StoredInstrument[] {
  // Guests (customer_id 0) have no stored instruments (ORD; PAY 30051 "not associated with the shopper").
  return ctx.store.customers.get(order.customer_id)?.instruments ?? []
}

function expired(i: StoredInstrument, now: Date): boolean {
  const y = now.getUTCFullYear()
  const m = now.getUTCMonth() + 1
  return i.expiry_year < y || (i.expiry_year === y && i.expiry_month < m)
}

/**
 * GET /v3/payments/methods?order_id= (§3.1): {data:[paymentMethod_Full], meta:{}}. The stored
 * instruments listed are the order customer's, for the method they were vaulted with ((inferred) in §3.1).
 */
export function getPaymentMethods(ctx: Ctx): Reply {
  const raw = ctx.query.get('order_id')
  if (raw === null) {
    if (ctx.query.get('checkout_id') !== null) throw new Refusal(422, 'body', 'checkout_id is not simulated; send order_id')
    throw new Refusal(422, 'body', 'order_id or checkout_id is required', { errors: { order_id: 'is required' } })
  }
  const orderId = Number(raw)
  if (!Number.isInteger(orderId) || orderId < 1) throw new Refusal(422, 'body', 'order_id must be an integer', { errors: { order_id: 'must be an integer' } })
  const order = ctx.store.orders.get(orderId)
  if (!order) throw new Refusal(404, 'state', `Order ${orderId} not found`, { code: 30003 })
  const instruments = instrumentsFor(ctx, order)
  const data = ctx.store.methods.map((m) => ({
    id: m.id,
    name: m.name,
    test_mode: m.test_mode,
    type: m.type,
    supported_instruments: [
      ...['VISA', 'MASTERCARD', 'AMEX', 'DISCOVER'].map((t) => ({ instrument_type: t, verification_value_required: true })),
      { instrument_type: 'STORED_CARD', verification_value_required: m.stored_card_cvv_required },
    ],
    stored_instruments: instruments
      .filter((i) => i.method_id === m.id)
      .map(instrumentView),
  }))
  return { status: 200, body: { data, meta: {} } }
}

const b64url = (v: Buffer | string): string => Buffer.from(v).toString('base64url')

/** A PAT shaped like PAY's example: an HS256 JWT with `data:{order_id, amount (minor units), currency}`, exp = nbf + 3600 (§0 "Money", §3.2). */
function signPat(ctx: Ctx, order: SimOrder): string {
  const now = Math.floor(ctx.core.now().getTime() / 1000)
  const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'HS256' }))
  const payload = b64url(
    JSON.stringify({
      exp: now + 3600,
      nbf: now,
      iat: now,
      iss: 'payments.bigcommerce.com',
      sub: ctx.store.hash,
      jti: randomUUID(),
      data: { store_id: ctx.store.store_id, order_id: String(order.id), amount: minorOf(order.total_inc_tax), currency: order.currency_code },
    }),
  )
  const signature = b64url(createHmac('sha256', ctx.core.patSecret).update(`${header}.${payload}`).digest())
  return `${header}.${payload}.${signature}`
}

/** POST /v3/payments/access_tokens (§3.2): body {order:{id ≥ 1, is_recurring?}}; 201 {data:{id}, meta:{}}. */
export function createPaymentAccessToken(ctx: Ctx): Reply {
  const body = parseJson(ctx.rawBody)
  const errors = new FieldErrors()
  if (!isObject(body) || !isObject(body.order)) {
    errors.add('order', 'is required, an object {id, is_recurring}')
    errors.throwIfAny(422)
    throw new Error('unreachable')
  }
  for (const key of Object.keys(body)) if (key !== 'order') errors.add(key, 'is not a field of the request')
  const o = body.order
  for (const key of Object.keys(o)) if (key !== 'id' && key !== 'is_recurring') errors.add(`order.${key}`, 'is not a field of order (no amount is sent)')
  if (!isInt(o.id) || o.id < 1) errors.add('order.id', 'is required, an integer of at least 1')
  if ('is_recurring' in o && typeof o.is_recurring !== 'boolean') errors.add('order.is_recurring', 'must be a boolean')
  errors.throwIfAny(422)
  const order = ctx.store.orders.get(o.id as number)
  if (!order) throw new Refusal(404, 'state', 'Order could not be found.', { code: 30003 })
  // A PAT for an order not in status 0 is not settled (§3.2); default 422 code 30101 (switchable).
  const policy = ctx.core.options.patForNonIncompleteOrder
  if (order.status_id !== 0 && policy !== 'issue') {
    throw new Refusal(policy, 'state', `Order is invalid: status ${order.status_id}, not Incomplete (0)`, { code: 30101, title: 'Order is invalid.' })
  }
  const token = signPat(ctx, order)
  const pat: SimPat = {
    token,
    store_hash: ctx.store.hash,
    order_id: order.id,
    is_recurring: o.is_recurring === true,
    expires_at: ctx.core.now().getTime() + 3600_000, // PAY: expires after one hour
    used: false,
  }
  ctx.core.pats.set(token, pat)
  order.pats_issued++
  ctx.core.counters.patsIssued++
  return { status: 201, body: { data: { id: token }, meta: {} } }
}

/**
 * POST {payments}/stores/{h}/payments (§3.3). Headers: `Authorization: PAT <token>` (one space),
 * `Accept: application/vnd.bc.v1+json`, `Content-Type: application/json`, no X-Auth-Token.
 *
 * The order's state is checked when the request arrives; the payment is committed after the
 * configured latency (the gateway's processing time). Two payments racing on one Incomplete order
 * with two PATs therefore both go through: the double charge a correct client must never cause.
 */
export async function processPayment(ctx: Ctx): Promise<Reply> {
  // §0 "Headers": PAY callout "Authorization header", exactly one space after PAT.
  const auth = ctx.headers.authorization
  const match = typeof auth === 'string' ? /^PAT ([A-Za-z0-9_\-.]+)$/.exec(auth) : null
  if (!match) throw new Refusal(401, 'auth', `Authorization must be 'PAT <token>' (one space); got ${auth === undefined ? '(none)' : JSON.stringify(auth.slice(0, 12) + '…')}`, { title: 'Unauthorized' })
  const pat = ctx.core.pats.get(match[1]!)
  if (!pat || pat.store_hash !== ctx.store.hash) throw new Refusal(401, 'auth', 'The payment access token is not valid for this store', { title: 'Unauthorized' })
  if (pat.expires_at <= ctx.core.now().getTime()) throw new Refusal(401, 'auth', 'The payment access token has expired (one hour, PAY)', { title: 'Unauthorized' })
  // PAT: "single use" (§3.2). A reused PAT is refused as unauthorized (simulator's reading).
  if (pat.used) throw new Refusal(401, 'auth', 'The payment access token has already been used; request a new one per payment attempt', { title: 'Unauthorized' })
  requireAccept(ctx.headers, 'application/vnd.bc.v1+json')
  requireJsonContentType(ctx.headers)
  if (ctx.headers['x-auth-token'] !== undefined) ctx.flag('leak', 'X-Auth-Token was sent to the payments host; it takes only the PAT (§0 "Headers")')
  const order = ctx.store.orders.get(pat.order_id)
  if (!order) throw paymentRefusal(30003, 'state')
  order.payment_requests++
  ctx.core.counters.paymentRequests++
  pat.used = true

  // Body: {payment:{instrument, payment_method_id, save_instrument?}} (PROC PaymentsPost).
  const body = parseJson(ctx.rawBody)
  const errors = new FieldErrors()
  const payment = isObject(body) ? body.payment : undefined
  if (!isObject(body) || !isObject(payment)) {
    errors.add('payment', 'is required, an object')
    errors.throwIfAny(422, { code: 10001 })
    throw new Error('unreachable')
  }
  for (const key of Object.keys(body)) if (key !== 'payment') errors.add(key, 'is not a field of the payment request')
  // No amount, no idempotency field (§3.3); unknown fields are refused (simulator's reading, stricter).
  for (const key of Object.keys(payment)) if (!['instrument', 'payment_method_id', 'save_instrument'].includes(key)) errors.add(`payment.${key}`, 'is not a field of payment (there is no amount or idempotency field)')
  if (typeof payment.payment_method_id !== 'string' || payment.payment_method_id.length < 1) errors.add('payment.payment_method_id', 'is required, the id from GET /v3/payments/methods (e.g. stripe.card)')
  if ('save_instrument' in payment && typeof payment.save_instrument !== 'boolean') errors.add('payment.save_instrument', 'must be a boolean')
  const instrument = payment.instrument
  if (!isObject(instrument)) errors.add('payment.instrument', 'is required, an object')
  else if (instrument.type !== 'stored_card') errors.add('payment.instrument.type', `only stored_card is simulated; got ${JSON.stringify(instrument.type)}`)
  else {
    for (const key of Object.keys(instrument)) if (!['type', 'token', 'verification_value'].includes(key)) errors.add(`payment.instrument.${key}`, 'is not a field of a stored card')
    // StoredCard: token exactly 64 characters; verification_value 3 to 4 characters (§3.3).
    if (typeof instrument.token !== 'string' || instrument.token.length !== 64) errors.add('payment.instrument.token', 'is required, exactly 64 characters')
    if ('verification_value' in instrument && (typeof instrument.verification_value !== 'string' || !/^.{3,4}$/.test(instrument.verification_value))) errors.add('payment.instrument.verification_value', 'must be a string of 3 to 4 characters')
  }
  errors.throwIfAny(422, { code: 10001 })
  const methodId = payment.payment_method_id as string
  const stored = instrument as { token: string; verification_value?: string }

  // 30101: the order must be Incomplete (status 0), created through the API (§3.3).
  if (order.status_id !== 0) throw paymentRefusal(30101, 'state', 422, `Order is invalid: status ${order.status_id}, not Incomplete (0)`)
  const method = ctx.store.methods.find((m) => m.id === methodId)
  // An unknown method id: 10001 invalid data (simulator's reading).
  if (!method) throw paymentRefusal(10001, 'body', 422, `payment_method_id '${methodId}' is not a method of this store (GET /v3/payments/methods)`)
  // 30051: the instrument must be the order customer's, and vaulted with this method (§3.3, PAY).
  const owned = instrumentsFor(ctx, order).find((i) => i.token === stored.token && i.method_id === method.id)
  if (!owned) throw paymentRefusal(30051, 'state')
  // verification_value_required on STORED_CARD and none sent: 10001 (simulator's reading, §3.1).
  if (method.stored_card_cvv_required && stored.verification_value === undefined) throw paymentRefusal(10001, 'body', 422, `${method.id} requires verification_value for stored cards`)
  if (expired(owned, ctx.core.now())) return decline(ctx, order, owned, method.id, 30103)

  // Injected outcome (declines and pending), then processing time.
  const injected = ctx.core.paymentOutcomes.shift()
  await ctx.delay()
  if (injected?.kind === 'decline') return decline(ctx, order, owned, method.id, injected.code, injected.status)
  const pending = injected?.kind === 'pending'
  const id = randomUUID()
  const t = transaction(ctx, order, owned, method.id, pending ? 'pending' : method.transaction_type, 'ok', id)
  order.transactions.push(t)
  const previous = order.status_id
  if (!pending) {
    order.successful_payments++
    ctx.core.counters.paymentsSucceeded++
    // PAY: "The order is then automatically moved to an Awaiting Fulfillment status" (11).
    order.status_id = 11
    order.payment_status = method.transaction_type === 'purchase' ? 'captured' : 'authorized'
    order.payment_method = 'Credit Card'
    order.payment_provider_id = t.gateway_transaction_id
    order.date_modified = ctx.core.now()
    // CHK createOrder usage notes: "Once the order is paid, the cart is deleted" (§13.5).
    if (order.successful_payments === 1 && order.cart_id !== undefined) ctx.store.carts.delete(order.cart_id)
    ctx.core.orderEvent(ctx.store, order, 'store/order/statusUpdated', { previous_status_id: previous, new_status_id: 11 })
  }
  return { status: 201, body: { data: { id, transaction_type: method.transaction_type, status: pending ? 'pending' : 'success' } } }
}

function transaction(ctx: Ctx, order: SimOrder, i: StoredInstrument, methodId: string, event: SimTransaction['event'], status: 'ok' | 'error', paymentId: string | null): SimTransaction {
  const id = ctx.store.next.transaction++
  return {
    id,
    order_id: order.id,
    event,
    status,
    amount: order.total_inc_tax,
    currency: order.currency_code,
    gateway: methodId.split('.')[0]!,
    gateway_transaction_id: `ch_sim_${order.id}_${id}`,
    payment_method_id: methodId,
    payment_instrument_token: i.token,
    instrument: i,
    test: ctx.store.methods.find((m) => m.id === methodId)?.test_mode ?? true,
    reference_transaction_id: null,
    date_created: ctx.core.now(),
    payment_id: paymentId,
  }
}

function decline(ctx: Ctx, order: SimOrder, i: StoredInstrument, methodId: string, code: number, status = paymentCodeStatus(code)): never {
  ctx.core.counters.paymentsDeclined++
  // Whether a decline leaves a transaction is not in the reference (switch, default off).
  if (ctx.core.options.recordDeclinedTransactions && code >= 30102 && code <= 30106) order.transactions.push(transaction(ctx, order, i, methodId, 'purchase', 'error', null))
  // Injected and gateway declines are platform behaviour, not client mistakes: not violations.
  throw paymentRefusal(code, 'state', status, undefined, true)
}
