import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { SignJWT } from 'jose'
import pino from 'pino'
import { createJobRunner, type JobRunner } from '../../../src/jobs/runner.ts'
import { REQUIRED_SCOPES, type PlatformAccess } from '../../../src/modules/platform/index.ts'
import { SUBSCRIPTION_OPTION_NAME } from '../../../src/modules/storefront-orders/index.ts'
import { createServices, type Services } from '../../../src/services.ts'
import { startBigCommerceSimulator, type BigCommerceSimulator } from '../../helpers/bigcommerce-simulator.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, testConfig, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'

/**
 * The whole BigCommerce integration through the service's HTTP API, against the simulator (which
 * refuses and records any request the published reference would refuse): the app install, a
 * storefront order starting a subscription through the order webhooks, renewals that raise one
 * order and one payment each, a decline recovered with another of the customer's stored cards, a
 * card of someone else refused, a lost payment answer reconciled, a 429 storm waited out, and an
 * uninstall that stops billing. A test-mode store on the platform gateway, so its test clock drives
 * the renewals. SIGKILL between an order and its payment: test/process/platform-crash.test.ts.
 */

const HASH = `e2e${process.pid}`
const PUBLIC_URL = 'https://billing.example.test'
const TOKEN_KEY = randomBytes(32)
const PRODUCT = 701
const PLAN_OPTION = 31
const CUSTOMER = 41
const FOREIGN_CUSTOMER = 42
const BILLING = {
  first_name: 'Grace', last_name: 'Hopper', street_1: '1 Harbor Road', city: 'Arlington', state: 'Virginia',
  zip: '22201', country: 'United States', country_iso2: 'US', email: 'grace@example.com',
}

describe('BigCommerce end to end (install, storefront order, renewals, dunning, uninstall)', () => {
  let sim: BigCommerceSimulator
  let t: TestApp
  let services: Services
  let runner: JobRunner
  let shop: StoreWithKey
  let planId: string
  let cardA: string
  let cardB: string
  let foreignCard: string
  let subscriptionId: string
  let subscriberId: string

  before(async () => {
    sim = await startBigCommerceSimulator({ app: { redirectUri: `${PUBLIC_URL}/platform/auth` } })
    sim.addStore({ hash: HASH })
    // The store taxes US orders at 6% (goods only): renewals carry that tax, as the storefront's orders do.
    sim.setTaxRates(HASH, [{ country: 'US', rate_bps: 600 }])
    sim.addProduct(HASH, { id: PRODUCT, name: 'Coffee beans', price: 14, type: 'physical', options: [{ id: PLAN_OPTION, display_name: SUBSCRIPTION_OPTION_NAME }] })
    const customer = sim.addCustomer(HASH, { id: CUSTOMER, email: BILLING.email, instruments: [{ brand: 'VISA', last_4: '4242' }, { brand: 'MASTERCARD', last_4: '5454' }] })
    cardA = customer.instruments[0]!.token
    cardB = customer.instruments[1]!.token
    foreignCard = sim.addCustomer(HASH, { id: FOREIGN_CUSTOMER, instruments: [{ brand: 'AMEX', last_4: '0005' }] }).instruments[0]!.token

    const env = {
      PLATFORM_API_URL: sim.apiUrl, PLATFORM_PAYMENTS_URL: sim.paymentsUrl, PLATFORM_LOGIN_URL: sim.loginUrl,
      PLATFORM_CLIENT_ID: sim.app.clientId, PLATFORM_CLIENT_SECRET: sim.app.clientSecret,
      PLATFORM_TOKEN_KEY: TOKEN_KEY.toString('hex'), PLATFORM_API_TIMEOUT_MS: '3000', PUBLIC_URL,
    }
    t = await buildTestApp({ env })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    sim.routeWebhooksTo(`http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`)
    // The worker's job runner, on the same database and configuration.
    services = createServices({ database: t.database, config: testConfig(env), log: pino({ level: 'silent' }) })
    runner = createJobRunner({ db: t.db, handlers: services.modules.storefrontOrders.jobs!.filter(({ recurring }) => !recurring), log: pino({ level: 'silent' }) })

    // A sandbox store in test mode, created before the install, so it keeps its mode and test clock.
    shop = await createStoreWithKey(t.db, { mode: 'test', storeHash: HASH })
    const switched = await call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload: { gateway: 'platform' } })
    assert.equal(switched.statusCode, 200, switched.body)
    const product = await createProduct(t.app, shop.auth, { platform_product_id: String(PRODUCT) })
    planId = (await createPlan(t.app, shop.auth, product.id, { amount: 1400 })).id
  })
  after(async () => {
    await services?.close()
    await t?.close()
    await sim?.close()
  })

  async function drain(): Promise<void> {
    for (let i = 0; i < 20 && (await runner.runOnce()) > 0; i++);
  }
  async function access(): Promise<PlatformAccess> {
    const found = await services.modules.platform.service.connections.accessOf(shop.store.id)
    assert.ok(found, 'the store is connected')
    return found
  }
  const advanceTo = async (at: Date | string) => {
    const response = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: new Date(new Date(at).getTime() + 60_000).toISOString() } })
    assert.equal(response.statusCode, 200, response.body)
    return response.json.processed
  }
  const subscription = async () => (await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${subscriptionId}`, headers: shop.auth })).json
  const charges = async () => (await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscriptionId).orderBy('created_at').execute())
  const renewalOrderOf = (key: string) => sim.orders(HASH).filter((order) => order.external_order_id === key)

  test('install: the auth callback exchanges the code for the store\'s token, kept encrypted, and registers the order hooks', async () => {
    const grant = sim.beginInstall(HASH, [...REQUIRED_SCOPES])
    const query = new URLSearchParams({ code: grant.code, scope: grant.scope, context: grant.context, account_uuid: grant.account_uuid })
    const installed = await call(t.app, { method: 'GET', url: `/platform/auth?${query}` })
    assert.equal(installed.statusCode, 200, installed.body)
    const row = await t.db.selectFrom('platform_connections').selectAll().where('store_id', '=', shop.store.id).executeTakeFirstOrThrow()
    const token = (await access()).accessToken
    assert.ok(row.access_token_ciphertext && !row.access_token_ciphertext.includes(token) && !JSON.stringify(row).includes(token), 'not stored in the clear')
    assert.equal(row.source, 'app')
    const store = await t.db.selectFrom('stores').selectAll().where('id', '=', shop.store.id).executeTakeFirstOrThrow()
    assert.deepEqual([store.mode, store.gateway], ['test', 'platform'], 'an existing sandbox store keeps its mode')
    await drain()
    assert.deepEqual(sim.store(HASH).hooks.map((hook) => hook.scope).sort(), ['store/order/created', 'store/order/statusUpdated'])
    assert.ok(!t.logs.join('\n').includes(token), 'the token is never logged')
    assert.deepEqual(sim.violations, [])
  })

  test('a storefront order with a subscription line, once paid, starts the subscription through the webhooks', async () => {
    const store = await access()
    const created = await services.modules.platform.service.client.call(store, {
      method: 'POST', path: '/v2/orders',
      body: {
        status_id: 0, customer_id: CUSTOMER, billing_address: BILLING,
        products: [{ product_id: PRODUCT, quantity: 2, product_options: [{ id: PLAN_OPTION, value: planId }] }],
        // The shopper chose Ground at $5.99: what the store's renewals ship at (renewal_shipping checkout_rate).
        shipping_addresses: [{ ...BILLING, shipping_method: 'Ground' }], shipping_cost_ex_tax: '5.99', shipping_cost_inc_tax: '5.99',
      },
    })
    const orderId = (created.sent && (created.answer.body as { id: number }).id) as number
    await sim.sendOrderWebhook(HASH, orderId, 'store/order/created')
    await drain()
    assert.equal((await t.db.selectFrom('subscriptions').selectAll().where('platform_order_id', '=', String(orderId)).execute()).length, 0, 'not before it is paid')

    // The shopper pays with their stored card.
    const pat = await services.modules.platform.service.client.call(store, { method: 'POST', path: '/v3/payments/access_tokens', body: { order: { id: orderId } } })
    const paid = await services.modules.platform.service.client.call(store, {
      method: 'POST', host: 'payments', path: '/payments', pat: (pat.sent && (pat.answer.body as { data: { id: string } }).data.id) as string,
      body: { payment: { instrument: { type: 'stored_card', token: cardA }, payment_method_id: 'stripe.card' } },
    })
    assert.ok(paid.sent && paid.answer.statusCode === 201)
    await sim.sendOrderWebhook(HASH, orderId, 'store/order/statusUpdated')
    await sim.sendOrderWebhook(HASH, orderId, 'store/order/statusUpdated')
    await drain()
    const rows = await t.db.selectFrom('subscriptions').selectAll().where('platform_order_id', '=', String(orderId)).execute()
    assert.equal(rows.length, 1, 'one subscription, however many callbacks')
    subscriptionId = rows[0]!.id
    subscriberId = rows[0]!.subscriber_id
    const view = await subscription()
    assert.equal(view.status, 'active')
    assert.equal(view.quantity, 2)
    assert.equal(view.platform_customer_id, String(CUSTOMER))
    assert.equal(view.payment_instrument_id, cardA)
    assert.deepEqual(view.payment_instrument, { brand: 'VISA', last_4: '4242' })
    assert.equal(view.billing_address.postal_code, '22201')
    assert.deepEqual(view.shipping, { method: 'Ground', amount: 599 }, "the method and rate the order's shipping paid")
    assert.deepEqual(sim.violations, [])
  })

  test('a renewal raises exactly one valid order and pays it once: price x quantity and the kept shipping in decimal units', async () => {
    const before = await subscription()
    const processed = await advanceTo(before.next_charge_at)
    assert.equal(processed.renewals, 1)
    const [charge] = await charges()
    assert.equal(charge!.status, 'succeeded')
    // 2 x $14.00, Ground at $5.99 as the shopper's order paid, 6% of $28.00 = $1.68 from the store's checkout.
    assert.deepEqual([charge!.subtotal, charge!.shipping_amount, charge!.shipping_method, charge!.tax_amount, charge!.amount], [2800, 599, 'Ground', 168, 3567])
    const orders = renewalOrderOf(charge!.idempotency_key)
    assert.equal(orders.length, 1, 'one order for the renewal')
    const [order] = orders
    assert.equal(charge!.platform_order_id, String(order!.id))
    assert.deepEqual([order!.customer_id, order!.external_source, order!.total_inc_tax, order!.successful_payments, order!.payment_requests], [CUSTOMER, 'subscription-billing', 356_700, 1, 1])
    assert.deepEqual(order!.products.map((p) => [p.product_id, p.quantity, p.price_ex_tax, p.price_inc_tax]), [[PRODUCT, 2, 140_000, 148_400]], '$14.00 each, two of them, $14.84 with the 6% tax')
    assert.deepEqual([order!.subtotal_ex_tax, order!.shipping_cost_inc_tax, order!.shipping_addresses[0]!.shipping_method], [280_000, 59_900, 'Ground'], 'shipped by Ground at $5.99')
    // The next renewal's preview: the kept shipping, and the tax estimated at the rate this one paid.
    const preview = (await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${subscriptionId}/upcoming`, headers: shop.auth })).json
    assert.deepEqual([preview.subtotal, preview.shipping_amount, preview.tax_amount, preview.amount], [2800, 599, 168, 3567])
    assert.equal(order!.transactions[0]!.payment_instrument_token, cardA)
    assert.deepEqual(sim.doubleCharges(), [])
    assert.deepEqual(sim.violations, [])
  })

  test('a declined renewal goes to dunning; the subscriber picks another of their stored cards and the retry recovers it', async () => {
    sim.declineNextPayment(30104)
    await advanceTo((await subscription()).next_charge_at)
    const failed = (await charges()).at(-1)!
    assert.deepEqual([failed.status, failed.failure_code, failed.attempt], ['failed', 'card_declined', 1])
    assert.ok(failed.next_retry_at, 'a dunning retry is scheduled')

    const portal = await signInSubscriber(t.app, t.db, shop.store.id, subscriberId)
    const listed = await call(t.app, { method: 'GET', url: '/api/v1/portal/payment-instruments', headers: portal.auth })
    assert.equal(listed.statusCode, 200, listed.body)
    assert.deepEqual(listed.json.data.map((card: { token: string; brand: string; last_4: string }) => [card.token, card.brand, card.last_4]), [[cardA, 'VISA', '4242'], [cardB, 'MASTERCARD', '5454']], 'only their own cards')
    assert.ok(!listed.body.includes(foreignCard))

    const changed = await call(t.app, { method: 'POST', url: `/api/v1/portal/subscriptions/${subscriptionId}/payment-instrument`, headers: portal.auth, payload: { payment_instrument_id: cardB } })
    assert.equal(changed.statusCode, 200, changed.body)
    assert.deepEqual(changed.json.payment_instrument, { brand: 'MASTERCARD', last_4: '5454' })

    await advanceTo(failed.next_retry_at!)
    const retried = (await charges()).at(-1)!
    assert.deepEqual([retried.status, retried.attempt, retried.payment_instrument_id], ['succeeded', 2, cardB])
    const [order] = renewalOrderOf(retried.idempotency_key)
    assert.equal(order!.transactions.find((tx) => tx.status === 'ok')!.payment_instrument_token, cardB)
    assert.equal((await subscription()).status, 'active')
    assert.deepEqual(sim.violations, [])
  })

  test('a card that is not the customer\'s is refused, at checkout and when changing the instrument', async () => {
    const portal = await signInSubscriber(t.app, t.db, shop.store.id, subscriberId)
    const changed = await call(t.app, { method: 'POST', url: `/api/v1/portal/subscriptions/${subscriptionId}/payment-instrument`, headers: portal.auth, payload: { payment_instrument_id: foreignCard } })
    assertProblem(changed, 400, 'invalid_payment_instrument')
    const checkout = await call(t.app, {
      method: 'POST', url: '/api/v1/admin/checkouts', headers: shop.auth,
      payload: {
        platform_order_id: 'foreign-card-order', email: BILLING.email, platform_customer_id: CUSTOMER, payment_instrument_id: foreignCard,
        billing_address: { name: 'Grace Hopper', line1: '1 Harbor Road', city: 'Arlington', postal_code: '22201', country: 'US' },
        items: [{ plan_id: planId, quantity: 1 }],
      },
    })
    assertProblem(checkout, 400, 'invalid_payment_instrument')
    assert.equal((await subscription()).payment_instrument_id, cardB, 'unchanged')
  })

  test('a payment whose answer is lost is reconciled from the order, never paid a second time', async () => {
    sim.loseNextAnswer('PaymentsPost')
    await advanceTo((await subscription()).next_charge_at)
    const charge = (await charges()).at(-1)!
    assert.equal(charge.status, 'succeeded')
    const [order] = renewalOrderOf(charge.idempotency_key)
    assert.deepEqual([order!.payment_requests, order!.successful_payments], [1, 1])
    assert.deepEqual(sim.doubleCharges(), [])
  })

  test('a storm of 429s delays the renewal without failing it', async () => {
    const since = sim.requests.length
    sim.rateLimitNext(8, { resetMs: 100 })
    await advanceTo((await subscription()).next_charge_at)
    const charge = (await charges()).at(-1)!
    assert.deepEqual([charge.status, charge.attempt, charge.failure_code], ['succeeded', 1, null])
    assert.ok(sim.requests.slice(since).filter((r) => r.outcome === 429).length >= 8, 'the platform said 429 eight times')
    assert.equal(renewalOrderOf(charge.idempotency_key).length, 1)
    assert.deepEqual(sim.violations, [])
  })

  test('uninstalling the app stops the store\'s billing and keeps its data', async () => {
    const now = Math.floor(Date.now() / 1000)
    const jwt = await new SignJWT({ user: { id: 1, email: 'owner@example.com' }, owner: { id: 1, email: 'owner@example.com' }, url: '/', channel_id: null })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      // The platform names each payload (jti): a payload opens one console session.
      .setJti(crypto.randomUUID())
      .setIssuer('bc').setAudience(sim.app.clientId).setSubject(`stores/${HASH}`)
      .setIssuedAt(now).setNotBefore(now).setExpirationTime(now + 3600).setJti(crypto.randomUUID())
      .sign(new TextEncoder().encode(sim.app.clientSecret))
    const uninstalled = await call(t.app, { method: 'GET', url: `/platform/uninstall?signed_payload_jwt=${encodeURIComponent(jwt)}` })
    assert.equal(uninstalled.statusCode, 204, uninstalled.body)
    const chargesBefore = (await charges()).length
    const ordersBefore = sim.counters.ordersCreated
    const processed = await advanceTo((await subscription()).next_charge_at)
    assert.equal(processed.renewals, 0)
    assert.equal((await charges()).length, chargesBefore, 'no charge')
    assert.equal(sim.counters.ordersCreated, ordersBefore, 'no order on the platform')
    const view = await subscription()
    assert.equal(view.status, 'active', 'the subscription is kept as it was')
    const connection = await call(t.app, { method: 'GET', url: '/api/v1/admin/platform-connection', headers: shop.auth })
    assert.equal(connection.json.connected, false)
  })
})
