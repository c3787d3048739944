import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
// wall clock: a worker process is killed at moments of its run against the simulator (below).
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, test } from 'node:test'
import type { Db, StoreRow } from '../../src/db/database.ts'
import { fixedClock, systemClock } from '../../src/lib/clock.ts'
import { createPlatformConnections, createTokenVault } from '../../src/modules/platform/index.ts'
import { ensureBootstrapStore } from '../../src/modules/stores/index.ts'
import { startBigCommerceSimulator, type BigCommerceSimulator } from '../helpers/bigcommerce-simulator.ts'
import { killRepeatedly, runToCompletion, workerDatabase } from '../helpers/crash-loop.ts'
import { SHIPPING_ADDRESS } from '../helpers/subscriptions.ts'
import { testModules } from '../helpers/modules.ts'
import { TEST_ADMIN } from '../helpers/actors.ts'

/**
 * Exactly once on the real platform path, against real processes: worker processes renewing through
 * the BigCommerce simulator's checkout are killed with SIGKILL after their renewal carts exist but
 * before any order (the checkout's billing address is slow), then after their orders exist but before
 * they pay them (the payment access token is slow), and then in the middle of payments. Restarted,
 * they must pay every renewal exactly once, each through a single order made from the cart its charge
 * kept: a cart is reused, an order is found again by its cart, and a payment recorded as submitted is
 * only looked up.
 */

const STORE_HASH = 'platformcrash'
const ADMIN_KEY = 'sk_test_platform_crash_0123456789abcdef'
const ACCESS_TOKEN = 'platform-crash-token-SECRET'
const TOKEN_KEY = randomBytes(32)
const T0 = new Date('2026-03-02T15:00:00Z')
const T1 = new Date('2026-04-02T16:00:00Z')
const SUBSCRIPTIONS = 12

describe('SIGKILL after a renewal cart, after its order and mid-payment (BigCommerce simulator)', { timeout: 300_000 }, () => {
  let sim: BigCommerceSimulator
  let store: StoreRow
  let cardToken: string
  const env: Record<string, string> = {
    ROLE: 'worker',
    SEED_DEMO_DATA: 'false',
    JOB_LEASE_MS: '1500',
    BILLING_CHARGE_LEASE_MS: '2000',
    PLATFORM_API_TIMEOUT_MS: '500',
    PLATFORM_TOKEN_KEY: TOKEN_KEY.toString('hex'),
    LOG_LEVEL: 'error',
  }
  // Registered first: the workers' environment below is copied with the simulator's URLs in it.
  before(async () => {
    sim = await startBigCommerceSimulator()
    sim.addStore({ hash: STORE_HASH, accessToken: ACCESS_TOKEN })
    sim.addProduct(STORE_HASH, { id: 77, name: 'Beans', price: 15, type: 'physical' })
    cardToken = sim.addCustomer(STORE_HASH, { id: 11, email: 'buyer@example.com', instruments: [{}] }).instruments[0]!.token
    Object.assign(env, { PLATFORM_API_URL: sim.apiUrl, PLATFORM_PAYMENTS_URL: sim.paymentsUrl, PLATFORM_LOGIN_URL: sim.loginUrl })
  })
  const database = workerDatabase(env, 'sb-platform-crash-')
  after(async () => {
    sim.releaseHeld()
    await sim.close()
  })

  async function seed(db: Db): Promise<void> {
    const clock = fixedClock(T0)
    store = await ensureBootstrapStore(db, { storeHash: STORE_HASH, adminApiKey: ADMIN_KEY, mode: 'test' })
    store = await db.updateTable('stores').set({ test_clock_now: T0 }).where('id', '=', store.id).returningAll().executeTakeFirstOrThrow()
    const catalog = testModules(db, { clock: clock }).catalog
    const product = await catalog.createProduct(store, { platform_product_id: '77', name: 'Beans' })
    const plan = await catalog.createPlan(store, { product_id: product.id, name: 'Monthly', amount: 1500, currency: 'USD', interval: 'month' })
    // Checkout while the store still uses the test gateway (no platform call), then switch it over.
    const checkouts = testModules(db, { clock: clock }).checkouts
    await checkouts.checkout(store, {
      platform_order_id: 'first-order',
      email: 'buyer@example.com',
      name: 'Buyer',
      shipping_address: SHIPPING_ADDRESS,
      billing_address: SHIPPING_ADDRESS,
      platform_customer_id: 11,
      payment_instrument_id: cardToken,
      items: Array.from({ length: SUBSCRIPTIONS }, (_, item) => ({ plan_id: plan.id, quantity: 1 + (item % 3) })),
    }, TEST_ADMIN)
    const connections = createPlatformConnections({ db, vault: createTokenVault(async () => TOKEN_KEY), clock: systemClock })
    await connections.connect(store.id, { accessToken: ACCESS_TOKEN, source: 'api_account' })
    store = await db.updateTable('stores').set({ gateway: 'platform', test_clock_now: T1 }).where('id', '=', store.id).returningAll().executeTakeFirstOrThrow()
  }

  const ordersOf = () => sim.orders(STORE_HASH).filter((order) => order.external_source === 'subscription-billing')

  test(`${SUBSCRIPTIONS} renewals, workers killed after their carts exist, after their orders exist and again mid-payment: one order and one payment per renewal`, async () => {
    await database.use(seed, { migrate: true })

    // Round 1: carts are made; the checkout's billing address takes 3 s, and the worker dies meanwhile.
    // Round 2: orders are made; the payment access token takes 3 s, and the worker dies meanwhile.
    // Round 3: tokens are quick again; payments take 1.5 s, and the worker dies with them in flight.
    sim.setLatency(3_000, 'addCheckoutBillingAddress')
    const progress = () => `${JSON.stringify(sim.requests.slice(-5))}\n${JSON.stringify(sim.violations)}`
    const until = async (worker: { output(): string }, what: string, reached: () => boolean) => {
      const deadline = Date.now() + 60_000
      while (!reached()) {
        assert.ok(Date.now() < deadline, `${what}\n${worker.output()}\n${progress()}`)
        // wall clock: polling the simulator (a real HTTP server) for the worker process's request, with a deadline.
        await sleep(20)
      }
    }
    const waitForTheMoment = async (worker: { output(): string }, round: number) => {
      if (round === 0) {
        await until(worker, 'no billing address was sent to a checkout', () => sim.requests.some((r) => r.operation === 'addCheckoutBillingAddress'))
        // wall clock: the kill lands while the worker process waits out the simulator's 3 s billing-address latency.
        await sleep(200)
      } else if (round === 1) {
        await until(worker, 'no payment access token was asked for', () => sim.requests.some((r) => r.operation === 'createPaymentAccessToken'))
        // wall clock: the kill lands while the worker process waits out the simulator's 3 s token latency.
        await sleep(200)
      } else {
        await until(worker, 'no payment was sent', () => sim.counters.paymentRequests > 0)
        // wall clock: the kill lands while the worker process's payments are in flight (1.5 s latency).
        await sleep(300)
      }
    }
    const afterRound = (round: number) => {
      if (round === 0) {
        assert.ok(sim.counters.cartsCreated > 0, 'carts existed when the worker died')
        assert.equal(sim.counters.checkoutOrdersCreated, 0, 'no order had been made when the worker died')
        sim.setLatency(0, 'addCheckoutBillingAddress')
        sim.setLatency(3_000, 'createPaymentAccessToken')
      } else if (round === 1) {
        assert.ok(ordersOf().length > 0, 'orders existed when the worker died')
        assert.equal(sim.counters.paymentRequests, 0, 'no payment had been sent when the worker died')
        sim.setLatency(0, 'createPaymentAccessToken')
        sim.setLatency(1_500, 'PaymentsPost')
      } else {
        sim.setLatency(0, 'PaymentsPost')
      }
    }
    await killRepeatedly(
      database.env,
      3,
      async (worker, round) => {
        try {
          await waitForTheMoment(worker, round)
        } finally {
          worker.child.kill('SIGKILL')
        }
      },
      afterRound,
    )

    await runToCompletion(database.env, {
      timeoutMs: 120_000,
      pollMs: 250,
      check: async (worker) => {
        const headers = { authorization: `Bearer ${ADMIN_KEY}` }
        const page = (await (await fetch(`${worker.origin}/api/v1/admin/charges?status=succeeded&limit=100`, { headers })).json()) as { data: unknown[] }
        return { done: page.data.length >= SUBSCRIPTIONS, progress: `${page.data.length} of ${SUBSCRIPTIONS} renewals paid` }
      },
    })

    await database.use(async (db) => {
      const charges = await db.selectFrom('charges').selectAll().where('store_id', '=', store.id).execute()
      const subscriptions = await db.selectFrom('subscriptions').selectAll().where('store_id', '=', store.id).execute()
      assert.equal(charges.length, SUBSCRIPTIONS, 'one charge per renewal: no attempt failed')
      assert.ok(charges.every((charge) => charge.status === 'succeeded'), JSON.stringify(charges.map((c) => [c.status, c.failure_code, c.failure_message])))
      const orders = sim.orders(STORE_HASH).filter((order) => order.cart_id !== undefined)
      for (const charge of charges) {
        const own = orders.filter((order) => order.cart_id === charge.platform_cart_id)
        assert.equal(own.length, 1, `${charge.idempotency_key}: exactly one platform order, from the cart its charge kept`)
        assert.equal(charge.platform_order_id, String(own[0]!.id))
        assert.equal(own[0]!.external_order_id, charge.idempotency_key, 'tagged with the charge key')
        assert.equal(own[0]!.successful_payments, 1, `${charge.idempotency_key}: paid once`)
        const subscription = subscriptions.find((row) => row.id === charge.subscription_id)!
        // Their checkout named no shipping rate, so the renewal ships for the store's quote (Ground, $5.99).
        assert.equal(own[0]!.total_inc_tax, (subscription.amount * subscription.quantity + 599) * 100, 'price x quantity and the quoted shipping, in decimal units')
        assert.deepEqual([charge.shipping_amount, charge.shipping_method, charge.amount], [599, 'Ground', subscription.amount * subscription.quantity + 599])
      }
      assert.equal(orders.length, SUBSCRIPTIONS, 'no stray order')
      // A cart its worker died before keeping is never used; every kept one made exactly one order.
      assert.ok(sim.counters.cartsCreated >= SUBSCRIPTIONS)
      assert.deepEqual(sim.doubleCharges(), [])
      assert.deepEqual(sim.violations, [])
    })
  })
})
