import assert from 'node:assert/strict'
// wall clock: a platform slower than the lease, in real time, is the point of this file (below).
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.ts'
import type { ChargeRow, Db, StoreRow } from '../../src/db/database.ts'
import { fixedClock, systemClock } from '../../src/lib/clock.ts'
import { type GatewayResolver, type RenewalEngine } from '../../src/modules/billing/index.ts'
import { createPlatformGateway } from '../../src/modules/billing/gateways/platform-gateway.ts'
import { randomBytes } from 'node:crypto'
import { createPlatformClient, createPlatformConnections, createTokenVault, type PlatformClient, type PlatformConnections } from '../../src/modules/platform/index.ts'
import { ensureBootstrapStore } from '../../src/modules/stores/index.ts'
import { killRepeatedly } from '../helpers/crash-loop.ts'
import { createTestDatabase, onPostgres, scratchUrl } from '../helpers/database.ts'
import { startBigCommerceSimulator, type BigCommerceSimulator, type SimOrder } from '../helpers/bigcommerce-simulator.ts'
import { startServer, type RunningServer } from '../helpers/server-process.ts'
import { SHIPPING_ADDRESS } from '../helpers/subscriptions.ts'
import { testModules } from '../helpers/modules.ts'
import { TEST_ADMIN } from '../helpers/actors.ts'

/**
 * A slow platform must never be paid twice. The bug this guards against: a charge's lease started at
 * claim time, was never extended, and settling did not check who held it; with a platform slower
 * than the lease, the lease ran out mid-call and the reconciler ran the same charge again, paying
 * the platform twice. Here the platform is the BigCommerce simulator (test/helpers/bigcommerce-simulator.ts),
 * which counts every payment request per order and refuses (and records as a violation) anything the
 * published reference does not allow; a renewal finds or raises its v2 order by `external_order_id`,
 * then pays it with a recurring payment access token on the payments host. And:
 *   1. two in-process engines on two connection pools run a live store's renewals against a platform
 *      three times slower than their lease;
 *   2. worker processes are SIGKILLed while payments are in flight at the platform.
 */

const DAY_MS = 86_400_000
const TOKEN_KEY = randomBytes(32)
const ITEMS_PER_ORDER = 25

/**
 * A live store with `count` monthly subscriptions due now: they were bought 35 days ago (a month
 * ago and then some), so their first renewal is due and their next one is a month away. Live stores
 * have no test clock: "due" is `next_charge_at <= now()`. The store is connected to the simulator
 * with a token the simulator issued for it; each checkout is by a platform customer paying with a
 * card stored on the platform.
 */
async function seedLiveStore(
  db: Db,
  sim: BigCommerceSimulator,
  connections: PlatformConnections,
  options: { storeHash: string; adminKey: string; accessToken: string; count: number },
): Promise<{ store: StoreRow; subscriptionIds: string[] }> {
  const clock = fixedClock(new Date(Date.now() - 35 * DAY_MS))
  sim.addStore({ hash: options.storeHash, accessToken: options.accessToken })
  sim.addProduct(options.storeHash, { id: 77, name: 'Beans', price: 15 })
  const store = await ensureBootstrapStore(db, { storeHash: options.storeHash, adminApiKey: options.adminKey, mode: 'live' })
  assert.equal(store.mode, 'live')
  assert.equal(store.test_clock_now, null)
  await connections.connect(store.id, { accessToken: options.accessToken, source: 'api_account' })
  const catalog = testModules(db, { clock: clock }).catalog
  const product = await catalog.createProduct(store, { platform_product_id: '77', name: 'Beans' })
  const plan = await catalog.createPlan(store, { product_id: product.id, name: 'Monthly', amount: 1500, currency: 'USD', interval: 'month' })
  const checkouts = testModules(db, { clock: clock }).checkouts
  const subscriptionIds: string[] = []
  for (let order = 0; subscriptionIds.length < options.count; order++) {
    const items = Math.min(ITEMS_PER_ORDER, options.count - subscriptionIds.length)
    const customer = sim.addCustomer(options.storeHash, { id: 100 + order, email: `buyer${order}@example.com`, instruments: [{}] })
    const outcome = await checkouts.checkout(store, {
      platform_order_id: `order-${order}`,
      email: `buyer${order}@example.com`,
      name: 'Buyer',
      shipping_address: SHIPPING_ADDRESS,
      billing_address: SHIPPING_ADDRESS,
      platform_customer_id: customer.id,
      payment_instrument_id: customer.instruments[0]!.token,
      items: Array.from({ length: items }, (_, item) => ({ plan_id: plan.id, quantity: 1 + (item % 3) })),
    }, TEST_ADMIN)
    subscriptionIds.push(...outcome.data.map((subscription) => subscription.id))
  }
  const due = await db.selectFrom('subscriptions').select(['id', 'next_charge_at']).where('store_id', '=', store.id).execute()
  const now = Date.now()
  assert.ok(due.every((row) => row.next_charge_at !== null && row.next_charge_at.getTime() <= now && row.next_charge_at.getTime() > now - 10 * DAY_MS), 'every subscription is due now, once')
  return { store, subscriptionIds }
}

const chargesOf = (db: Db, store: StoreRow) => db.selectFrom('charges').selectAll().where('store_id', '=', store.id).orderBy('created_at').orderBy('id').execute()

/** No period paid twice: one succeeded charge per (subscription, period) at most. */
function assertOneSuccessPerPeriod(charges: ChargeRow[]): void {
  const paid = new Map<string, number>()
  for (const charge of charges.filter((row) => row.status === 'succeeded')) {
    const key = `${charge.subscription_id} ${charge.period_start.toISOString()}`
    paid.set(key, (paid.get(key) ?? 0) + 1)
  }
  const twice = [...paid].filter(([, count]) => count > 1)
  assert.deepEqual(twice, [], `periods with more than one succeeded charge: ${twice.length}`)
}

/** Payments at the platform not yet answered (their client may have gone). */
const paymentsInFlight = (sim: BigCommerceSimulator): number => sim.requests.filter((request) => request.operation === 'PaymentsPost' && request.outcome === 0).length

async function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    // wall clock: polling the simulator (a real HTTP server), with a deadline.
    await sleep(5)
  }
}

/** Every request the simulator received has been answered (what a killed worker sent completes at the platform). */
const simulatorIdle = (sim: BigCommerceSimulator): Promise<void> => waitFor(() => sim.requests.every((request) => request.outcome !== 0), 30_000, 'the simulator to answer every request')

/** The successful payments of an order. */
const paymentsOf = (order: SimOrder) => order.transactions.filter((transaction) => transaction.status === 'ok' && transaction.event === 'purchase')

/** The platform was never asked twice to pay an order, never paid one twice, and saw nothing the reference forbids. */
function assertNoRepeatedPayment(sim: BigCommerceSimulator, storeHash: string): void {
  const orders = sim.orders(storeHash)
  const paidTwice = sim.doubleCharges()
  assert.deepEqual(
    paidTwice.map((order) => `${order.id}: ${order.successful_payments} successful payments`),
    [],
    `orders paid more than once: ${paidTwice.length} (${paidTwice.reduce((sum, order) => sum + order.successful_payments - 1, 0)} duplicate payments)`,
  )
  const repeated = orders.filter((order) => order.payment_requests > 1)
  assert.deepEqual(repeated.map((order) => `${order.id}: ${order.payment_requests} payment requests`), [], `orders asked to be paid more than once: ${repeated.length}`)
  const keys = new Map<string, number>()
  for (const order of orders) keys.set(order.external_order_id ?? '', (keys.get(order.external_order_id ?? '') ?? 0) + 1)
  assert.deepEqual([...keys].filter(([, n]) => n > 1), [], 'one order per charge key (external_order_id)')
  assert.deepEqual(sim.violations, [], 'the simulator refused nothing as against the reference')
}

/**
 * Succeeded charges and the platform's successful payments, one to one: each succeeded charge
 * names an order the platform paid exactly once (the gateway's charge id is that order's id), raised
 * for the charge's key (`external_order_id`) and amount, and paid with the charge's stored card; and
 * every payment the platform took is recorded by a succeeded charge.
 */
function assertChargesMatchPayments(charges: ChargeRow[], sim: BigCommerceSimulator, storeHash: string): void {
  const succeeded = charges.filter((charge) => charge.status === 'succeeded')
  const byOrder = new Map<string, ChargeRow>()
  for (const charge of succeeded) {
    assert.ok(charge.platform_order_id, `${charge.id} succeeded without an order`)
    assert.ok(!byOrder.has(charge.platform_order_id), `order ${charge.platform_order_id} is recorded by two succeeded charges`)
    byOrder.set(charge.platform_order_id, charge)
    const order = sim.order(storeHash, Number(charge.platform_order_id))
    assert.ok(order, `${charge.id} names order ${charge.platform_order_id}, which the platform never raised`)
    const payments = paymentsOf(order)
    assert.equal(payments.length, 1, `order ${order.id} (${charge.id}) was paid ${payments.length} times`)
    assert.equal(order.successful_payments, 1, `order ${order.id} (${charge.id}) was paid ${order.successful_payments} times`)
    assert.equal(charge.gateway_charge_id, String(order.id), `${charge.id} records the platform order it paid`)
    assert.equal(order.external_order_id, charge.idempotency_key, `order ${order.id} was raised for ${charge.id}`)
    assert.equal(order.total_inc_tax / 100, Number(charge.amount), `order ${order.id} is for the charge's amount`)
    assert.equal(payments[0]!.payment_instrument_token, charge.payment_instrument_id, `order ${order.id} was paid with the charge's stored card`)
  }
  const paidOrders = sim.orders(storeHash).filter((order) => order.successful_payments > 0)
  const unrecorded = paidOrders.filter((order) => !byOrder.has(String(order.id)))
  assert.deepEqual(unrecorded.map((order) => `${order.id} (${order.external_order_id})`), [], 'the platform took payments no succeeded charge records')
  assert.equal(paidOrders.length, succeeded.length)
}

// One engine's view of what happened, from its log.
function countingLog() {
  const counts = { unknown: 0, renewFailed: 0, review: 0, other: 0 }
  return {
    counts,
    log: {
      warn(_object: object, message: string) {
        if (message.startsWith('charge outcome unknown')) counts.unknown++
        else if (message.startsWith('could not renew leases')) counts.renewFailed++
        else counts.other++
      },
      error(_object: object, message: string) {
        if (message.startsWith('charge set aside for review')) counts.review++
        else counts.other++
      },
    },
  }
}

describe('a platform slower than the charge lease (PostgreSQL)', { skip: !onPostgres && 'needs PostgreSQL (DATABASE_URL): two connection pools and worker processes on one database', timeout: 170_000 }, () => {
  describe('two engines on two connection pools, the gateway three times the lease', () => {
    const SUBSCRIPTIONS = 100
    const LEASE_MS = 300
    const LATENCY_MS = 900
    const POOL_TAG = `slow-gateway-${process.pid}`
    const STORE_HASH = 'slowplatform'
    let handle: DatabaseHandle
    let sim: BigCommerceSimulator
    const pools: DatabaseHandle[] = []
    const clients: PlatformClient[] = []

    before(async () => {
      handle = await createTestDatabase()
      sim = await startBigCommerceSimulator()
      // Payments take three times the lease (the simulator checks the order when the payment arrives
      // and commits it after the latency, so two payments racing on one order would both go through).
      sim.setLatency(LATENCY_MS, 'PaymentsPost')
    })
    after(async () => {
      await Promise.all(clients.map((client) => client.close()))
      await Promise.all(pools.map((pool) => pool.close()))
      // pool.end() resolves before its sockets close: wait them out before the database is dropped.
      for (let waited = 0; waited < 5_000; waited += 20) {
        const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity where application_name = ${POOL_TAG}`.execute(handle.db)
        if (rows[0]!.n === 0) break
        // wall clock: the PostgreSQL server ends the closed pools' sessions on its own time; polled, with a deadline.
        await sleep(20)
      }
      await sim?.close()
      await handle?.close()
    })

    test(`${SUBSCRIPTIONS} renewals, lease ${LEASE_MS} ms, payments taking ${LATENCY_MS} ms: each order paid once, each period settled once`, async (t) => {
      const vault = createTokenVault(async () => TOKEN_KEY)
      const { store, subscriptionIds } = await seedLiveStore(handle.db, sim, createPlatformConnections({ db: handle.db, vault, clock: systemClock }), {
        storeHash: STORE_HASH,
        adminKey: 'sk_test_slow_platform_0123456789abcdef',
        accessToken: 'slow-platform-token-SECRET',
        count: SUBSCRIPTIONS,
      })
      const url = new URL(scratchUrl(handle)!)
      url.searchParams.set('application_name', POOL_TAG)

      const logs = [countingLog(), countingLog()]
      const engines: RenewalEngine[] = []
      for (const { log } of logs) {
        const pool = await connectDatabase({ databaseUrl: url.toString(), poolSize: 10, onIdleConnectionError: () => {} })
        pools.push(pool)
        // Each engine its own HTTP client, reading the store's token from its connection through its own pool.
        const client = createPlatformClient({ apiUrl: sim.apiUrl, paymentsUrl: sim.paymentsUrl, timeoutMs: 5_000 })
        clients.push(client)
        const gateway = createPlatformGateway({ client, accessOf: createPlatformConnections({ db: pool.db, vault, clock: systemClock }).accessOf })
        const resolver: GatewayResolver = {
          forStore: () => gateway,
          byName: (name) => {
            assert.equal(name, 'platform')
            return gateway
          },
        }
        // Built directly: configuration would refuse a lease shorter than the gateway's calls, which is the point here.
        engines.push(testModules(pool.db).renewalEngine({ clock: systemClock, gateways: resolver, leaseMs: LEASE_MS, concurrency: 16, batchSize: 50, log }))
      }

      let stopped = false
      const errors: unknown[] = []
      const takenOver = [0, 0]
      const loop = async (step: () => Promise<number>, idleMs: number) => {
        while (!stopped) {
          try {
            // wall clock: two engines race as the worker's loops do, against a platform whose real latency outlasts the lease their keepers renew on real timers.
            if ((await step()) === 0) await sleep(idleMs)
          } catch (error) {
            errors.push(error)
            // wall clock: an engine loop's idle pause, as above.
            await sleep(idleMs)
          }
        }
      }
      const started = performance.now()
      const loops = engines.flatMap((engine, index) => [
        loop(async () => (await engine.runDue()).claimed, 50),
        loop(async () => {
          const taken = await engine.reconcile()
          takenOver[index]! += taken
          return taken
        }, 100),
      ])

      // Done when every subscription has had its charge and none is left in flight.
      const deadline = Date.now() + 60_000
      let progress = ''
      try {
        for (;;) {
          const { rows } = await sql<{ charged: number; waiting: number; pending: number }>`
            SELECT (SELECT count(*)::int FROM subscriptions WHERE store_id = ${store.id} AND latest_charge_id IS NOT NULL) AS charged,
                   (SELECT count(*)::int FROM subscriptions WHERE store_id = ${store.id} AND pending_charge_id IS NOT NULL) AS waiting,
                   (SELECT count(*)::int FROM charges WHERE store_id = ${store.id} AND status = 'pending') AS pending`.execute(handle.db)
          const { charged, waiting, pending } = rows[0]!
          progress = `${charged}/${SUBSCRIPTIONS} charged, ${waiting} waiting, ${pending} pending charges, ${paymentsInFlight(sim)} payments in flight`
          if (charged === SUBSCRIPTIONS && waiting === 0 && pending === 0) break
          assert.ok(Date.now() < deadline, `the run did not finish in 60 s: ${progress}`)
          // wall clock: the engines run on their own loops; polled, with a deadline.
          await sleep(100)
        }
      } finally {
        stopped = true
        await Promise.all(loops)
      }
      const elapsedMs = Math.round(performance.now() - started)
      await simulatorIdle(sim)
      assert.deepEqual(errors, [], 'no engine loop threw')

      const charges = await chargesOf(handle.db, store)
      const byStatus = (status: string) => charges.filter((charge) => charge.status === status).length
      t.diagnostic(`${SUBSCRIPTIONS} subscriptions in ${elapsedMs} ms; charges: ${charges.length} (${byStatus('succeeded')} succeeded, ${byStatus('failed')} failed, ${byStatus('pending')} pending, ${byStatus('requires_review')} requires_review)`)
      const orders = sim.orders(STORE_HASH)
      const lookups = sim.requests.filter((request) => request.operation === 'getOrderTransactions').length
      t.diagnostic(`platform: ${orders.length} orders, ${sim.counters.patsIssued} PATs, ${sim.counters.paymentRequests} payment requests, ${sim.counters.paymentsSucceeded} successful, ${lookups} transaction lookups; ${orders.filter((order) => order.payment_requests > 1).length} orders asked twice, ${sim.doubleCharges().length} paid twice; ${sim.violations.length} violations`)
      t.diagnostic(`engines: ${takenOver.join(' + ')} charges taken over by reconcile; ${logs.map(({ counts }) => `${counts.unknown} unknown, ${counts.renewFailed} failed renewals`).join(' / ')}`)

      // At the platform: every order asked to be paid once, and paid once.
      assertNoRepeatedPayment(sim, STORE_HASH)
      assert.equal(orders.length, SUBSCRIPTIONS, 'one order per renewal')
      for (const order of orders) assert.deepEqual([order.payment_requests, order.successful_payments, paymentsOf(order).length], [1, 1, 1], `order ${order.id} was paid once`)

      // In the database: one succeeded charge per subscription and period, nothing left over.
      assertOneSuccessPerPeriod(charges)
      assert.equal(byStatus('pending'), 0, 'no charge is left pending')
      assert.equal(byStatus('requires_review'), 0, 'no charge waits for review')
      assert.deepEqual(charges.filter((charge) => charge.status !== 'succeeded').map((charge) => `${charge.id} ${charge.status} ${charge.failure_message ?? ''}`), [], 'every charge succeeded')
      const perSubscription = new Map<string, number>()
      for (const charge of charges) perSubscription.set(charge.subscription_id, (perSubscription.get(charge.subscription_id) ?? 0) + 1)
      assert.deepEqual(subscriptionIds.filter((id) => perSubscription.get(id) !== 1), [], 'one charge per subscription')
      const subscriptions = await handle.db.selectFrom('subscriptions').select(['id', 'period_index', 'billing_issue', 'status']).where('store_id', '=', store.id).execute()
      assert.ok(subscriptions.every((row) => row.period_index === 1 && row.billing_issue === null && row.status === 'active'), 'every subscription moved on one period')

      // Both sides agree, one to one.
      assertChargesMatchPayments(charges, sim, STORE_HASH)
    })
  })

  describe('worker processes killed with SIGKILL while payments are in flight', () => {
    const SUBSCRIPTIONS = 200
    const KILLS = 6
    const STORE_HASH = 'slowkill'
    const ACCESS_TOKEN = 'slow-kill-token-SECRET'
    const ADMIN_KEY = 'sk_test_slow_platform_kill_0123456789ab'
    let handle: DatabaseHandle
    let sim: BigCommerceSimulator

    before(async () => {
      handle = await createTestDatabase()
      sim = await startBigCommerceSimulator()
      sim.setLatency(200, 'PaymentsPost')
    })
    after(async () => {
      await sim?.close()
      await handle?.close()
    })

    test(`${KILLS} SIGKILLs mid-payment: no order paid twice, every subscription paid once or waiting for review`, async (t) => {
      // The workers read the store's token from its platform connection, encrypted with PLATFORM_TOKEN_KEY.
      const connections = createPlatformConnections({ db: handle.db, vault: createTokenVault(async () => TOKEN_KEY), clock: systemClock })
      const { store, subscriptionIds } = await seedLiveStore(handle.db, sim, connections, { storeHash: STORE_HASH, adminKey: ADMIN_KEY, accessToken: ACCESS_TOKEN, count: SUBSCRIPTIONS })
      const env = {
        ROLE: 'worker',
        SEED_DEMO_DATA: 'false',
        LOG_LEVEL: 'fatal',
        DATABASE_URL: scratchUrl(handle)!,
        // The store is live, so the service refuses to start without mail; nobody signs in here.
        SMTP_URL: 'smtp://127.0.0.1:9',
        // The simulator's hosts: a store's REST API is {apiUrl}/stores/{hash}/v2|v3, its payments {paymentsUrl}/stores/{hash}/payments.
        PLATFORM_API_URL: sim.apiUrl,
        PLATFORM_PAYMENTS_URL: sim.paymentsUrl,
        PLATFORM_LOGIN_URL: sim.loginUrl,
        PLATFORM_TOKEN_KEY: TOKEN_KEY.toString('hex'),
        PLATFORM_API_TIMEOUT_MS: '250',
        BILLING_CHARGE_LEASE_MS: '1000',
        JOB_LEASE_MS: '1500',
        BILLING_UNKNOWN_GRACE_MS: '3000',
        BILLING_BATCH_SIZE: '25',
        BILLING_CONCURRENCY: '16',
      }
      const started = performance.now()

      // Each round: a fresh worker, killed once the platform has payments of its in flight. Even rounds
      // kill a little later at random (the payments are in flight at the platform); odd rounds kill a
      // few milliseconds after the platform next hands out a payment access token, the moment a worker
      // marks a charge submitted and sends its payment (a kill there leaves a charge submitted but
      // never paid: it must end under review, never be paid again).
      const kills: string[] = []
      await killRepeatedly(env, KILLS, async (worker, round) => {
        const inFlight = await waitFor(() => paymentsInFlight(sim) >= 1, 20_000, 'a payment in flight').then(() => true, () => false)
        let landed = 'payments in flight'
        if (round % 2 === 0) {
          // wall clock: a SIGKILL at a random moment while the worker process's payments are in flight.
          await sleep(Math.floor(Math.random() * 150))
        } else {
          const tokens = sim.counters.patsIssued
          await waitFor(() => sim.counters.patsIssued > tokens && paymentsInFlight(sim) > 0, 5_000, 'a payment access token').catch(() => {})
          // wall clock: a SIGKILL a few random milliseconds after the token, as the worker process sends its payment.
          await sleep(Math.floor(Math.random() * 6))
          landed = 'just after a payment access token'
        }
        const now = paymentsInFlight(sim)
        worker.child.kill('SIGKILL')
        kills.push(inFlight ? `${landed} (${now} in flight)` : 'nothing in flight after 20 s')
      }, async () => {
        // What the killed worker sent still completes at the platform.
        await simulatorIdle(sim)
      })
      assert.ok(kills.every((kill) => !kill.startsWith('nothing')), `every kill landed while the worker was paying: ${kills.join(', ')}`)
      const paymentsBeforeLastRun = sim.counters.paymentRequests

      // The last worker is left to finish: every charge settled, or waiting for review past the grace period.
      const worker: RunningServer = await startServer(env, 60_000)
      let resolved = 0
      try {
        const deadline = Date.now() + 90_000
        let progress = ''
        for (;;) {
          const { rows } = await sql<{ charged: number; open: number; pending: number }>`
            SELECT (SELECT count(*)::int FROM subscriptions WHERE store_id = ${store.id} AND latest_charge_id IS NOT NULL) AS charged,
                   (SELECT count(*)::int FROM subscriptions s JOIN charges c ON c.id = s.pending_charge_id
                     WHERE s.store_id = ${store.id} AND c.status <> 'requires_review') AS open,
                   (SELECT count(*)::int FROM charges WHERE store_id = ${store.id} AND status = 'pending') AS pending`.execute(handle.db)
          const { charged, open, pending } = rows[0]!
          progress = `${charged}/${SUBSCRIPTIONS} charged, ${open} charges open, ${pending} pending, ${paymentsInFlight(sim)} payments in flight`
          if (charged === SUBSCRIPTIONS && open === 0 && pending === 0 && paymentsInFlight(sim) === 0) break
          assert.ok(Date.now() < deadline, `the run did not finish: ${progress}\n${worker.output()}`)
          // wall clock: the last worker process finishes on its own; polled, with a deadline.
          await sleep(250)
        }

        const charges = await chargesOf(handle.db, store)
        const byStatus = (status: string) => charges.filter((charge) => charge.status === status)
        const review = byStatus('requires_review')
        t.diagnostic(`${KILLS} SIGKILLs (${kills.join('; ')}); ${paymentsBeforeLastRun} payment requests before the last run`)
        t.diagnostic(`charges: ${charges.length} (${byStatus('succeeded').length} succeeded, ${review.length} requires_review, ${byStatus('failed').length} failed, ${byStatus('pending').length} pending)`)
        const lookups = sim.requests.filter((request) => request.operation === 'getOrderTransactions').length
        t.diagnostic(`platform: ${sim.orders(STORE_HASH).length} orders, ${sim.counters.patsIssued} PATs, ${sim.counters.paymentRequests} payment requests, ${sim.counters.paymentsSucceeded} successful, ${lookups} transaction lookups; ${sim.violations.length} violations`)

        // No order paid twice, nor even asked twice; no period paid twice; nothing against the reference.
        assertNoRepeatedPayment(sim, STORE_HASH)
        assertOneSuccessPerPeriod(charges)
        assert.equal(byStatus('pending').length, 0, 'no charge is left pending')
        // Every subscription: one charge, succeeded and matching one payment, or under review with its order
        // unpaid. A definite failure is tolerated only where the platform was never asked for the money (a
        // payment access token that timed out on a loaded machine fails the charge before anything is sent).
        const failed = byStatus('failed')
        for (const charge of failed) {
          const order = charge.platform_order_id === null ? undefined : sim.order(STORE_HASH, Number(charge.platform_order_id))
          assert.equal(order?.payment_requests ?? 0, 0, `${charge.id} failed (${charge.failure_message}) although the platform was asked to pay order ${charge.platform_order_id}`)
        }
        assert.deepEqual(charges.filter((charge) => !['succeeded', 'requires_review', 'failed'].includes(charge.status)).map((charge) => `${charge.id} ${charge.status}`), [], 'every charge succeeded, waits for review, or failed before any payment was sent')
        const perSubscription = new Map<string, number>()
        for (const charge of charges) perSubscription.set(charge.subscription_id, (perSubscription.get(charge.subscription_id) ?? 0) + 1)
        assert.deepEqual(subscriptionIds.filter((id) => perSubscription.get(id) !== 1), [], 'one charge per subscription')
        assertChargesMatchPayments(charges, sim, STORE_HASH)
        for (const charge of review) {
          const order = charge.platform_order_id === null ? undefined : sim.order(STORE_HASH, Number(charge.platform_order_id))
          // Under review with no submission mark is right too: a step before the payment (the order, its
          // stock, a payment access token) stayed unknown past the grace period on a loaded machine. Either
          // way the platform never saw a payment for its order (below).
          assert.equal(charge.review?.code, 'outcome_unknown', `${charge.id} waits for review because its outcome stayed unknown: ${JSON.stringify(charge.review)}`)
          if (charge.submitted_at === null) t.diagnostic(`${charge.id} waits for review before its payment was submitted: ${charge.review?.message}`)
          assert.equal(order?.successful_payments ?? 0, 0, `${charge.id} waits for review while its order ${charge.platform_order_id} was paid`)
          assert.equal(order?.payment_requests ?? 0, 0, `${charge.id}: its payment never reached the platform`)
        }

        // A person resolves each one: no money moved, so it failed (and dunning takes over).
        for (const charge of review) {
          const response = await fetch(`${worker.origin}/api/v1/admin/charges/${charge.id}/resolve`, {
            method: 'POST',
            headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json' },
            body: JSON.stringify({ outcome: 'failed' }),
          })
          const text = await response.text()
          assert.equal(response.status, 200, `resolving ${charge.id}: ${text}`)
          const body = JSON.parse(text) as { id: string; status: string }
          assert.deepEqual([body.id, body.status], [charge.id, 'failed'])
          resolved++
        }
        const settled = await chargesOf(handle.db, store)
        assert.equal(settled.filter((charge) => charge.status === 'requires_review' || charge.status === 'pending').length, 0, 'nothing waits for review after resolving')
        assertOneSuccessPerPeriod(settled)
        const subscriptions = await handle.db.selectFrom('subscriptions').select(['id', 'status', 'pending_charge_id', 'billing_issue', 'dunning_attempts', 'next_charge_at']).where('store_id', '=', store.id).execute()
        assert.deepEqual(subscriptions.filter((row) => row.pending_charge_id !== null || row.billing_issue !== null).map((row) => row.id), [], 'no subscription waits for a charge or a person')
        const reviewed = new Set(review.map((charge) => charge.subscription_id))
        const notDunning = subscriptions.filter((row) => reviewed.has(row.id) && !(row.status === 'active' && row.dunning_attempts === 1 && row.next_charge_at !== null && row.next_charge_at.getTime() > Date.now()))
        assert.deepEqual(notDunning, [], 'a charge resolved as failed goes on to dunning: its first retry is scheduled')
        t.diagnostic(`outcome: ${byStatus('succeeded').length} subscriptions paid once, ${review.length} set aside for review and resolved as failed (${resolved} answered 200), ${failed.length} failed before any payment was sent${failed.length ? ` (${[...new Set(failed.map((charge) => charge.failure_message))].join('; ')})` : ''}; ${Math.round(performance.now() - started)} ms`)
      } finally {
        await worker.stop('SIGTERM')
      }
    })
  })
})
