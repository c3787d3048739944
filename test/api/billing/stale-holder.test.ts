import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import type { DatabaseHandle } from '../../../src/db/connect.ts'
import { fixedClock, systemClock } from '../../../src/lib/clock.ts'
import { type ChargeOutcome, type ChargeRequest, type GatewayResolver, type OrderOutcome, type PaymentGateway, type RefundRequest } from '../../../src/modules/billing/index.ts'
import { ensureBootstrapStore } from '../../../src/modules/stores/index.ts'
import { createTestDatabase } from '../../helpers/database.ts'
import { SHIPPING_ADDRESS } from '../../helpers/subscriptions.ts'
import { testModules } from '../../helpers/modules.ts'
import { randomBytes } from 'node:crypto'
import { createPlatformGateway } from '../../../src/modules/billing/gateways/index.ts'
import { createPlatformClient, createPlatformConnections, createTokenVault } from '../../../src/modules/platform/index.ts'
import { startBigCommerceSimulator } from '../../helpers/bigcommerce-simulator.ts'
import { TEST_ADMIN } from '../../helpers/actors.ts'

/**
 * A worker that stalls while raising a renewal's order, and wakes after another worker took the
 * charge over, must not name its order on the charge: the charge keeps the order that was paid, so
 * lookups and refunds go to the right one.
 */
function deferred() {
  let resolve!: () => void
  const promise = new Promise<void>((r) => (resolve = r))
  return { promise, resolve }
}

describe('an order raised by a worker that lost its lease', () => {
  let handle: DatabaseHandle
  before(async () => {
    handle = await createTestDatabase()
  })
  after(() => handle.close())

  test('the charge records the order that was paid', async () => {
    const db = handle.db
    const clock = fixedClock(new Date(Date.now() - 35 * 86_400_000))
    const store = await ensureBootstrapStore(db, { storeHash: 'review-order', adminApiKey: 'sk_test_review_order_0123456789abcdef', mode: 'live' })
    const catalog = testModules(db, { clock: clock }).catalog
    const product = await catalog.createProduct(store, { platform_product_id: '77', name: 'Beans' })
    const plan = await catalog.createPlan(store, { product_id: product.id, name: 'Monthly', amount: 1500, currency: 'USD', interval: 'month' })
    await testModules(db, { clock: clock }).checkouts.checkout(store, {
      platform_order_id: 'order-1', email: 'a@example.com', name: 'A', shipping_address: SHIPPING_ADDRESS, payment_instrument_id: 'vault_tok_1',
      items: [{ plan_id: plan.id, quantity: 1 }],
    }, TEST_ADMIN)

    // A platform without idempotency keys on orders: each create is a new order.
    let nextOrder = 100
    const paid = new Map<string, string>() // order -> transaction
    const gates: Array<{ called: ReturnType<typeof deferred>; release: ReturnType<typeof deferred> }> = [
      { called: deferred(), release: deferred() },
      { called: deferred(), release: deferred() },
    ]
    let creates = 0
    const refundedOrders: string[] = []
    const gateway: PaymentGateway = {
      name: 'platform',
      honoursIdempotencyKeys: false,
      async createOrder(): Promise<OrderOutcome> {
        const gate = gates[creates++]!
        const orderId = String(nextOrder++)
        gate.called.resolve()
        await gate.release.promise
        return { status: 'created', orderId }
      },
      async charge(request: ChargeRequest): Promise<ChargeOutcome> {
        try {
          await request.onSubmit?.()
        } catch (error) {
          return { status: 'unknown', reason: `not submitted: ${String(error)}` }
        }
        const txn = `txn_${request.orderId}`
        paid.set(request.orderId!, txn)
        return { status: 'succeeded', gatewayChargeId: txn }
      },
      async lookup(request: ChargeRequest) {
        const txn = paid.get(request.orderId!)
        return txn ? { status: 'succeeded', gatewayChargeId: txn } : undefined
      },
      async refund(request: RefundRequest) {
        refundedOrders.push(request.orderId!)
        return paid.has(request.orderId!) ? { status: 'succeeded', gatewayRefundId: 'r1' } : { status: 'failed', message: `order ${request.orderId} has no payment` }
      },
    }
    const resolver: GatewayResolver = { forStore: () => gateway, byName: () => gateway }
    // Long lease: the keeper does not tick during the test; the stall is made by expiring the lease by hand.
    const a = testModules(db).renewalEngine({ clock: systemClock, gateways: resolver, leaseMs: 30_000 })
    const b = testModules(db).renewalEngine({ clock: systemClock, gateways: resolver, leaseMs: 30_000 })

    const runA = a.runDue()
    await gates[0]!.called.promise // A is raising its order ... and stalls past its lease
    await sql`UPDATE charges SET lease_until = now() - interval '1 second'`.execute(db)
    const runB = b.reconcile() // B takes the charge over: no order on the row yet, so it raises one
    await gates[1]!.called.promise
    gates[0]!.release.resolve() // A wakes with its order; its lease is gone, so it must not keep it
    await runA
    assert.equal((await db.selectFrom('charges').select('platform_order_id').executeTakeFirstOrThrow()).platform_order_id, null, "the stale worker's order is not kept")
    gates[1]!.release.resolve() // B gets its own order, keeps it and pays it
    await runB

    const charge = await db.selectFrom('charges').selectAll().executeTakeFirstOrThrow()
    const refund = await b.refund(store, charge.id, {}, TEST_ADMIN)
    assert.equal(refund.completed, true, 'the refund goes to the order that was paid')
    assert.deepEqual(refundedOrders, [charge.platform_order_id])
    assert.deepEqual([...paid.keys()], [charge.platform_order_id], 'the order the charge names is the order that was paid')
  })

  test("a worker that takes the charge over while the first one's order request is on its way raises no second order", async () => {
    const db = handle.db
    const sim = await startBigCommerceSimulator()
    const client = createPlatformClient({ apiUrl: sim.apiUrl, paymentsUrl: sim.paymentsUrl, timeoutMs: 2_000, rateLimitBudgetMs: 1_000 })
    try {
      const clock = fixedClock(new Date(Date.now() - 35 * 86_400_000))
      const hash = 'inflightorder'
      sim.addStore({ hash, accessToken: 'inflight-token' })
      sim.addProduct(hash, { id: 77, name: 'Beans', price: 15 })
      const customer = sim.addCustomer(hash, { id: 11, email: 'b@example.com', instruments: [{}] })
      const store = await ensureBootstrapStore(db, { storeHash: hash, adminApiKey: 'sk_test_inflight_order_0123456789abcd', mode: 'live' })
      const key = randomBytes(32)
      const connections = createPlatformConnections({ db, vault: createTokenVault(async () => key), clock: systemClock })
      await connections.connect(store.id, { accessToken: 'inflight-token', source: 'api_account' })
      const catalog = testModules(db, { clock }).catalog
      const product = await catalog.createProduct(store, { platform_product_id: '77', name: 'Beans' })
      const plan = await catalog.createPlan(store, { product_id: product.id, name: 'Monthly', amount: 1500, currency: 'USD', interval: 'month' })
      const { data } = await testModules(db, { clock }).checkouts.checkout(store, {
        platform_order_id: 'order-9', email: 'b@example.com', name: 'B', shipping_address: SHIPPING_ADDRESS, billing_address: SHIPPING_ADDRESS,
        platform_customer_id: customer.id, payment_instrument_id: customer.instruments[0]!.token, items: [{ plan_id: plan.id, quantity: 1 }],
      }, TEST_ADMIN)
      const subscriptionId = data[0]!.id
      const gateway = createPlatformGateway({ client, accessOf: connections.accessOf })
      const resolver: GatewayResolver = { forStore: () => gateway, byName: () => gateway }
      const a = testModules(db).renewalEngine({ clock: systemClock, gateways: resolver, leaseMs: 30_000 })
      const b = testModules(db).renewalEngine({ clock: systemClock, gateways: resolver, leaseMs: 30_000 })
      const chargeRow = () => db.selectFrom('charges').selectAll().where('subscription_id', '=', subscriptionId).executeTakeFirstOrThrow()
      const orderRequests = () => sim.requests.filter((request) => request.operation === 'createCheckoutOrder').length

      const paused = sim.pauseNext('createCheckoutOrder')
      const runA = a.runDue({ storeId: store.id })
      await paused.reached // A's order request is on its way ... and A stalls past its lease
      await sql`UPDATE charges SET lease_until = now() - interval '1 second' WHERE subscription_id = ${subscriptionId}`.execute(db)
      await b.reconcile() // B takes the charge over: no order on the row, none at the platform yet
      assert.equal(orderRequests(), 1, "B does not ask for a second order while A's request may still arrive")
      assert.equal((await chargeRow()).status, 'pending')

      paused.release() // A's request arrives: one order; A's lease is gone, so A does not keep it
      await runA
      assert.equal(sim.orders(hash).length, 1)
      assert.equal((await chargeRow()).platform_order_id, null)

      await sql`UPDATE charges SET lease_until = now() - interval '1 second' WHERE subscription_id = ${subscriptionId}`.execute(db)
      await b.reconcile() // B looks again, finds A's order by its cart and pays it
      const charge = await chargeRow()
      assert.equal(charge.status, 'succeeded')
      const orders = sim.orders(hash)
      assert.deepEqual(orders.map((order) => String(order.id)), [charge.platform_order_id], 'one order, the one the charge names')
      assert.equal(orders[0]!.successful_payments, 1)
      assert.equal(orderRequests(), 1)
      assert.deepEqual(sim.violations, [])
    } finally {
      await client.close()
      await sim.close()
    }
  })
})
