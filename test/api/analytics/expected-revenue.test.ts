import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, checkout, checkoutBody } from '../subscriptions/fixtures.ts'

/**
 * Expected revenue from renewals (CONTRACT section 17): every renewal due in the next 30 days, each
 * priced as the renewal engine prices it. Before, the console summed one renewal per subscription in
 * the browser: a weekly subscription counted once, a skipped renewal dropped its subscription, and
 * discounts and add-ons were ignored.
 *
 * The fixture, on a UTC test store. Checkouts at T0 = Fri 2027-01-01 12:00; the clock then moves to
 * NOW = 2027-01-20 12:00 (the renewals of Jan 8 and 15 are charged on the way), where the window is
 * [Jan 20 12:00, Feb 19 12:00). By hand, every renewal in it:
 *
 *   monthly     1,000 x 2, renews Feb 1                                  1 x 2,000          =  2,000
 *   weekly      500, renews Jan 22, 29, Feb 5, 12 (Feb 19 12:00 is out)  4 x 500            =  2,000
 *   prepaid 2w  1,800 for two weeks a block: Jan 15 was charged; Jan 29, Feb 12 (not weekly)
 *                                                                        2 x 1,800          =  3,600
 *   prepaid 3m  6,120 for three months: paid to Apr 1                    0                  =      0
 *   skipped     weekly 700, Jan 22 skipped: Jan 29, Feb 5, 12            3 x 700            =  2,100
 *   discounted  weekly 1,000, 20% for 2 cycles applied at NOW:
 *               Jan 22 800, Jan 29 800, Feb 5 1,000, Feb 12 1,000                           =  3,600
 *   add-on      weekly 400 with 2 x 350 added: Jan 22 1,100, then 400 x 3                   =  2,300
 *   cancelling  monthly 1,000, cancelled at the period end (Feb 1)       0                  =      0
 *   paused      monthly 1,000, paused until Mar 1 (after the window)     0                  =      0
 *   resuming    weekly 300, paused until Feb 3 12:00: charged at the resume, Feb 10, Feb 17
 *                                                                        3 x 300            =    900
 *   trial       monthly 1,200 with 14 trial days, checkout at NOW: charged when the trial ends,
 *               Feb 3 12:00                                              1 x 1,200          =  1,200
 *                                                                        -----------------------------
 *                                                        USD: 22 renewals, 17,700
 *   euro        monthly 900 EUR, renews Feb 1                            EUR: 1 renewal,       900
 *
 * Then the clock moves to the window's end: the charges the engine made in it add up to the same
 * figures (the summary's revenue over the window), so the forecast is the engine's own arithmetic.
 */
const T0 = '2027-01-01T12:00:00.000Z'
const NOW = '2027-01-20T12:00:00.000Z'
const END = '2027-02-19T12:00:00.000Z'

describe('expected revenue from renewals over the next days', () => {
  let t: TestApp
  let shop: StoreWithKey
  const ids: Record<string, string> = {}

  const post = (url: string, payload: object = {}) => call(t.app, { method: 'POST', url, headers: shop.auth, payload })
  const get = (url: string) => call(t.app, { method: 'GET', url, headers: shop.auth })
  const ok = async <T>(response: Promise<Awaited<ReturnType<typeof call>>>, status = 200): Promise<any> => {
    const answered = await response
    assert.equal(answered.statusCode, status, answered.body)
    return answered.json as T
  }

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db, { timezone: 'UTC' })
    await t.db.updateTable('stores').set({ test_clock_now: new Date(T0) }).where('id', '=', shop.store.id).execute()
    const product = await createProduct(t.app, shop.auth, { name: 'Coffee' })
    const plan = async (body: Record<string, unknown>) => (await createPlan(t.app, shop.auth, product.id, { currency: 'USD', interval: 'month', ...body })).id as string
    const one = async (planId: string, quantity = 1) => (await checkout(t.app, shop.auth, checkoutBody(planId, { items: [{ plan_id: planId, quantity }] })))[0]!.id as string

    ids.monthly = await one(await plan({ amount: 1000 }), 2)
    ids.weekly = await one(await plan({ amount: 500, interval: 'week' }))
    ids.prepaidWeeks = await one(await plan({ amount: 1800, interval: 'week', prepaid_cycles: 2 }))
    ids.prepaidMonths = await one(await plan({ amount: 6120, prepaid_cycles: 3 }))
    ids.skipped = await one(await plan({ amount: 700, interval: 'week' }))
    ids.discounted = await one(await plan({ amount: 1000, interval: 'week' }))
    ids.addOn = await one(await plan({ amount: 400, interval: 'week' }))
    ids.cancelling = await one(await plan({ amount: 1000 }))
    ids.paused = await one(await plan({ amount: 1000 }))
    ids.resuming = await one(await plan({ amount: 300, interval: 'week' }))
    ids.euro = await one(await plan({ amount: 900, currency: 'EUR' }))
    const trialPlan = await plan({ amount: 1200, trial_days: 14 })

    await ok(post('/api/v1/admin/test-clock/advance', { to: NOW }))
    ids.trial = await one(trialPlan)
    await ok(act(t.app, shop.auth, ids.skipped, 'skip'))
    await ok(post('/api/v1/admin/discounts', { code: 'TWENTY', type: 'percentage', value: 20, duration: 'repeating', duration_in_cycles: 2 }), 201)
    await ok(post(`/api/v1/admin/subscriptions/${ids.discounted}/discount`, { code: 'TWENTY' }))
    const mug = await createProduct(t.app, shop.auth, { name: 'Mug', one_time_price: { amount: 350, currency: 'USD' } })
    await ok(post(`/api/v1/admin/subscriptions/${ids.addOn}/onetimes`, { product_id: mug.id, quantity: 2 }), 201)
    await ok(act(t.app, shop.auth, ids.cancelling, 'cancel', { at_period_end: true }))
    await ok(act(t.app, shop.auth, ids.paused, 'pause', { resume_at: '2027-03-01T12:00:00.000Z' }))
    await ok(act(t.app, shop.auth, ids.resuming, 'pause', { resume_at: '2027-02-03T12:00:00.000Z' }))
  })
  after(() => t.close())

  test('every renewal due in the next 30 days, priced as the engine prices it: USD 17,700 in 22 renewals, EUR 900 in 1', async () => {
    const forecast = await ok(get('/api/v1/admin/analytics/expected-revenue?days=30'))
    assert.equal(forecast.object, 'expected_revenue')
    assert.deepEqual([forecast.from, forecast.to, forecast.days], [NOW, END, 30])
    assert.deepEqual(forecast.currencies, [
      { currency: 'EUR', amount: 900, renewals: 1 },
      { currency: 'USD', amount: 17_700, renewals: 22 },
    ])
    // 30 is the default.
    assert.deepEqual((await ok(get('/api/v1/admin/analytics/expected-revenue'))).currencies, forecast.currencies)
  })

  test('a shorter window counts only what falls in it: 3 days hold the Jan 22 renewals (500 + 1,100 + 800 = 2,400; the skipped one and the paused one make none)', async () => {
    const forecast = await ok(get('/api/v1/admin/analytics/expected-revenue?days=3'))
    assert.deepEqual(forecast.currencies, [{ currency: 'USD', amount: 2_400, renewals: 3 }])
  })

  test('days outside 1-366 or not a whole number is 400', async () => {
    for (const days of ['0', '367', '-1', '2.5', 'thirty']) {
      const response = await get(`/api/v1/admin/analytics/expected-revenue?days=${days}`)
      assert.equal(response.statusCode, 400, `days=${days}: ${response.body}`)
      assert.equal(response.json.code, 'validation_failed')
    }
    assert.equal((await get('/api/v1/admin/analytics/expected-revenue?days=366')).statusCode, 200)
  })

  test('run to the window end, the engine charges exactly what was expected', async () => {
    await ok(post('/api/v1/admin/test-clock/advance', { to: END }))
    const summary = await ok(get(`/api/v1/admin/analytics/summary?from=${encodeURIComponent(NOW)}&to=${encodeURIComponent(END)}`))
    assert.deepEqual(
      summary.currencies.map((row: { currency: string; revenue: number }) => [row.currency, row.revenue]),
      [['EUR', 900], ['USD', 17_700]],
    )
    const charged = await ok(get(`/api/v1/admin/charges?limit=100`))
    const inWindow = charged.data.filter((charge: { status: string; created_at: string }) => charge.status === 'succeeded' && charge.created_at >= NOW && charge.created_at < END)
    assert.equal(inWindow.length, 23)
  })
})
