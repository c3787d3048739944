import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, beforeEach, describe, test } from 'node:test'
import { fixedClock, systemClock } from '../../../src/lib/clock.ts'
import { createGatewayResolver, type RenewalEngine } from '../../../src/modules/billing/index.ts'
import { createPlatformClient, createPlatformConnections, createTokenVault, type PlatformCall, type PlatformClient, type PlatformReply } from '../../../src/modules/platform/index.ts'
import { startBigCommerceSimulator, type BigCommerceSimulator } from '../../helpers/bigcommerce-simulator.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, testConfig, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { ADDRESS, checkout, checkoutBody } from '../subscriptions/fixtures.ts'
import { testModules } from '../../helpers/modules.ts'

/**
 * Renewals of a live store through the platform gateway, against the BigCommerce simulator
 * (test/helpers/bigcommerce-simulator.ts), which refuses anything the published reference does not
 * allow and records it in `violations`. A renewal finds or raises a v2 order for its charge key,
 * then pays it with the customer's stored card (docs/platform-api.md §2-§4).
 */

const STORE_HASH = `renewals${process.pid}`
const ACCESS_TOKEN = 'platform-store-token-SECRET-4411'
const TOKEN_KEY = randomBytes(32)
const PRODUCT_ID = 77
const CUSTOMER_ID = 11

/** The platform client, recording every call the gateway makes and the answer it got. */
function recordingClient(inner: PlatformClient): PlatformClient & { calls: Array<{ call: PlatformCall; reply: PlatformReply }> } {
  const calls: Array<{ call: PlatformCall; reply: PlatformReply }> = []
  return {
    calls,
    async call(access, request) {
      const reply = await inner.call(access, request)
      calls.push({ call: request, reply })
      return reply
    },
    longestCallMs: inner.longestCallMs,
    close: () => inner.close(),
  }
}

const VARIANT_PRODUCT_ID = 78
const SHIPPED_PRODUCT_ID = 79
const FREE_BOX_PRODUCT_ID = 80

describe('renewals of a live store through the platform gateway (BigCommerce simulator)', () => {
  let sim: BigCommerceSimulator
  let t: TestApp
  let shop: StoreWithKey
  let client: ReturnType<typeof recordingClient>
  let closeResolver: () => Promise<void>
  let planId: string
  let cards: string[]
  let engineAt: (at: string) => RenewalEngine

  before(async () => {
    sim = await startBigCommerceSimulator()
    sim.addStore({ hash: STORE_HASH, accessToken: ACCESS_TOKEN })
    // The catalogue's price is not the plan's: the order must carry the charge's price, not the catalogue's.
    sim.addProduct(STORE_HASH, { id: PRODUCT_ID, name: 'Beans', price: 9.99 })
    // Beans sold whole (801) or ground (802): a variant swap changes what the next order carries.
    sim.addProduct(STORE_HASH, { id: SHIPPED_PRODUCT_ID, name: 'Beans in a box', price: 9.99, type: 'physical' })
    sim.addProduct(STORE_HASH, { id: FREE_BOX_PRODUCT_ID, name: 'A box on the house', price: 9.99, type: 'physical' })
    sim.addProduct(STORE_HASH, { id: VARIANT_PRODUCT_ID, name: 'Beans by grind', price: 9.99, variants: [{ id: 801, sku: 'WHOLE' }, { id: 802, sku: 'GROUND' }] })
    cards = sim.addCustomer(STORE_HASH, { id: CUSTOMER_ID, email: 'ada@example.com', instruments: [{}, {}] }).instruments.map((instrument) => instrument.token)

    const env = { PLATFORM_API_URL: sim.apiUrl, PLATFORM_PAYMENTS_URL: sim.paymentsUrl, PLATFORM_LOGIN_URL: sim.loginUrl, PLATFORM_TOKEN_KEY: TOKEN_KEY.toString('hex'), PLATFORM_API_TIMEOUT_MS: '2000' }
    t = await buildTestApp({ env })
    shop = await createStoreWithKey(t.db, { mode: 'live', storeHash: STORE_HASH })
    // The store is connected with a token the platform issued for it, as an admin would.
    const connected = await call(t.app, { method: 'PUT', url: '/api/v1/admin/platform-connection', headers: shop.auth, payload: { access_token: ACCESS_TOKEN } })
    assert.equal(connected.statusCode, 200, connected.body)
    const product = await createProduct(t.app, shop.auth, { platform_product_id: String(PRODUCT_ID) })
    planId = (await createPlan(t.app, shop.auth, product.id, { amount: 1250 })).id

    const config = testConfig(env)
    // The engine reads the store's token from its connection, decrypted with the same key as the app's.
    const connections = createPlatformConnections({ db: t.db, vault: createTokenVault(async () => TOKEN_KEY), clock: systemClock })
    client = recordingClient(createPlatformClient({ apiUrl: sim.apiUrl, paymentsUrl: sim.paymentsUrl, timeoutMs: 2_000 }))
    const gateways = createGatewayResolver(t.db, { ...config.billing, platformAccessOf: connections.accessOf, platformClient: client })
    closeResolver = gateways.close
    engineAt = (at) => testModules(t.db).renewalEngine({ clock: fixedClock(at), gateways })
  })
  beforeEach(() => {
    client.calls.length = 0
  })
  after(async () => {
    await closeResolver?.()
    await client?.close()
    await t?.close()
    await sim?.close()
  })

  const platformCheckout = (card: string, overrides: Record<string, unknown> = {}) =>
    checkoutBody(planId, { payment_instrument_id: card, platform_customer_id: CUSTOMER_ID, billing_address: ADDRESS, ...overrides })

  test('a renewal makes its order through the store\'s checkout, then pays it with the stored card; the cart and the order id are kept on the charge', async () => {
    const body = platformCheckout(cards[0]!, { items: [{ plan_id: planId, quantity: 2 }] })
    const [subscription] = await checkout(t.app, shop.auth, body)
    const before = sim.orders(STORE_HASH).length
    const counts = await engineAt(subscription.next_charge_at).runDue({ storeId: shop.store.id })
    assert.equal(counts.renewals, 1)
    const charge = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscription.id).executeTakeFirstOrThrow()

    // The calls, in order: the cart, its checkout's billing address, the order from the checkout, its tag,
    // the method holding the card, a PAT, the payment.
    const steps = client.calls.map(({ call }) => `${call.method} ${call.host ?? 'api'} ${call.path.replace(/[0-9a-f-]{36}/, '{cart}').replace(/\/v2\/orders\/\d+/, '/v2/orders/{id}')}`)
    assert.deepEqual(steps, [
      'GET api /v3/catalog/products', 'POST api /v3/carts', 'POST api /v3/checkouts/{cart}/billing-address', 'POST api /v3/checkouts/{cart}/orders', 'PUT api /v2/orders/{id}',
      'GET api /v3/payments/methods', 'POST api /v3/payments/access_tokens', 'POST payments /payments',
    ])
    const [stock, cart, billing, order, tag, methods, token, payment] = client.calls as [(typeof client.calls)[0], (typeof client.calls)[0], (typeof client.calls)[0], (typeof client.calls)[0], (typeof client.calls)[0], (typeof client.calls)[0], (typeof client.calls)[0], (typeof client.calls)[0]]

    // The stock first (catalog getProducts): the product's tracking, and its name for a message.
    assert.deepEqual(stock.call.query, { 'id:in': String(PRODUCT_ID), include_fields: 'name,inventory_tracking', limit: '1' })

    // The cart (carts.v3): the card's owner, the subscription's line at its price in decimal major units.
    assert.deepEqual(cart.call.body, { customer_id: CUSTOMER_ID, line_items: [{ product_id: PRODUCT_ID, quantity: 2, list_price: 12.5 }] })
    const cartId = (cart.reply as { sent: true; answer: { body: { data: { id: string } } } }).answer.body.data.id
    assert.equal(charge.platform_cart_id, cartId, 'the cart is kept on the charge')
    const sent = billing.call.body as Record<string, string>
    assert.deepEqual(
      [sent.first_name, sent.last_name, sent.address1, sent.postal_code, sent.country_code, sent.email],
      ['Ada', 'Lovelace', ADDRESS.line1, ADDRESS.postal_code, ADDRESS.country, body.email],
    )
    const orderId = (order.reply as { sent: true; answer: { body: { data: { id: number } } } }).answer.body.data.id
    // The tag: our source and the charge's key, so the order webhook and a search by key know it.
    assert.deepEqual(tag.call.body, { external_source: 'subscription-billing', external_order_id: charge.idempotency_key, staff_notes: `Renewal of subscription ${subscription.id}` })

    // The method holding the card (§3.1), a recurring PAT for that order (§3.2), the payment with the PAT (§3.3).
    assert.deepEqual(methods.call.query, { order_id: orderId })
    assert.deepEqual(token.call.body, { order: { id: orderId, is_recurring: true } })
    const pat = (token.reply as { sent: true; answer: { body: { data: { id: string } } } }).answer.body.data.id
    assert.equal(payment.call.pat, pat, 'Authorization: PAT with the token just issued')
    assert.deepEqual(payment.call.body, { payment: { instrument: { type: 'stored_card', token: cards[0] }, payment_method_id: 'stripe.card' } })

    // At the platform: one order for this charge, paid once, for the charge's amount.
    const orders = sim.orders(STORE_HASH).slice(before)
    assert.equal(orders.length, 1, 'one order per charge')
    const placed = orders[0]!
    assert.deepEqual(
      [placed.id, placed.external_order_id, placed.customer_id, placed.status_id, placed.total_inc_tax, placed.payment_requests, placed.successful_payments, placed.pats_issued],
      [orderId, charge.idempotency_key, CUSTOMER_ID, 11, 250_000, 1, 1, 1],
      'order, key, owner, Awaiting Fulfillment, 25.0000, one payment request, one payment, one PAT',
    )
    assert.deepEqual(placed.products.map((product) => [product.product_id, product.quantity, product.price_inc_tax]), [[PRODUCT_ID, 2, 125_000]])
    assert.equal(placed.transactions[0]?.payment_instrument_token, cards[0])

    // The charge names the order; the gateway's charge id for a platform charge is that order id.
    assert.deepEqual([charge.status, charge.platform_order_id, charge.gateway_charge_id, charge.gateway, Number(charge.amount)], ['succeeded', String(orderId), String(orderId), 'platform', 2500])
    assert.deepEqual(sim.doubleCharges(), [])
    assert.deepEqual(sim.violations, [])
  })

  test('a declined payment fails the charge with its code and schedules the first dunning retry', async () => {
    sim.declineNextPayment(30102)
    const [subscription] = await checkout(t.app, shop.auth, platformCheckout(cards[1]!))
    await engineAt(subscription.next_charge_at).runDue({ storeId: shop.store.id })
    const charge = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscription.id).executeTakeFirstOrThrow()
    assert.equal(charge.status, 'failed')
    assert.equal(charge.failure_code, 'card_declined')
    assert.ok(charge.next_retry_at && charge.next_retry_at > charge.created_at)
    const order = sim.order(STORE_HASH, Number(charge.platform_order_id))
    assert.ok(order, 'the charge names the order it tried to pay')
    assert.deepEqual([order.external_order_id, order.status_id, order.payment_requests, order.successful_payments], [charge.idempotency_key, 0, 1, 0], 'asked once, not paid, still Incomplete')
    const pats = client.calls.filter(({ call }) => call.path === '/v3/payments/access_tokens').map(({ reply }) => (reply as { sent: true; answer: { body: { data: { id: string } } } }).answer.body.data.id)
    assert.equal(pats.length, 1)
    const stored = JSON.stringify(charge)
    assert.ok(!stored.includes(ACCESS_TOKEN) && !stored.includes(pats[0]!), 'no credential is stored')
    assert.deepEqual(sim.doubleCharges(), [])
    assert.deepEqual(sim.violations, [])
  })

  test('a variant swap changes the variant the next renewal order carries', async () => {
    const product = await createProduct(t.app, shop.auth, { platform_product_id: String(VARIANT_PRODUCT_ID), name: 'Beans by grind' })
    const wholePlan = await createPlan(t.app, shop.auth, product.id, { amount: 1100, platform_variant_id: 801 })
    assert.equal(wholePlan.platform_variant_id, '801')
    const [subscription] = await checkout(t.app, shop.auth, platformCheckout(cards[0]!, { items: [{ plan_id: wholePlan.id, quantity: 1 }] }))
    assert.equal(subscription.platform_variant_id, '801', "an item naming no variant takes the plan's")
    const swapped = await call(t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${subscription.id}/swap`, headers: shop.auth, payload: { plan_id: wholePlan.id, platform_variant_id: 802 } })
    assert.equal(swapped.statusCode, 200, swapped.body)
    assert.deepEqual([swapped.json.plan_id, swapped.json.platform_variant_id, swapped.json.amount], [wholePlan.id, '802', 1100], 'the same plan, ground instead of whole')
    await engineAt(subscription.next_charge_at).runDue({ storeId: shop.store.id })
    const charge = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscription.id).executeTakeFirstOrThrow()
    assert.equal(charge.status, 'succeeded', charge.failure_message ?? '')
    const order = sim.order(STORE_HASH, Number(charge.platform_order_id))!
    assert.deepEqual(order.products.map((line) => [line.product_id, line.variant_id, line.quantity]), [[VARIANT_PRODUCT_ID, 802, 1]])
    assert.deepEqual(sim.violations, [])
  })

  test('a renewal discounted to nothing still makes its order through the checkout and releases it for fulfilment without a payment: the box ships', async () => {
    const product = await createProduct(t.app, shop.auth, { platform_product_id: String(FREE_BOX_PRODUCT_ID), name: 'A box on the house' })
    const plan = await createPlan(t.app, shop.auth, product.id, { amount: 900 })
    const code = `FREEBOX${process.pid}`
    const created = await call(t.app, { method: 'POST', url: '/api/v1/admin/discounts', headers: shop.auth, payload: { code, type: 'percentage', value: 100, duration: 'forever' } })
    assert.equal(created.statusCode, 201, created.body)
    const [subscription] = await checkout(t.app, shop.auth, platformCheckout(cards[0]!, {
      items: [{ plan_id: plan.id, quantity: 1, discount_code: code }],
      shipping_address: { name: 'Grace Hopper', line1: '1 Harbor Road', city: 'Arlington', state: 'VA', postal_code: '22201', country: 'US' },
      shipping: { method: 'Ground', amount: 0 },
    }))
    const payments = sim.counters.paymentRequests
    await engineAt(subscription.next_charge_at).runDue({ storeId: shop.store.id })
    const charge = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscription.id).executeTakeFirstOrThrow()
    assert.equal(charge.status, 'succeeded', `${charge.failure_message ?? ''} ${JSON.stringify(sim.violations)}`)
    assert.deepEqual([charge.subtotal, charge.discount_amount, charge.shipping_amount, charge.tax_amount, charge.amount], [900, 900, 0, 0, 0])
    const order = sim.order(STORE_HASH, Number(charge.platform_order_id))
    assert.ok(order, 'an order to ship')
    assert.equal(charge.gateway_charge_id, String(order.id))
    assert.deepEqual([order.status_id, order.cart_id, order.external_order_id, order.total_inc_tax], [11, charge.platform_cart_id, charge.idempotency_key, 0], 'made from the kept cart, tagged, Awaiting Fulfillment, for nothing')
    assert.equal(sim.counters.paymentRequests, payments, 'no payment asked for')
    assert.equal((await t.db.selectFrom('subscriptions').select('current_period_start').where('id', '=', subscription.id).executeTakeFirstOrThrow()).current_period_start!.toISOString(), subscription.next_charge_at, 'the period is paid')
    assert.deepEqual(sim.violations, [])
  })

  test('a shipping method named with a NUL and 10,000 characters by the platform is kept storable and bounded; the renewal is paid once', async () => {
    const product = await createProduct(t.app, shop.auth, { platform_product_id: String(SHIPPED_PRODUCT_ID), name: 'Beans in a box' })
    const plan = await createPlan(t.app, shop.auth, product.id, { amount: 900 })
    const name = `Ground\u0000${'\u{1F4E6}'.repeat(5_000)}`
    sim.setShippingOptions(STORE_HASH, [{ description: name, cost: 4 }])
    try {
      const [subscription] = await checkout(t.app, shop.auth, platformCheckout(cards[0]!, {
        items: [{ plan_id: plan.id, quantity: 1 }],
        shipping_address: { name: 'Grace Hopper', line1: '1 Harbor Road', city: 'Arlington', state: 'VA', postal_code: '22201', country: 'US' },
        shipping: { method: 'Ground', amount: 400 },
      }))
      await engineAt(subscription.next_charge_at).runDue({ storeId: shop.store.id })
      const charge = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscription.id).executeTakeFirstOrThrow()
      assert.equal(charge.status, 'succeeded', `${charge.failure_message ?? ''} ${JSON.stringify(sim.violations)} ${JSON.stringify(sim.requests.slice(-4))}`)
      assert.deepEqual([charge.shipping_amount, charge.amount], [400, 1300])
      assert.ok(charge.shipping_method!.startsWith('Ground\\u0000'), 'the NUL is kept as an escape, not refused by the database')
      assert.ok([...charge.shipping_method!].length <= 250, 'bounded like a checkout\'s method')
      assert.equal(sim.order(STORE_HASH, Number(charge.platform_order_id))!.successful_payments, 1)
    } finally {
      sim.setShippingOptions(STORE_HASH, [{ description: 'Ground', cost: 5.99 }])
    }
  })

  test('a live store without a platform connection fails the charge as gateway_configuration, without any request', async () => {
    const other = await createStoreWithKey(t.db, { mode: 'live', storeHash: `unconnected${process.pid}` })
    const product = await createProduct(t.app, other.auth, { platform_product_id: String(PRODUCT_ID) })
    const plan = await createPlan(t.app, other.auth, product.id)
    // A platform store's checkout asks the platform for the customer's stored cards, which an unconnected
    // store cannot: the subscription is taken while the store still charges through the test gateway,
    // then the store is switched over to the platform without ever being connected.
    await t.db.updateTable('stores').set({ mode: 'test', gateway: 'test' }).where('id', '=', other.store.id).execute()
    t.services.modules.stores.service.auth.forgetStore(other.store.id)
    const [subscription] = await checkout(t.app, other.auth, checkoutBody(plan.id, { payment_instrument_id: cards[0], platform_customer_id: CUSTOMER_ID, billing_address: ADDRESS }))
    await t.db.updateTable('stores').set({ mode: 'live', gateway: 'platform' }).where('id', '=', other.store.id).execute()
    const requests = sim.requests.length
    client.calls.length = 0
    await engineAt(subscription.next_charge_at).runDue({ storeId: other.store.id })
    const charge = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscription.id).executeTakeFirstOrThrow()
    assert.deepEqual([charge.status, charge.failure_code], ['failed', 'gateway_configuration'])
    assert.equal(client.calls.length, 0, 'the gateway made no call')
    assert.equal(sim.requests.length, requests, 'the platform received no request')
    assert.deepEqual(sim.violations, [])
  })
})
