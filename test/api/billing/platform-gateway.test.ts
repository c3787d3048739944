import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, beforeEach, describe, test } from 'node:test'
import type { ChargeOutcome, ChargeRequest } from '../../../src/modules/billing/gateways/gateway.ts'
import { createPlatformGateway, type PlatformGateway } from '../../../src/modules/billing/gateways/platform-gateway.ts'

const ACCESS_TOKEN = 'store-api-token-SECRET-7f3a'
const PAT = 'pat-SECRET-payment-access-token-91c2'

type Payment = (req: IncomingMessage, res: ServerResponse, body: any) => void
interface Seen { method: string; url: string; headers: IncomingMessage['headers']; body: any }

/** Plays the commerce platform: checks what a well-behaved client must send, answers what each test scripts. */
function startPlatform() {
  const seen: Seen[] = []
  let payment: Payment = (_req, res) => json(res, 201, { data: { id: 'txn_1', status: 'success', transaction_type: 'purchase' } })
  let tokenAnswer: ((res: ServerResponse) => void) | undefined
  let transactions: unknown = { data: [] }
  const server: Server = createServer(async (req, res) => {
    let raw = ''
    for await (const chunk of req) raw += chunk
    const body = raw ? JSON.parse(raw) : undefined
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body })
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
    reset() {
      seen.length = 0
      payment = (_req, res) => json(res, 201, { data: { id: 'txn_1', status: 'success', transaction_type: 'purchase' } })
      tokenAnswer = undefined
      transactions = { data: [] }
    },
  }
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(body))
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

/** Credentials must never leak into what the engine stores and shows. */
function assertNoSecrets(outcome: ChargeOutcome | undefined) {
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
    gateway = createPlatformGateway({
      timeoutMs: 300,
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
    platform.onPayment((_req, res) => setTimeout(() => json(res, 201, { data: { id: 'late', status: 'success' } }), 1_500).unref())
    const started = performance.now()
    const outcome = await gateway.charge(request)
    assert.equal(outcome.status, 'unknown', JSON.stringify(outcome))
    assert.match(outcome.status === 'unknown' ? outcome.reason : '', /timed out/)
    assert.ok(performance.now() - started < 1_200, 'the configured timeout, not the server, ended the wait')
    assertNoSecrets(outcome)
  })

  test('a connection destroyed after the payment was sent -> unknown', async () => {
    platform.onPayment((req) => req.socket.destroy())
    const outcome = await gateway.charge(request)
    assert.equal(outcome.status, 'unknown', JSON.stringify(outcome))
    assertNoSecrets(outcome)
  })

  test('a connection refused before anything was sent -> failed processing_error', async () => {
    const closed = createServer()
    closed.listen(0, '127.0.0.1')
    await once(closed, 'listening')
    const port = (closed.address() as AddressInfo).port
    closed.close()
    await once(closed, 'close')
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
    platform.onToken((res) => setTimeout(() => json(res, 201, { data: { id: PAT } }), 1_500).unref())
    assert.equal((await gateway.charge(request)).status, 'failed')
  })

  test('a rejected store token -> failed gateway_configuration, token not in the message', async () => {
    const wrong = createPlatformGateway({ timeoutMs: 300, configFor: () => ({ apiBaseUrl: `${base}/stores/abc/v3`, accessToken: 'wrong-token-SECRET' }) })
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
})
