import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import type { DatabaseHandle } from '../../../src/db/connect.ts'
import type { Db, StoreRow } from '../../../src/db/database.ts'
import { fixedClock, systemClock } from '../../../src/lib/clock.ts'
import { type GatewayResolver } from '../../../src/modules/billing/index.ts'
import { createPlatformGateway, type PlatformGateway } from '../../../src/modules/billing/gateways/platform-gateway.ts'
import { createPlatformClient, createPlatformConnections, createTokenVault, type PlatformClient, type PlatformConnections } from '../../../src/modules/platform/index.ts'
import { ensureBootstrapStore } from '../../../src/modules/stores/index.ts'
import { startBigCommerceSimulator, type BigCommerceSimulator } from '../../helpers/bigcommerce-simulator.ts'
import { createTestDatabase } from '../../helpers/database.ts'
import { SHIPPING_ADDRESS } from '../../helpers/subscriptions.ts'
import { testModules } from '../../helpers/modules.ts'
import { waitUntil } from '../../helpers/wait.ts'
import { TEST_ADMIN } from '../../helpers/actors.ts'

/**
 * Refunds on the platform, which takes no idempotency key (docs/platform-api.md §5): a quote, then
 * the refund, both for an order-level amount in decimal major units. A refund sent whose answer was
 * lost is never sent again (it waits for a person, its amount still reserved), a refund slower than
 * its lease is not taken over while its worker lives, and refunds of one order go one at a time (the
 * BigCommerce simulator refuses concurrent refunds of an order and records it as a violation).
 */
const DAY_MS = 86_400_000
const TOKEN_KEY = randomBytes(32)
const CUSTOMER_ID = 21

/** A live store connected to the simulator, with `renewals` renewals of 15.00 paid through the platform, each on its own order. */
let seeded = 0
async function seed(db: Db, sim: BigCommerceSimulator, connections: PlatformConnections, resolver: GatewayResolver, renewals = 1): Promise<{ store: StoreRow; chargeId: string; orderId: number; hash: string; charges: Array<{ chargeId: string; orderId: number }> }> {
  seeded++
  const hash = `reviewrefund${process.pid}n${seeded}`
  const accessToken = `tok-review-SECRET-${seeded}`
  sim.addStore({ hash, accessToken })
  sim.addProduct(hash, { id: 77, name: 'Beans', price: 12 })
  const card = sim.addCustomer(hash, { id: CUSTOMER_ID, email: 'a@example.com', instruments: [{}] }).instruments[0]!.token

  const clock = fixedClock(new Date(Date.now() - 35 * DAY_MS))
  const store = await ensureBootstrapStore(db, { storeHash: hash, adminApiKey: `sk_test_review_refund_${seeded}_0123456789abcdef`, mode: 'live' })
  await connections.connect(store.id, { accessToken, source: 'api_account' })
  const catalog = testModules(db, { clock: clock }).catalog
  const product = await catalog.createProduct(store, { platform_product_id: '77', name: 'Beans' })
  const plan = await catalog.createPlan(store, { product_id: product.id, name: 'Monthly', amount: 1500, currency: 'USD', interval: 'month' })
  await testModules(db, { clock: clock }).checkouts.checkout(store, {
    platform_order_id: 'order-1',
    email: 'a@example.com',
    name: 'A',
    shipping_address: SHIPPING_ADDRESS,
    billing_address: SHIPPING_ADDRESS,
    platform_customer_id: CUSTOMER_ID,
    payment_instrument_id: card,
    items: Array.from({ length: renewals }, () => ({ plan_id: plan.id, quantity: 1 })),
  }, TEST_ADMIN)
  // The renewal, due now, paid through the platform: the order to refund is a real paid order.
  await testModules(db).renewalEngine({ clock: systemClock, gateways: resolver }).runDue({ storeId: store.id })
  const rows = await db.selectFrom('charges').selectAll().where('store_id', '=', store.id).orderBy('platform_order_id').execute()
  assert.equal(rows.length, renewals)
  const charges = rows.map((charge) => {
    assert.deepEqual([charge.status, Number(charge.amount)], ['succeeded', 1500], `the renewal was paid: ${charge.failure_message ?? ''}`)
    const orderId = Number(charge.platform_order_id)
    assert.equal(sim.order(hash, orderId)?.successful_payments, 1)
    return { chargeId: charge.id, orderId }
  })
  assert.equal(new Set(charges.map((charge) => charge.orderId)).size, renewals, 'one order per renewal')
  return { store, hash, charges, ...charges[0]! }
}

describe('platform refunds are sent once (BigCommerce simulator)', () => {
  let handle: DatabaseHandle
  let sim: BigCommerceSimulator
  let client: PlatformClient
  let gateway: PlatformGateway
  let resolver: GatewayResolver
  let connections: PlatformConnections
  const LEASE_MS = 300

  /** The refund requests the platform received for an order (whatever became of them). */
  const refundRequests = (hash: string, orderId: number) => sim.requests.filter((request) => request.operation === 'createOrderRefund' && request.url.includes(`/stores/${hash}/v3/orders/${orderId}/`))
  /** What the platform gave back for the order, in cents, one entry per refund. */
  const givenBack = (hash: string, orderId: number) => sim.order(hash, orderId)!.refunds.map((refund) => refund.total_amount / 100)
  /** Until the platform has received `count` refund requests for the order (the simulator is a real HTTP server; it records a request as it arrives). */
  const atThePlatform = (hash: string, orderId: number, count = 1) => waitUntil(`refund request ${count} of order ${orderId} at the platform`, () => refundRequests(hash, orderId).length >= count)
  /** Until a keeper has pushed the lease of a refund of `chargeId` held by a worker past the lease clock's now: its holder is alive. */
  const renewed = (chargeId: string, clock: { now(): Date }) =>
    waitUntil(`the refund lease of ${chargeId} renewed by its holder`, async () => {
      const held = await handle.db.selectFrom('refunds').select('lease_until').where('charge_id', '=', chargeId).where('lease_token', 'is not', null).execute()
      return held.some((row) => row.lease_until !== null && row.lease_until > clock.now())
    })

  before(async () => {
    handle = await createTestDatabase()
    sim = await startBigCommerceSimulator()
    connections = createPlatformConnections({ db: handle.db, vault: createTokenVault(async () => TOKEN_KEY), clock: systemClock })
    client = createPlatformClient({ apiUrl: sim.apiUrl, paymentsUrl: sim.paymentsUrl, timeoutMs: 5_000 })
    gateway = createPlatformGateway({ client, accessOf: connections.accessOf })
    resolver = { forStore: () => gateway, byName: () => gateway }
  })
  after(async () => {
    await client?.close()
    await sim?.close()
    await handle?.close()
  })

  test('a partial refund whose answer is lost is not sent again: it waits for review, its amount reserved', async () => {
    const { store, chargeId, orderId, hash } = await seed(handle.db, sim, connections, resolver)
    const leaseClock = fixedClock(new Date())
    const engine = testModules(handle.db).renewalEngine({ clock: systemClock, gateways: resolver, leaseMs: LEASE_MS, leaseClock })
    sim.loseNextAnswer('createOrderRefund')
    const first = await engine.refund(store, chargeId, { amount: 500 }, TEST_ADMIN)
    assert.equal(first.completed, false, '202: the answer was lost')
    leaseClock.advance(LEASE_MS + 50)
    await engine.reconcile()
    const charge = await handle.db.selectFrom('charges').select('amount_refunded').where('id', '=', chargeId).executeTakeFirstOrThrow()
    assert.deepEqual(givenBack(hash, orderId), [500], 'the platform gave back 5.00 once')
    assert.equal(refundRequests(hash, orderId).length, 1, 'the refund was sent once')
    assert.equal(Number(charge.amount_refunded), 0, 'not counted as refunded until someone knows')
    const [row] = await handle.db.selectFrom('refunds').selectAll().where('charge_id', '=', chargeId).execute()
    assert.equal(row!.status, 'pending')
    assert.equal(row!.review?.code, 'outcome_unknown')
    assert.ok(row!.submitted_at, 'recorded as sent before it was sent')
    const rest = await engine.refund(store, chargeId, { amount: 1001 }, TEST_ADMIN).catch((error: { code?: string }) => error)
    assert.equal((rest as { code?: string }).code, 'validation_failed', 'the 500 in doubt is still reserved: 1000 is all that is left')
    assert.equal(refundRequests(hash, orderId).length, 1, 'nothing more was sent')
    assert.deepEqual(sim.doubleCharges(), [])
    assert.deepEqual(sim.violations, [])
  })

  test("a refund slower than its lease is not sent again by another worker's refund pass", async () => {
    const { store, chargeId, orderId, hash } = await seed(handle.db, sim, connections, resolver)
    // Leases on a clock the test moves; the platform's slowness is real (the simulator answers after its latency).
    const leaseClock = fixedClock(new Date())
    const a = testModules(handle.db).renewalEngine({ clock: systemClock, gateways: resolver, leaseMs: LEASE_MS, leaseClock })
    const b = testModules(handle.db).renewalEngine({ clock: systemClock, gateways: resolver, leaseMs: LEASE_MS, leaseClock })
    sim.setLatency(3 * LEASE_MS, 'createOrderRefund')
    try {
      const inFlight = a.refund(store, chargeId, { amount: 400 }, TEST_ADMIN)
      await atThePlatform(hash, orderId)
      // Past the lease a took the refund with; a is alive and at the platform, so its keeper renews it.
      leaseClock.advance(LEASE_MS + 100)
      await renewed(chargeId, leaseClock)
      await b.reconcile() // another worker's reconcile job: processPending takes any refund whose lease ran out
      const result = await inFlight
      assert.equal(result.completed, true, 'the slow answer is recorded by the worker that waited for it')
    } finally {
      sim.setLatency(0, 'createOrderRefund')
    }
    await b.reconcile()
    const charge = await handle.db.selectFrom('charges').select('amount_refunded').where('id', '=', chargeId).executeTakeFirstOrThrow()
    assert.deepEqual(givenBack(hash, orderId), [400], 'the platform gave back 4.00 once')
    assert.equal(refundRequests(hash, orderId).length, 1, 'the refund was sent once')
    assert.equal(Number(charge.amount_refunded), 400)
    assert.deepEqual(sim.violations, [])
  })

  test('the refund pass holds one refund at a time, renewed while the platform answers: a second worker never sends the same one', async () => {
    // Three paid renewals, each on its own order, with one pending refund of 1.00 each (as automatic
    // or 202'd refunds would be), nobody holding them. Refunds of different orders may go at once.
    const { store, hash, charges } = await seed(handle.db, sim, connections, resolver, 3)
    for (const [i, { chargeId }] of charges.entries()) {
      const charge = await handle.db.selectFrom('charges').selectAll().where('id', '=', chargeId).executeTakeFirstOrThrow()
      await handle.db.insertInto('refunds').values({ id: `re_rv${i}_${chargeId}`, store_id: store.id, charge_id: chargeId, amount: 100, currency: 'USD', reason: null, status: 'pending', idempotency_key: `${charge.idempotency_key}:refund:1`, created_at: new Date(Date.now() + i) } as any).execute()
    }
    const leaseClock = fixedClock(new Date())
    const a = testModules(handle.db).renewalEngine({ clock: systemClock, gateways: resolver, leaseMs: LEASE_MS, leaseClock })
    const b = testModules(handle.db).renewalEngine({ clock: systemClock, gateways: resolver, leaseMs: LEASE_MS, leaseClock })
    sim.setLatency(200, 'createOrderRefund') // each refund well inside the lease
    try {
      const first = a.reconcile()
      // a is at the platform with its first refund when the claim it made would have run out.
      const held = await waitUntil('a refund at the platform', () => charges.find(({ orderId }) => refundRequests(hash, orderId).length > 0))
      leaseClock.advance(LEASE_MS + 50)
      await renewed(held.chargeId, leaseClock)
      const second = b.reconcile()
      await Promise.all([first, second])
    } finally {
      sim.setLatency(0, 'createOrderRefund')
    }
    for (const { chargeId, orderId } of charges) {
      const refunded = await handle.db.selectFrom('charges').select('amount_refunded').where('id', '=', chargeId).executeTakeFirstOrThrow()
      assert.deepEqual(givenBack(hash, orderId), [100], `order ${orderId}: 1.00 given back once`)
      assert.equal(refundRequests(hash, orderId).length, 1, `order ${orderId}: the refund was sent once`)
      assert.equal(Number(refunded.amount_refunded), 100)
    }
    assert.deepEqual(sim.violations, [])
  })

  // docs/platform-api.md §5: "Refunds on one order must be sent one at a time" (O3: concurrent refunds
  // of one order are not yet supported). Only the oldest pending refund of a charge is ever sent.
  test('two workers never send two refunds of one order at the same time', async () => {
    const { store, chargeId, orderId, hash } = await seed(handle.db, sim, connections, resolver)
    const charge = await handle.db.selectFrom('charges').selectAll().where('id', '=', chargeId).executeTakeFirstOrThrow()
    for (let i = 1; i <= 2; i++) {
      await handle.db.insertInto('refunds').values({ id: `re_one${i}_${chargeId}`, store_id: store.id, charge_id: chargeId, amount: 100, currency: 'USD', reason: null, status: 'pending', idempotency_key: `${charge.idempotency_key}:refund:${i}`, created_at: new Date(Date.now() + i) } as any).execute()
    }
    const a = testModules(handle.db).renewalEngine({ clock: systemClock, gateways: resolver, leaseMs: LEASE_MS })
    const b = testModules(handle.db).renewalEngine({ clock: systemClock, gateways: resolver, leaseMs: LEASE_MS })
    const violations = sim.violations.length
    sim.setLatency(400, 'createOrderRefund')
    try {
      const first = a.reconcile()
      await atThePlatform(hash, orderId) // a holds the first refund and is at the platform with it
      await Promise.all([first, b.reconcile()])
    } finally {
      sim.setLatency(0, 'createOrderRefund')
    }
    await a.reconcile()
    assert.deepEqual(sim.violations.slice(violations), [], 'no refund of the order was sent while another was in flight')
    assert.deepEqual(givenBack(hash, orderId), [100, 100], 'both refunds went through, each once')
  })

  test("a merchant's second refund while the first is at the platform waits its turn, then goes", async () => {
    const { store, chargeId, orderId, hash } = await seed(handle.db, sim, connections, resolver)
    const engine = testModules(handle.db).renewalEngine({ clock: systemClock, gateways: resolver, leaseMs: LEASE_MS })
    const violations = sim.violations.length
    sim.setLatency(400, 'createOrderRefund')
    let second
    try {
      const first = engine.refund(store, chargeId, { amount: 100 }, TEST_ADMIN)
      await atThePlatform(hash, orderId)
      second = await engine.refund(store, chargeId, { amount: 200 }, TEST_ADMIN)
      assert.equal((await first).completed, true)
    } finally {
      sim.setLatency(0, 'createOrderRefund')
    }
    assert.equal(second.completed, false, 'queued behind the first: not sent')
    assert.deepEqual(givenBack(hash, orderId), [100])
    await engine.reconcile()
    assert.deepEqual(givenBack(hash, orderId), [100, 200], 'sent once the first had settled')
    assert.deepEqual(sim.violations.slice(violations), [])
  })
})
