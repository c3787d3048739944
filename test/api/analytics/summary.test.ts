import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { monthlyFromYearly } from '../../../src/modules/analytics/index.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, addDays, checkout, checkoutBody } from '../subscriptions/fixtures.ts'

/**
 * GET /api/v1/admin/analytics/summary against a fixture whose every figure is computed by hand
 * (docs/contract.md, Analytics). Seeded through the HTTP API, the test clock driving renewals,
 * dunning, pauses and cancellations at known times.
 */
// Refunds settle on real time (src/modules/billing/refunds.ts), charges on the store's clock: the
// fixture's day 8, when the refund is made, is placed an hour before real time.
const T0 = new Date(Math.floor(Date.now() / 1000) * 1000 - (8 * 24 + 1) * 3_600_000).toISOString()
const at = (days: number) => addDays(T0, days)

describe('analytics summary (docs/contract.md, Analytics)', () => {
  let t: TestApp
  let shop: StoreWithKey
  const ids: Record<string, string> = {}

  const summary = (query: string, auth = shop.auth) => call(t.app, { method: 'GET', url: `/api/v1/admin/analytics/summary${query}`, headers: auth })
  const advance = async (to: string) => {
    const response = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to } })
    assert.equal(response.statusCode, 200, response.body)
  }
  const ok = async (response: Promise<{ statusCode: number; body: string }>) => {
    const answered = await response
    assert.ok(answered.statusCode < 300, answered.body)
  }

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    await t.db.updateTable('stores').set({ test_clock_now: new Date(T0) }).where('id', '=', shop.store.id).execute()
    const product = await createProduct(t.app, shop.auth)
    const plan = async (body: Record<string, unknown>) => (await createPlan(t.app, shop.auth, product.id, { name: JSON.stringify(body), ...body })).id as string
    const subscribe = async (name: string, planId: string, quantity = 1, instrument = 'pi_visa_ok') => {
      const [subscription] = await checkout(t.app, shop.auth, checkoutBody(planId, { items: [{ plan_id: planId, quantity }], payment_instrument_id: instrument }))
      ids[name] = subscription.id
    }

    // At T0, before the window opens (T0 + 12h):
    await subscribe('monthly', await plan({ amount: 1000, currency: 'USD', interval: 'month' }), 2) // MRR 2000, then 3000 from day 4
    await subscribe('yearly', await plan({ amount: 12000, currency: 'USD', interval: 'year' })) // 1000
    await subscribe('fortnightly', await plan({ amount: 700, currency: 'USD', interval: 'week', interval_count: 2 }), 3) // 2100 x 52/12 / 2 = 4550
    await subscribe('weekly-by-days', await plan({ amount: 100, currency: 'USD', interval: 'day', interval_count: 7 })) // 100 x 365/12 / 7 = 434.5238...
    await subscribe('quarterly', await plan({ amount: 1500, currency: 'USD', interval: 'month', interval_count: 3 })) // 500 until paused on day 2
    await subscribe('cancelled', await plan({ amount: 999, currency: 'USD', interval: 'month' })) // 999 until cancelled on day 3
    await subscribe('daily-eur', await plan({ amount: 500, currency: 'EUR', interval: 'day' }), 1, 'pi_visa_declined') // 500 x 365/12 = 15208.33...
    const biennial = await plan({ amount: 1000, currency: 'USD', interval: 'year', interval_count: 2 }) // 1000 / 24 = 41.666...

    // Day 1: the euro renewal fails (dunning); a new instrument brings the retry forward and it succeeds.
    await advance(at(1))
    await advance(addDays(at(1), 1 / 24))
    await ok(act(t.app, shop.auth, ids['daily-eur']!, 'payment-instrument', { payment_instrument_id: 'pi_visa_ok' }))
    await advance(addDays(at(1), 2 / 24))
    // Day 2: pause; day 3: cancel now; day 4: quantity 2 -> 3; day 5: a new subscription.
    await advance(at(2))
    await ok(act(t.app, shop.auth, ids.quarterly!, 'pause'))
    await advance(at(3))
    await ok(act(t.app, shop.auth, ids.cancelled!, 'cancel'))
    await advance(at(4))
    await ok(act(t.app, shop.auth, ids.monthly!, 'quantity', { quantity: 3 }))
    await advance(at(5))
    await subscribe('biennial', biennial)
    // Day 7: the 7-day plan renews (100 USD); 40 of it is refunded on day 8.
    await advance(at(8))
    const renewal = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', ids['weekly-by-days']!).executeTakeFirstOrThrow()
    assert.equal(renewal.status, 'succeeded')
    assert.equal(Number(renewal.amount), 100)
    await ok(call(t.app, { method: 'POST', url: `/api/v1/admin/charges/${renewal.id}/refund`, headers: shop.auth, payload: { amount: 40 } }))
    const [refund] = await t.db.selectFrom('refunds').select(['status', 'settled_at']).where('charge_id', '=', renewal.id).execute()
    assert.equal(refund!.status, 'succeeded')
    assert.ok(refund!.settled_at! >= new Date(at(8)) && refund!.settled_at! < new Date(addDays(at(8), 0.5)), 'the refund settled inside the window')
    await advance(addDays(at(8), 0.5))
  })
  after(() => t.close())

  test('every figure of the window, per currency, as computed by hand', async () => {
    const eurCharges = await t.db.selectFrom('charges').select(['status', 'attempt', 'amount']).where('subscription_id', '=', ids['daily-eur']!).orderBy('created_at').execute()
    // Attempt 1 failed on day 1, attempt 2 paid that period; then days 2..8 renew (7 more).
    assert.deepEqual(eurCharges.map((c) => `${c.status}:${c.attempt}`), ['failed:1', 'succeeded:2', ...Array(7).fill('succeeded:1')])

    const response = await summary(`?from=${addDays(T0, 0.5)}&to=${addDays(at(8), 0.5)}`)
    assert.equal(response.statusCode, 200, response.body)
    assert.deepEqual(response.json, {
      object: 'analytics_summary',
      from: addDays(T0, 0.5),
      to: addDays(at(8), 0.5),
      currencies: [
        {
          currency: 'EUR',
          mrr: 15208, // 15208.333 rounded half up
          active_subscriptions: 1,
          new_subscriptions: 0,
          churned_subscriptions: 0,
          churn_rate: 0, // 0 of the 1 active at from
          dunning: { failed_charges: 1, recovered: 1, recovery_rate: 1 },
          revenue: 4000, // 8 succeeded charges of 500
        },
        {
          currency: 'USD',
          // monthly 3000 + yearly 1000 + fortnightly 4550 + weekly-by-days 434.524 + biennial 41.667 = 9026.19
          mrr: 9026,
          active_subscriptions: 5,
          new_subscriptions: 1,
          churned_subscriptions: 1,
          churn_rate: 0.1667, // 1 of the 6 active at from
          dunning: { failed_charges: 0, recovered: 0, recovery_rate: null },
          revenue: 60, // 100 charged less 40 refunded
        },
      ],
    })
  })

  test('MRR and active subscriptions as they stood at an earlier `to`', async () => {
    // Day 2.5: paused already (quarterly out), not yet cancelled (999 in), quantity still 2, no biennial.
    const response = await summary(`?from=${T0}&to=${addDays(at(2), 0.5)}`)
    assert.equal(response.statusCode, 200, response.body)
    const usd = response.json.currencies.find((c: any) => c.currency === 'USD')
    // 2000 + 1000 + 4550 + 434.524 + 999 = 8983.52
    assert.equal(usd.mrr, 8984)
    assert.equal(usd.active_subscriptions, 5)
    assert.equal(usd.new_subscriptions, 6, 'created at T0 = from: the window includes its start')
    assert.equal(usd.churned_subscriptions, 0)
    assert.equal(usd.churn_rate, null, 'nothing was active before T0')
    assert.equal(usd.revenue, 0)
    const eur = response.json.currencies.find((c: any) => c.currency === 'EUR')
    assert.deepEqual(eur.dunning, { failed_charges: 1, recovered: 1, recovery_rate: 1 })
    assert.equal(eur.revenue, 1000, 'the recovered attempt and the day-2 renewal')

    // Day 1.5: the quarterly plan (500 a month) still counts.
    const earlier = await summary(`?from=${T0}&to=${addDays(at(1), 0.5)}`)
    assert.equal(earlier.json.currencies.find((c: any) => c.currency === 'USD').mrr, 9484)
    assert.equal(earlier.json.currencies.find((c: any) => c.currency === 'USD').active_subscriptions, 6)

    // A dunning window that ends before the recovery: failed, not (yet) recovered.
    const beforeRecovery = await summary(`?from=${T0}&to=${addDays(at(1), 1 / 48)}`)
    assert.deepEqual(beforeRecovery.json.currencies.find((c: any) => c.currency === 'EUR').dunning, { failed_charges: 1, recovered: 0, recovery_rate: 0 })
  })

  test('defaults: the 30 days before the store clock; another store sees nothing of these', async () => {
    const response = await summary('')
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json.to, addDays(at(8), 0.5))
    assert.equal(response.json.from, addDays(at(8), 0.5 - 30))
    assert.equal(response.json.currencies.find((c: any) => c.currency === 'USD').new_subscriptions, 7)
    const onlyTo = await summary(`?to=${at(4)}`)
    assert.equal(onlyTo.json.from, at(4 - 30))

    const other = await createStoreWithKey(t.db)
    const empty = await summary('', other.auth)
    assert.equal(empty.statusCode, 200)
    assert.deepEqual(empty.json.currencies, [])
  })

  test('bad windows are 400 with nothing computed', async () => {
    for (const query of [`?from=${at(2)}&to=${at(1)}`, `?from=${at(1)}&to=${at(1)}`, `?from=${at(-400)}&to=${at(1)}`, '?from=yesterday', '?to=2027-13-01T00:00:00Z', '?window=7']) {
      const response = await summary(query)
      assertProblem(response, 400, 'validation_failed')
    }
    const unauthenticated = await call(t.app, { method: 'GET', url: '/api/v1/admin/analytics/summary' })
    assert.equal(unauthenticated.statusCode, 401)
  })

  test('MRR is summed exactly and rounded half up once per currency', () => {
    assert.equal(monthlyFromYearly([]), 0)
    // A year of 6: 0.5 a month, rounded up.
    assert.equal(monthlyFromYearly([{ intervalCount: 1, sum: '6' }]), 1)
    // Three thirds of a month do not lose a unit: 4 / 12 three ways, each 0.333...
    assert.equal(monthlyFromYearly([{ intervalCount: 1, sum: '4' }, { intervalCount: 2, sum: '8' }, { intervalCount: 3, sum: '12' }]), 1)
    // 1/3 + 1/6 = exactly 0.5: rounds up although neither part does.
    assert.equal(monthlyFromYearly([{ intervalCount: 1, sum: '4' }, { intervalCount: 2, sum: '4' }]), 1)
    assert.equal(monthlyFromYearly([{ intervalCount: 1, sum: '3' }, { intervalCount: 2, sum: '5' }]), 0, '0.25 + 0.2083 = 0.4583')
  })
})
