/**
 * A defect a review found (now fixed; this test keeps it fixed), as the review described it:
 *
 * Review of issue 14 (429 on the payments host). The client's own rule: "A 429 is the platform
 * refusing the request before doing anything, so it is always safe to send again". docs/bigcommerce.md
 * promises that a renewal step rate limited past the budget "is tried again a few seconds later on
 * the same charge and order. A 429 is never a decline and never starts dunning".
 *
 * For the payment itself that is not what happens: the charge is marked submitted before the
 * payment goes out, the 429 past the budget becomes 'unknown', and a submitted charge is only ever
 * looked up afterwards. The order has no transaction and stays Incomplete, so every look-up says
 * "no trace yet": the renewal is never paid and, after BILLING_UNKNOWN_GRACE_MS (24 h by default),
 * waits for a person. The payments host allows 50 payments per 4 s (PAY "Rate limits"): a renewal
 * run of a big store meets this.
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { fixedClock, systemClock } from '../../../src/lib/clock.ts'
import { createGatewayResolver } from '../../../src/modules/billing/index.ts'
import { createPlatformClient, createPlatformConnections, createTokenVault, type PlatformClient } from '../../../src/modules/platform/index.ts'
import { startBigCommerceSimulator, type BigCommerceSimulator } from '../../helpers/bigcommerce-simulator.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, testConfig, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { ADDRESS, checkout, checkoutBody } from '../subscriptions/fixtures.ts'
import { testModules } from '../../helpers/modules.ts'

const STORE_HASH = `pay429rev${process.pid}`
const ACCESS_TOKEN = 'platform-store-token-SECRET-4290'
const TOKEN_KEY = randomBytes(32)

describe('a payment refused with 429 past the wait budget is paid later, on the same order', () => {
  let sim: BigCommerceSimulator
  let t: TestApp
  let shop: StoreWithKey
  let client: PlatformClient
  let gateways: ReturnType<typeof createGatewayResolver>
  let planId: string
  let card: string

  before(async () => {
    sim = await startBigCommerceSimulator()
    sim.addStore({ hash: STORE_HASH, accessToken: ACCESS_TOKEN })
    sim.addProduct(STORE_HASH, { id: 77, name: 'Beans', price: 9.99 })
    card = sim.addCustomer(STORE_HASH, { id: 11, email: 'ada@example.com', instruments: [{}] }).instruments[0]!.token
    const env = { PLATFORM_API_URL: sim.apiUrl, PLATFORM_PAYMENTS_URL: sim.paymentsUrl, PLATFORM_LOGIN_URL: sim.loginUrl, PLATFORM_TOKEN_KEY: TOKEN_KEY.toString('hex'), PLATFORM_API_TIMEOUT_MS: '2000' }
    t = await buildTestApp({ env })
    shop = await createStoreWithKey(t.db, { mode: 'live', storeHash: STORE_HASH })
    assert.equal((await call(t.app, { method: 'PUT', url: '/api/v1/admin/platform-connection', headers: shop.auth, payload: { access_token: ACCESS_TOKEN } })).statusCode, 200)
    const product = await createProduct(t.app, shop.auth, { platform_product_id: '77' })
    planId = (await createPlan(t.app, shop.auth, product.id, { amount: 1250 })).id
    const connections = createPlatformConnections({ db: t.db, vault: createTokenVault(async () => TOKEN_KEY), clock: systemClock })
    // A short budget stands in for the 30 s one: the rule is the same past any budget.
    client = createPlatformClient({ apiUrl: sim.apiUrl, paymentsUrl: sim.paymentsUrl, timeoutMs: 2_000, rateLimitBudgetMs: 0 })
    gateways = createGatewayResolver(t.db, { ...testConfig(env).billing, platformAccessOf: connections.accessOf, platformClient: client })
  })
  after(async () => {
    await gateways?.close()
    await client?.close()
    await t?.close()
    await sim?.close()
  })

  test('the renewal is paid on a later pass, once, after the payments host stops answering 429', async () => {
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(planId, { payment_instrument_id: card, platform_customer_id: 11, billing_address: ADDRESS }))
    // Leases and rechecks on a clock the test moves: each pass comes after the last one's lease ran out.
    const leaseClock = fixedClock(new Date())
    const engine = testModules(t.db).renewalEngine({ clock: fixedClock(subscription.next_charge_at), gateways, leaseMs: 300, leaseClock })
    sim.rateLimitNext(1, { resetMs: 1_000, host: 'payments' })
    await engine.runDue({ storeId: shop.store.id })
    // The rate limit is over; the reconciler looks at the charge again and again.
    for (let i = 0; i < 6; i++) {
      leaseClock.advance(400)
      await engine.reconcile()
    }
    const charge = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscription.id).executeTakeFirstOrThrow()
    const order = sim.order(STORE_HASH, Number(charge.platform_order_id))
    assert.deepEqual(
      { status: charge.status, orderStatus: order?.status_id, payments: order?.successful_payments },
      { status: 'succeeded', orderStatus: 11, payments: 1 },
      'a 429 is the platform refusing before doing anything: the same order must be paid once it is over',
    )
  })
})
