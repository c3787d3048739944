// The cutover switch (CONTRACT section 16, docs/contract.md Cutover): while a store's `billing_enabled`
// is false nothing bills, retries or reminds for it, however many days pass; turning it on runs what
// fell due meanwhile once each, oldest first, and a second worker pass charges nothing more. Time is
// the store's test clock, and the worker's own engine and due work run beside it.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import * as billingSwitch from '../../../src/db/migrations/0031-billing-switch.ts'
import { fixedClock } from '../../../src/lib/clock.ts'
import { queueExpiryWarnings } from '../../../src/modules/notifications/index.ts'
import { processDueWork } from '../../../src/modules/subscriptions/due-work.ts'
import { createTestRenewals } from '../../helpers/billing.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { createTestDatabase } from '../../helpers/database.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, checkout, checkoutBody, closeTestApp, getSubscription } from '../subscriptions/fixtures.ts'

const T0 = '2026-01-10T09:00:00.000Z'
const HOUR = 3_600_000
const DAY = 24 * HOUR
const plus = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString()
const OFF_AT = plus('2026-01-12T09:00:00.000Z', HOUR)
// Before the retried period's next renewal (Feb 12), so each subscription has exactly one renewal due when billing comes back.
const ON_AT = plus('2026-02-11T09:00:00.000Z', HOUR)

describe('billing_enabled: the cutover switch', () => {
  let t: TestApp
  let shop: StoreWithKey

  before(async () => {
    t = await buildTestApp()
  })
  after(() => closeTestApp(t))

  const patchStore = (payload: Record<string, unknown>) => call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload })
  async function advance(to: string): Promise<Record<string, number>> {
    const response = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to } })
    assert.equal(response.statusCode, 200, response.body)
    return response.json.processed
  }
  const charges = () => t.db.selectFrom('charges').select(['id', 'subscription_id', 'status', 'attempt', 'period_start', 'period_end', 'created_at']).where('store_id', '=', shop.store.id).orderBy('id').execute()
  /** Money asked of the test gateway for the store: a charge that reached it, whatever its outcome. */
  const ledger = async () => Number((await t.db.selectFrom('test_gateway_charges').select((eb) => eb.fn.countAll<number>().as('n')).where('store_id', '=', shop.store.id).executeTakeFirstOrThrow()).n)
  const eventsOf = (type: string) =>
    t.db.selectFrom('events').select(['entity_id', 'occurred_at', 'position']).where('store_id', '=', shop.store.id).where('event_type', '=', type).orderBy('position').execute()
  /** One pass of the worker's own engine and due work over every store, at `at`. */
  async function workerPass(at: string) {
    const clock = fixedClock(at)
    const due = await processDueWork(t.db, clock, t.services.modules.subscriptions.service.writes)
    const renewed = await createTestRenewals(t.db, clock).runDue()
    return { due, renewed }
  }

  test('while off: nothing charged, retried, reminded or activated for weeks, merchant charges refused 409 billing_disabled; on: each once, oldest first, then nothing more', async () => {
    shop = await createStoreWithKey(t.db)
    await t.db.updateTable('stores').set({ test_clock_now: new Date(T0) }).where('id', '=', shop.store.id).execute()
    assert.equal((await patchStore({ dunning_retry_days: [1, 3], renewal_reminder_days: 3 })).statusCode, 200)
    const product = await createProduct(t.app, shop.auth)
    const monthlyPlan = await createPlan(t.app, shop.auth, product.id, { name: 'Monthly', amount: 1500, interval: 'month' })

    const [monthly] = await checkout(t.app, shop.auth, checkoutBody(monthlyPlan.id))
    const [early] = await checkout(t.app, shop.auth, checkoutBody(monthlyPlan.id))
    const [declining] = await checkout(t.app, shop.auth, checkoutBody(monthlyPlan.id, { payment_instrument_id: 'pi_visa_declined_once' }))
    const [starting] = await checkout(t.app, shop.auth, checkoutBody(monthlyPlan.id, { start_at: '2026-01-20T09:00:00.000Z' }))
    const [cancelled] = await checkout(t.app, shop.auth, checkoutBody(monthlyPlan.id))
    assert.equal((await act(t.app, shop.auth, cancelled.id, 'cancel', {})).statusCode, 200)
    assert.equal((await act(t.app, shop.auth, declining.id, 'reschedule', { next_charge_at: '2026-01-12T09:00:00.000Z' })).statusCode, 200)
    // A card that ends (Jan 2026) before the renewal: the daily check would warn its subscriber.
    await t.db.updateTable('subscriptions').set({ payment_instrument_expiry_month: 1, payment_instrument_expiry_year: 2026 }).where('id', '=', monthly.id).execute()

    // The declining card fails on Jan 12: in dunning, its first retry due Jan 13.
    await advance(OFF_AT)
    const [failed] = await charges()
    assert.deepEqual([failed?.subscription_id, failed?.status], [declining.id, 'failed'])
    assert.equal((await getSubscription(t.app, shop.auth, declining.id)).next_charge_at, '2026-01-13T09:00:00.000Z')
    const remindedBefore = (await eventsOf('subscription.renewal_upcoming')).length
    const ledgerBefore = await ledger()

    // Off. GET /store says so; the default was on.
    const store = await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: shop.auth })
    assert.equal(store.json.billing_enabled, true)
    const off = await patchStore({ billing_enabled: false })
    assert.equal(off.statusCode, 200, off.body)
    assert.equal(off.json.billing_enabled, false)
    assert.equal((await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: shop.auth })).json.billing_enabled, false)

    // What would charge at once is refused, saying why, and changes nothing; moving a renewal charges nothing and may.
    const versions = async () => Promise.all([monthly, declining, cancelled].map(async (s) => (await getSubscription(t.app, shop.auth, s.id)).version))
    const before = await versions()
    const orderNow = await act(t.app, shop.auth, monthly.id, 'charge-now')
    assertProblem(orderNow, 409, 'billing_disabled')
    assert.match(orderNow.json.detail, /billing is switched off/)
    assertProblem(await call(t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${declining.id}/retry-charge`, headers: shop.auth }), 409, 'billing_disabled')
    assertProblem(await act(t.app, shop.auth, cancelled.id, 'reactivate', {}), 409, 'billing_disabled')
    assert.deepEqual(await versions(), before, 'a refused action changed nothing')
    const moved = await act(t.app, shop.auth, early.id, 'reschedule', { next_charge_at: '2026-02-04T09:00:00.000Z' })
    assert.equal(moved.statusCode, 200, moved.body)
    // The attention list offers no retry while off.
    const attention = await call(t.app, { method: 'GET', url: '/api/v1/admin/attention', headers: shop.auth })
    assert.deepEqual(attention.json.data.find((item: any) => item.subscription_id === declining.id)?.actions.includes('retry_charge'), false)

    // Day after day for a month: the retry (Jan 13), the start (Jan 20), the early renewal (Feb 4), the
    // monthly one (Feb 10) and their reminders (Feb 1, Feb 7) fall due, and none runs.
    let day = OFF_AT
    let days = 0
    while (day < ON_AT) {
      day = plus(day, DAY)
      const processed = await advance(day)
      assert.deepEqual(processed, { activations: 0, renewals: 0, retries: 0, reminders: 0, resumptions: 0, cancellations: 0, expirations: 0 }, `nothing ran on ${day}`)
      days++
      if (days % 10 === 0) {
        // The worker's own passes (over every store, not through the test clock) leave it alone too.
        const pass = await workerPass(day)
        assert.equal(pass.renewed.claimed, 0, `nothing claimed on ${day}`)
        assert.deepEqual(Object.values(pass.due), [0, 0, 0, 0, 0], `no due work on ${day}`)
      }
    }
    assert.equal(day, ON_AT)
    assert.ok(days >= 30)
    assert.equal((await charges()).length, 1, 'no charge while off')
    assert.equal(await ledger(), ledgerBefore, 'the gateway was never asked')
    assert.equal((await eventsOf('subscription.renewal_upcoming')).length, remindedBefore, 'no reminder while off')
    assert.equal(await queueExpiryWarnings(t.db, fixedClock(ON_AT), { storeId: shop.store.id }), 0, 'no card-expiry warning while off')
    assert.equal((await getSubscription(t.app, shop.auth, declining.id)).status, 'active', 'dunning stood still: not past due')
    assert.equal((await getSubscription(t.app, shop.auth, starting.id)).status, 'pending', 'no activation either')
    for (const s of [monthly, early]) assert.equal((await getSubscription(t.app, shop.auth, s.id)).latest_charge_id, null, `${s.id} not charged`)

    // On. What fell due runs once each, oldest due first.
    const on = await patchStore({ billing_enabled: true })
    assert.equal(on.statusCode, 200, on.body)
    assert.equal(on.json.billing_enabled, true)
    const processed = await advance(ON_AT)
    assert.deepEqual(processed, { activations: 1, renewals: 2, retries: 1, reminders: 1, resumptions: 0, cancellations: 0, expirations: 0 })

    const made = (await charges()).filter((c) => c.id !== failed!.id)
    // Charge ids sort in the order the claim recorded them: the retry due Jan 13, the early renewal (Feb 4), the monthly one (Feb 10).
    assert.deepEqual(made.map((c) => c.subscription_id), [declining.id, early.id, monthly.id])
    assert.deepEqual(made.map((c) => c.status), ['succeeded', 'succeeded', 'succeeded'])
    const charged = await eventsOf('subscription.charged')
    assert.deepEqual(charged.slice(-3).map((e) => e.entity_id), [declining.id, early.id, monthly.id], 'recorded oldest first')
    assert.equal(await ledger(), ledgerBefore + 3, 'one payment each')
    // The retry pays the period that failed, as its second attempt; the others their own renewal.
    assert.deepEqual([made[0]!.period_start.toISOString(), made[0]!.attempt], ['2026-01-12T09:00:00.000Z', 2])
    assert.equal((await getSubscription(t.app, shop.auth, declining.id)).next_charge_at, '2026-02-12T09:00:00.000Z')
    assert.equal((await getSubscription(t.app, shop.auth, early.id)).next_charge_at, '2026-03-04T09:00:00.000Z')
    assert.equal((await getSubscription(t.app, shop.auth, monthly.id)).next_charge_at, '2026-03-10T09:00:00.000Z')
    const started = await getSubscription(t.app, shop.auth, starting.id)
    assert.deepEqual([started.status, started.current_period_start, started.next_charge_at], ['active', '2026-01-20T09:00:00.000Z', '2026-02-20T09:00:00.000Z'], 'activated at its own start')
    // No reminder announces a renewal that was already due when billing came on (Feb 4 and Feb 10: charged at
    // once); the recovered subscription's next renewal (Feb 12, still ahead) is announced after its retry.
    const reminded = (await eventsOf('subscription.renewal_upcoming')).slice(remindedBefore)
    assert.deepEqual(reminded.map((e) => [e.entity_id, e.occurred_at.toISOString()]), [[declining.id, '2026-02-09T09:00:00.000Z']])
    assert.ok(reminded[0]!.position > charged.at(-1)!.position)
    assert.equal(await queueExpiryWarnings(t.db, fixedClock(ON_AT), { storeId: shop.store.id }), 1, 'the card-expiry check sees the store again')

    // A second pass, through the test clock and the worker's own engine, charges nothing more.
    const again = await advance(ON_AT)
    assert.deepEqual(again, { activations: 0, renewals: 0, retries: 0, reminders: 0, resumptions: 0, cancellations: 0, expirations: 0 })
    const pass = await workerPass(ON_AT)
    assert.equal(pass.renewed.claimed, 0)
    assert.equal((await charges()).length, 4)
    assert.equal(await ledger(), ledgerBefore + 3)

    // And merchant actions charge again.
    const reactivated = await act(t.app, shop.auth, cancelled.id, 'reactivate', {})
    assert.ok(reactivated.statusCode === 200 || reactivated.statusCode === 202, reactivated.body)
  })

  test('on real time (the worker\'s own engine), a subscription five renewals behind pays once when billing comes back, for its oldest unpaid period, and renews next at the first boundary after', async () => {
    // A store on real time: the engine's clock is the worker's, here a fixed one the test moves.
    shop = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth)
    const weeklyPlan = await createPlan(t.app, shop.auth, product.id, { name: 'Weekly', amount: 500, interval: 'week' })
    const monthlyPlan = await createPlan(t.app, shop.auth, product.id, { name: 'Monthly', amount: 1500, interval: 'month' })
    const [weekly] = await checkout(t.app, shop.auth, checkoutBody(weeklyPlan.id))
    const [monthly] = await checkout(t.app, shop.auth, checkoutBody(monthlyPlan.id))
    const firstDue = weekly.next_charge_at as string
    assert.equal((await patchStore({ billing_enabled: false })).statusCode, 200)

    const pass = async (at: string) => {
      const clock = fixedClock(at)
      const due = await processDueWork(t.db, clock, t.services.modules.subscriptions.service.writes, { storeId: shop.store.id })
      const renewed = await createTestRenewals(t.db, clock).runDue({ storeId: shop.store.id })
      return { due, renewed }
    }
    for (const week of [0, 1, 2, 3, 4]) {
      const { renewed } = await pass(plus(firstDue, week * 7 * DAY + HOUR))
      assert.equal(renewed.claimed, 0, `week ${week}: nothing claimed while off`)
    }
    assert.equal((await charges()).length, 0)

    assert.equal((await patchStore({ billing_enabled: true })).statusCode, 200)
    // Five weekly renewals (firstDue + 0..4 weeks) and the monthly one have fallen due.
    const onAt = plus(firstDue, 30 * DAY + HOUR)
    assert.ok(onAt > monthly.next_charge_at)
    const first = await pass(onAt)
    assert.deepEqual([first.renewed.claimed, first.renewed.renewals, first.renewed.retries], [2, 2, 0])
    const made = await charges()
    assert.deepEqual(made.map((c) => [c.subscription_id, c.status]), [[weekly.id, 'succeeded'], [monthly.id, 'succeeded']], 'once each, the oldest due first')
    // afterSuccess, as after a reconnect or a late recovery: the charge pays the period at next_charge_at
    // (the oldest unpaid one) and the next renewal is the first boundary after the charge; the weeks between are not charged.
    assert.equal(made[0]!.period_start.toISOString(), firstDue)
    assert.equal(made[0]!.period_end.toISOString(), plus(firstDue, 7 * DAY))
    assert.equal((await getSubscription(t.app, shop.auth, weekly.id)).next_charge_at, plus(firstDue, 35 * DAY))
    assert.equal(made[1]!.period_start.toISOString(), monthly.next_charge_at)
    assert.equal(await ledger(), 2)

    // Second and later passes charge nothing more until the next boundary.
    for (const at of [onAt, plus(onAt, DAY), plus(onAt, 3 * DAY)]) {
      const again = await pass(at)
      assert.equal(again.renewed.claimed, 0, `nothing more at ${at}`)
    }
    assert.equal((await charges()).length, 2)
    assert.equal(await ledger(), 2)
  })

  test('PATCH billing_enabled takes only a boolean; other stores keep billing', async () => {
    shop = await createStoreWithKey(t.db)
    assertProblem(await patchStore({ billing_enabled: 'no' }), 400, 'validation_failed')
    assertProblem(await patchStore({ billing_enabled: null }), 400, 'validation_failed')
    assert.equal((await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: shop.auth })).json.billing_enabled, true)
  })
})

describe('migration 0031 down', () => {
  test('refuses while a store has billing switched off (without the column it would bill at once); goes down and up again once every store bills', async () => {
    const handle = await createTestDatabase()
    try {
      const { db } = handle
      const store = await createStoreWithKey(db)
      await db.updateTable('stores').set({ billing_enabled: false }).where('id', '=', store.store.id).execute()
      await assert.rejects(billingSwitch.down(db as never), /billing switched off/)
      assert.equal((await db.selectFrom('stores').select('billing_enabled').where('id', '=', store.store.id).executeTakeFirstOrThrow()).billing_enabled, false, 'the column and its value stay')
      await db.updateTable('stores').set({ billing_enabled: true }).where('id', '=', store.store.id).execute()
      await billingSwitch.down(db as never)
      await billingSwitch.up(db as never)
      assert.equal((await db.selectFrom('stores').select('billing_enabled').where('id', '=', store.store.id).executeTakeFirstOrThrow()).billing_enabled, true)
    } finally {
      await handle.close()
    }
  })
})
