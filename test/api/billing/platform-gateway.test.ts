import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, beforeEach, describe, test } from 'node:test'
import type { ChargeOutcome, ChargeRequest, RefundOutcome, RefundRequest } from '../../../src/modules/billing/gateways/gateway.ts'
import { createPlatformGateway, type PlatformGateway } from '../../../src/modules/billing/gateways/platform-gateway.ts'
import { currencyExponent, decimalToMinor, minorToDecimal, refundOutcome } from '../../../src/modules/billing/gateways/platform-outcomes.ts'

const ACCESS_TOKEN = 'store-api-token-SECRET-7f3a'
const PAT = 'pat-SECRET-payment-access-token-91c2'

type Payment = (req: IncomingMessage, res: ServerResponse, body: any) => void
type RefundAnswer = (res: ServerResponse, body: any, amount: string) => void
interface Seen { method: string; url: string; headers: IncomingMessage['headers']; body: any; raw: string }

/** The literal texts of every `amount` in a JSON body, as sent (25.00 stays "25.00"). */
function rawAmounts(raw: string): string[] {
  return [...raw.matchAll(/"amount":\s*([^,}\]\s]+)/g)].map((match) => match[1]!)
}

const PAYMENT_ACTIONS = '/stores/abc/v3/orders/100/payment_actions'

/**
 * What reference/orders.v3.yml asks of a refund request (RefundQuote_Post / RefundRequest_Post):
 * `items` required, each an ItemsRefund (here the order-level TaxExemptItem: item_type ORDER,
 * item_id the order, amount, optional reason of at most 1000 characters); amounts are decimal
 * major units (the Amount schema: "2 decimal place rounded value"), never minor units.
 */
function refundItemsProblem(body: any, raw: string, currency: string): string | undefined {
  if (!Array.isArray(body?.items) || body.items.length !== 1) return 'items must be one order-level item'
  const [item] = body.items
  const keys = Object.keys(item).sort().join(',')
  if (keys !== 'amount,item_id,item_type' && keys !== 'amount,item_id,item_type,reason') return `unexpected item fields ${keys}`
  if (item.item_type !== 'ORDER' || item.item_id !== 100) return 'item must be {item_type: ORDER, item_id: <order id>}'
  if (item.reason !== undefined && (typeof item.reason !== 'string' || item.reason.length > 1000)) return 'reason must be a string of at most 1000 characters'
  const places = currencyExponentFor(currency)
  const decimal = places === 0 ? /^\d+$/ : new RegExp(`^\\d+\\.\\d{${places}}$`)
  for (const amount of rawAmounts(raw)) if (!decimal.test(amount)) return `amount ${amount} is not in decimal major units of ${currency}`
  if (typeof item.amount !== 'number' || item.amount <= 0) return 'amount must be a positive number'
  return undefined
}

function currencyExponentFor(currency: string): number {
  return ({ USD: 2, EUR: 2, JPY: 0, KWD: 3 } as Record<string, number>)[currency] ?? 2
}

/** Plays the commerce platform: checks what a well-behaved client must send, answers what each test scripts. */
function startPlatform() {
  const seen: Seen[] = []
  let payment: Payment = (_req, res) => json(res, 201, { data: { id: 'txn_1', status: 'success', transaction_type: 'purchase' } })
  let tokenAnswer: ((res: ServerResponse) => void) | undefined
  let transactions: unknown = { data: [] }
  let refundCurrency = 'USD'
  let quoteAnswer: RefundAnswer = (res, _body, amount) => json(res, 201, quoteFor(amount))
  let refundAnswer: RefundAnswer = (res, _body, amount) => json(res, 201, refundFor(amount))
  const server: Server = createServer(async (req, res) => {
    let raw = ''
    for await (const chunk of req) raw += chunk
    const body = raw ? JSON.parse(raw) : undefined
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body, raw })
    if (req.method === 'POST' && (req.url === `${PAYMENT_ACTIONS}/refund_quotes` || req.url === `${PAYMENT_ACTIONS}/refunds`)) {
      if (req.headers['x-auth-token'] !== ACCESS_TOKEN) return json(res, 401, { status: 401, title: 'Unauthorized' })
      if (req.headers['content-type'] !== 'application/json' || !String(req.headers.accept).includes('application/json')) return json(res, 415, { status: 415, title: 'JSON only' })
      const problem = refundItemsProblem(body, raw, refundCurrency)
      if (problem) return json(res, 422, { status: 422, title: problem })
      const amount = rawAmounts(raw)[0]!
      if (req.url.endsWith('/refund_quotes')) {
        if (Object.keys(body).join(',') !== 'items') return json(res, 422, { status: 422, title: 'a quote takes items only' })
        return quoteAnswer(res, body, amount)
      }
      // RefundRequest_Post: items and payments required; the payment is a PaymentRequest whose amount is the quoted one.
      const payments = body.payments
      if (!Array.isArray(payments) || payments.length !== 1) return json(res, 422, { data: [{ status: 422, title: 'payments required' }] })
      const [payment] = payments
      if (Object.keys(payment).sort().join(',') !== 'amount,offline,provider_id' || payment.provider_id !== 'stripe' || payment.offline !== false) {
        return json(res, 422, { data: [{ status: 422, title: `unexpected payment ${JSON.stringify(payment)}` }] })
      }
      if (new Set(rawAmounts(raw)).size !== 1) return json(res, 422, { data: [{ status: 422, title: 'the payment amount must match the quoted amount' }] })
      return refundAnswer(res, body, amount)
    }
    if (req.method === 'POST' && req.url === '/stores/abc/v3/payments/access_tokens') {
      if (req.headers['x-auth-token'] !== ACCESS_TOKEN) return json(res, 401, { title: 'Unauthorized' })
      if (!req.headers['idempotency-key']) return json(res, 400, { title: 'missing Idempotency-Key' })
      if (typeof body?.order?.id !== 'number') return json(res, 422, { title: 'order.id required' })
      if (tokenAnswer) return tokenAnswer(res)
      return json(res, 201, { data: { id: PAT } })
    }
    if (req.method === 'POST' && req.url === '/payments-host/stores/abc/payments') {
      if (req.headers.authorization !== `PAT ${PAT}`) return json(res, 401, { title: 'Unauthorized' })
      if (!req.headers['idempotency-key']) return json(res, 400, { title: 'missing Idempotency-Key' })
      const instrument = body?.payment?.instrument
      if (instrument?.type !== 'stored_card' || typeof instrument.token !== 'string' || body.payment.payment_method_id !== 'stored_card') {
        return json(res, 400, { title: 'malformed payment' })
      }
      return payment(req, res, body)
    }
    if (req.method === 'GET' && req.url === '/stores/abc/v3/orders/100/transactions') {
      if (req.headers['x-auth-token'] !== ACCESS_TOKEN) return json(res, 401, { title: 'Unauthorized' })
      return json(res, 200, transactions)
    }
    json(res, 404, { title: 'Not found' })
  })
  return {
    server,
    seen,
    onPayment: (handler: Payment) => { payment = handler },
    onToken: (handler: ((res: ServerResponse) => void) | undefined) => { tokenAnswer = handler },
    setTransactions: (value: unknown) => { transactions = value },
    onQuote: (handler: RefundAnswer) => { quoteAnswer = handler },
    onRefund: (handler: RefundAnswer) => { refundAnswer = handler },
    expectCurrency: (currency: string) => { refundCurrency = currency },
    reset() {
      seen.length = 0
      payment = (_req, res) => json(res, 201, { data: { id: 'txn_1', status: 'success', transaction_type: 'purchase' } })
      tokenAnswer = undefined
      transactions = { data: [] }
      refundCurrency = 'USD'
      quoteAnswer = (res, _body, amount) => json(res, 201, quoteFor(amount))
      refundAnswer = (res, _body, amount) => json(res, 201, refundFor(amount))
    },
  }
}

/** RefundQuote_Resp: store credit (online, but not the card) first, then the card's provider, then an offline method. */
function quoteFor(amount: string, cardAmount = amount) {
  return `{"data":{"order_id":100,"total_refund_amount":${amount},"total_refund_tax_amount":0,"rounding":0,"adjustment":0,"tax_inclusive":false,"refund_methods":[` +
    `[{"provider_id":"storecredit","provider_description":"Store Credit","amount":${amount},"offline":false,"offline_provider":false,"offline_reason":""}],` +
    `[{"provider_id":"stripe","provider_description":"Stripe","amount":${cardAmount},"offline":false,"offline_provider":false,"offline_reason":""}],` +
    `[{"provider_id":"custom","provider_description":"Custom","amount":${amount},"offline":true,"offline_provider":true,"offline_reason":"This is an offline payment provider."}]` +
    `]},"meta":{}}`
}

/** Refund_Resp. */
function refundFor(amount: string, declined = false) {
  return `{"data":{"id":12,"order_id":100,"user_id":0,"created":"2026-02-03T10:00:00+00:00","reason":"","total_amount":${amount},"total_tax":0,"uses_merchant_override_values":false,` +
    `"items":[{"item_type":"ORDER","item_id":100,"quantity":0,"requested_amount":"${amount}"}],` +
    `"payments":[{"id":13,"provider_id":"stripe","amount":${amount},"offline":false,"is_declined":${declined},"declined_message":"${declined ? 'Card issuer refused the refund' : ''}"}]},"meta":{}}`
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(typeof body === 'string' ? body : JSON.stringify(body))
}

const request: ChargeRequest = {
  idempotencyKey: 'sub_1:2026-02-01T00:00:00.000Z:1',
  storeId: 'store_abc',
  subscriptionId: 'sub_1',
  amount: 2500,
  currency: 'USD',
  paymentInstrumentId: 'instr_stored_1',
  description: 'Coffee club, February',
  orderId: '100',
}

const refund: RefundRequest = {
  idempotencyKey: `${request.idempotencyKey}:refund:1`,
  storeId: 'store_abc',
  chargeIdempotencyKey: request.idempotencyKey,
  gatewayChargeId: 'txn_1',
  orderId: '100',
  amount: 2500,
  currency: 'USD',
  reason: 'Customer asked',
}

/** Credentials must never leak into what the engine stores and shows. */
function assertNoSecrets(outcome: ChargeOutcome | RefundOutcome | undefined) {
  const text = JSON.stringify(outcome)
  assert.ok(!text.includes(ACCESS_TOKEN), `the store token leaked: ${text}`)
  assert.ok(!text.includes(PAT), `the payment access token leaked: ${text}`)
}

describe('platform gateway (stored-instrument payments over HTTP)', () => {
  const platform = startPlatform()
  let base: string
  let gateway: PlatformGateway

  before(async () => {
    platform.server.listen(0, '127.0.0.1')
    await once(platform.server, 'listening')
    base = `http://127.0.0.1:${(platform.server.address() as AddressInfo).port}`
    // Long enough that a loaded machine never turns an ordinary answer into a timeout; the slow
    // answers below take three times as long.
    gateway = createPlatformGateway({
      timeoutMs: 1_000,
      configFor: (storeId) => (storeId === 'store_abc' ? { apiBaseUrl: `${base}/stores/abc/v3/`, paymentsBaseUrl: `${base}/payments-host/stores/abc`, accessToken: ACCESS_TOKEN } : undefined),
    })
  })
  beforeEach(() => platform.reset())
  after(async () => {
    await gateway.close()
    platform.server.closeAllConnections()
    platform.server.close()
  })

  test('a successful payment: access token for the order, then the stored instrument, both under the idempotency key', async () => {
    const outcome = await gateway.charge(request)
    assert.deepEqual(outcome, { status: 'succeeded', gatewayChargeId: 'txn_1' })
    const [token, payment] = platform.seen
    assert.equal(platform.seen.length, 2)
    assert.deepEqual(token!.body, { order: { id: 100, is_recurring: true } })
    assert.equal(token!.headers['x-auth-token'], ACCESS_TOKEN)
    assert.equal(token!.headers['idempotency-key'], request.idempotencyKey)
    assert.equal(payment!.headers.authorization, `PAT ${PAT}`)
    assert.equal(payment!.headers['idempotency-key'], request.idempotencyKey)
    assert.equal(payment!.headers['x-auth-token'], undefined, 'the store token is not sent to the payments host')
    assert.deepEqual(payment!.body, { payment: { instrument: { type: 'stored_card', token: 'instr_stored_1' }, payment_method_id: 'stored_card' } })
  })

  const declines: Array<[string, number, unknown, string]> = [
    ['a card_declined code', 422, { title: 'Payment was declined', errors: [{ code: 'card_declined', message: 'declined' }] }, 'card_declined'],
    ['insufficient_funds', 422, { title: 'Insufficient funds', errors: [{ code: 'insufficient_funds' }] }, 'insufficient_funds'],
    ['do_not_honor passed through', 402, { code: 'do_not_honor', title: 'Do not honor' }, 'card_declined'],
    ['expired_card', 422, { errors: [{ code: 'expired_card' }] }, 'expired_card'],
    ['an unknown instrument', 400, { errors: [{ code: 'instrument_not_found' }] }, 'instrument_invalid'],
    ['processing_error', 422, { errors: [{ code: 'processing_error' }] }, 'processing_error'],
    ['a 422 without a known code', 422, { title: 'Declined' }, 'card_declined'],
    ['a 400 without a known code', 400, { title: 'Bad request' }, 'processing_error'],
    ['429 (refused before processing)', 429, { title: 'Too many requests' }, 'processing_error'],
    ['a refused payment access token', 401, { title: 'Unauthorized' }, 'gateway_configuration'],
  ]
  for (const [name, status, body, code] of declines) {
    test(`payment answered ${status} with ${name} -> failed ${code}`, async () => {
      platform.onPayment((_req, res) => json(res, status, body))
      const outcome = await gateway.charge(request)
      assert.equal(outcome.status, 'failed', JSON.stringify(outcome))
      assert.equal(outcome.status === 'failed' && outcome.failureCode, code)
      assertNoSecrets(outcome)
    })
  }

  test('a 2xx declined payment is a failure, a 2xx pending one is unknown', async () => {
    platform.onPayment((_req, res) => json(res, 200, { data: { id: 'txn_2', status: 'declined' } }))
    assert.equal((await gateway.charge(request)).status, 'failed')
    platform.onPayment((_req, res) => json(res, 200, { data: { id: 'txn_3', status: 'pending' } }))
    assert.equal((await gateway.charge(request)).status, 'unknown')
  })

  for (const status of [500, 502, 503]) {
    test(`a ${status} after the payment was sent -> unknown (it may have been processed)`, async () => {
      platform.onPayment((_req, res) => json(res, status, { title: `boom ${ACCESS_TOKEN} ${PAT}` }))
      const outcome = await gateway.charge(request)
      assert.equal(outcome.status, 'unknown')
      assertNoSecrets(outcome)
    })
  }

  test('a 409 (same key in flight) -> unknown', async () => {
    platform.onPayment((_req, res) => json(res, 409, { title: 'in progress' }))
    assert.equal((await gateway.charge(request)).status, 'unknown')
  })

  test('an echoed credential in a decline message is redacted', async () => {
    platform.onPayment((_req, res) => json(res, 422, { title: `declined for ${PAT} / ${ACCESS_TOKEN}`, errors: [{ code: 'card_declined' }] }))
    const outcome = await gateway.charge(request)
    assert.equal(outcome.status, 'failed')
    assertNoSecrets(outcome)
    assert.match(outcome.status === 'failed' ? outcome.failureMessage : '', /\[redacted\]/)
  })

  test('a payment answer slower than the timeout -> unknown, within the timeout', async () => {
    platform.onPayment((_req, res) => setTimeout(() => json(res, 201, { data: { id: 'late', status: 'success' } }), 3_000).unref())
    const started = performance.now()
    const outcome = await gateway.charge(request)
    assert.equal(outcome.status, 'unknown', JSON.stringify(outcome))
    assert.match(outcome.status === 'unknown' ? outcome.reason : '', /timed out/)
    assert.ok(performance.now() - started < 2_500, 'the configured timeout, not the server, ended the wait')
    assertNoSecrets(outcome)
  })

  test('a connection destroyed after the payment was sent -> unknown', async () => {
    platform.onPayment((req) => req.socket.destroy())
    const outcome = await gateway.charge(request)
    assert.equal(outcome.status, 'unknown', JSON.stringify(outcome))
    assertNoSecrets(outcome)
  })

  test('a connection refused before anything was sent -> failed processing_error', async () => {
    const port = await closedPort()
    const offline = createPlatformGateway({ timeoutMs: 300, configFor: () => ({ apiBaseUrl: `http://127.0.0.1:${port}`, accessToken: ACCESS_TOKEN }) })
    const outcome = await offline.charge(request)
    await offline.close()
    assert.equal(outcome.status === 'failed' && outcome.failureCode, 'processing_error', JSON.stringify(outcome))
    assertNoSecrets(outcome)
  })

  test('access token failures are definite: no payment is attempted', async () => {
    platform.onToken((res) => json(res, 500, { title: 'down' }))
    const outcome = await gateway.charge(request)
    assert.equal(outcome.status === 'failed' && outcome.failureCode, 'processing_error')
    assert.equal(platform.seen.length, 1)
    platform.onToken((res) => setTimeout(() => json(res, 201, { data: { id: PAT } }), 3_000).unref())
    assert.equal((await gateway.charge(request)).status, 'failed')
  })

  test('a rejected store token -> failed gateway_configuration, token not in the message', async () => {
    const wrong = createPlatformGateway({ timeoutMs: 2_000, configFor: () => ({ apiBaseUrl: `${base}/stores/abc/v3`, accessToken: 'wrong-token-SECRET' }) })
    const outcome = await wrong.charge(request)
    await wrong.close()
    assert.equal(outcome.status === 'failed' && outcome.failureCode, 'gateway_configuration')
    assert.ok(!JSON.stringify(outcome).includes('wrong-token-SECRET'))
  })

  test('an order the platform will not pay again is reconciled on its transactions: paid means succeeded', async () => {
    platform.onToken((res) => json(res, 422, { title: 'Order is not payable' }))
    platform.setTransactions({ data: [{ id: 7, event: 'purchase', status: 'ok', gateway_transaction_id: 'txn_earlier' }] })
    assert.deepEqual(await gateway.charge(request), { status: 'succeeded', gatewayChargeId: 'txn_earlier' })
    platform.setTransactions({ data: [] })
    const outcome = await gateway.charge(request)
    assert.equal(outcome.status === 'failed' && outcome.failureCode, 'gateway_configuration')
  })

  test('lookup reads the order\'s transactions: paid, pending, none', async () => {
    platform.setTransactions({ data: [{ id: 1, event: 'purchase', status: 'declined' }, { id: 2, event: 'purchase', status: 'ok', gateway_transaction_id: 'txn_9' }] })
    assert.deepEqual(await gateway.lookup(request), { status: 'succeeded', gatewayChargeId: 'txn_9' })
    platform.setTransactions({ data: [{ id: 3, event: 'pending', status: 'pending' }] })
    assert.equal((await gateway.lookup(request))?.status, 'unknown')
    platform.setTransactions({ data: [] })
    assert.equal(await gateway.lookup(request), undefined)
    assert.equal(await gateway.lookup({ ...request, orderId: undefined }), undefined, 'no order: charge never sent anything')
  })

  test('missing configuration or order fails before any request', async () => {
    const noConfig = await gateway.charge({ ...request, storeId: 'store_other' })
    const noOrder = await gateway.charge({ ...request, orderId: undefined })
    assert.equal(noConfig.status === 'failed' && noConfig.failureCode, 'gateway_configuration')
    assert.equal(noOrder.status === 'failed' && noOrder.failureCode, 'gateway_configuration')
    assert.equal(platform.seen.length, 0)
  })
  test('the platform takes no idempotency keys, and the gateway says so', () => {
    assert.equal(gateway.honoursIdempotencyKeys, false)
  })

  test('onSubmit is called exactly once, after the access token and before the payment is sent', async () => {
    const calls: number[] = []
    const outcome = await gateway.charge({ ...request, onSubmit: async () => { calls.push(platform.seen.length) } })
    assert.deepEqual(outcome, { status: 'succeeded', gatewayChargeId: 'txn_1' })
    assert.deepEqual(calls, [1], 'called once, when only the access token request had been sent')
    assert.deepEqual(platform.seen.map((s) => s.url), ['/stores/abc/v3/payments/access_tokens', '/payments-host/stores/abc/payments'])
  })

  test('onSubmit is not called when no payment is sent (access token refused)', async () => {
    platform.onToken((res) => json(res, 500, { title: 'down' }))
    let calls = 0
    await gateway.charge({ ...request, onSubmit: async () => { calls += 1 } })
    assert.equal(calls, 0)
  })

  test('a throwing onSubmit sends no payment and answers unknown', async () => {
    const outcome = await gateway.charge({ ...request, onSubmit: async () => { throw new Error(`lease lost ${ACCESS_TOKEN}`) } })
    assert.equal(outcome.status, 'unknown', JSON.stringify(outcome))
    assert.match(outcome.status === 'unknown' ? outcome.reason : '', /not submitted/)
    assertNoSecrets(outcome)
    assert.ok(!platform.seen.some((s) => s.url.endsWith('/payments')), 'no payment POST reached the platform')
    assert.equal(platform.seen.length, 1, 'only the access token was asked for')
  })

  test('minor units become the currency\'s decimal major units, digit by digit', () => {
    assert.equal(currencyExponent('USD'), 2)
    assert.equal(currencyExponent('JPY'), 0)
    assert.equal(currencyExponent('KWD'), 3)
    assert.throws(() => currencyExponent('not a currency'), RangeError)
    assert.equal(minorToDecimal(2500, 2), '25.00')
    assert.equal(minorToDecimal(1999, 2), '19.99')
    assert.equal(minorToDecimal(5, 2), '0.05')
    assert.equal(minorToDecimal(0, 2), '0.00')
    assert.equal(minorToDecimal(500, 0), '500')
    assert.equal(minorToDecimal(12345, 3), '12.345')
    assert.equal(minorToDecimal(99_999_999_999, 2), '999999999.99')
    assert.equal(minorToDecimal(2 ** 53 - 1, 2), '90071992547409.91')
    assert.throws(() => minorToDecimal(12.5, 2), RangeError)
    assert.equal(decimalToMinor(25, 2), 2500)
    assert.equal(decimalToMinor(19.99, 2), 1999)
    assert.equal(decimalToMinor('0.05', 2), 5)
    assert.equal(decimalToMinor(0.1 + 0.2, 2), 30)
    assert.equal(decimalToMinor(12.345, 3), 12345)
    assert.equal(decimalToMinor(12.345, 2), undefined, 'more places than the currency has')
    assert.equal(decimalToMinor(-1, 2), undefined)
    assert.equal(decimalToMinor('abc', 2), undefined)
  })

  test('the refund answer table', () => {
    assert.deepEqual(refundOutcome({ statusCode: 201, body: { data: { id: 12, payments: [{ is_declined: false }] } } }), { status: 'succeeded', gatewayRefundId: '12' })
    assert.equal(refundOutcome({ statusCode: 201, body: { data: { id: 12, payments: [{ is_declined: true, declined_message: 'no' }] } } }).status, 'failed')
    assert.equal(refundOutcome({ statusCode: 201, body: { data: {} } }).status, 'unknown')
    assert.equal(refundOutcome({ statusCode: 422, body: { data: [{ status: 422, title: 'x' }] } }).status, 'failed')
    assert.equal(refundOutcome({ statusCode: 404, body: { status: 404, title: 'Not found' } }).status, 'failed')
    assert.equal(refundOutcome({ statusCode: 429, body: undefined }).status, 'unknown')
    assert.equal(refundOutcome({ statusCode: 503, body: undefined }).status, 'unknown')
    assert.equal(refundOutcome({ statusCode: 302, body: undefined }).status, 'unknown')
  })

  test('a refund: a quote for the order-level amount, then the refund to the card\'s provider, in decimal major units', async () => {
    const outcome = await gateway.refund(refund)
    assert.deepEqual(outcome, { status: 'succeeded', gatewayRefundId: '12' })
    assert.deepEqual(platform.seen.map((s) => `${s.method} ${s.url}`), [`POST ${PAYMENT_ACTIONS}/refund_quotes`, `POST ${PAYMENT_ACTIONS}/refunds`])
    const [quote, made] = platform.seen
    const item = { item_type: 'ORDER', item_id: 100, amount: 25, reason: 'Customer asked' }
    assert.deepEqual(quote!.body, { items: [item] })
    assert.deepEqual(made!.body, { items: [item], payments: [{ provider_id: 'stripe', amount: 25, offline: false }] }, 'the card\'s provider, not store credit')
    assert.deepEqual(rawAmounts(made!.raw), ['25.00', '25.00'], 'amounts written as decimal text')
    for (const seen of platform.seen) {
      assert.equal(seen.headers['x-auth-token'], ACCESS_TOKEN)
      assert.equal(seen.headers['content-type'], 'application/json')
      assert.equal(seen.headers['idempotency-key'], undefined, 'the platform takes no idempotency key')
    }
  })

  const currencies: Array<[string, number, string]> = [['USD', 1999, '19.99'], ['USD', 5, '0.05'], ['JPY', 500, '500'], ['KWD', 12345, '12.345'], ['USD', 99_999_999_999, '999999999.99']]
  for (const [currency, amount, decimal] of currencies) {
    test(`a refund of ${amount} ${currency} is sent as ${decimal}`, async () => {
      platform.expectCurrency(currency)
      const outcome = await gateway.refund({ ...refund, amount, currency, reason: undefined })
      assert.equal(outcome.status, 'succeeded', JSON.stringify(outcome))
      assert.deepEqual(rawAmounts(platform.seen[0]!.raw), [decimal])
      assert.deepEqual(rawAmounts(platform.seen[1]!.raw), [decimal, decimal])
      assert.deepEqual(Object.keys(platform.seen[0]!.body.items[0]).sort(), ['amount', 'item_id', 'item_type'], 'no reason when none is given')
    })
  }

  test('a refund declined with 422 -> failed with the platform\'s title, credentials redacted, nothing retried', async () => {
    platform.onRefund((res) => json(res, 422, { data: [{ status: 422, title: `Unable to refund this payment (${ACCESS_TOKEN})`, type: 'https://developer.bigcommerce.com/api-docs/getting-started/api-status-codes' }] }))
    const outcome = await gateway.refund(refund)
    assert.equal(outcome.status, 'failed', JSON.stringify(outcome))
    assert.match(outcome.status === 'failed' ? outcome.message : '', /422.*Unable to refund this payment/)
    assert.match(outcome.status === 'failed' ? outcome.message : '', /\[redacted\]/)
    assertNoSecrets(outcome)
    assert.equal(platform.seen.length, 2)
  })

  test('a refund whose every payment the provider declined -> failed with its message', async () => {
    platform.onRefund((res, _body, amount) => json(res, 201, refundFor(amount, true)))
    const outcome = await gateway.refund(refund)
    assert.equal(outcome.status, 'failed', JSON.stringify(outcome))
    assert.match(outcome.status === 'failed' ? outcome.message : '', /Card issuer refused the refund/)
  })

  for (const [status, body] of [[500, { status: 500, title: `boom ${ACCESS_TOKEN}` }], [503, { data: [{ order_id: 100, status: 503, error: `Tax service gone away ${ACCESS_TOKEN}` }], meta: {} }], [429, { status: 429, title: 'Too many requests' }]] as const) {
    test(`a refund answered ${status} -> unknown (it may have been made)`, async () => {
      platform.onRefund((res) => json(res, status, body))
      const outcome = await gateway.refund(refund)
      assert.equal(outcome.status, 'unknown', JSON.stringify(outcome))
      assertNoSecrets(outcome)
    })
  }

  test('a refund answered 201 without a refund id -> unknown', async () => {
    platform.onRefund((res) => json(res, 201, { data: {}, meta: {} }))
    assert.equal((await gateway.refund(refund)).status, 'unknown')
  })

  test('a refund answer slower than the timeout, or a connection dropped after sending -> unknown', async () => {
    platform.onRefund((res, _body, amount) => setTimeout(() => json(res, 201, refundFor(amount)), 3_000).unref())
    const late = await gateway.refund(refund)
    assert.equal(late.status, 'unknown', JSON.stringify(late))
    assert.match(late.status === 'unknown' ? late.reason : '', /timed out/)
    platform.onRefund((res) => res.socket?.destroy())
    const dropped = await gateway.refund(refund)
    assert.equal(dropped.status, 'unknown', JSON.stringify(dropped))
    assertNoSecrets(dropped)
  })

  test('a refund that cannot be sent (connection refused) -> failed', async () => {
    const port = await closedPort()
    const offline = createPlatformGateway({ timeoutMs: 300, configFor: () => ({ apiBaseUrl: `http://127.0.0.1:${port}/stores/abc/v3`, accessToken: ACCESS_TOKEN }) })
    const outcome = await offline.refund(refund)
    await offline.close()
    assert.equal(outcome.status, 'failed', JSON.stringify(outcome))
    assertNoSecrets(outcome)
  })

  test('a refused quote, or one with no online refund to the card, -> failed and no refund is sent', async () => {
    platform.onQuote((res) => json(res, 422, { status: 422, title: `Refund amount is greater than remaining amount ${ACCESS_TOKEN}`, errors: {} }))
    const refused = await gateway.refund(refund)
    assert.equal(refused.status, 'failed', JSON.stringify(refused))
    assert.match(refused.status === 'failed' ? refused.message : '', /greater than remaining amount/)
    assertNoSecrets(refused)

    platform.onQuote((res, _body, amount) => json(res, 201, { data: { order_id: 100, total_refund_amount: Number(amount), refund_methods: [
      [{ provider_id: 'storecredit', amount: Number(amount), offline: false, offline_provider: false, offline_reason: '' }],
      [{ provider_id: 'stripe', amount: Number(amount), offline: true, offline_provider: false, offline_reason: 'Multiple online refunds are not available' }],
    ] }, meta: {} }))
    const offlineOnly = await gateway.refund(refund)
    assert.equal(offlineOnly.status, 'failed', JSON.stringify(offlineOnly))
    assert.match(offlineOnly.status === 'failed' ? offlineOnly.message : '', /Multiple online refunds are not available/)

    platform.onQuote((res, _body, amount) => json(res, 201, quoteFor(amount, '10.00')))
    const less = await gateway.refund(refund)
    assert.equal(less.status, 'failed', JSON.stringify(less))
    assert.match(less.status === 'failed' ? less.message : '', /10\.00 via stripe, not 25\.00/)

    platform.onQuote((res) => json(res, 503, { status: 503, title: 'Service Unavailable' }))
    assert.equal((await gateway.refund(refund)).status, 'failed', 'a quote moves no money')
    assert.ok(!platform.seen.some((s) => s.url.endsWith('/refunds')), 'no refund POST was sent')
  })

  test('a refund without credentials or order fails before any request; a bad amount is refused', async () => {
    assert.equal((await gateway.refund({ ...refund, storeId: 'store_other' })).status, 'failed')
    assert.equal((await gateway.refund({ ...refund, orderId: undefined })).status, 'failed')
    await assert.rejects(gateway.refund({ ...refund, amount: 12.5 }), RangeError)
    await assert.rejects(gateway.refund({ ...refund, amount: 0 }), RangeError)
    assert.equal(platform.seen.length, 0)
  })

  test('a rejected store token on a refund -> failed, token not in the message', async () => {
    const wrong = createPlatformGateway({ timeoutMs: 2_000, configFor: () => ({ apiBaseUrl: `${base}/stores/abc/v3`, accessToken: 'wrong-token-SECRET' }) })
    const outcome = await wrong.refund(refund)
    await wrong.close()
    assert.equal(outcome.status, 'failed')
    assert.ok(!JSON.stringify(outcome).includes('wrong-token-SECRET'))
  })
})

/** A port nothing listens on any more: a connection to it is refused before anything is sent. */
async function closedPort(): Promise<number> {
  const closed = createServer()
  closed.listen(0, '127.0.0.1')
  await once(closed, 'listening')
  const port = (closed.address() as AddressInfo).port
  closed.close()
  await once(closed, 'close')
  return port
}
