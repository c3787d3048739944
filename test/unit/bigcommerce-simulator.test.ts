/**
 * The BigCommerce simulator (test/helpers/bigcommerce-simulator.ts) accepts the requests
 * docs/platform-api.md describes and refuses wrong ones the way the platform does, recording each
 * refusal as a violation. Everything runs over real HTTP on 127.0.0.1.
 */
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { DEFAULT_QUOTA, startBigCommerceSimulator, type BigCommerceSimulator } from '../helpers/bigcommerce-simulator.ts'
import { startWebhookReceiver, verifyDelivery } from '../helpers/webhook-receiver.ts'

const HASH = 'abc123'
const TOKEN = 'store-token-abc123'
const JSON_HEADERS = { 'X-Auth-Token': TOKEN, Accept: 'application/json', 'Content-Type': 'application/json' }
const PAY_ACCEPT = 'application/vnd.bc.v1+json'

const sims: BigCommerceSimulator[] = []
after(async () => {
  await Promise.all(sims.map((s) => s.close()))
})

interface Answer {
  status: number
  headers: Headers
  body: any
}

async function call(method: string, url: string, opts: { headers?: Record<string, string>; body?: unknown; raw?: string; timeoutMs?: number } = {}): Promise<Answer> {
  const res = await fetch(url, {
    method,
    headers: opts.headers ?? {},
    body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
    signal: AbortSignal.timeout(opts.timeoutMs ?? 5000),
  })
  const text = await res.text()
  return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) }
}

async function setup(options: Parameters<typeof startBigCommerceSimulator>[0] = {}) {
  const sim = await startBigCommerceSimulator(options)
  sims.push(sim)
  sim.addStore({ hash: HASH, accessToken: TOKEN, storeId: '1025646' })
  const product = sim.addProduct(HASH, { id: 77, name: 'Coffee subscription', price: 49.99 })
  const customer = sim.addCustomer(HASH, { id: 11, email: 'jane@example.com', instruments: [{ brand: 'VISA', last_4: '4242', expiry_month: 12, expiry_year: 2099 }] })
  const other = sim.addCustomer(HASH, { id: 12, instruments: [{ brand: 'MASTERCARD', last_4: '4444' }] })
  const api = `${sim.apiUrl}/stores/${HASH}`
  const payments = `${sim.paymentsUrl}/stores/${HASH}/payments`
  const token = customer.instruments[0]!.token
  return { sim, api, payments, product, customer, other, token }
}

const orderBody = (extra: Record<string, unknown> = {}) => ({
  status_id: 0,
  customer_id: 11,
  billing_address: { first_name: 'Jane', last_name: 'Doe', street_1: '1 Main Street', city: 'Austin', state: 'Texas', zip: '78751', country_iso2: 'US', email: 'jane@example.com' },
  products: [{ product_id: 77, quantity: 1, price_inc_tax: 49.99, price_ex_tax: 49.99 }],
  external_source: 'app-123',
  external_order_id: 'charge-key-1',
  ...extra,
})

type Setup = Awaited<ReturnType<typeof setup>>

async function newOrder(s: Setup, extra: Record<string, unknown> = {}): Promise<number> {
  const r = await call('POST', `${s.api}/v2/orders`, { headers: JSON_HEADERS, body: orderBody(extra) })
  assert.equal(r.status, 200, JSON.stringify(r.body))
  return r.body.id
}

async function pat(s: Setup, orderId: number): Promise<Answer> {
  return call('POST', `${s.api}/v3/payments/access_tokens`, { headers: JSON_HEADERS, body: { order: { id: orderId, is_recurring: true } } })
}

async function pay(s: Setup, patToken: string, body: unknown = { payment: { instrument: { type: 'stored_card', token: s.token }, payment_method_id: 'stripe.card' } }, headers: Record<string, string> = {}) {
  return call('POST', s.payments, { headers: { Authorization: `PAT ${patToken}`, Accept: PAY_ACCEPT, 'Content-Type': 'application/json', ...headers }, body })
}

function lastViolation(sim: BigCommerceSimulator) {
  return sim.violations.at(-1)
}

describe('a correct renewal, step by step (§9)', () => {
  test('find, create, methods, PAT, pay, transactions, refund: all accepted, nothing recorded as a violation', async () => {
    const s = await setup()
    const { api } = s

    // 1. ownership: the token is the customer's (§6.3), and the customer is found with id:in (§6.1)
    const instruments = await call('GET', `${api}/v3/customers/11/stored-instruments`, { headers: JSON_HEADERS })
    assert.equal(instruments.status, 200)
    assert.ok(Array.isArray(instruments.body), 'a bare array')
    assert.deepEqual(
      instruments.body.map((i: any) => [i.type, i.token, i.brand, i.last_4, i.is_default]),
      [['stored_card', s.token, 'VISA', '4242', true]],
    )
    const customers = await call('GET', `${api}/v3/customers?id:in=11,99`, { headers: JSON_HEADERS })
    assert.deepEqual(customers.body.data.map((c: any) => c.id), [11])

    // 2. no order yet under our key, with or without status_id=0 (204 by default, §2.2)
    assert.equal((await call('GET', `${api}/v2/orders?external_order_id=charge-key-1`, { headers: JSON_HEADERS })).status, 204)
    assert.equal((await call('GET', `${api}/v2/orders?external_order_id=charge-key-1&status_id=0`, { headers: JSON_HEADERS })).status, 204)

    const created = await call('POST', `${api}/v2/orders`, { headers: JSON_HEADERS, body: orderBody() })
    assert.equal(created.status, 200)
    const order = created.body
    assert.equal(typeof order.id, 'number', 'the bare order, not wrapped in data')
    assert.equal(order.data, undefined)
    assert.equal(order.status_id, 0)
    assert.equal(order.status, 'Incomplete')
    assert.equal(order.total_inc_tax, '49.9900')
    assert.equal(order.total_ex_tax, '49.9900')
    assert.equal(order.customer_id, 11)
    assert.equal(order.external_order_id, 'charge-key-1')
    assert.equal(order.external_source, 'app-123')
    assert.equal(order.external_id, null)
    assert.match(order.date_created, /^\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000$/)

    // Incomplete orders are listed only with status_id=0 (simulator default, §2.2)
    assert.equal((await call('GET', `${api}/v2/orders?external_order_id=charge-key-1`, { headers: JSON_HEADERS })).status, 204)
    const found = await call('GET', `${api}/v2/orders?external_order_id=charge-key-1&status_id=0`, { headers: JSON_HEADERS })
    assert.equal(found.status, 200)
    assert.deepEqual(found.body.map((o: any) => o.id), [order.id])
    const products = await call('GET', `${api}/v2/orders/${order.id}/products`, { headers: JSON_HEADERS })
    assert.deepEqual(products.body.map((p: any) => [p.product_id, p.quantity, p.price_inc_tax]), [[77, 1, '49.9900']])

    // 3. methods for the order: stripe.card lists the customer's stored card (§3.1)
    const methods = await call('GET', `${api}/v3/payments/methods?order_id=${order.id}`, { headers: JSON_HEADERS })
    assert.equal(methods.status, 200)
    const method = methods.body.data.find((m: any) => m.stored_instruments.some((i: any) => i.token === s.token))
    assert.equal(method.id, 'stripe.card')
    assert.equal(method.supported_instruments.find((i: any) => i.instrument_type === 'STORED_CARD').verification_value_required, false)
    assert.equal((await call('GET', `${api}/v3/orders/${order.id}/transactions`, { headers: JSON_HEADERS })).status, 204, '204 when none (§4)')

    // 4. PAT: 201 {data:{id}}, a JWT whose data carries amount in minor units (§0 "Money")
    const token = await pat(s, order.id)
    assert.equal(token.status, 201)
    const claims = JSON.parse(Buffer.from(token.body.data.id.split('.')[1], 'base64url').toString())
    assert.deepEqual(claims.data, { store_id: '1025646', order_id: String(order.id), amount: 4999, currency: 'USD' })
    assert.equal(claims.exp - claims.nbf, 3600)

    // 5. pay on the payments host (§3.3)
    const paid = await pay(s, token.body.data.id, { payment: { instrument: { type: 'stored_card', token: s.token }, payment_method_id: method.id } })
    assert.equal(paid.status, 201)
    assert.equal(paid.body.data.status, 'success')
    assert.equal(paid.body.data.transaction_type, 'purchase')
    assert.match(paid.body.data.id, /^[0-9a-f-]{36}$/)

    // 6. the order moved to 11 and a purchase transaction shows it (§2.3, §4)
    const read = await call('GET', `${api}/v2/orders/${order.id}`, { headers: JSON_HEADERS })
    assert.equal(read.body.status_id, 11)
    assert.equal(read.body.payment_status, 'captured')
    const tx = await call('GET', `${api}/v3/orders/${order.id}/transactions`, { headers: JSON_HEADERS })
    assert.equal(tx.status, 200)
    assert.equal(tx.body.data.length, 1)
    const t = tx.body.data[0]
    assert.deepEqual(
      [t.order_id, t.event, t.status, t.amount, t.currency, t.gateway, t.payment_method_id, t.payment_instrument_token, t.credit_card.card_last4],
      [String(order.id), 'purchase', 'ok', 49.99, 'USD', 'stripe', 'stripe.card', s.token, '4242'],
    )
    // the paid order is now listed without status_id, and a second PAT is refused (30101)
    const listed = await call('GET', `${api}/v2/orders?external_order_id=charge-key-1`, { headers: JSON_HEADERS })
    assert.deepEqual(listed.body.map((o: any) => o.status_id), [11])

    // 7. refund: quote, then the quoted amount with the quoted provider (§5.1, §5.2)
    const items = [{ item_type: 'ORDER', item_id: order.id, amount: 49.99, reason: 'Cancelled renewal' }]
    const quote = await call('POST', `${api}/v3/orders/${order.id}/payment_actions/refund_quotes`, { headers: JSON_HEADERS, body: { items } })
    assert.equal(quote.status, 201)
    assert.equal(quote.body.data.total_refund_amount, 49.99)
    const option = quote.body.data.refund_methods[0][0]
    assert.deepEqual([option.provider_id, option.amount, option.offline], ['stripe', 49.99, false])
    const refund = await call('POST', `${api}/v3/orders/${order.id}/payment_actions/refunds`, {
      headers: JSON_HEADERS,
      body: { items, payments: [{ provider_id: option.provider_id, amount: option.amount, offline: false }] },
    })
    assert.equal(refund.status, 201)
    assert.equal(refund.body.data.total_amount, 49.99)
    assert.equal(refund.body.data.payments[0].is_declined, false)
    const refunded = await call('GET', `${api}/v2/orders/${order.id}`, { headers: JSON_HEADERS })
    assert.deepEqual([refunded.body.status_id, refunded.body.payment_status, refunded.body.refunded_amount], [4, 'refunded', '49.9900'])
    const afterRefund = await call('GET', `${api}/v3/orders/${order.id}/transactions`, { headers: JSON_HEADERS })
    assert.deepEqual(afterRefund.body.data.map((x: any) => [x.event, x.amount]), [['purchase', 49.99], ['refund', 49.99]])
    const refunds = await call('GET', `${api}/v3/orders/${order.id}/payment_actions/refunds`, { headers: JSON_HEADERS })
    assert.equal(refunds.body.data.length, 1)

    assert.deepEqual(s.sim.violations, [])
    assert.deepEqual(
      [s.sim.counters.ordersCreated, s.sim.counters.patsIssued, s.sim.counters.paymentRequests, s.sim.counters.paymentsSucceeded, s.sim.counters.refundsCreated],
      [1, 1, 1, 1, 1],
    )
    assert.deepEqual(s.sim.doubleCharges(), [])
    assert.ok(read.headers.get('x-rate-limit-requests-left'), 'REST answers carry the rate headers')
  })

  test('a custom product and order-level totals as Float-As-String are accepted; 201 is switchable', async () => {
    const s = await setup({ options: { createOrderStatus: 201 } })
    const r = await call('POST', `${s.api}/v2/orders`, {
      headers: JSON_HEADERS,
      body: orderBody({ products: [{ name: 'Plan A renewal', quantity: 2, price_inc_tax: 10.5, price_ex_tax: 10 }], shipping_cost_ex_tax: '0', shipping_cost_inc_tax: 0 }),
    })
    assert.equal(r.status, 201)
    assert.deepEqual([r.body.subtotal_inc_tax, r.body.total_inc_tax, r.body.total_ex_tax], ['21.0000', '21.0000', '20.0000'])
    assert.deepEqual(s.sim.violations, [])
  })
})

describe('refusals, answered like the platform and recorded as violations', () => {
  test('credentials and scopes: 401 without or with a wrong X-Auth-Token, 403 for a missing scope', async () => {
    const s = await setup()
    s.sim.addStore({ hash: 'other1', accessToken: 'other-token' })
    s.sim.addStore({ hash: 'narrow', accessToken: 'narrow-token', scopes: ['store_v2_orders'] })

    const none = await call('GET', `${s.api}/v2/orders/1`, { headers: { Accept: 'application/json' } })
    assert.equal(none.status, 401)
    assert.deepEqual(none.body, [{ status: 401, message: 'X-Auth-Token is missing' }], 'v2 errors are a bare array')
    const bearer = await call('GET', `${s.api}/v3/orders/1/transactions`, { headers: { Authorization: `Bearer ${TOKEN}`, Accept: 'application/json' } })
    assert.equal(bearer.status, 401)
    assert.equal(bearer.body.status, 401, 'v3 errors are an object')
    assert.match(lastViolation(s.sim)!.message, /Authorization is not read/)
    const foreign = await call('GET', `${s.api}/v2/orders/1`, { headers: { ...JSON_HEADERS, 'X-Auth-Token': 'other-token' } })
    assert.equal(foreign.status, 401)
    const scoped = await call('POST', `${s.sim.apiUrl}/stores/narrow/v3/payments/access_tokens`, { headers: { ...JSON_HEADERS, 'X-Auth-Token': 'narrow-token' }, body: { order: { id: 1 } } })
    assert.equal(scoped.status, 403)
    const customers = await call('GET', `${s.sim.apiUrl}/stores/narrow/v3/customers/11/stored-instruments`, { headers: { ...JSON_HEADERS, 'X-Auth-Token': 'narrow-token' } })
    assert.deepEqual([customers.status, customers.body.code], [403, 403], 'customers 401/403 are {code, message}')
    assert.deepEqual(s.sim.violations.map((v) => [v.status, v.kind]), [[401, 'auth'], [401, 'auth'], [401, 'auth'], [403, 'scope'], [403, 'scope']])
  })

  test('headers and routes: 406 Accept, 415 Content-Type, 404 for v3 orders or payments on the REST host, 405 method', async () => {
    const s = await setup()
    const noAccept = await call('GET', `${s.api}/v2/orders/1`, { headers: { 'X-Auth-Token': TOKEN } })
    assert.equal(noAccept.status, 406)
    const text = await call('POST', `${s.api}/v2/orders`, { headers: { ...JSON_HEADERS, 'Content-Type': 'text/plain' }, raw: JSON.stringify(orderBody()) })
    assert.equal(text.status, 415)
    const v3orders = await call('POST', `${s.api}/v3/orders`, { headers: JSON_HEADERS, body: orderBody() })
    assert.equal(v3orders.status, 404)
    assert.match(lastViolation(s.sim)!.message, /POST \/v2\/orders/)
    const payOnApi = await call('POST', `${s.api}/payments`, { headers: JSON_HEADERS, body: {} })
    assert.equal(payOnApi.status, 404)
    const del = await call('DELETE', `${s.api}/v2/orders`, { headers: JSON_HEADERS })
    assert.equal(del.status, 405)
    const bad = await call('POST', `${s.api}/v2/orders`, { headers: JSON_HEADERS, raw: '{"billing_address":' })
    assert.equal(bad.status, 400)
    assert.deepEqual(s.sim.violations.map((v) => [v.status, v.kind]), [[406, 'header'], [415, 'header'], [404, 'route'], [404, 'route'], [405, 'route'], [400, 'body']])
    assert.equal(s.sim.counters.ordersCreated, 0)
  })

  test('order bodies: read-only and unknown fields, missing zip, string prices, one price of the pair, non-integer ids', async () => {
    const s = await setup()
    const cases: [string, Record<string, unknown>, RegExp][] = [
      ['external_id is read-only', { external_id: 'k' }, /The field 'external_id' cannot be written to/],
      ['status is read-only (status_id is the field)', { status: 'pending' }, /'status' cannot be written to/],
      ['currency_code is read-only', { currency_code: 'USD' }, /'currency_code' cannot be written/],
      ['unknown field', { total_minor_units: 4999 }, /'total_minor_units' is not a field/],
      ['billing_address required', { billing_address: undefined }, /billing_address/],
      ['zip of two or more characters', { billing_address: { country_iso2: 'US', zip: '7' } }, /billing_address.zip/],
      ['price as a string', { products: [{ product_id: 77, quantity: 1, price_inc_tax: '49.99', price_ex_tax: '49.99' }] }, /price_inc_tax: must be a JSON number/],
      ['only one of the prices', { products: [{ product_id: 77, quantity: 1, price_inc_tax: 49.99 }] }, /overridden together/],
      ['product_id as a string', { products: [{ product_id: '77', quantity: 1 }] }, /product_id: must be an integer/],
      ['unknown product', { products: [{ product_id: 999, quantity: 1 }] }, /does not exist in the catalog/],
      ['no quantity', { products: [{ product_id: 77 }] }, /quantity: is required/],
      ['custom product without prices', { products: [{ name: 'X', quantity: 1 }] }, /required for a custom product/],
      ['customer_id as a string', { customer_id: '11' }, /customer_id: must be an integer/],
      ['unknown customer', { customer_id: 404 }, /customer 404 does not exist/],
      ['status_id out of range', { status_id: 42 }, /status_id/],
      ['external_order_id not a string', { external_order_id: 17 }, /external_order_id: must be a string/],
      ['half a total pair', { total_inc_tax: '49.99' }, /must be sent together/],
    ]
    for (const [name, extra, message] of cases) {
      const body: Record<string, unknown> = orderBody(extra)
      for (const [k, v] of Object.entries(extra)) if (v === undefined) delete body[k]
      const r = await call('POST', `${s.api}/v2/orders`, { headers: JSON_HEADERS, body })
      assert.equal(r.status, 400, name)
      assert.ok(Array.isArray(r.body) && r.body[0].status === 400, `${name}: v2 array`)
      assert.match(r.body[0].message, message, name)
    }
    assert.equal(s.sim.violations.length, cases.length)
    assert.ok(s.sim.violations.every((v) => v.operation === 'createOrder' && v.kind === 'body'))
    assert.equal(s.sim.counters.ordersCreated, 0)
  })

  test('PAT requests: bad body 422, unknown order 404/30003, an order not Incomplete 422/30101', async () => {
    const s = await setup()
    const noId = await call('POST', `${s.api}/v3/payments/access_tokens`, { headers: JSON_HEADERS, body: { order: { is_recurring: true } } })
    assert.equal(noId.status, 422)
    assert.ok(noId.body.errors['order.id'])
    const amount = await call('POST', `${s.api}/v3/payments/access_tokens`, { headers: JSON_HEADERS, body: { order: { id: 1, amount: 4999 } } })
    assert.equal(amount.status, 422)
    const unknown = await pat(s, 9999)
    assert.deepEqual([unknown.status, unknown.body.code], [404, 30003])
    const pending = await newOrder(s, { status_id: undefined, external_order_id: 'pending-1' }) // status_id absent = 1 Pending
    const refused = await pat(s, pending)
    assert.deepEqual([refused.status, refused.body.code], [422, 30101])
    assert.deepEqual(s.sim.violations.map((v) => [v.status, v.kind, v.code]), [[422, 'body', undefined], [422, 'body', undefined], [404, 'state', 30003], [422, 'state', 30101]])
  })

  test('payments: Authorization format, Accept, single-use PAT, method id, instrument ownership, paid order', async () => {
    const s = await setup()
    const orderId = await newOrder(s)
    const first = (await pat(s, orderId)).body.data.id

    const bearer = await call('POST', s.payments, { headers: { Authorization: `Bearer ${first}`, Accept: PAY_ACCEPT, 'Content-Type': 'application/json' }, body: {} })
    assert.equal(bearer.status, 401)
    const twoSpaces = await call('POST', s.payments, { headers: { Authorization: `PAT  ${first}`, Accept: PAY_ACCEPT, 'Content-Type': 'application/json' }, body: {} })
    assert.equal(twoSpaces.status, 401)
    const jsonAccept = await pay(s, first, undefined, { Accept: 'application/json' })
    assert.equal(jsonAccept.status, 406)

    // wrong method id (the old `stored_card`) → 422 10001; the PAT is spent
    const wrongMethod = await pay(s, first, { payment: { instrument: { type: 'stored_card', token: s.token }, payment_method_id: 'stored_card' } })
    assert.deepEqual([wrongMethod.status, wrongMethod.body.code], [422, 10001])
    assert.deepEqual(Object.keys(wrongMethod.body).sort(), ['code', 'detail', 'status', 'title', 'type'])
    const reused = await pay(s, first)
    assert.equal(reused.status, 401, 'a PAT is single use')

    const amount = await pay(s, (await pat(s, orderId)).body.data.id, { payment: { instrument: { type: 'stored_card', token: s.token }, payment_method_id: 'stripe.card', amount: 49.99 } })
    assert.deepEqual([amount.status, amount.body.code], [422, 10001])
    assert.ok(amount.body.errors['payment.amount'])
    const shortToken = await pay(s, (await pat(s, orderId)).body.data.id, { payment: { instrument: { type: 'stored_card', token: 'tok_123' }, payment_method_id: 'stripe.card' } })
    assert.deepEqual([shortToken.status, shortToken.body.code], [422, 10001])

    // someone else's card → 30051
    const foreign = await pay(s, (await pat(s, orderId)).body.data.id, { payment: { instrument: { type: 'stored_card', token: s.other.instruments[0]!.token }, payment_method_id: 'stripe.card' } })
    assert.deepEqual([foreign.status, foreign.body.code], [422, 30051])

    // a PAT taken before the order was paid, used after → 30101; X-Auth-Token on the payments host is flagged
    const early = (await pat(s, orderId)).body.data.id
    const ok = await pay(s, (await pat(s, orderId)).body.data.id, undefined, { 'X-Auth-Token': TOKEN })
    assert.equal(ok.status, 201)
    const late = await pay(s, early)
    assert.deepEqual([late.status, late.body.code], [422, 30101])
    const afterPaid = await pat(s, orderId)
    assert.deepEqual([afterPaid.status, afterPaid.body.code], [422, 30101])

    assert.deepEqual(
      s.sim.violations.map((v) => [v.status, v.kind, v.code]),
      [
        [401, 'auth', undefined],
        [401, 'auth', undefined],
        [406, 'header', undefined],
        [422, 'body', 10001],
        [401, 'auth', undefined],
        [422, 'body', 10001],
        [422, 'body', 10001],
        [422, 'state', 30051],
        [0, 'leak', undefined],
        [422, 'state', 30101],
        [422, 'state', 30101],
      ],
    )
    assert.equal(s.sim.order(HASH, orderId)!.successful_payments, 1)
    assert.deepEqual(s.sim.doubleCharges(), [])
  })

  test('refunds: quote more than paid is adjusted; a refund whose amount differs from the quote is 422 {data:[...]}', async () => {
    const s = await setup()
    const orderId = await newOrder(s)
    const unpaid = await call('POST', `${s.api}/v3/orders/${orderId}/payment_actions/refund_quotes`, { headers: JSON_HEADERS, body: { items: [{ item_type: 'ORDER', item_id: orderId, amount: 1 }] } })
    assert.equal(unpaid.status, 422)
    assert.equal((await pay(s, (await pat(s, orderId)).body.data.id)).status, 201)
    const over = await call('POST', `${s.api}/v3/orders/${orderId}/payment_actions/refund_quotes`, { headers: JSON_HEADERS, body: { items: [{ item_type: 'ORDER', item_id: orderId, amount: 60 }] } })
    assert.deepEqual([over.status, over.body.data.total_refund_amount, over.body.data.adjustment], [201, 49.99, -10.01])
    const threeDp = await call('POST', `${s.api}/v3/orders/${orderId}/payment_actions/refund_quotes`, { headers: JSON_HEADERS, body: { items: [{ item_type: 'ORDER', item_id: orderId, amount: 1.005 }] } })
    assert.equal(threeDp.status, 422)
    const items = [{ item_type: 'ORDER', item_id: orderId, amount: 10 }]
    const mismatch = await call('POST', `${s.api}/v3/orders/${orderId}/payment_actions/refunds`, { headers: JSON_HEADERS, body: { items, payments: [{ provider_id: 'stripe', amount: 9, offline: false }] } })
    assert.equal(mismatch.status, 422)
    assert.equal(mismatch.body.data[0].status, 422, 'refund errors are wrapped in data')
    const partial = await call('POST', `${s.api}/v3/orders/${orderId}/payment_actions/refunds`, { headers: JSON_HEADERS, body: { items, payments: [{ provider_id: 'stripe', amount: 10, offline: false }] } })
    assert.equal(partial.status, 201)
    assert.equal(s.sim.order(HASH, orderId)!.status_id, 14)
    assert.deepEqual(s.sim.violations.map((v) => [v.operation, v.status]), [['createOrderRefundQuotes', 422], ['createOrderRefundQuotes', 422], ['createOrderRefund', 422]])
  })
})

describe('behaviour switches', () => {
  test('declines 30102/30103/30104/30106, 30105 and 10000 answer the platform codes and are not violations', async () => {
    const s = await setup()
    const orderId = await newOrder(s)
    for (const [code, status] of [[30102, 422], [30103, 422], [30104, 422], [30106, 422], [30105, 422], [10000, 500]] as const) {
      s.sim.declineNextPayment(code)
      const r = await pay(s, (await pat(s, orderId)).body.data.id)
      assert.deepEqual([r.status, r.body.code, typeof r.body.title, typeof r.body.type], [status, code, 'string', 'string'], String(code))
    }
    assert.equal(s.sim.order(HASH, orderId)!.status_id, 0, 'a declined order stays Incomplete')
    assert.equal((await call('GET', `${s.api}/v3/orders/${orderId}/transactions`, { headers: JSON_HEADERS })).status, 204)
    assert.equal(s.sim.counters.paymentsDeclined, 6)
    assert.deepEqual(s.sim.violations, [])
    // an expired stored card is declined 30103 by itself
    const expired = s.sim.addCustomer(HASH, { id: 13, instruments: [{ expiry_month: 1, expiry_year: 2020 }] })
    const o2 = await newOrder(s, { customer_id: 13, external_order_id: 'k2' })
    const r = await pay(s, (await pat(s, o2)).body.data.id, { payment: { instrument: { type: 'stored_card', token: expired.instruments[0]!.token }, payment_method_id: 'stripe.card' } })
    assert.deepEqual([r.status, r.body.code], [422, 30103])
  })

  test('429 with X-Rate-Limit-Time-Reset-Ms and the other rate headers for the next N requests, then normal answers', async () => {
    const s = await setup()
    s.sim.rateLimitNext(2, { resetMs: 1234 })
    for (let i = 0; i < 2; i++) {
      const r = await call('GET', `${s.api}/v2/orders?status_id=0`, { headers: JSON_HEADERS })
      assert.equal(r.status, 429)
      assert.equal(r.headers.get('x-rate-limit-time-reset-ms'), '1234')
      assert.equal(r.headers.get('x-rate-limit-time-window-ms'), '30000')
      assert.equal(r.headers.get('x-rate-limit-requests-quota'), '150')
      assert.equal(r.headers.get('x-rate-limit-requests-left'), '0')
      assert.equal(r.headers.get('x-retry-after'), '2')
    }
    const ok = await call('GET', `${s.api}/v2/orders?status_id=0`, { headers: JSON_HEADERS })
    assert.equal(ok.status, 204)
    assert.ok(Number(ok.headers.get('x-rate-limit-requests-left')) > 0)
    // a bare 429 (heavy load, RATE) and one on the payments host only
    s.sim.rateLimitNext(1, { withHeaders: false })
    const bare = await call('GET', `${s.api}/v2/orders?status_id=0`, { headers: JSON_HEADERS })
    assert.deepEqual([bare.status, bare.headers.get('x-rate-limit-time-reset-ms')], [429, null])
    const orderId = await newOrder(s)
    s.sim.rateLimitNext(1, { host: 'payments' })
    const limited = await pay(s, (await pat(s, orderId)).body.data.id)
    assert.equal(limited.status, 429)
    assert.equal(s.sim.order(HASH, orderId)!.payment_requests, 0, 'a 429 processed nothing')
    assert.deepEqual(s.sim.violations, [])
  })

  test("a store's own quota: counted per store in a fixed window from its first request, 429 with Left 0 and X-Retry-After over it, refilled when the window ends", async () => {
    let now = 1_000_000
    const s = await setup({ rateLimitNow: () => now })
    s.sim.addStore({ hash: 'other1', accessToken: 'other-token' })
    const list = () => call('GET', `${s.api}/v2/orders?status_id=0`, { headers: JSON_HEADERS })
    const rate = (r: Answer) => ['window-ms', 'reset-ms', 'quota', 'left'].map((h) => r.headers.get(h === 'window-ms' || h === 'reset-ms' ? `x-rate-limit-time-${h}` : `x-rate-limit-requests-${h}`))

    // Unset: counted per store with the large default quota, never refused.
    const first = await list()
    assert.deepEqual([first.status, ...rate(first)], [204, '30000', '30000', String(DEFAULT_QUOTA), String(DEFAULT_QUOTA - 1)])

    s.sim.setRateLimit(HASH, { quota: 3, windowMs: 1_000 })
    const answers: Answer[] = []
    for (let i = 0; i < 3; i++) {
      answers.push(await list())
      now += 100
    }
    assert.deepEqual(answers.map((r) => [r.status, ...rate(r)]), [
      [204, '1000', '1000', '3', '2'],
      [204, '1000', '900', '3', '1'],
      [204, '1000', '800', '3', '0'],
    ])
    const ordersBefore = s.sim.orders(HASH).length
    const over = await call('POST', `${s.api}/v2/orders`, { headers: JSON_HEADERS, body: orderBody({ external_order_id: 'over-quota' }) })
    assert.deepEqual([over.status, ...rate(over), over.headers.get('x-retry-after')], [429, '1000', '700', '3', '0', '1'])
    assert.equal(s.sim.orders(HASH).length, ordersBefore, 'a request over the quota did nothing')
    // Another store's window is its own.
    const other = await call('GET', `${s.sim.apiUrl}/stores/other1/v2/orders?status_id=0`, { headers: { ...JSON_HEADERS, 'X-Auth-Token': 'other-token' } })
    assert.deepEqual([other.status, rate(other)[3]], [204, String(DEFAULT_QUOTA - 1)])
    now += 699
    const stillOver = await list()
    assert.deepEqual([stillOver.status, rate(stillOver)[1], stillOver.headers.get('x-retry-after')], [429, '1', '1'])
    // The window ended: the next request starts a fresh one at its own time.
    now += 1
    const refilled = await list()
    assert.deepEqual([refilled.status, ...rate(refilled)], [204, '1000', '1000', '3', '2'])
    now += 5_000
    const later = await list()
    assert.deepEqual([later.status, rate(later)[1], rate(later)[3]], [204, '1000', '2'])
    assert.equal(s.sim.rateLimited(HASH), 2)
    assert.equal(s.sim.rateLimited('other1'), 0)
    assert.deepEqual(s.sim.requests.filter((r) => r.store === HASH && r.outcome === 429).length, 2)

    // Back to the default: not enforced any more.
    s.sim.setRateLimit(HASH, null)
    for (let i = 0; i < 4; i++) assert.equal((await list()).status, 204)
    assert.deepEqual(s.sim.violations, [])
  })

  test('lost answer, held answer and 502 after processing: the work is done, the client does not learn it', async () => {
    const s = await setup()
    // order created, answer lost: findable by external_order_id with status_id=0
    s.sim.loseNextAnswer('createOrder')
    await assert.rejects(call('POST', `${s.api}/v2/orders`, { headers: JSON_HEADERS, body: orderBody() }))
    const found = await call('GET', `${s.api}/v2/orders?external_order_id=charge-key-1&status_id=0`, { headers: JSON_HEADERS })
    assert.equal(found.body.length, 1)
    const orderId = found.body[0].id

    // payment processed, socket destroyed
    s.sim.loseNextAnswer('PaymentsPost')
    await assert.rejects(pay(s, (await pat(s, orderId)).body.data.id))
    assert.equal(s.sim.order(HASH, orderId)!.status_id, 11)
    const tx = await call('GET', `${s.api}/v3/orders/${orderId}/transactions`, { headers: JSON_HEADERS })
    assert.equal(tx.body.data[0].event, 'purchase')

    // payment processed, answer held until the client times out
    const o2 = await newOrder(s, { external_order_id: 'k2' })
    s.sim.holdNextAnswer('PaymentsPost')
    const p2 = (await pat(s, o2)).body.data.id
    await assert.rejects(
      call('POST', s.payments, { headers: { Authorization: `PAT ${p2}`, Accept: PAY_ACCEPT, 'Content-Type': 'application/json' }, body: { payment: { instrument: { type: 'stored_card', token: s.token }, payment_method_id: 'stripe.card' } }, timeoutMs: 300 }),
      /timeout|abort/i,
    )
    assert.equal(s.sim.order(HASH, o2)!.successful_payments, 1)
    s.sim.releaseHeld()

    // 502 after processing
    const o3 = await newOrder(s, { external_order_id: 'k3' })
    s.sim.failNext('PaymentsPost', 502)
    const r = await pay(s, (await pat(s, o3)).body.data.id)
    assert.equal(r.status, 502)
    assert.equal(s.sim.order(HASH, o3)!.status_id, 11)
    // 500 before processing changes nothing
    const o4 = await newOrder(s, { external_order_id: 'k4' })
    s.sim.failNext('PaymentsPost', 500, { afterProcessing: false })
    assert.equal((await pay(s, (await pat(s, o4)).body.data.id)).status, 500)
    assert.equal(s.sim.order(HASH, o4)!.status_id, 0)
    assert.deepEqual(s.sim.violations, [])
  })

  test('two payments racing on one Incomplete order both go through: exposed as a double charge', async () => {
    const s = await setup()
    const orderId = await newOrder(s)
    s.sim.setLatency(150, 'PaymentsPost')
    const [a, b] = [(await pat(s, orderId)).body.data.id, (await pat(s, orderId)).body.data.id]
    const results = await Promise.all([pay(s, a), pay(s, b)])
    assert.deepEqual(results.map((r) => r.status), [201, 201])
    assert.deepEqual(s.sim.doubleCharges().map((o) => [o.id, o.successful_payments, o.payment_requests]), [[orderId, 2, 2]])
    assert.equal(s.sim.counters.patsIssued, 2)
  })

  test('a pending payment leaves an `event: pending` transaction and the order Incomplete', async () => {
    const s = await setup()
    const orderId = await newOrder(s)
    s.sim.nextPaymentPending()
    const r = await pay(s, (await pat(s, orderId)).body.data.id)
    assert.deepEqual([r.status, r.body.data.status], [201, 'pending'])
    const tx = await call('GET', `${s.api}/v3/orders/${orderId}/transactions`, { headers: JSON_HEADERS })
    assert.deepEqual(tx.body.data.map((t: any) => [t.event, t.status]), [['pending', 'ok']])
    assert.equal(s.sim.order(HASH, orderId)!.status_id, 0)
  })
})

describe('webhooks and OAuth', () => {
  test('hooks: https:443 destinations only, one per scope and destination; an order webhook reaches a local receiver with the custom headers', async () => {
    const s = await setup()
    const receiver = await startWebhookReceiver()
    try {
      const http = await call('POST', `${s.api}/v3/hooks`, { headers: JSON_HEADERS, body: { scope: 'store/order/created', destination: receiver.url } })
      assert.equal(http.status, 422)
      assert.ok(http.body.errors.destination)
      const port = await call('POST', `${s.api}/v3/hooks`, { headers: JSON_HEADERS, body: { scope: 'store/order/created', destination: 'https://app.example.com:8443/hooks' } })
      assert.equal(port.status, 422)
      const noScope = await call('POST', `${s.api}/v3/hooks`, { headers: JSON_HEADERS, body: { destination: 'https://app.example.com/hooks' } })
      assert.equal(noScope.status, 422)
      const body = { scope: 'store/order/created', destination: 'https://app.example.com/hooks', is_active: true, headers: { 'X-Hook-Secret': 's3cret' } }
      const created = await call('POST', `${s.api}/v3/hooks`, { headers: JSON_HEADERS, body })
      assert.equal(created.status, 200, 'POST /v3/hooks answers 200 (§7.1)')
      assert.deepEqual([created.body.data.scope, created.body.data.store_hash, created.body.data.headers], ['store/order/created', HASH, { 'X-Hook-Secret': 's3cret' }])
      const dup = await call('POST', `${s.api}/v3/hooks`, { headers: JSON_HEADERS, body })
      assert.equal(dup.status, 422)
      const list = await call('GET', `${s.api}/v3/hooks?scope=store/order/created`, { headers: JSON_HEADERS })
      assert.deepEqual(list.body.data.map((h: any) => h.id), [created.body.data.id])

      const orderId = await newOrder(s)
      // without routeWebhooksTo nothing leaves loopback: the https destination is not contacted
      const unrouted = await s.sim.sendOrderWebhook(HASH, orderId)
      assert.deepEqual([unrouted[0]!.status, /not a loopback address/.test(unrouted[0]!.error ?? '')], [null, true])
      s.sim.routeWebhooksTo(new URL(receiver.url).origin)
      const sent = await s.sim.sendOrderWebhook(HASH, orderId)
      assert.deepEqual(sent.map((d) => d.status), [200])
      assert.equal(receiver.requests.length, 1)
      const got = receiver.requests[0]!
      assert.equal(got.url, '/hooks')
      assert.equal(got.headers['x-hook-secret'], 's3cret')
      const payload = JSON.parse(got.body)
      assert.deepEqual(Object.keys(payload).sort(), ['created_at', 'data', 'hash', 'producer', 'scope', 'store_id'])
      assert.deepEqual([payload.scope, payload.store_id, payload.producer, payload.data], ['store/order/created', '1025646', `stores/${HASH}`, { type: 'order', id: orderId }])
      assert.match(payload.hash, /^[0-9a-f]{40}$/)
      assert.ok(Number.isInteger(payload.created_at))
      // a scope nobody registered sends nothing
      assert.deepEqual(await s.sim.sendOrderWebhook(HASH, orderId, 'store/order/archived'), [])
      assert.deepEqual(s.sim.violations.map((v) => [v.operation, v.status]), [['createWebhooks', 422], ['createWebhooks', 422], ['createWebhooks', 422], ['createWebhooks', 422]])
    } finally {
      await receiver.close()
    }
  })

  test('OAuth: the code exchange answers the token and context; the token carries its scopes; hooks it makes are signed with the client secret', async () => {
    const s = await setup()
    s.sim.addStore({ hash: 'newstore' })
    s.sim.addCustomer('newstore', { id: 1 })
    const grant = s.sim.beginInstall('newstore', ['store_v2_orders', 'store_payments_access_token_create'])
    const body = {
      client_id: s.sim.app.clientId,
      client_secret: s.sim.app.clientSecret,
      code: grant.code,
      context: grant.context,
      scope: grant.scope,
      grant_type: 'authorization_code',
      redirect_uri: s.sim.app.redirectUri,
    }
    const url = `${s.sim.loginUrl}/oauth2/token`
    const headers = { Accept: 'application/json', 'Content-Type': 'application/json' }
    assert.equal((await call('POST', url, { headers, body: { ...body, client_secret: 'nope' } })).status, 401)
    const wrongRedirect = await call('POST', url, { headers, body: { ...body, redirect_uri: 'https://app.example.com/other' } })
    assert.deepEqual([wrongRedirect.status, wrongRedirect.body.error], [400, 'invalid_grant'])
    assert.equal((await call('POST', url, { headers, body: { ...body, grant_type: 'client_credentials' } })).status, 400)
    const ok = await call('POST', url, { headers, body })
    assert.equal(ok.status, 200)
    assert.deepEqual([ok.body.context, ok.body.scope, typeof ok.body.user.id, typeof ok.body.owner.email], ['stores/newstore', 'store_v2_orders store_payments_access_token_create', 'number', 'string'])
    assert.equal((await call('POST', url, { headers, body })).status, 400, 'a code is used once')

    const appHeaders = { ...JSON_HEADERS, 'X-Auth-Token': ok.body.access_token }
    const storeApi = `${s.sim.apiUrl}/stores/newstore`
    assert.equal((await call('GET', `${storeApi}/v3/customers?id:in=1`, { headers: appHeaders })).status, 403, 'scope not granted')
    const hook = await call('POST', `${storeApi}/v3/hooks`, { headers: appHeaders, body: { scope: 'store/order/*', destination: 'https://app.example.com/platform/webhooks' } })
    assert.equal(hook.status, 200)
    assert.equal(hook.body.data.client_id, s.sim.app.clientId)

    const receiver = await startWebhookReceiver()
    try {
      s.sim.routeWebhooksTo(new URL(receiver.url).origin)
      s.sim.options.autoWebhooks = true
      const created = await call('POST', `${storeApi}/v2/orders`, { headers: appHeaders, body: orderBody({ customer_id: 0, products: [{ name: 'Plan', quantity: 1, price_inc_tax: 5, price_ex_tax: 5 }] }) })
      assert.equal(created.status, 200)
      await s.sim.settleWebhooks()
      assert.equal(receiver.requests.length, 1)
      // Standard Webhooks, secret = base64(client_secret) (§7.5)
      const verified = verifyDelivery(receiver.requests[0]!, Buffer.from(s.sim.app.clientSecret).toString('base64'))
      assert.deepEqual([verified.scope, verified.data], ['store/order/created', { type: 'order', id: created.body.id }])
    } finally {
      await receiver.close()
    }
    assert.deepEqual(
      s.sim.violations.map((v) => [v.operation, v.status, v.kind]),
      [['oauthToken', 401, 'auth'], ['oauthToken', 400, 'body'], ['oauthToken', 400, 'body'], ['oauthToken', 400, 'state'], ['getCustomers', 403, 'scope']],
    )
  })
})
