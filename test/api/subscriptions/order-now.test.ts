import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct, createShopWithPlan } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { assertInvalidField, assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, checkout, checkoutBody, closeTestApp, getSubscription, storedEvents } from './fixtures.ts'

/**
 * Order now and reschedule (docs/contract.md, Order now and reschedule), driven by the test clock
 * through the HTTP API: the renewal engine charges both, and later renewals follow the new date.
 */
describe('order now and reschedule', () => {
  let t: TestApp
  // Every store's clock starts here: a checkout pays [Jan 10, Feb 10] and renews on Feb 10.
  const START = '2026-01-10T09:00:00.000Z'
  type Shop = StoreWithKey & { planId: string }

  before(async () => {
    t = await buildTestApp()
  })
  after(() => closeTestApp(t))

  async function advance(shop: Shop, to: string): Promise<any> {
    const response = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to } })
    assert.equal(response.statusCode, 200, response.body)
    return response.json.processed
  }

  async function charges(shop: Shop, subscriptionId: string): Promise<any[]> {
    const response = await call(t.app, { method: 'GET', url: `/api/v1/admin/charges?subscription_id=${subscriptionId}&limit=100`, headers: shop.auth })
    assert.equal(response.statusCode, 200, response.body)
    return [...response.json.data].sort((a, b) => a.created_at.localeCompare(b.created_at))
  }

  async function subscribe(shop: Shop, overrides: Record<string, unknown> = {}): Promise<any> {
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(shop.planId, overrides))
    assert.equal(subscription.status, 'active')
    assert.equal(subscription.next_charge_at, '2026-02-10T09:00:00.000Z')
    return subscription
  }

  const chargeNow = (shop: Shop, id: string) => act(t.app, shop.auth, id, 'charge-now')
  const reschedule = (shop: Shop, id: string, nextChargeAt: unknown) => act(t.app, shop.auth, id, 'reschedule', { next_charge_at: nextChargeAt })

  test('order now charges at once through the renewal engine; the following renewal comes one period later, nothing at the old date', async () => {
    const shop = await createShopWithPlan(t, { clockAt: START })
    const sub = await subscribe(shop)
    await advance(shop, '2026-01-20T12:00:00.000Z')

    const response = await chargeNow(shop, sub.id)
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json.status, 'active')
    assert.equal(response.json.current_period_start, '2026-01-20T12:00:00.000Z', 'the new period starts now')
    assert.equal(response.json.current_period_end, '2026-02-20T12:00:00.000Z')
    assert.equal(response.json.next_charge_at, '2026-02-20T12:00:00.000Z', 'the next renewal follows one interval after the order')
    const [first] = await charges(shop, sub.id)
    assert.equal(response.json.latest_charge_id, first.id)
    assert.equal(first.status, 'succeeded')
    assert.equal(first.amount, 1500)
    assert.equal(first.period_start, '2026-01-20T12:00:00.000Z')
    assert.equal(first.created_at, '2026-01-20T12:00:00.000Z')

    // The same events as a scheduled renewal: subscription.charged, then the charge's outcome.
    const types = (await storedEvents(t.db, sub.id)).map((event) => event.event_type)
    assert.deepEqual(types.slice(-1), ['subscription.charged'])
    assert.deepEqual((await storedEvents(t.db, first.id)).map((event) => event.event_type), ['charge.succeeded'])

    // Ordering again at the same instant would pay the period just paid: refused.
    assertProblem(await chargeNow(shop, sub.id), 409, 'invalid_state')

    // The old renewal date passes without a charge.
    assert.equal((await advance(shop, '2026-02-15T00:00:00.000Z')).renewals, 0)
    assert.equal((await charges(shop, sub.id)).length, 1)

    // One period after the order, the next renewal.
    assert.equal((await advance(shop, '2026-02-20T12:00:00.000Z')).renewals, 1)
    const after = await charges(shop, sub.id)
    assert.equal(after.length, 2)
    assert.equal(after[1].status, 'succeeded')
    assert.equal(after[1].period_start, '2026-02-20T12:00:00.000Z')
    assert.equal(after[1].period_end, '2026-03-20T12:00:00.000Z')
    assert.equal((await getSubscription(t.app, shop.auth, sub.id)).next_charge_at, '2026-03-20T12:00:00.000Z')
  })

  test('the subscriber orders now from the portal; a pending skip is dropped by it', async () => {
    const shop = await createShopWithPlan(t, { clockAt: START })
    const sub = await subscribe(shop)
    assert.equal((await act(t.app, shop.auth, sub.id, 'skip')).statusCode, 200)
    await advance(shop, '2026-01-25T00:00:00.000Z')
    const portal = await signInSubscriber(t.app, t.db, shop.store.id, sub.subscriber_id)
    const response = await call(t.app, { method: 'POST', url: `/api/v1/portal/subscriptions/${sub.id}/charge-now`, headers: portal.auth })
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json.skip_next, false)
    assert.equal(response.json.current_period_start, '2026-01-25T00:00:00.000Z')
    const [charge] = await charges(shop, sub.id)
    assert.equal(charge.status, 'succeeded')
  })

  test('a failed order now enters dunning like any renewal; then order now and reschedule are 409', async () => {
    const shop = await createShopWithPlan(t, { clockAt: START })
    const sub = await subscribe(shop, { payment_instrument_id: 'instr_declined' })
    await advance(shop, '2026-01-20T00:00:00.000Z')
    const response = await chargeNow(shop, sub.id)
    assert.equal(response.statusCode, 200, response.body)
    const [charge] = await charges(shop, sub.id)
    assert.equal(charge.status, 'failed')
    assert.equal(charge.failure_code, 'card_declined')
    assert.equal(response.json.next_charge_at, '2026-01-21T00:00:00.000Z', 'the first retry follows the store schedule')
    assertProblem(await chargeNow(shop, sub.id), 409, 'invalid_state')
    assertProblem(await reschedule(shop, sub.id, '2026-03-01T00:00:00.000Z'), 409, 'invalid_state')
  })

  test('a charge whose outcome stays unknown: the request answers 202 within its bound, and the charge is in flight (409)', async () => {
    const shop = await createShopWithPlan(t, { clockAt: START })
    const sub = await subscribe(shop, { payment_instrument_id: 'instr_unknown' })
    await advance(shop, '2026-01-20T00:00:00.000Z')
    const started = Date.now()
    const response = await chargeNow(shop, sub.id)
    const took = Date.now() - started
    assert.equal(response.statusCode, 202, response.body)
    assert.ok(took < 15_000, `answered after ${took} ms`)
    const [charge] = await charges(shop, sub.id)
    assert.equal(charge.status, 'pending')
    assert.equal(response.json.latest_charge_id, charge.id)
    assertProblem(await chargeNow(shop, sub.id), 409, 'invalid_state')
    assertProblem(await reschedule(shop, sub.id, '2026-03-01T00:00:00.000Z'), 409, 'invalid_state')
  })

  test('reschedule past the old date: nothing is charged at the old date, the renewal comes at the new one, and later ones follow it', async () => {
    const shop = await createShopWithPlan(t, { clockAt: START })
    const sub = await subscribe(shop)
    const response = await reschedule(shop, sub.id, '2026-02-25T15:00:00.000Z')
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json.next_charge_at, '2026-02-25T15:00:00.000Z')
    assert.equal(response.json.current_period_end, '2026-02-25T15:00:00.000Z', 'the current period ends where the next begins')
    const events = await storedEvents(t.db, sub.id)
    assert.equal(events.at(-1).event_type, 'subscription.rescheduled')
    assert.equal(events.at(-1).data.next_charge_at, '2026-02-25T15:00:00.000Z')

    assert.equal((await advance(shop, '2026-02-25T14:59:59.000Z')).renewals, 0, 'nothing at the old date')
    assert.equal((await charges(shop, sub.id)).length, 0)

    assert.equal((await advance(shop, '2026-02-25T15:00:00.000Z')).renewals, 1)
    const [charge] = await charges(shop, sub.id)
    assert.equal(charge.status, 'succeeded')
    assert.equal(charge.period_start, '2026-02-25T15:00:00.000Z')
    assert.equal(charge.period_end, '2026-03-25T15:00:00.000Z')
    const renewed = await getSubscription(t.app, shop.auth, sub.id)
    assert.equal(renewed.next_charge_at, '2026-03-25T15:00:00.000Z')

    assert.equal((await advance(shop, '2026-03-25T15:00:00.000Z')).renewals, 1)
    const all = await charges(shop, sub.id)
    assert.equal(all.length, 2)
    assert.equal(all[1].period_start, '2026-03-25T15:00:00.000Z')
  })

  test('reschedule earlier than the old date, from the portal, charges then', async () => {
    const shop = await createShopWithPlan(t, { clockAt: START })
    const sub = await subscribe(shop)
    const portal = await signInSubscriber(t.app, t.db, shop.store.id, sub.subscriber_id)
    const response = await call(t.app, {
      method: 'POST',
      url: `/api/v1/portal/subscriptions/${sub.id}/reschedule`,
      headers: portal.auth,
      payload: { next_charge_at: '2026-02-01T09:00:00.000Z' },
    })
    assert.equal(response.statusCode, 200, response.body)
    assert.equal((await advance(shop, '2026-02-01T09:00:00.000Z')).renewals, 1)
    assert.equal((await advance(shop, '2026-02-28T00:00:00.000Z')).renewals, 0, 'the old date is gone')
    const all = await charges(shop, sub.id)
    assert.equal(all.length, 1)
    assert.equal(all[0].period_start, '2026-02-01T09:00:00.000Z')
    assert.equal((await getSubscription(t.app, shop.auth, sub.id)).next_charge_at, '2026-03-01T09:00:00.000Z')
  })

  test('a reschedule into the past, to now, past a year, or malformed is 400 and changes nothing', async () => {
    const shop = await createShopWithPlan(t, { clockAt: START })
    const sub = await subscribe(shop)
    for (const [what, value] of [
      ['the past', '2026-01-01T00:00:00.000Z'],
      ['now', START],
      ['past a year', '2027-01-10T09:00:00.001Z'],
      ['not a time', 'tomorrow'],
      ['a number', 1767225600000],
    ] as const) {
      assertInvalidField(await reschedule(shop, sub.id, value), '/body/next_charge_at', what)
    }
    assertInvalidField(await act(t.app, shop.auth, sub.id, 'reschedule', {}), '/body/next_charge_at', 'missing')
    assertInvalidField(await act(t.app, shop.auth, sub.id, 'reschedule', { next_charge_at: '2026-03-01T00:00:00.000Z', extra: 1 }), '/body/extra', 'unknown field')
    const unchanged = await getSubscription(t.app, shop.auth, sub.id)
    assert.equal(unchanged.version, sub.version)
    assert.equal(unchanged.next_charge_at, sub.next_charge_at)
    // Exactly one year ahead is the latest allowed.
    assert.equal((await reschedule(shop, sub.id, '2027-01-10T09:00:00.000Z')).statusCode, 200)
  })

  test('order now and reschedule are 409 unless the subscription is active with nothing in flight, and 404 for another store', async () => {
    const shop = await createShopWithPlan(t, { clockAt: START })
    const later = '2026-03-01T00:00:00.000Z'

    const paused = await subscribe(shop)
    assert.equal((await act(t.app, shop.auth, paused.id, 'pause')).statusCode, 200)
    const cancelled = await subscribe(shop)
    assert.equal((await act(t.app, shop.auth, cancelled.id, 'cancel')).statusCode, 200)
    const ending = await subscribe(shop)
    assert.equal((await act(t.app, shop.auth, ending.id, 'cancel', { at_period_end: true })).statusCode, 200)
    const product = await createProduct(t.app, shop.auth)
    const trialPlan = await createPlan(t.app, shop.auth, product.id, { trial_days: 14 })
    const [trial] = await checkout(t.app, shop.auth, checkoutBody(trialPlan.id))
    assert.equal(trial.status, 'pending')

    for (const [what, sub] of [['paused', paused], ['cancelled', cancelled], ['set to cancel', ending], ['in its trial', trial]] as const) {
      assertProblem(await chargeNow(shop, sub.id), 409, 'invalid_state', { what: `order now, ${what}` })
      assertProblem(await reschedule(shop, sub.id, later), 409, 'invalid_state', { what: `reschedule, ${what}` })
    }

    const other = await createShopWithPlan(t, { clockAt: START })
    const foreign = await subscribe(other)
    assertProblem(await chargeNow(shop, foreign.id), 404, 'not_found')
    assertProblem(await reschedule(shop, foreign.id, later), 404, 'not_found')
    assertProblem(await chargeNow(shop, 'sub_nope'), 404, 'not_found')
    assert.equal((await charges(other, foreign.id)).length, 0)
  })
})
