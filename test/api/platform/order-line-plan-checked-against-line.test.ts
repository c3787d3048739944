import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import pino from 'pino'
import { createJobRunner, type JobRunner } from '../../../src/jobs/runner.ts'
import { type PlatformAccess, type PlatformClient } from '../../../src/modules/platform/index.ts'
import { SUBSCRIPTION_OPTION_NAME } from '../../../src/modules/storefront-orders/index.ts'
import { createServices, type Services } from '../../../src/services.ts'
import { startBigCommerceSimulator, type BigCommerceSimulator } from '../../helpers/bigcommerce-simulator.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, testConfig, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'

/**
 * A defect a review found (now fixed; this test keeps it fixed), as the review described it:
 *
 * Review of issue 14 (order webhooks). The `Subscription plan` marker is a free-text product
 * modifier the shopper fills in (README: the storefront's add-to-cart code writes the plan id into
 * `attribute[<option id>]`), so its value is shopper-controlled. The order job never compares the
 * plan it names with the line it sits on: not the plan's product, not what the line was paid.
 *
 * A shopper buys a $1 sticker (a product that carries the modifier) and types the id of a
 * 12-cycle prepaid plan of another product ($50 a cycle). The service treats the $1 order as the
 * payment of the first prepaid block: an active subscription with 12 prepaid cycles, each cycle an
 * order the merchant ships (`prepaid.order_created`), none of them paid for.
 */

const STORE_HASH = `linerev${process.pid}`
const ACCESS_TOKEN = 'platform-store-token-SECRET-7712'
const PUBLIC_URL = 'https://billing.example.test'
const STICKER = 601
const COFFEE = 602
const OPTION = 19
const CUSTOMER_ID = 31
const BILLING = {
  first_name: 'Mallory', last_name: 'Shopper', street_1: '1 Main Street', city: 'Austin', state: 'Texas',
  zip: '78751', country: 'United States', country_iso2: 'US', email: 'mallory@example.com',
}

describe('the order job checks the shopper-typed plan id of a line against the line', () => {
  let sim: BigCommerceSimulator
  let t: TestApp
  let services: Services
  let runner: JobRunner
  let shop: StoreWithKey
  let client: PlatformClient
  let card: string
  let prepaidPlanId: string
  const access: PlatformAccess = { storeHash: STORE_HASH, accessToken: ACCESS_TOKEN }

  before(async () => {
    sim = await startBigCommerceSimulator({})
    sim.addStore({ hash: STORE_HASH, accessToken: ACCESS_TOKEN })
    sim.addProduct(STORE_HASH, { id: STICKER, name: 'Sticker', price: 1, options: [{ id: OPTION, display_name: SUBSCRIPTION_OPTION_NAME }] })
    sim.addProduct(STORE_HASH, { id: COFFEE, name: 'Coffee, 12 months prepaid', price: 600, options: [{ id: OPTION + 1, display_name: SUBSCRIPTION_OPTION_NAME }] })
    card = sim.addCustomer(STORE_HASH, { id: CUSTOMER_ID, email: BILLING.email, instruments: [{}] }).instruments[0]!.token
    const env = {
      PLATFORM_API_URL: sim.apiUrl, PLATFORM_PAYMENTS_URL: sim.paymentsUrl, PLATFORM_LOGIN_URL: sim.loginUrl,
      PLATFORM_TOKEN_KEY: randomBytes(32).toString('hex'), PLATFORM_API_TIMEOUT_MS: '2000', PUBLIC_URL,
    }
    t = await buildTestApp({ env })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    sim.routeWebhooksTo(`http://127.0.0.1:${(t.app.server.address() as { port: number }).port}`)
    services = createServices({ database: t.database, config: testConfig(env), log: pino({ level: 'silent' }) })
    runner = createJobRunner({ db: t.db, handlers: services.modules.storefrontOrders.jobs!.filter(({ recurring }) => !recurring), log: pino({ level: 'silent' }) })
    client = services.modules.platform.service.client
    shop = await createStoreWithKey(t.db, { mode: 'live', storeHash: STORE_HASH })
    await createProduct(t.app, shop.auth, { platform_product_id: String(STICKER) })
    const coffee = await createProduct(t.app, shop.auth, { platform_product_id: String(COFFEE) })
    prepaidPlanId = (await createPlan(t.app, shop.auth, coffee.id, { amount: 5000, prepaid_cycles: 12 })).id
    const connected = await call(t.app, { method: 'PUT', url: '/api/v1/admin/platform-connection', headers: shop.auth, payload: { access_token: ACCESS_TOKEN } })
    assert.equal(connected.statusCode, 200)
    for (let i = 0; i < 20 && (await runner.runOnce()) > 0; i++);
  })
  after(async () => {
    await services?.close()
    await t?.close()
    await sim?.close()
  })

  test('a $1 line of another product naming a 12-cycle prepaid plan starts no subscription', async () => {
    const made = await client.call(access, {
      method: 'POST', path: '/v2/orders',
      body: { status_id: 0, customer_id: CUSTOMER_ID, billing_address: BILLING, products: [{ product_id: STICKER, quantity: 1, product_options: [{ id: OPTION, value: prepaidPlanId }] }] },
    })
    assert.ok(made.sent && made.answer.statusCode < 300, JSON.stringify(made))
    const orderId = (made.answer.body as { id: number }).id
    const pat = await client.call(access, { method: 'POST', path: '/v3/payments/access_tokens', body: { order: { id: orderId } } })
    assert.ok(pat.sent && pat.answer.statusCode === 201)
    const paid = await client.call(access, {
      method: 'POST', host: 'payments', path: '/payments', pat: (pat.answer.body as { data: { id: string } }).data.id,
      body: { payment: { instrument: { type: 'stored_card', token: card }, payment_method_id: 'stripe.card' } },
    })
    assert.ok(paid.sent && paid.answer.statusCode === 201)
    assert.equal(sim.order(STORE_HASH, orderId)!.total_inc_tax, 10_000, 'the shopper paid $1.00')

    assert.equal((await sim.sendOrderWebhook(STORE_HASH, orderId, 'store/order/statusUpdated'))[0]!.status, 200)
    for (let i = 0; i < 20 && (await runner.runOnce()) > 0; i++);

    const created = await t.db.selectFrom('subscriptions').selectAll().where('platform_order_id', '=', String(orderId)).execute()
    assert.deepEqual(
      created.map((s) => ({ plan: s.plan_id, status: s.status, prepaid_cycles_remaining: s.prepaid_cycles_remaining })),
      [],
      'a line must only start a plan of its own product, for what the line was paid',
    )
  })
})
