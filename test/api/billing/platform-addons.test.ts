import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { fixedClock, systemClock } from '../../../src/lib/clock.ts'
import { createGatewayResolver, type RenewalEngine } from '../../../src/modules/billing/index.ts'
import { createPlatformClient, createPlatformConnections, createTokenVault, type PlatformClient } from '../../../src/modules/platform/index.ts'
import { startBigCommerceSimulator, type BigCommerceSimulator } from '../../helpers/bigcommerce-simulator.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, testConfig, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { ADDRESS, checkout, checkoutBody } from '../subscriptions/fixtures.ts'
import { testModules } from '../../helpers/modules.ts'

/**
 * A platform store's renewal with a one-time add-on and a discount, against the BigCommerce
 * simulator (which refuses an order body the reference does not allow): one order, the
 * subscription's product and the add-on as two product lines, totals equal to the charge.
 */

const STORE_HASH = `addons${process.pid}`
const ACCESS_TOKEN = 'platform-store-token-SECRET-7781'
const TOKEN_KEY = randomBytes(32)
const PRODUCT_ID = 77
const ADDON_PRODUCT_ID = 78
const CUSTOMER_ID = 11

describe('a platform renewal with an add-on (BigCommerce simulator)', () => {
  let sim: BigCommerceSimulator
  let t: TestApp
  let shop: StoreWithKey
  let client: PlatformClient
  let closeResolver: () => Promise<void>
  let planId: string
  let addOnProductId: string
  let cards: string[]
  let engineAt: (at: string) => RenewalEngine

  before(async () => {
    sim = await startBigCommerceSimulator()
    sim.addStore({ hash: STORE_HASH, accessToken: ACCESS_TOKEN })
    sim.addProduct(STORE_HASH, { id: PRODUCT_ID, name: 'Beans', price: 9.99 })
    sim.addProduct(STORE_HASH, { id: ADDON_PRODUCT_ID, name: 'Mug', price: 4.5 })
    cards = sim.addCustomer(STORE_HASH, { id: CUSTOMER_ID, email: 'ada@example.com', instruments: [{}] }).instruments.map((instrument) => instrument.token)
    const env = { PLATFORM_API_URL: sim.apiUrl, PLATFORM_PAYMENTS_URL: sim.paymentsUrl, PLATFORM_LOGIN_URL: sim.loginUrl, PLATFORM_TOKEN_KEY: TOKEN_KEY.toString('hex'), PLATFORM_API_TIMEOUT_MS: '2000' }
    t = await buildTestApp({ env })
    shop = await createStoreWithKey(t.db, { mode: 'live', storeHash: STORE_HASH })
    const connected = await call(t.app, { method: 'PUT', url: '/api/v1/admin/platform-connection', headers: shop.auth, payload: { access_token: ACCESS_TOKEN } })
    assert.equal(connected.statusCode, 200, connected.body)
    const product = await createProduct(t.app, shop.auth, { platform_product_id: String(PRODUCT_ID) })
    planId = (await createPlan(t.app, shop.auth, product.id, { amount: 1250 })).id
    addOnProductId = (await createProduct(t.app, shop.auth, { platform_product_id: String(ADDON_PRODUCT_ID), name: 'Mug', one_time_price: { amount: 300, currency: 'USD' } })).id

    const config = testConfig(env)
    const connections = createPlatformConnections({ db: t.db, vault: createTokenVault(async () => TOKEN_KEY), clock: systemClock })
    client = createPlatformClient({ apiUrl: sim.apiUrl, paymentsUrl: sim.paymentsUrl, timeoutMs: 2_000 })
    const gateways = createGatewayResolver(t.db, { ...config.billing, platformAccessOf: connections.accessOf, platformClient: client })
    closeResolver = gateways.close
    engineAt = (at) => testModules(t.db).renewalEngine({ clock: fixedClock(at), gateways })
  })
  after(async () => {
    await closeResolver?.()
    await client?.close()
    await t?.close()
    await sim?.close()
  })

  test('one order with two product lines from one checkout whose total equals the discounted charge; the add-on is charged once', async () => {
    const discount = await call(t.app, { method: 'POST', url: '/api/v1/admin/discounts', headers: shop.auth, payload: { code: 'TWENTY', type: 'percentage', value: 20, duration: 'forever' } })
    assert.equal(discount.statusCode, 201, discount.body)
    const body = checkoutBody(planId, { payment_instrument_id: cards[0], platform_customer_id: CUSTOMER_ID, billing_address: ADDRESS, items: [{ plan_id: planId, quantity: 1, discount_code: 'twenty' }] })
    const [subscription] = await checkout(t.app, shop.auth, body)
    const added = await call(t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${subscription.id}/onetimes`, headers: shop.auth, payload: { product_id: addOnProductId, quantity: 2 } })
    assert.equal(added.statusCode, 201, added.body)

    const before = sim.orders(STORE_HASH).length
    await engineAt(subscription.next_charge_at).runDue({ storeId: shop.store.id })
    const charge = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscription.id).executeTakeFirstOrThrow()
    // 1250 - 20% (250) for the subscription's line, plus 2 x 300 for the add-on, never discounted.
    assert.deepEqual([charge.status, Number(charge.subtotal), Number(charge.discount_amount), Number(charge.amount)], ['succeeded', 1850, 250, 1600])

    const orders = sim.orders(STORE_HASH).slice(before)
    assert.equal(orders.length, 1, 'one order for the renewal, add-on included')
    const placed = orders[0]!
    // The cart's lines at their own prices (12.50, and 3.00 each), the discount the checkout's: the
    // platform spreads it over the order's lines, so only their sum is pinned.
    assert.deepEqual(placed.products.map((line) => [line.product_id, line.quantity]), [[PRODUCT_ID, 1], [ADDON_PRODUCT_ID, 2]])
    assert.equal(placed.total_inc_tax, 160_000, 'the order totals 16.00: the charge')
    assert.equal(placed.products.reduce((sum, line) => sum + line.price_inc_tax * line.quantity, 0), placed.total_inc_tax, 'the lines add up to the total')
    assert.deepEqual([placed.successful_payments, String(placed.id)], [1, charge.platform_order_id])
    assert.deepEqual(sim.violations, [])
    assert.deepEqual(sim.doubleCharges(), [])

    const addOn = (await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${subscription.id}/onetimes`, headers: shop.auth })).json.data[0]
    assert.deepEqual([addOn.status, addOn.charge_id], ['charged', charge.id])
  })
})
