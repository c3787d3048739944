import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { chargeIdempotencyKey } from '../../../src/modules/billing/gateways/index.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, checkout, checkoutBody, closeTestApp, getSubscription, storedEvents } from '../subscriptions/fixtures.ts'

/**
 * Renewals, dunning and the lifecycle work around them, end to end: checkouts and actions through the
 * admin API, time through the store's test clock (docs/contract.md, Subscription states and Billing).
 *
 * Every store's clock starts at T0, a fixed time, so dates are exact. A monthly plan bought at T0
 * renews on Feb 10, Mar 10, Apr 10 ... at 09:00 UTC.
 */
const T0 = '2026-01-10T09:00:00.000Z'
const HOUR = 3_600_000
const DAY = 24 * HOUR
const plus = (iso: string, ms: number) => new Date(new Date(iso).getTime() + ms).toISOString()
const FEB10 = '2026-02-10T09:00:00.000Z'
const MAR10 = '2026-03-10T09:00:00.000Z'
const APR10 = '2026-04-10T09:00:00.000Z'
const feb = (day: number, hour = 9) => `2026-02-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00.000Z`

const NOTHING = { activations: 0, renewals: 0, retries: 0, reminders: 0, resumptions: 0, cancellations: 0, expirations: 0 }

interface Shop extends StoreWithKey {
  productId: string
  /** Monthly, 1500 USD. */
  monthly: string
}

describe('renewals, dunning and recovery through the test clock (docs/contract.md, Billing)', () => {
  let t: TestApp

  before(async () => {
    t = await buildTestApp()
  })
  after(() => closeTestApp(t))

  /** A test-mode store whose clock stands at T0, with store settings changed through PATCH /store. */
  async function newShop(settings: Record<string, unknown> = {}): Promise<Shop> {
    const shop = await createStoreWithKey(t.db)
    await t.db.updateTable('stores').set({ test_clock_now: new Date(T0) }).where('id', '=', shop.store.id).execute()
    if (Object.keys(settings).length > 0) {
      const response = await call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload: settings })
      assert.equal(response.statusCode, 200, response.body)
      for (const [key, value] of Object.entries(settings)) assert.deepEqual(response.json[key], value)
    }
    const product = await createProduct(t.app, shop.auth)
    const monthly = (await createPlan(t.app, shop.auth, product.id, { name: 'Monthly', amount: 1500, interval: 'month' })).id
    return { ...shop, productId: product.id, monthly }
  }

  async function plan(shop: Shop, body: Record<string, unknown>): Promise<string> {
    return (await createPlan(t.app, shop.auth, shop.productId, body)).id
  }

  async function subscribe(shop: Shop, planId: string, overrides: Record<string, unknown> = {}): Promise<any> {
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(planId, overrides))
    return subscription
  }

  async function advance(shop: Shop, to: string): Promise<any> {
    const response = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to } })
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json.now, to)
    return response.json.processed
  }

  /** A subscription's charges through the admin API, oldest attempt first. */
  async function charges(shop: Shop, subscriptionId: string, status?: string): Promise<any[]> {
    const query = new URLSearchParams({ subscription_id: subscriptionId, limit: '100', ...(status ? { status } : {}) })
    const response = await call(t.app, { method: 'GET', url: `/api/v1/admin/charges?${query}`, headers: shop.auth })
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json.next_cursor, null)
    return [...response.json.data].sort((a, b) => a.created_at.localeCompare(b.created_at) || a.attempt - b.attempt)
  }

  /** The store's events in the order they were recorded (across entities), as delivered. */
  async function storeEvents(shop: Shop): Promise<any[]> {
    const rows = await t.db.selectFrom('events').select(['payload', 'entity_id']).where('store_id', '=', shop.store.id).orderBy('position').execute()
    return rows.map((row) => ({ ...JSON.parse(row.payload), entity_id: row.entity_id }))
  }

  /** Events about one subscription or about its charges, in recorded order. */
  async function eventsAround(shop: Shop, subscriptionId: string, chargeIds: string[] = []): Promise<any[]> {
    const ids = new Set([subscriptionId, ...chargeIds])
    return (await storeEvents(shop)).filter((event) => ids.has(event.entity_id))
  }

  async function ledger(subscriptionId: string) {
    return t.db.selectFrom('test_gateway_charges').selectAll().where('subscription_id', '=', subscriptionId).orderBy('created_at').execute()
  }

  const instrument = (shop: Shop, subscriptionId: string, paymentInstrumentId: string) =>
    act(t.app, shop.auth, subscriptionId, 'payment-instrument', { payment_instrument_id: paymentInstrumentId })

  /** Checks the subscription never paid a period twice: succeeded charges' periods are disjoint. */
  function assertNoOverlap(paid: any[]): void {
    const sorted = [...paid].sort((a, b) => a.period_start.localeCompare(b.period_start))
    for (let i = 1; i < sorted.length; i++) {
      assert.ok(sorted[i].period_start >= sorted[i - 1].period_end, `periods overlap: ${JSON.stringify(sorted.map((c) => [c.period_start, c.period_end]))}`)
    }
  }

  describe('a successful renewal', () => {
    test('subscription.charged, then charge.succeeded; attempt 1 of amount x quantity for the period from the old next_charge_at; the period advances', async () => {
      const shop = await newShop()
      const sub = await subscribe(shop, shop.monthly, { items: [{ plan_id: shop.monthly, quantity: 2 }], payment_instrument_id: 'pi_visa_4242' })
      assert.equal(sub.next_charge_at, FEB10)

      // A moment before the renewal: nothing is charged yet.
      assert.deepEqual(await advance(shop, plus(FEB10, -1)), { ...NOTHING, reminders: 1 })
      assert.deepEqual(await charges(shop, sub.id), [])

      assert.deepEqual(await advance(shop, plus(FEB10, 3 * HOUR)), { ...NOTHING, renewals: 1 })
      const [charge, ...others] = await charges(shop, sub.id)
      assert.deepEqual(others, [])
      const expected = {
        object: 'charge',
        subscription_id: sub.id,
        amount: 3000,
        currency: 'USD',
        status: 'succeeded',
        attempt: 1,
        payment_instrument_id: 'pi_visa_4242',
        failure_code: null,
        failure_message: null,
        next_retry_at: null,
        period_start: FEB10,
        period_end: MAR10,
        created_at: FEB10,
        settled_at: FEB10,
      }
      assert.deepEqual(Object.fromEntries(Object.keys(expected).map((key) => [key, charge[key]])), expected)
      assert.match(charge.id, /^ch_/)
      const one = await call(t.app, { method: 'GET', url: `/api/v1/admin/charges/${charge.id}`, headers: shop.auth })
      assert.equal(one.statusCode, 200, one.body)
      assert.deepEqual(one.json, charge)

      const renewed = await getSubscription(t.app, shop.auth, sub.id)
      assert.equal(renewed.status, 'active')
      assert.equal(renewed.current_period_start, FEB10)
      assert.equal(renewed.current_period_end, MAR10)
      assert.equal(renewed.next_charge_at, MAR10)

      // The spec's order, across the subscription's and the charge's event streams.
      const billing = (await eventsAround(shop, sub.id, [charge.id])).filter((event) => ['subscription.charged', 'charge.succeeded', 'charge.failed'].includes(event.event_type))
      assert.deepEqual(billing.map((event) => [event.event_type, event.entity_id, event.timestamp]), [
        ['subscription.charged', sub.id, FEB10],
        ['charge.succeeded', charge.id, FEB10],
      ])
      assert.equal(billing[1].data.id, charge.id)
      assert.equal(billing[1].data.status, 'succeeded')
      assert.equal(billing[1].data.amount, 3000)
      assert.equal((await storedEvents(t.db, charge.id)).length, 1)

      // The next month renews the next period.
      assert.deepEqual(await advance(shop, plus(MAR10, HOUR)), { ...NOTHING, renewals: 1, reminders: 1 })
      const both = await charges(shop, sub.id, 'succeeded')
      assert.deepEqual(both.map((c) => [c.period_start, c.period_end, c.attempt]), [[FEB10, MAR10, 1], [MAR10, APR10, 1]])
      assert.equal((await getSubscription(t.app, shop.auth, sub.id)).next_charge_at, APR10)
    })

    test('the charge list filters by status and answers 404 for an unknown charge', async () => {
      const shop = await newShop()
      const good = await subscribe(shop, shop.monthly)
      const bad = await subscribe(shop, shop.monthly, { payment_instrument_id: 'pi_card_declined' })
      await advance(shop, plus(FEB10, HOUR))
      assert.equal((await charges(shop, good.id, 'failed')).length, 0)
      assert.equal((await charges(shop, bad.id, 'failed')).length, 1)
      const all = await call(t.app, { method: 'GET', url: '/api/v1/admin/charges?status=succeeded', headers: shop.auth })
      assert.deepEqual(all.json.data.map((c: any) => c.subscription_id), [good.id])
      const missing = await call(t.app, { method: 'GET', url: '/api/v1/admin/charges/ch_01J0000000000000000000000Z', headers: shop.auth })
      assert.equal(missing.statusCode, 404)
    })
  })

  describe('dunning', () => {
    test('a declined card: charge.failed, retries at first failure +1, +3, +5, +7 days, each a new attempt; past_due after the 5th failure', async () => {
      const shop = await newShop()
      const sub = await subscribe(shop, shop.monthly, { payment_instrument_id: 'pi_card_declined' })

      assert.deepEqual(await advance(shop, plus(FEB10, HOUR)), { ...NOTHING, renewals: 1, reminders: 1 })
      const [first] = await charges(shop, sub.id)
      assert.equal(first.status, 'failed')
      assert.equal(first.attempt, 1)
      assert.equal(first.failure_code, 'card_declined')
      assert.equal(first.failure_message, 'The card was declined.')
      assert.equal(first.next_retry_at, feb(11))
      assert.equal(first.period_start, FEB10)
      const dunning = await getSubscription(t.app, shop.auth, sub.id)
      assert.equal(dunning.status, 'active', 'active while dunning')
      assert.equal(dunning.next_charge_at, feb(11))
      assert.equal(dunning.current_period_start, T0, 'the unpaid period does not become current')

      assert.deepEqual(await advance(shop, feb(18)), { ...NOTHING, retries: 4 })
      const attempts = await charges(shop, sub.id)
      assert.deepEqual(
        attempts.map((c) => ({ attempt: c.attempt, status: c.status, created_at: c.created_at, next_retry_at: c.next_retry_at, period_start: c.period_start, period_end: c.period_end, failure_code: c.failure_code })),
        [
          { attempt: 1, status: 'failed', created_at: feb(10), next_retry_at: feb(11), period_start: FEB10, period_end: MAR10, failure_code: 'card_declined' },
          { attempt: 2, status: 'failed', created_at: feb(11), next_retry_at: feb(13), period_start: FEB10, period_end: MAR10, failure_code: 'card_declined' },
          { attempt: 3, status: 'failed', created_at: feb(13), next_retry_at: feb(15), period_start: FEB10, period_end: MAR10, failure_code: 'card_declined' },
          { attempt: 4, status: 'failed', created_at: feb(15), next_retry_at: feb(17), period_start: FEB10, period_end: MAR10, failure_code: 'card_declined' },
          { attempt: 5, status: 'failed', created_at: feb(17), next_retry_at: null, period_start: FEB10, period_end: MAR10, failure_code: 'card_declined' },
        ],
      )
      assert.equal(new Set(attempts.map((c) => c.id)).size, 5, 'each attempt is a charge of its own')

      const pastDue = await getSubscription(t.app, shop.auth, sub.id)
      assert.equal(pastDue.status, 'past_due')
      assert.equal(pastDue.next_charge_at, null)

      const events = await eventsAround(shop, sub.id, attempts.map((c) => c.id))
      const failed = events.filter((event) => event.event_type === 'charge.failed')
      assert.deepEqual(failed.map((event) => [event.entity_id, event.timestamp]), attempts.map((c) => [c.id, c.created_at]))
      const pastDueEvents = events.filter((event) => event.event_type === 'subscription.past_due')
      assert.equal(pastDueEvents.length, 1)
      assert.equal(pastDueEvents[0].timestamp, feb(17))
      assert.equal(pastDueEvents[0].data.status, 'past_due')
      assert.ok(events.indexOf(pastDueEvents[0]) > events.indexOf(failed[4]), 'past_due follows the last charge.failed')
      assert.equal(events.filter((event) => event.event_type === 'subscription.charged').length, 5, 'every attempt is announced')
      assert.equal(events.filter((event) => event.event_type === 'charge.succeeded').length, 0)

      // Nothing more is attempted while it waits in past_due.
      assert.deepEqual(await advance(shop, feb(27)), NOTHING)
      assert.equal((await charges(shop, sub.id)).length, 5)
    })

    test('a store with dunning_retry_days [2] retries once, two days after the first failure, then past_due', async () => {
      const shop = await newShop({ dunning_retry_days: [2] })
      const sub = await subscribe(shop, shop.monthly, { payment_instrument_id: 'pi_card_declined' })
      assert.deepEqual(await advance(shop, feb(20)), { ...NOTHING, renewals: 1, retries: 1, reminders: 1 })
      const attempts = await charges(shop, sub.id)
      assert.deepEqual(attempts.map((c) => [c.attempt, c.created_at, c.next_retry_at]), [[1, feb(10), feb(12)], [2, feb(12), null]])
      const pastDue = await getSubscription(t.app, shop.auth, sub.id)
      assert.equal(pastDue.status, 'past_due')
      const event = (await storedEvents(t.db, sub.id)).find((e) => e.event_type === 'subscription.past_due')
      assert.equal(event?.timestamp, feb(12))
    })

    test('an instrument ending _insufficient_funds fails with failure_code insufficient_funds', async () => {
      const shop = await newShop()
      const sub = await subscribe(shop, shop.monthly, { payment_instrument_id: 'pi_4000_insufficient_funds' })
      await advance(shop, plus(FEB10, HOUR))
      const [charge] = await charges(shop, sub.id)
      assert.equal(charge.status, 'failed')
      assert.equal(charge.failure_code, 'insufficient_funds')
      assert.equal(charge.failure_message, 'The card has insufficient funds.')
      const [failed] = await storedEvents(t.db, charge.id)
      assert.equal(failed.event_type, 'charge.failed')
      assert.equal(failed.data.failure_code, 'insufficient_funds')
    })

    test('past_due is cancelled automatically 30 days after it began (default)', async () => {
      const shop = await newShop()
      const sub = await subscribe(shop, shop.monthly, { payment_instrument_id: 'pi_card_declined' })
      await advance(shop, feb(18))
      assert.equal((await getSubscription(t.app, shop.auth, sub.id)).status, 'past_due')
      // past_due since Feb 17 09:00: cancelled at Mar 19 09:00, not before.
      const cancelAt = plus(feb(17), 30 * DAY)
      assert.deepEqual(await advance(shop, plus(cancelAt, -1)), NOTHING)
      assert.equal((await getSubscription(t.app, shop.auth, sub.id)).status, 'past_due')
      assert.deepEqual(await advance(shop, plus(cancelAt, HOUR)), { ...NOTHING, cancellations: 1 })
      const cancelled = await getSubscription(t.app, shop.auth, sub.id)
      assert.equal(cancelled.status, 'cancelled')
      assert.equal(cancelled.cancelled_at, cancelAt)
      assert.ok(cancelled.cancellation_reason, 'the reason says why')
      const event = (await storedEvents(t.db, sub.id)).find((e) => e.event_type === 'subscription.cancelled')
      assert.equal(event?.timestamp, cancelAt)
      assert.equal((await charges(shop, sub.id)).length, 5, 'cancellation charges nothing')
    })

    test('a store with past_due_cancel_days 5 cancels 5 days after past_due, in the same advance as the dunning', async () => {
      const shop = await newShop({ past_due_cancel_days: 5 })
      const sub = await subscribe(shop, shop.monthly, { payment_instrument_id: 'pi_card_declined' })
      assert.deepEqual(await advance(shop, feb(23)), { ...NOTHING, renewals: 1, retries: 4, reminders: 1, cancellations: 1 })
      const cancelled = await getSubscription(t.app, shop.auth, sub.id)
      assert.equal(cancelled.status, 'cancelled')
      assert.equal(cancelled.cancelled_at, feb(22))
    })
  })

  describe('recovery', () => {
    test('a past_due subscription given a new instrument is retried on the next advance (even to the current time): charge.succeeded, then subscription.activated', async () => {
      const shop = await newShop()
      const sub = await subscribe(shop, shop.monthly, { payment_instrument_id: 'pi_card_declined' })
      await advance(shop, feb(20, 12))
      assert.equal((await getSubscription(t.app, shop.auth, sub.id)).status, 'past_due')

      const updated = await instrument(shop, sub.id, 'pi_new_card')
      assert.equal(updated.statusCode, 200, updated.body)
      assert.equal(updated.json.payment_instrument_id, 'pi_new_card')
      assert.equal(updated.json.next_charge_at, feb(20, 12), 'retried at once')

      assert.deepEqual(await advance(shop, feb(20, 12)), { ...NOTHING, retries: 1 })
      const attempts = await charges(shop, sub.id)
      const recovered = attempts.at(-1)
      assert.deepEqual(
        { attempt: recovered.attempt, status: recovered.status, payment_instrument_id: recovered.payment_instrument_id, period_start: recovered.period_start, period_end: recovered.period_end, created_at: recovered.created_at },
        { attempt: 6, status: 'succeeded', payment_instrument_id: 'pi_new_card', period_start: FEB10, period_end: MAR10, created_at: feb(20, 12) },
      )
      assert.equal(attempts.filter((c) => c.status === 'succeeded').length, 1)

      const active = await getSubscription(t.app, shop.auth, sub.id)
      assert.equal(active.status, 'active')
      assert.equal(active.current_period_start, FEB10)
      assert.equal(active.next_charge_at, MAR10)

      const events = (await eventsAround(shop, sub.id, [recovered.id])).filter((e) => e.timestamp === feb(20, 12) && e.event_type !== 'subscription.payment_instrument_updated')
      assert.deepEqual(events.map((e) => e.event_type), ['subscription.charged', 'charge.succeeded', 'subscription.activated'])
      assert.equal(events[2].data.status, 'active')

      // And it renews normally afterwards.
      await advance(shop, plus(MAR10, HOUR))
      const next = (await charges(shop, sub.id)).at(-1)
      assert.deepEqual([next.attempt, next.status, next.period_start], [1, 'succeeded', MAR10])
    })

    test('a new instrument that is declined too leaves it past_due, with its cancellation still counted from the first past_due', async () => {
      const shop = await newShop({ past_due_cancel_days: 10 })
      const sub = await subscribe(shop, shop.monthly, { payment_instrument_id: 'pi_card_declined' })
      await advance(shop, feb(20))
      assert.equal((await instrument(shop, sub.id, 'pi_other_declined')).statusCode, 200)
      assert.deepEqual(await advance(shop, feb(20)), { ...NOTHING, retries: 1 })
      const last = (await charges(shop, sub.id)).at(-1)
      assert.deepEqual([last.attempt, last.status, last.next_retry_at], [6, 'failed', null])
      const still = await getSubscription(t.app, shop.auth, sub.id)
      assert.equal(still.status, 'past_due')
      assert.equal(still.next_charge_at, null)
      assert.equal((await storedEvents(t.db, sub.id)).filter((e) => e.event_type === 'subscription.past_due').length, 1, 'not announced again')
      assert.deepEqual(await advance(shop, feb(28)), { ...NOTHING, cancellations: 1 })
      assert.equal((await getSubscription(t.app, shop.auth, sub.id)).cancelled_at, feb(27))
    })

    test('an instrument update during dunning (before past_due) retries at once; no subscription.activated, no further retries', async () => {
      const shop = await newShop()
      const sub = await subscribe(shop, shop.monthly, { payment_instrument_id: 'pi_card_declined' })
      await advance(shop, feb(10, 12))
      assert.equal((await getSubscription(t.app, shop.auth, sub.id)).next_charge_at, feb(11))

      const updated = await instrument(shop, sub.id, 'pi_good_card')
      assert.equal(updated.json.next_charge_at, feb(10, 12))
      assert.deepEqual(await advance(shop, feb(10, 12)), { ...NOTHING, retries: 1 })
      const attempts = await charges(shop, sub.id)
      assert.deepEqual(attempts.map((c) => [c.attempt, c.status, c.created_at, c.period_start]), [[1, 'failed', feb(10), FEB10], [2, 'succeeded', feb(10, 12), FEB10]])
      const active = await getSubscription(t.app, shop.auth, sub.id)
      assert.equal(active.status, 'active')
      assert.equal(active.next_charge_at, MAR10)
      const types = (await storedEvents(t.db, sub.id)).map((e) => e.event_type)
      assert.ok(!types.includes('subscription.past_due'))
      assert.equal(types.filter((type) => type === 'subscription.activated').length, 1, 'only the checkout activation')

      // The old schedule (Feb 11, 13 ...) is gone.
      assert.deepEqual(await advance(shop, feb(25)), NOTHING)
      assert.equal((await charges(shop, sub.id)).length, 2)
    })

    test('an instrument update on a subscription that is not in dunning does not bring its renewal forward', async () => {
      const shop = await newShop()
      const sub = await subscribe(shop, shop.monthly)
      const updated = await instrument(shop, sub.id, 'pi_replacement')
      assert.equal(updated.json.next_charge_at, FEB10)
      assert.deepEqual(await advance(shop, plus(T0, DAY)), NOTHING)
      assert.deepEqual(await charges(shop, sub.id), [])
    })
  })

  describe('exactly one charge per period', () => {
    test('an instrument ending _timeout: the first gateway call times out, the key reconciles it; one charge, one gateway charge', async () => {
      const shop = await newShop()
      const sub = await subscribe(shop, shop.monthly, { payment_instrument_id: 'pi_slow_timeout' })
      assert.deepEqual(await advance(shop, plus(FEB10, HOUR)), { ...NOTHING, renewals: 1, reminders: 1 })
      const all = await charges(shop, sub.id)
      assert.equal(all.length, 1)
      assert.equal(all[0].status, 'succeeded')
      assert.equal(all[0].period_start, FEB10)
      const rows = await ledger(sub.id)
      assert.equal(rows.length, 1)
      assert.equal(rows[0]!.status, 'succeeded')
      // One charge call carried the key (the one that timed out); the engine then found its outcome by
      // looking the same key up (a lookup is not a call), instead of charging again.
      assert.equal(rows[0]!.calls, 1)
      assert.equal(rows[0]!.idempotency_key, chargeIdempotencyKey(sub.id, new Date(FEB10), 1), 'the key is derived from (subscription, period, attempt)')
      assert.equal((await getSubscription(t.app, shop.auth, sub.id)).next_charge_at, MAR10)
      assert.equal((await storedEvents(t.db, all[0].id)).map((e) => e.event_type).join(), 'charge.succeeded')
    })

    test('advancing day by day for 65 days: one succeeded charge per period, no overlapping periods, prepaid blocks untouched', async () => {
      const shop = await newShop()
      const prepaid = await plan(shop, { name: 'Quarterly box', amount: 4000, interval: 'month', prepaid_cycles: 3 })
      const monthly = await subscribe(shop, shop.monthly)
      const timeout = await subscribe(shop, shop.monthly, { payment_instrument_id: 'pi_daily_timeout' })
      const block = await subscribe(shop, prepaid)
      const totals = { ...NOTHING }
      for (let day = 1; day <= 65; day++) {
        const processed = await advance(shop, plus(T0, day * DAY))
        for (const key of Object.keys(totals) as (keyof typeof NOTHING)[]) totals[key] += processed[key]
      }
      assert.deepEqual(totals, { ...NOTHING, renewals: 4, reminders: 4 })
      for (const sub of [monthly, timeout]) {
        const all = await charges(shop, sub.id)
        assert.deepEqual(all.map((c) => [c.status, c.period_start, c.period_end]), [['succeeded', FEB10, MAR10], ['succeeded', MAR10, APR10]])
        assertNoOverlap(all)
        assert.equal((await ledger(sub.id)).filter((row) => row.status === 'succeeded').length, 2)
      }
      assert.deepEqual(await charges(shop, block.id), [], 'the block paid at checkout runs to Apr 10')
      assert.equal((await getSubscription(t.app, shop.auth, block.id)).current_period_start, MAR10)
    })

    test('two concurrent advances over ~30 due subscriptions: each has exactly one succeeded charge and one gateway charge for the period', async () => {
      const shop = await newShop()
      const items = Array.from({ length: 30 }, () => ({ plan_id: shop.monthly, quantity: 1 }))
      const subs = await checkout(t.app, shop.auth, checkoutBody(shop.monthly, { items }))
      const timeouts = await checkout(t.app, shop.auth, checkoutBody(shop.monthly, { items: items.slice(0, 4), payment_instrument_id: 'pi_race_timeout' }))
      const all = [...subs, ...timeouts]
      const to = plus(FEB10, HOUR)
      const [a, b] = await Promise.all([advance(shop, to), advance(shop, to)])
      assert.equal(a.renewals + b.renewals, all.length, 'each renewal ran once, in one of the two calls')
      assert.equal(a.reminders + b.reminders, all.length, 'each reminder was sent once')

      const charged = await t.db.selectFrom('charges').selectAll().where('store_id', '=', shop.store.id).execute()
      assert.equal(charged.length, all.length)
      const gateway = await t.db.selectFrom('test_gateway_charges').selectAll().where('store_id', '=', shop.store.id).where('status', '=', 'succeeded').execute()
      for (const sub of all) {
        const mine = charged.filter((c) => c.subscription_id === sub.id)
        assert.equal(mine.length, 1, `${sub.id}: ${mine.length} charges`)
        assert.equal(mine[0]!.status, 'succeeded')
        assert.equal(mine[0]!.period_start.toISOString(), FEB10)
        assert.equal(gateway.filter((row) => row.subscription_id === sub.id).length, 1)
        const reminders = (await storedEvents(t.db, sub.id)).filter((e) => e.event_type === 'subscription.renewal_upcoming')
        assert.deepEqual(reminders.map((e) => [e.timestamp, e.data.next_charge_at]), [[feb(7), FEB10]])
      }
      // And the next period still renews (and is announced) once.
      const [c, d] = await Promise.all([advance(shop, plus(MAR10, HOUR)), advance(shop, plus(MAR10, HOUR))])
      assert.equal(c.renewals + d.renewals, all.length)
      assert.equal(c.reminders + d.reminders, all.length)
      const gatewayAfter = await t.db.selectFrom('test_gateway_charges').select(['subscription_id']).where('store_id', '=', shop.store.id).where('status', '=', 'succeeded').execute()
      assert.equal(gatewayAfter.length, 2 * all.length)
    })
  })

  describe('skip and swap', () => {
    test('a skipped renewal charges nothing, the period advances, skip_next clears, and the next renewal is charged', async () => {
      const shop = await newShop()
      const sub = await subscribe(shop, shop.monthly)
      const skipped = await act(t.app, shop.auth, sub.id, 'skip')
      assert.equal(skipped.statusCode, 200, skipped.body)
      assert.equal(skipped.json.skip_next, true)

      assert.deepEqual(await advance(shop, plus(FEB10, HOUR)), { ...NOTHING, renewals: 1 })
      assert.deepEqual(await charges(shop, sub.id), [])
      assert.deepEqual(await ledger(sub.id), [])
      const after = await getSubscription(t.app, shop.auth, sub.id)
      assert.equal(after.skip_next, false)
      assert.equal(after.current_period_start, FEB10)
      assert.equal(after.current_period_end, MAR10)
      assert.equal(after.next_charge_at, MAR10)

      assert.deepEqual(await advance(shop, plus(MAR10, HOUR)), { ...NOTHING, renewals: 1, reminders: 1 })
      const [charge, ...rest] = await charges(shop, sub.id)
      assert.deepEqual(rest, [])
      assert.deepEqual([charge.status, charge.attempt, charge.period_start, charge.period_end], ['succeeded', 1, MAR10, APR10])
      const reminders = (await storedEvents(t.db, sub.id)).filter((e) => e.event_type === 'subscription.renewal_upcoming')
      assert.deepEqual(reminders.map((e) => e.timestamp), ['2026-03-07T09:00:00.000Z'], 'the skipped renewal is not announced')
    })

    test('after a swap the next renewal charges the new plan amount (x quantity)', async () => {
      const shop = await newShop()
      const premium = await plan(shop, { name: 'Premium', amount: 2500, interval: 'month' })
      const sub = await subscribe(shop, shop.monthly, { items: [{ plan_id: shop.monthly, quantity: 2 }] })
      const swapped = await act(t.app, shop.auth, sub.id, 'swap', { plan_id: premium })
      assert.equal(swapped.statusCode, 200, swapped.body)
      assert.equal(swapped.json.next_charge_at, FEB10, 'from the next period')
      await advance(shop, plus(FEB10, HOUR))
      const [charge] = await charges(shop, sub.id)
      assert.deepEqual([charge.status, charge.amount, charge.period_start, charge.period_end], ['succeeded', 5000, FEB10, MAR10])
      const renewed = await getSubscription(t.app, shop.auth, sub.id)
      assert.equal(renewed.plan_id, premium)
      assert.equal(renewed.amount, 2500)
    })
  })

  describe('trials and prepaid plans', () => {
    test('a trial (7 days) is activated at its end and the first period is charged at once, at the activation time', async () => {
      const shop = await newShop()
      const trial = await plan(shop, { name: 'Trial', amount: 900, interval: 'month', trial_days: 7 })
      const sub = await subscribe(shop, trial)
      assert.equal(sub.status, 'pending')
      const trialEnd = plus(T0, 7 * DAY)

      assert.deepEqual(await advance(shop, plus(trialEnd, -1)), NOTHING)
      assert.deepEqual(await charges(shop, sub.id), [])

      assert.deepEqual(await advance(shop, plus(trialEnd, HOUR)), { ...NOTHING, activations: 1, renewals: 1 })
      const [charge, ...rest] = await charges(shop, sub.id)
      assert.deepEqual(rest, [])
      assert.deepEqual(
        [charge.status, charge.attempt, charge.amount, charge.created_at, charge.period_start, charge.period_end],
        ['succeeded', 1, 900, trialEnd, trialEnd, '2026-02-17T09:00:00.000Z'],
      )
      const active = await getSubscription(t.app, shop.auth, sub.id)
      assert.equal(active.status, 'active')
      assert.equal(active.current_period_start, trialEnd)
      assert.equal(active.next_charge_at, '2026-02-17T09:00:00.000Z')
      const events = (await eventsAround(shop, sub.id, [charge.id])).filter((e) => e.timestamp === trialEnd)
      assert.deepEqual(events.map((e) => e.event_type), ['subscription.activated', 'subscription.charged', 'charge.succeeded'])
    })

    test('prepaid (3 monthly cycles): an order at checkout and at each cycle start, one charge per block at its end, nothing mid-block', async () => {
      const shop = await newShop()
      const prepaid = await plan(shop, { name: 'Quarterly box', amount: 4000, interval: 'month', prepaid_cycles: 3 })
      const sub = await subscribe(shop, prepaid)
      assert.equal(sub.next_charge_at, APR10)
      assert.deepEqual(sub.prepaid, { cycles_total: 3, cycles_remaining: 2 })

      const orders = async () => (await storedEvents(t.db, sub.id)).filter((e) => e.event_type === 'prepaid.order_created').map((e) => e.timestamp)
      assert.deepEqual(await orders(), [T0])

      await advance(shop, plus(FEB10, HOUR))
      assert.deepEqual(await orders(), [T0, FEB10])
      assert.deepEqual((await getSubscription(t.app, shop.auth, sub.id)).prepaid, { cycles_total: 3, cycles_remaining: 1 })
      await advance(shop, plus(MAR10, HOUR))
      assert.deepEqual(await orders(), [T0, FEB10, MAR10])
      assert.deepEqual(await charges(shop, sub.id), [], 'nothing charged mid-block')

      assert.deepEqual(await advance(shop, plus(APR10, HOUR)), { ...NOTHING, renewals: 1, reminders: 1 })
      const [charge, ...rest] = await charges(shop, sub.id)
      assert.deepEqual(rest, [])
      assert.deepEqual([charge.status, charge.amount, charge.period_start, charge.period_end], ['succeeded', 4000, APR10, '2026-07-10T09:00:00.000Z'])
      assert.deepEqual(await orders(), [T0, FEB10, MAR10, APR10])
      const renewed = await getSubscription(t.app, shop.auth, sub.id)
      assert.deepEqual([renewed.current_period_start, renewed.current_period_end, renewed.next_charge_at], [APR10, '2026-05-10T09:00:00.000Z', '2026-07-10T09:00:00.000Z'])
      assert.deepEqual(renewed.prepaid, { cycles_total: 3, cycles_remaining: 2 })
    })

    test('prepaid across a whole block in one advance: every cycle start still gets its order, in order, before the block charge', async () => {
      const shop = await newShop()
      const prepaid = await plan(shop, { name: 'Quarterly box', amount: 4000, interval: 'month', prepaid_cycles: 3 })
      const sub = await subscribe(shop, prepaid)
      await advance(shop, '2026-07-11T00:00:00.000Z')
      const events = await storedEvents(t.db, sub.id)
      const orders = events.filter((e) => e.event_type === 'prepaid.order_created').map((e) => e.timestamp)
      assert.deepEqual(orders, [T0, FEB10, MAR10, APR10, '2026-05-10T09:00:00.000Z', '2026-06-10T09:00:00.000Z', '2026-07-10T09:00:00.000Z'])
      const paid = await charges(shop, sub.id)
      assert.deepEqual(paid.map((c) => [c.status, c.period_start, c.period_end]), [['succeeded', APR10, '2026-07-10T09:00:00.000Z'], ['succeeded', '2026-07-10T09:00:00.000Z', '2026-10-10T09:00:00.000Z']])
    })

    test('prepaid block renewal declined: no order for the unpaid block, and the retry pays that same block', async () => {
      const shop = await newShop()
      const prepaid = await plan(shop, { name: 'Quarterly box', amount: 4000, interval: 'month', prepaid_cycles: 3 })
      const sub = await subscribe(shop, prepaid, { payment_instrument_id: 'pi_box_declined' })
      await advance(shop, plus(MAR10, HOUR))
      await advance(shop, plus(APR10, 2 * HOUR))
      const [failed] = await charges(shop, sub.id)
      assert.deepEqual([failed.status, failed.period_start, failed.next_retry_at], ['failed', APR10, '2026-04-11T09:00:00.000Z'])
      const orders = async () => (await storedEvents(t.db, sub.id)).filter((e) => e.event_type === 'prepaid.order_created').map((e) => e.timestamp)
      assert.deepEqual(await orders(), [T0, FEB10, MAR10], 'an unpaid block ships nothing')

      assert.equal((await instrument(shop, sub.id, 'pi_box_ok')).statusCode, 200)
      await advance(shop, plus(APR10, 2 * HOUR))
      const attempts = await charges(shop, sub.id)
      assert.deepEqual(attempts.map((c) => [c.attempt, c.status, c.period_start, c.period_end]), [
        [1, 'failed', APR10, '2026-07-10T09:00:00.000Z'],
        [2, 'succeeded', APR10, '2026-07-10T09:00:00.000Z'],
      ])
      assert.deepEqual(await orders(), [T0, FEB10, MAR10, plus(APR10, 2 * HOUR)])
      const renewed = await getSubscription(t.app, shop.auth, sub.id)
      assert.deepEqual([renewed.current_period_start, renewed.next_charge_at], [APR10, '2026-07-10T09:00:00.000Z'])
    })

    test('a gifted prepaid subscription expires at the end of its block: subscription.expired, no charge', async () => {
      const shop = await newShop()
      const prepaid = await plan(shop, { name: 'Quarterly box', amount: 4000, interval: 'month', prepaid_cycles: 3 })
      const sub = await subscribe(shop, prepaid, { gift: { recipient_email: 'friend@example.com', message: 'Enjoy' } })
      assert.ok(sub.gift)
      await advance(shop, plus(MAR10, HOUR))
      assert.equal((await getSubscription(t.app, shop.auth, sub.id)).status, 'active')
      assert.deepEqual(await advance(shop, plus(APR10, HOUR)), { ...NOTHING, expirations: 1, reminders: 1 })
      const expired = await getSubscription(t.app, shop.auth, sub.id)
      assert.equal(expired.status, 'expired')
      assert.equal(expired.next_charge_at, null)
      assert.deepEqual(await charges(shop, sub.id), [])
      assert.deepEqual(await ledger(sub.id), [])
      const event = (await storedEvents(t.db, sub.id)).find((e) => e.event_type === 'subscription.expired')
      assert.equal(event?.timestamp, APR10)
      assert.deepEqual(await advance(shop, '2026-08-01T00:00:00.000Z'), NOTHING, 'expired is final')
    })
  })

  describe('reminders', () => {
    test('subscription.renewal_upcoming 3 days before each renewal (its timestamp), once per renewal', async () => {
      const shop = await newShop()
      const sub = await subscribe(shop, shop.monthly)
      let reminders = 0
      // Day by day across the reminder and the renewal: announced once, not again each day.
      for (let day = 1; day <= 12; day++) reminders += (await advance(shop, feb(day, 12))).reminders
      assert.equal(reminders, 1)
      reminders += (await advance(shop, plus(MAR10, HOUR))).reminders
      assert.equal(reminders, 2)
      const events = (await storedEvents(t.db, sub.id)).filter((e) => e.event_type === 'subscription.renewal_upcoming')
      assert.deepEqual(events.map((e) => [e.timestamp, e.data.next_charge_at]), [
        [plus(FEB10, -3 * DAY), FEB10],
        [plus(MAR10, -3 * DAY), MAR10],
      ])
    })

    test('renewal_reminder_days 0 sends none; another value moves the reminder', async () => {
      const silent = await newShop({ renewal_reminder_days: 0 })
      const quiet = await subscribe(silent, silent.monthly)
      assert.deepEqual(await advance(silent, plus(MAR10, HOUR)), { ...NOTHING, renewals: 2 })
      assert.ok(!(await storedEvents(t.db, quiet.id)).some((e) => e.event_type === 'subscription.renewal_upcoming'))

      const early = await newShop({ renewal_reminder_days: 7 })
      const sub = await subscribe(early, early.monthly)
      await advance(early, plus(FEB10, HOUR))
      const events = (await storedEvents(t.db, sub.id)).filter((e) => e.event_type === 'subscription.renewal_upcoming')
      assert.deepEqual(events.map((e) => e.timestamp), [plus(FEB10, -7 * DAY)])
    })
  })

  describe('pause and resume', () => {
    test('no charge while paused across the renewal date; resuming later charges at the resume time', async () => {
      const shop = await newShop()
      const sub = await subscribe(shop, shop.monthly)
      await advance(shop, plus(T0, 5 * DAY))
      assert.equal((await act(t.app, shop.auth, sub.id, 'pause')).statusCode, 200)

      assert.deepEqual(await advance(shop, feb(20, 12)), NOTHING)
      assert.deepEqual(await charges(shop, sub.id), [])
      assert.equal((await getSubscription(t.app, shop.auth, sub.id)).status, 'paused')

      const resumed = await act(t.app, shop.auth, sub.id, 'resume')
      assert.equal(resumed.statusCode, 200, resumed.body)
      assert.equal(resumed.json.status, 'active')
      assert.equal(resumed.json.next_charge_at, feb(20, 12))
      assert.deepEqual(await advance(shop, feb(20, 12)), { ...NOTHING, renewals: 1 })
      const [charge, ...rest] = await charges(shop, sub.id)
      assert.deepEqual(rest, [])
      assert.deepEqual([charge.status, charge.created_at, charge.period_start, charge.period_end], ['succeeded', feb(20, 12), feb(20, 12), '2026-03-20T12:00:00.000Z'])
      const active = await getSubscription(t.app, shop.auth, sub.id)
      assert.equal(active.next_charge_at, '2026-03-20T12:00:00.000Z')
      // The renewal after that is announced and charged as usual, on the new anchor.
      assert.deepEqual(await advance(shop, '2026-03-20T13:00:00.000Z'), { ...NOTHING, renewals: 1, reminders: 1 })
      const reminders = (await storedEvents(t.db, sub.id)).filter((e) => e.event_type === 'subscription.renewal_upcoming')
      assert.deepEqual(reminders.map((e) => [e.timestamp, e.data.next_charge_at]), [['2026-03-17T12:00:00.000Z', '2026-03-20T12:00:00.000Z']])
    })

    test('a pause with resume_at after the renewal date resumes and charges at resume_at', async () => {
      const shop = await newShop()
      const sub = await subscribe(shop, shop.monthly)
      const resumeAt = feb(15)
      assert.equal((await act(t.app, shop.auth, sub.id, 'pause', { resume_at: resumeAt })).statusCode, 200)
      assert.deepEqual(await advance(shop, feb(16)), { ...NOTHING, resumptions: 1, renewals: 1 })
      const [charge] = await charges(shop, sub.id)
      assert.deepEqual([charge.status, charge.created_at, charge.period_start], ['succeeded', resumeAt, resumeAt])
    })

    test('a pause that ends before the renewal date changes nothing about it', async () => {
      const shop = await newShop()
      const sub = await subscribe(shop, shop.monthly)
      assert.equal((await act(t.app, shop.auth, sub.id, 'pause', { resume_at: plus(T0, 3 * DAY) })).statusCode, 200)
      await advance(shop, plus(FEB10, HOUR))
      const [charge] = await charges(shop, sub.id)
      assert.deepEqual([charge.status, charge.period_start], ['succeeded', FEB10])
    })
  })

  describe('the store time zone', () => {
    test('America/New_York: monthly renewals keep 09:00 local across the DST change, and a Jan 31 anchor clamps to Feb 28 then Mar 31', async () => {
      const shop = await newShop({ timezone: 'America/New_York' })
      // Jan 31 2026 09:00 EST = 14:00Z.
      await advance(shop, '2026-01-31T14:00:00.000Z')
      const sub = await subscribe(shop, shop.monthly)
      assert.equal(sub.next_charge_at, '2026-02-28T14:00:00.000Z')
      await advance(shop, '2026-04-01T00:00:00.000Z')
      const all = await charges(shop, sub.id)
      // Feb 28 09:00 EST = 14:00Z; Mar 31 09:00 EDT = 13:00Z; Apr 30 09:00 EDT = 13:00Z.
      assert.deepEqual(all.map((c) => [c.period_start, c.period_end]), [
        ['2026-02-28T14:00:00.000Z', '2026-03-31T13:00:00.000Z'],
        ['2026-03-31T13:00:00.000Z', '2026-04-30T13:00:00.000Z'],
      ])
    })
  })
})
