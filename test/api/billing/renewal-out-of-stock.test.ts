import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { addDays } from '../../../src/lib/calendar.ts'
import type { RenewalEngine } from '../../../src/modules/billing/index.ts'
import { SendNotification } from '../../../src/modules/notifications/notifications.jobs.ts'
import type { BigCommerceSimulator } from '../../helpers/bigcommerce-simulator.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { startPlatformHarness, type PlatformHarness } from '../../helpers/platform-harness.ts'
import { call, type TestApp } from '../../helpers/test-app.ts'
import { OTHER_ADDRESS, checkout, checkoutBody } from '../subscriptions/fixtures.ts'

/**
 * A platform renewal whose item the platform says is out of stock (docs/contract.md, Renewal pricing,
 * "Stock"), through the BigCommerce simulator: the stock is read before any cart, nothing is charged,
 * and the store's `out_of_stock` policy decides: `skip` (the period skipped with reason `out_of_stock`,
 * the subscriber emailed), `retry` (daily, outside dunning, then skip), `charge_anyway` (no stock read).
 */

const CUSTOMER_ID = 11
// Beans sold whole (901) or ground (902), stock tracked per variant; a mug whose stock is the product's.
const BEANS = 90
const WHOLE = 901
const GROUND = 902
const MUG = 91

describe('a platform renewal with an item out of stock', () => {
  let h: PlatformHarness
  let sim: BigCommerceSimulator
  let t: TestApp
  let engineAt: (at: string) => RenewalEngine
  let seq = 0

  before(async () => {
    h = await startPlatformHarness()
    ;({ sim, t } = h)
    engineAt = h.engineAt
  })
  after(() => h?.close())

  /** A live store of its own on the simulator, with its policy, the beans and the mug, and one customer's card. */
  async function store(settings: Record<string, unknown>, scopes?: string[]) {
    const hash = `stock${process.pid}x${++seq}`
    const shop = await h.connectedStore(hash, scopes ? { scopes } : {})
    sim.addProduct(hash, { id: BEANS, name: 'Beans', price: 9.99, type: 'physical', inventory_tracking: 'variant', variants: [{ id: WHOLE, inventory_level: 0 }, { id: GROUND, inventory_level: 50 }] })
    sim.addProduct(hash, { id: MUG, name: 'Mug', price: 5, type: 'physical', inventory_tracking: 'product', inventory_level: 0 })
    const [card] = sim.addCustomer(hash, { id: CUSTOMER_ID, email: 'ada@example.com', instruments: [{}] }).instruments.map((instrument) => instrument.token)
    if (Object.keys(settings).length > 0) {
      const patched = await call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload: settings })
      assert.equal(patched.statusCode, 200, patched.body)
    }
    const beans = await createProduct(t.app, shop.auth, { platform_product_id: String(BEANS) })
    const plan = (await createPlan(t.app, shop.auth, beans.id, { amount: 1250 })).id
    const mug = (await createProduct(t.app, shop.auth, { platform_product_id: String(MUG), name: 'Mug', one_time_price: { amount: 300, currency: 'USD' } })).id
    return { hash, shop, plan, mug, card: card! }
  }

  async function subscribe(s: Awaited<ReturnType<typeof store>>, variant: number) {
    const body = checkoutBody(s.plan, {
      payment_instrument_id: s.card,
      platform_customer_id: CUSTOMER_ID,
      // In Virginia: the platform's checkout needs a state to ship to in the US.
      shipping_address: OTHER_ADDRESS,
      billing_address: OTHER_ADDRESS,
      items: [{ plan_id: s.plan, quantity: 2, platform_variant_id: variant }],
    })
    const [subscription] = await checkout(t.app, s.shop.auth, body)
    return subscription as { id: string; next_charge_at: string; current_period_end: string }
  }

  const chargesOf = (id: string) => t.db.selectFrom('charges').selectAll().where('subscription_id', '=', id).orderBy('created_at').orderBy('attempt').execute()
  const subscriptionRow = (id: string) => t.db.selectFrom('subscriptions').selectAll().where('id', '=', id).executeTakeFirstOrThrow()
  const eventsOf = async (id: string) =>
    (await t.db.selectFrom('events').select(['event_type', 'payload']).where('entity_id', '=', id).orderBy('position').execute()).map((row) => ({ event_type: row.event_type, payload: (typeof row.payload === 'string' ? JSON.parse(row.payload) : row.payload) as { data: Record<string, unknown> } }))
  const emailsOf = async (id: string) =>
    (await t.db.selectFrom('jobs').select('payload').where('kind', '=', SendNotification.kind).execute())
      .map((row) => row.payload as { template: string; subscription_id: string; facts: Record<string, unknown> })
      .filter((payload) => payload.subscription_id === id)
  const operations = (hash: string, since: number) => sim.requests.slice(since).filter((r) => r.url.includes(`/stores/${hash}/`)).map((r) => r.operation)

  test('skip (the default): nothing made or charged, the period skipped with reason out_of_stock, the subscriber emailed, no dunning; the next renewal goes ahead', async () => {
    const s = await store({})
    const sub = await subscribe(s, WHOLE)
    const since = sim.requests.length
    const counts = await engineAt(sub.next_charge_at).runDue({ storeId: s.shop.store.id })
    assert.equal(counts.renewals, 1)

    assert.deepEqual(operations(s.hash, since), ['getProducts', 'getInventoryItems'], 'the stock is read, and nothing is made: no cart, no order, no payment')
    const [charge] = await chargesOf(sub.id)
    assert.equal(charge!.status, 'failed')
    assert.equal(charge!.failure_code, 'out_of_stock')
    assert.equal(charge!.failure_message, `Out of stock: Beans (variant ${WHOLE}): 0 available, 2 wanted.`)
    assert.equal(charge!.platform_cart_id, null)
    assert.equal(charge!.platform_order_id, null)
    assert.equal(charge!.next_retry_at, null)

    const row = await subscriptionRow(sub.id)
    assert.equal(row.status, 'active')
    assert.equal(row.skip_reason, 'out_of_stock')
    assert.equal(row.dunning_attempts, 0, 'no dunning: the card was never asked')
    assert.equal(row.unpaid_period_start, null)
    assert.equal(row.pending_charge_id, null)
    assert.equal(row.current_period_start!.toISOString(), sub.next_charge_at, 'the skipped period is the current one')
    assert.equal(row.next_charge_at!.toISOString(), row.current_period_end!.toISOString(), 'the next renewal is the following period')
    assert.ok(row.next_charge_at! > new Date(sub.next_charge_at))

    const events = await eventsOf(sub.id)
    const skipped = events.filter((event) => event.event_type === 'subscription.skipped').map((event) => (event.payload as { data: { skip_reason: string } }).data.skip_reason)
    assert.deepEqual(skipped, ['out_of_stock'], 'subscription.skipped with the reason')
    const [failed] = (await eventsOf(charge!.id)).filter((event) => event.event_type === 'charge.failed')
    assert.equal(failed!.payload.data.failure_code, 'out_of_stock')

    const emails = await emailsOf(sub.id)
    assert.deepEqual(emails.map((email) => email.template).filter((template) => template !== 'subscription_created'), ['renewal_skipped'], 'told of the skip; no payment-failed email')
    const told = emails.find((email) => email.template === 'renewal_skipped')!
    assert.equal(told.facts.skipped_period_start, sub.next_charge_at)
    assert.equal(told.facts.next_charge_at, row.next_charge_at!.toISOString())

    // The next renewal, with the variant back in stock, is charged as usual: a new period, its first attempt.
    sim.setInventory(s.hash, { productId: BEANS, variantId: WHOLE, level: 10 })
    await engineAt(row.next_charge_at!.toISOString()).runDue({ storeId: s.shop.store.id })
    const charges = await chargesOf(sub.id)
    assert.deepEqual(charges.map((c) => [c.status, c.attempt, c.failure_code]), [['failed', 1, 'out_of_stock'], ['succeeded', 1, null]])
    assert.equal((await subscriptionRow(sub.id)).skip_reason, 'out_of_stock', 'the reason stays with the latest skip')
    assert.deepEqual(sim.violations, [])
  })

  test('retry: tried again a day later outside dunning, charged once the stock is back (a new key per attempt); another still short after out_of_stock_retry_days is skipped', async () => {
    const s = await store({ out_of_stock: 'retry', out_of_stock_retry_days: 2 })
    const back = await subscribe(s, WHOLE)
    const never = await subscribe(s, WHOLE)
    // The engine runs when both are due (their checkouts were moments apart).
    const day0 = [back.next_charge_at, never.next_charge_at].sort()[1]!
    const day = (n: number) => addDays(new Date(day0), n, 'UTC').toISOString()

    await engineAt(day0).runDue({ storeId: s.shop.store.id })
    for (const sub of [back, never]) {
      const row = await subscriptionRow(sub.id)
      const dayAfter = addDays(new Date(sub.next_charge_at), 1, 'UTC').toISOString()
      assert.equal(row.stock_attempts, 1)
      assert.equal(row.out_of_stock_since!.toISOString(), sub.next_charge_at, 'since it was due')
      assert.equal(row.next_charge_at!.toISOString(), dayAfter, 'tried again a day after it was due')
      assert.equal(row.unpaid_period_start!.toISOString(), sub.next_charge_at, 'the period that waits')
      assert.equal(row.dunning_attempts, 0)
      assert.equal(row.skip_reason, null)
      const [charge] = await chargesOf(sub.id)
      assert.equal(charge!.failure_code, 'out_of_stock')
      assert.equal(charge!.next_retry_at!.toISOString(), dayAfter)
      const view = await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${sub.id}`, headers: s.shop.auth })
      assert.equal(JSON.parse(view.body).out_of_stock_since, sub.next_charge_at)
    }
    // Neither is due before its day, and nobody was told to pay.
    const hourBefore = new Date(new Date(day(1)).getTime() - 3_600_000 - 60_000).toISOString()
    assert.equal((await engineAt(hourBefore).runDue({ storeId: s.shop.store.id })).claimed, 0)
    assert.deepEqual((await emailsOf(never.id)).map((email) => email.template), ['subscription_created'])

    // Day 1: still short for both; "back" is restocked just after, only for the quantity of one subscription.
    await engineAt(day(1)).runDue({ storeId: s.shop.store.id })
    assert.equal((await subscriptionRow(never.id)).stock_attempts, 2)
    assert.equal((await subscriptionRow(never.id)).next_charge_at!.toISOString(), addDays(new Date(never.next_charge_at), 2, 'UTC').toISOString())
    sim.setInventory(s.hash, { productId: BEANS, variantId: WHOLE, level: 2 })
    await engineAt(day(2)).runDue({ storeId: s.shop.store.id, id: back.id })
    const paid = await chargesOf(back.id)
    assert.deepEqual(paid.map((c) => [c.status, c.attempt, c.failure_code]), [['failed', 1, 'out_of_stock'], ['failed', 2, 'out_of_stock'], ['succeeded', 3, null]])
    assert.deepEqual(new Set(paid.map((c) => c.idempotency_key)).size, 3, 'one key per attempt')
    assert.equal(paid[2]!.period_start.toISOString(), back.next_charge_at, 'the period that waited is the one paid')
    const backRow = await subscriptionRow(back.id)
    assert.deepEqual([backRow.stock_attempts, backRow.out_of_stock_since, backRow.unpaid_period_start, backRow.dunning_attempts], [0, null, null, 0])

    // Day 2 for the other: sold out again; past the two days it is skipped.
    sim.setInventory(s.hash, { productId: BEANS, variantId: WHOLE, level: 0 })
    await engineAt(day(2)).runDue({ storeId: s.shop.store.id })
    const neverRow = await subscriptionRow(never.id)
    assert.equal(neverRow.skip_reason, 'out_of_stock')
    assert.equal(neverRow.stock_attempts, 0)
    assert.equal(neverRow.out_of_stock_since, null)
    assert.equal(neverRow.current_period_start!.toISOString(), never.next_charge_at, 'the skipped period is the one that waited')
    assert.ok(neverRow.next_charge_at! > new Date(day(2)))
    assert.deepEqual((await chargesOf(never.id)).map((c) => [c.status, c.attempt, c.failure_code]), [['failed', 1, 'out_of_stock'], ['failed', 2, 'out_of_stock'], ['failed', 3, 'out_of_stock']])
    assert.deepEqual((await emailsOf(never.id)).map((email) => email.template), ['subscription_created', 'renewal_skipped'])

    // No dunning figure: the card was never asked.
    const from = encodeURIComponent(day(-1))
    const to = encodeURIComponent(day(3))
    const summary = await call(t.app, { method: 'GET', url: `/api/v1/admin/analytics/summary?from=${from}&to=${to}`, headers: s.shop.auth })
    assert.equal(summary.statusCode, 200, summary.body)
    assert.equal(summary.json.currencies.find((row: { currency: string }) => row.currency === 'USD').dunning.failed_charges, 0)
    assert.deepEqual(sim.violations, [])
  })

  test('charge_anyway: the stock is not read and the renewal is ordered and paid', async () => {
    const s = await store({ out_of_stock: 'charge_anyway' })
    const sub = await subscribe(s, GROUND)
    const since = sim.requests.length
    await engineAt(sub.next_charge_at).runDue({ storeId: s.shop.store.id })
    const ops = operations(s.hash, since)
    assert.ok(!ops.includes('getProducts') && !ops.includes('getInventoryItems'), ops.join(', '))
    const [charge] = await chargesOf(sub.id)
    assert.equal(charge!.status, 'succeeded', JSON.stringify([sim.violations, sim.requests.slice(since).map((r) => `${r.operation} ${r.outcome}`)]))
  })

  test('a variant in stock is ordered and paid after the stock is read', async () => {
    const s = await store({})
    const sub = await subscribe(s, GROUND)
    const since = sim.requests.length
    await engineAt(sub.next_charge_at).runDue({ storeId: s.shop.store.id })
    assert.deepEqual(operations(s.hash, since).slice(0, 3), ['getProducts', 'getInventoryItems', 'createCart'])
    assert.deepEqual((await chargesOf(sub.id)).map((c) => c.status), ['succeeded'])
    assert.deepEqual(sim.violations, [])
  })

  test('an admin cannot order now or reschedule a renewal that waits for stock', async () => {
    const s = await store({ out_of_stock: 'retry' })
    const sub = await subscribe(s, WHOLE)
    await engineAt(sub.next_charge_at).runDue({ storeId: s.shop.store.id })
    const refused = await call(t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${sub.id}/charge-now`, headers: s.shop.auth })
    assert.equal(refused.statusCode, 409, refused.body)
    assert.match(JSON.parse(refused.body).detail, /waiting for an item to come back in stock/)
  })

  test('an add-on out of stock is left off the renewal and waits for the next; the subscription\'s own line is ordered and paid', async () => {
    const s = await store({})
    const sub = await subscribe(s, GROUND)
    const added = await call(t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${sub.id}/onetimes`, headers: s.shop.auth, payload: { product_id: s.mug, quantity: 1 } })
    assert.equal(added.statusCode, 201, added.body)
    await engineAt(sub.next_charge_at).runDue({ storeId: s.shop.store.id })
    const [charge] = await chargesOf(sub.id)
    assert.equal(charge!.status, 'succeeded', charge!.failure_message ?? '')
    assert.deepEqual(charge!.line_items!.map((line) => line.type), ['subscription'], 'the mug is not on this charge')
    assert.equal(charge!.subtotal, 2500)
    const order = sim.order(s.hash, Number(charge!.platform_order_id))!
    assert.deepEqual(order.products.map((line) => line.product_id), [BEANS])
    const waiting = JSON.parse((await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${sub.id}/onetimes`, headers: s.shop.auth })).body).data
    assert.deepEqual(waiting.map((onetime: { status: string }) => onetime.status), ['pending'], 'the add-on waits for the next renewal')

    // Back in stock: the next renewal carries it.
    sim.setInventory(s.hash, { productId: MUG, level: 5 })
    const next = (await subscriptionRow(sub.id)).next_charge_at!.toISOString()
    await engineAt(next).runDue({ storeId: s.shop.store.id })
    const second = (await chargesOf(sub.id))[1]!
    assert.equal(second.status, 'succeeded')
    assert.deepEqual(second.line_items!.map((line) => line.type), ['subscription', 'onetime'])
    assert.deepEqual(sim.violations, [])
  })

  test('stock that runs out between the read and the cart: the cart refuses it, the stock is read again, and the store\'s policy decides (skip): nothing made, nothing paid', async () => {
    const s = await store({})
    const sub = await subscribe(s, GROUND)
    const since = sim.requests.length
    h.beforeCall = (path, method) => {
      if (method === 'POST' && path === '/v3/carts') sim.setInventory(s.hash, { productId: BEANS, variantId: GROUND, level: 0 })
    }
    try {
      await engineAt(sub.next_charge_at).runDue({ storeId: s.shop.store.id })
    } finally {
      h.beforeCall = undefined
    }
    const [charge] = await chargesOf(sub.id)
    assert.deepEqual([charge!.status, charge!.failure_code, charge!.platform_order_id], ['failed', 'out_of_stock', null])
    assert.equal((await subscriptionRow(sub.id)).skip_reason, 'out_of_stock')
    assert.deepEqual(operations(s.hash, since), ['getProducts', 'getInventoryItems', 'createCart', 'getProducts', 'getInventoryItems'], 'read, refused by the cart, read again')
    assert.equal(sim.requests.filter((r) => r.url.includes(`/stores/${s.hash}/`) && r.operation === 'createCart')[0]!.outcome, 422)
    assert.deepEqual(sim.violations, [])
  })

  test('a store whose token predates the stock scopes keeps renewing: the stock goes unchecked (said in the log), the cart decides', async () => {
    const OLD_SCOPES = ['store_v2_orders', 'store_v2_transactions_read_only', 'store_payments_access_token_create', 'store_payments_methods_read', 'store_v2_customers_read_only', 'store_stored_payment_instruments_read_only', 'store_cart', 'store_checkout']
    const s = await store({}, OLD_SCOPES)
    const sub = await subscribe(s, GROUND)
    await engineAt(sub.next_charge_at).runDue({ storeId: s.shop.store.id })
    const [charge] = await chargesOf(sub.id)
    assert.equal(charge!.status, 'succeeded', charge!.failure_message ?? '')
    assert.deepEqual(sim.violations.map((v) => [v.operation, v.status]), [['getProducts', 403]], 'asked once, refused for the scope')
    sim.violations.length = 0
  })
})
