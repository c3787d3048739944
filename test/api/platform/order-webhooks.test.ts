import assert from 'node:assert/strict'
import { createHmac, randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import pino from 'pino'
import { createJobRunner, type JobRunner } from '../../../src/jobs/runner.ts'
import { RENEWAL_ORDER_SOURCE, type PlatformAccess, type PlatformClient } from '../../../src/modules/platform/index.ts'
import { SUBSCRIPTION_OPTION_NAME, WEBHOOK_SECRET_HEADER } from '../../../src/modules/storefront-orders/index.ts'
import { createServices, type Services } from '../../../src/services.ts'
import { startBigCommerceSimulator, type BigCommerceSimulator } from '../../helpers/bigcommerce-simulator.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, testConfig, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'

/**
 * Orders placed on the storefront start subscriptions (docs/bigcommerce.md "Order webhooks"):
 * hooks registered on connection, callbacks authenticated by the store's secret header and
 * deduplicated by hash, and the order job that creates the subscriptions once the order is paid.
 * Everything against the BigCommerce simulator, which records any request the reference would refuse.
 */

const STORE_HASH = `hooks${process.pid}`
const OTHER_HASH = `hooksother${process.pid}`
const APP_HASH = `hooksapp${process.pid}`
const ACCESS_TOKEN = 'platform-store-token-SECRET-8812'
const OTHER_TOKEN = 'platform-store-token-SECRET-8813'
const TOKEN_KEY = randomBytes(32)
const PUBLIC_URL = 'https://billing.example.test'
const SUB_PRODUCT = 501
const PLAIN_PRODUCT = 502
const PLAN_OPTION = 9
const CUSTOMER_ID = 21
const BILLING = {
  first_name: 'Ada', last_name: 'Lovelace', street_1: '1 Analytical Street', city: 'London', state: 'Greater London',
  zip: 'N1 9GU', country: 'United Kingdom', country_iso2: 'GB', email: 'ada@example.com', phone: '+44 20 7946 0000',
}

describe('storefront orders start subscriptions through order webhooks (BigCommerce simulator)', () => {
  let sim: BigCommerceSimulator
  let t: TestApp
  let services: Services
  let runner: JobRunner
  let shop: StoreWithKey
  let other: StoreWithKey
  let planId: string
  let card: string
  let client: PlatformClient
  const access: PlatformAccess = { storeHash: STORE_HASH, accessToken: ACCESS_TOKEN }

  before(async () => {
    sim = await startBigCommerceSimulator({ app: { redirectUri: `${PUBLIC_URL}/platform/auth` } })
    sim.addStore({ hash: STORE_HASH, accessToken: ACCESS_TOKEN })
    // Connected by the app install only: its hooks are made by the app's client, and signed (§7.5).
    sim.addStore({ hash: APP_HASH })
    sim.addStore({ hash: OTHER_HASH, accessToken: OTHER_TOKEN })
    sim.addProduct(STORE_HASH, { id: SUB_PRODUCT, name: 'Coffee beans', price: 12, options: [{ id: PLAN_OPTION, display_name: SUBSCRIPTION_OPTION_NAME }] })
    sim.addProduct(STORE_HASH, { id: PLAIN_PRODUCT, name: 'Mug', price: 8 })
    card = sim.addCustomer(STORE_HASH, { id: CUSTOMER_ID, email: BILLING.email, instruments: [{}] }).instruments[0]!.token

    const env = {
      PLATFORM_API_URL: sim.apiUrl, PLATFORM_PAYMENTS_URL: sim.paymentsUrl, PLATFORM_LOGIN_URL: sim.loginUrl,
      PLATFORM_TOKEN_KEY: TOKEN_KEY.toString('hex'), PLATFORM_API_TIMEOUT_MS: '2000', PUBLIC_URL,
      PLATFORM_CLIENT_ID: sim.app.clientId, PLATFORM_CLIENT_SECRET: sim.app.clientSecret,
    }
    t = await buildTestApp({ env })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    const address = t.app.server.address() as { port: number }
    // The hooks point at https://billing.example.test/platform/webhooks; the simulator delivers them here.
    sim.routeWebhooksTo(`http://127.0.0.1:${address.port}`)
    // The worker's side: the same configuration and database, as ROLE=worker would build them.
    services = createServices({ database: t.database, config: testConfig(env), log: pino({ level: 'silent' }) })
    runner = createJobRunner({ db: t.db, handlers: services.modules.storefrontOrders.jobs!.filter(({ recurring }) => !recurring), log: pino({ level: 'silent' }) })
    client = services.modules.platform.service.client

    shop = await createStoreWithKey(t.db, { mode: 'live', storeHash: STORE_HASH })
    other = await createStoreWithKey(t.db, { mode: 'live', storeHash: OTHER_HASH })
    const product = await createProduct(t.app, shop.auth, { platform_product_id: String(SUB_PRODUCT) })
    planId = (await createPlan(t.app, shop.auth, product.id, { amount: 1200 })).id
  })
  after(async () => {
    await services?.close()
    await t?.close()
    await sim?.close()
  })

  /** Runs the queue until nothing is due. */
  async function drain(): Promise<void> {
    for (let i = 0; i < 20 && (await runner.runOnce()) > 0; i++);
  }
  const connect = (s: StoreWithKey, token: string) => call(t.app, { method: 'PUT', url: '/api/v1/admin/platform-connection', headers: s.auth, payload: { access_token: token } })
  const subscriptionsOf = (orderId: number) => t.db.selectFrom('subscriptions').selectAll().where('store_id', '=', shop.store.id).where('platform_order_id', '=', String(orderId)).execute()
  const failedJobs = () => t.db.selectFrom('jobs').selectAll().where('failed_at', 'is not', null).execute()

  /** A storefront order as the checkout creates it: Incomplete, the shopper's customer and address. */
  async function storefrontOrder(products: Record<string, unknown>[], extra: Record<string, unknown> = {}): Promise<number> {
    const reply = await client.call(access, { method: 'POST', path: '/v2/orders', body: { status_id: 0, customer_id: CUSTOMER_ID, billing_address: BILLING, products, ...extra } })
    assert.ok(reply.sent && reply.answer.statusCode < 300, JSON.stringify(reply))
    return (reply.answer.body as { id: number }).id
  }
  /** The shopper pays with their stored card: the order moves to Awaiting Fulfillment (11) with a transaction naming the card. */
  async function pay(orderId: number): Promise<void> {
    const pat = await client.call(access, { method: 'POST', path: '/v3/payments/access_tokens', body: { order: { id: orderId } } })
    assert.ok(pat.sent && pat.answer.statusCode === 201, JSON.stringify(pat))
    const paid = await client.call(access, {
      method: 'POST', host: 'payments', path: '/payments', pat: (pat.answer.body as { data: { id: string } }).data.id,
      body: { payment: { instrument: { type: 'stored_card', token: card }, payment_method_id: 'stripe.card' } },
    })
    assert.ok(paid.sent && paid.answer.statusCode === 201, JSON.stringify(paid))
    assert.equal(sim.order(STORE_HASH, orderId)!.status_id, 11)
  }
  const subscriptionLine = (quantity = 1, plan = planId) => ({ product_id: SUB_PRODUCT, quantity, product_options: [{ id: PLAN_OPTION, value: plan }] })

  test('connecting registers the order hooks with the secret header; connecting again duplicates nothing and re-enables a deactivated hook', async () => {
    assert.equal((await connect(shop, ACCESS_TOKEN)).statusCode, 200)
    assert.equal((await connect(other, OTHER_TOKEN)).statusCode, 200)
    await drain()
    const hooks = sim.store(STORE_HASH).hooks
    assert.deepEqual(hooks.map((h) => h.scope).sort(), ['store/order/created', 'store/order/statusUpdated'])
    for (const hook of hooks) {
      assert.equal(hook.destination, `${PUBLIC_URL}/platform/webhooks`)
      assert.equal(hook.is_active, true)
      assert.match(hook.headers?.[WEBHOOK_SECRET_HEADER] ?? '', /^[A-Za-z0-9_-]{43}$/)
    }
    assert.notEqual(sim.store(OTHER_HASH).hooks[0]!.headers![WEBHOOK_SECRET_HEADER], hooks[0]!.headers![WEBHOOK_SECRET_HEADER], 'each store has its own secret')
    const row = await t.db.selectFrom('platform_connections').selectAll().where('store_id', '=', shop.store.id).executeTakeFirstOrThrow()
    assert.ok(row.hooks_registered_at instanceof Date)
    assert.ok(!JSON.stringify(row).includes(hooks[0]!.headers![WEBHOOK_SECRET_HEADER]!), 'the secret is not stored')

    hooks[0]!.is_active = false
    assert.equal((await connect(shop, ACCESS_TOKEN)).statusCode, 200)
    await drain()
    assert.equal(sim.store(STORE_HASH).hooks.length, 2, 'not duplicated')
    assert.ok(sim.store(STORE_HASH).hooks.every((h) => h.is_active), 'the deactivated hook is active again')
    assert.deepEqual(await failedJobs(), [])
    assert.deepEqual(sim.violations, [])
  })

  test('a callback without the secret, with a wrong one or with another store\'s is 401; a malformed body is 400', async () => {
    const payload = { scope: 'store/order/created', store_id: '1001', data: { type: 'order', id: 1 }, hash: 'a'.repeat(40), created_at: 1_700_000_000, producer: `stores/${STORE_HASH}` }
    const post = (headers: Record<string, string>, body: unknown = payload) =>
      call(t.app, { method: 'POST', url: '/platform/webhooks', headers: { 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) })
    const otherSecret = sim.store(OTHER_HASH).hooks[0]!.headers![WEBHOOK_SECRET_HEADER]!
    const secret = sim.store(STORE_HASH).hooks[0]!.headers![WEBHOOK_SECRET_HEADER]!
    assertProblem(await post({}), 401, 'unauthenticated')
    assertProblem(await post({ [WEBHOOK_SECRET_HEADER]: 'x'.repeat(43) }), 401, 'unauthenticated')
    assertProblem(await post({ [WEBHOOK_SECRET_HEADER]: otherSecret }), 401, 'unauthenticated')
    assertProblem(await post({ [WEBHOOK_SECRET_HEADER]: secret }, { ...payload, producer: 'stores/nosuchstore' }), 401, 'unauthenticated')
    assertProblem(await post({ [WEBHOOK_SECRET_HEADER]: secret }, { hello: 'world' }), 400, 'validation_failed')
    assertProblem(await post({ [WEBHOOK_SECRET_HEADER]: secret }, { ...payload, data: { type: 'order', id: 'x' } }), 400, 'validation_failed')
    const big = await call(t.app, { method: 'POST', url: '/platform/webhooks', headers: { 'content-type': 'application/json', [WEBHOOK_SECRET_HEADER]: secret }, payload: JSON.stringify({ ...payload, pad: 'x'.repeat(64 * 1024) }) })
    assert.equal(big.statusCode, 413)
    assert.equal(await t.db.selectFrom('platform_webhook_receipts').selectAll().executeTakeFirst(), undefined, 'nothing refused was recorded')
    // The right secret: accepted (the order does not exist on the platform; the job will find that out).
    const ok = await post({ [WEBHOOK_SECRET_HEADER]: secret })
    assert.equal(ok.statusCode, 200, ok.body)
    await t.db.deleteFrom('jobs').execute()
  })

  test('a paid storefront order with a subscription line creates its subscription once, whatever arrives twice', async () => {
    const orderId = await storefrontOrder([subscriptionLine(2), { product_id: PLAIN_PRODUCT, quantity: 1 }], {
      shipping_addresses: [{ ...BILLING, first_name: 'Grace', last_name: 'Hopper', street_1: '7 Compiler Road', city: 'Arlington', state: 'Virginia', zip: '22201', country: 'United States', country_iso2: 'US', shipping_method: 'Ground' }],
      shipping_cost_ex_tax: '9.99', shipping_cost_inc_tax: '9.99',
    })
    await pay(orderId)
    const [delivery] = await sim.sendOrderWebhook(STORE_HASH, orderId, 'store/order/created')
    assert.equal(delivery!.status, 200, delivery!.error ?? '')
    // The same delivery again (BigCommerce retries): the same hash, nothing new enqueued.
    const again = await fetch(delivery!.url, { method: 'POST', headers: delivery!.headers, body: delivery!.body })
    assert.equal(again.status, 200)
    assert.equal((await t.db.selectFrom('jobs').selectAll().where('kind', '=', 'platform.order_webhook').execute()).length, 1, 'one job for one hash')
    await drain()
    // statusUpdated for the same order: another hash, another job, the same subscriptions.
    const [status] = await sim.sendOrderWebhook(STORE_HASH, orderId, 'store/order/statusUpdated')
    assert.equal(status!.status, 200)
    await drain()

    const subscriptions = await subscriptionsOf(orderId)
    assert.equal(subscriptions.length, 1)
    const [subscription] = subscriptions as [(typeof subscriptions)[0]]
    assert.equal(subscription.plan_id, planId)
    assert.equal(subscription.quantity, 2)
    assert.equal(subscription.payment_instrument_id, card)
    assert.equal(subscription.platform_customer_id, String(CUSTOMER_ID))
    assert.equal(subscription.status, 'active')
    assert.deepEqual(subscription.billing_address, { name: 'Ada Lovelace', line1: '1 Analytical Street', line2: null, city: 'London', state: 'Greater London', postal_code: 'N1 9GU', country: 'GB', phone: '+44 20 7946 0000' })
    assert.equal((subscription.shipping_address as { name: string; country: string }).name, 'Grace Hopper')
    assert.equal((subscription.shipping_address as { name: string; country: string }).country, 'US')
    // Shipped with a one-off product: the order's shipping is not this subscription's box alone, so no rate is kept.
    assert.deepEqual([subscription.shipping_method, subscription.shipping_amount], [null, null])
    const subscriber = await t.db.selectFrom('subscribers').selectAll().where('id', '=', subscription.subscriber_id).executeTakeFirstOrThrow()
    assert.equal(subscriber.email, BILLING.email)
    assert.deepEqual(await failedJobs(), [])
    assert.deepEqual(sim.violations, [])
  })

  test('an unpaid order creates nothing until its status update says it is paid', async () => {
    const orderId = await storefrontOrder([subscriptionLine()])
    assert.equal((await sim.sendOrderWebhook(STORE_HASH, orderId, 'store/order/created'))[0]!.status, 200)
    await drain()
    assert.equal((await subscriptionsOf(orderId)).length, 0, 'Incomplete: nothing yet')
    await pay(orderId)
    assert.equal((await sim.sendOrderWebhook(STORE_HASH, orderId, 'store/order/statusUpdated'))[0]!.status, 200)
    await drain()
    assert.equal((await subscriptionsOf(orderId)).length, 1)
    assert.deepEqual(await failedJobs(), [])
    assert.deepEqual(sim.violations, [])
  })

  test('a plain order and our own renewal order create nothing', async () => {
    const plain = await storefrontOrder([{ product_id: PLAIN_PRODUCT, quantity: 3 }])
    await pay(plain)
    const renewal = await storefrontOrder([subscriptionLine()], { external_source: RENEWAL_ORDER_SOURCE, external_order_id: `sub_01JD2Y5T1P8Q0W9KZ3M6N4R7BC:2030-01-01T00:00:00.000Z:1` })
    await pay(renewal)
    for (const orderId of [plain, renewal]) {
      for (const scope of ['store/order/created', 'store/order/statusUpdated']) assert.equal((await sim.sendOrderWebhook(STORE_HASH, orderId, scope))[0]!.status, 200)
    }
    await drain()
    assert.equal((await subscriptionsOf(plain)).length, 0)
    assert.equal((await subscriptionsOf(renewal)).length, 0)
    assert.deepEqual(await failedJobs(), [])
    assert.deepEqual(sim.violations, [])
  })

  test('a guest order, and an order naming an unknown plan, are set aside with the reason instead of retried', async () => {
    await t.db.deleteFrom('jobs').execute()
    const guest = await storefrontOrder([subscriptionLine()], { customer_id: 0 })
    // A guest pays with a card that is not stored; the order is marked paid as the checkout would.
    assert.ok((await client.call(access, { method: 'PUT', path: `/v2/orders/${guest}`, body: { status_id: 11 } })).sent)
    const unknownPlan = await storefrontOrder([subscriptionLine(1, 'plan_01JD2Y5T1P8Q0W9KZ3M6N4R7BC')])
    await pay(unknownPlan)
    for (const orderId of [guest, unknownPlan]) assert.equal((await sim.sendOrderWebhook(STORE_HASH, orderId, 'store/order/statusUpdated'))[0]!.status, 200)
    await drain()
    assert.equal((await subscriptionsOf(guest)).length + (await subscriptionsOf(unknownPlan)).length, 0)
    const failed = await failedJobs()
    assert.equal(failed.length, 2)
    const reasons = failed.map((job) => job.last_error ?? '').sort()
    assert.ok(reasons.some((r) => r.includes(`order ${guest}`) && /guest/.test(r)), reasons.join(' | '))
    assert.ok(reasons.some((r) => r.includes(`order ${unknownPlan}`) && /not_found/.test(r)), reasons.join(' | '))
    assert.ok(failed.every((job) => job.attempts === 1), 'given up at the first attempt')
    assert.deepEqual(sim.violations, [])
  })

  test('an app-installed store: its hooks are registered on install, and a callback with a wrong Standard Webhooks signature is 401', async () => {
    const grant = sim.beginInstall(APP_HASH, ['store_v2_orders', 'store_v2_transactions_read_only', 'store_payments_access_token_create', 'store_payments_methods_read', 'store_v2_customers_read_only', 'store_stored_payment_instruments_read_only'])
    const query = new URLSearchParams({ code: grant.code, scope: grant.scope, context: grant.context, account_uuid: grant.account_uuid })
    const installed = await call(t.app, { method: 'GET', url: `/platform/auth?${query}` })
    assert.equal(installed.statusCode, 200, installed.body)
    await drain()
    assert.equal(sim.store(APP_HASH).hooks.length, 2)
    assert.ok(sim.store(APP_HASH).hooks.every((h) => h.client_id === sim.app.clientId))

    const [delivery] = await sim.sendWebhook(APP_HASH, 'store/order/created', { type: 'order', id: 4242 })
    assert.ok(delivery!.headers['webhook-signature'], 'the simulator signs app hooks')
    assert.equal(delivery!.status, 200, delivery!.error ?? '')
    const forged = { ...delivery!.headers, 'webhook-signature': `v1,${Buffer.alloc(32, 7).toString('base64')}` }
    assert.equal((await fetch(delivery!.url, { method: 'POST', headers: forged, body: delivery!.body })).status, 401)
    const tampered = delivery!.body.replace('4242', '4243')
    assert.equal((await fetch(delivery!.url, { method: 'POST', headers: delivery!.headers, body: tampered })).status, 401, 'the signature covers the body')
    // The same callback signed again, correctly, but with a timestamp ten minutes old: a replay.
    const resign = (timestamp: number, id: string) => {
      const signature = createHmac('sha256', Buffer.from(sim.app.clientSecret, 'utf8')).update(`${id}.${timestamp}.${delivery!.body}`).digest('base64')
      return { ...delivery!.headers, 'webhook-id': id, 'webhook-timestamp': String(timestamp), 'webhook-signature': `v1,${signature}` }
    }
    const nowSeconds = Math.floor(Date.now() / 1000)
    assert.equal((await fetch(delivery!.url, { method: 'POST', headers: resign(nowSeconds - 600, 'msg_replayed'), body: delivery!.body })).status, 401, 'a replay with an old timestamp is refused')
    assert.equal((await fetch(delivery!.url, { method: 'POST', headers: resign(nowSeconds, 'msg_current'), body: delivery!.body })).status, 200, 'the same callback signed now is accepted (a duplicate)')
    await t.db.deleteFrom('jobs').execute()
    assert.deepEqual(sim.violations, [])
  })

  test('hourly upkeep forgets old receipts and checks each connected store\'s hooks again once a day', async () => {
    const now = new Date()
    await t.db.insertInto('platform_webhook_receipts').values([
      { store_id: shop.store.id, hash: 'old'.padEnd(40, '0'), scope: 'store/order/created', received_at: new Date(now.getTime() - 8 * 24 * 3_600_000) },
      { store_id: shop.store.id, hash: 'new'.padEnd(40, '0'), scope: 'store/order/created', received_at: new Date(now.getTime() - 3_600_000) },
    ]).execute()
    // BigCommerce deactivated a hook after failed deliveries, and the last check was two days ago.
    sim.store(STORE_HASH).hooks[0]!.is_active = false
    await t.db.updateTable('platform_connections').set({ hooks_registered_at: new Date(now.getTime() - 2 * 24 * 3_600_000) }).where('store_id', '=', shop.store.id).execute()
    await t.db.updateTable('platform_connections').set({ hooks_registered_at: now }).where('store_id', '!=', shop.store.id).execute()

    const first = await services.modules.storefrontOrders.service.maintain(now)
    const again = await services.modules.storefrontOrders.service.maintain(now)
    assert.equal(first.purged >= 1, true)
    assert.equal(first.queued, 1, 'only the store whose check is due')
    assert.equal((await t.db.selectFrom('jobs').selectAll().where('kind', '=', 'platform.register_order_hooks').execute()).length, 1, 'queued once however often upkeep runs')
    assert.equal(again.purged, 0)
    const hashes = (await t.db.selectFrom('platform_webhook_receipts').select('hash').where('store_id', '=', shop.store.id).execute()).map((row) => row.hash)
    assert.ok(hashes.includes('new'.padEnd(40, '0')) && !hashes.includes('old'.padEnd(40, '0')))
    await drain()
    assert.ok(sim.store(STORE_HASH).hooks.every((hook) => hook.is_active), 'the deactivated hook is active again')
    assert.equal(sim.store(STORE_HASH).hooks.length, 2)
    assert.deepEqual(sim.violations, [])
  })
})
