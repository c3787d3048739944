import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, checkout, checkoutBody } from '../subscriptions/fixtures.ts'

/**
 * GET /api/v1/admin/analytics/timeseries (docs/contract.md, Analytics): one point per calendar day in
 * the store's time zone, oldest first, today last ending at the store's now; each point's figures are
 * exactly the summary's for the same window.
 */
const T0 = '2026-03-20T09:00:00.000Z' // Berlin moves to summer time on 29 March: one 23-hour day in the series

interface Point { date: string; from: string; to: string; currencies: Record<string, unknown>[] }

describe('analytics time series', () => {
  let t: TestApp
  let shop: StoreWithKey

  const get = (url: string) => call(t.app, { method: 'GET', url, headers: shop.auth })
  const advance = async (to: string) => {
    const response = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to } })
    assert.equal(response.statusCode, 200, response.body)
  }
  const at = (days: number, hours = 0) => new Date(Date.parse(T0) + days * 86_400_000 + hours * 3_600_000).toISOString()

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db, { timezone: 'Europe/Berlin' })
    await t.db.updateTable('stores').set({ test_clock_now: new Date(T0) }).where('id', '=', shop.store.id).execute()
    const product = await createProduct(t.app, shop.auth)
    const monthly = (await createPlan(t.app, shop.auth, product.id, { amount: 1200, currency: 'USD', interval: 'month' })).id
    const weekly = (await createPlan(t.app, shop.auth, product.id, { amount: 500, currency: 'EUR', interval: 'week' })).id
    // Subscriptions start, renew, are cancelled on different days, in two currencies.
    await checkout(t.app, shop.auth, checkoutBody(monthly))
    await advance(at(2, 3))
    const [weeklySub] = await checkout(t.app, shop.auth, checkoutBody(weekly, { items: [{ plan_id: weekly, quantity: 2 }] }))
    const [cancelled] = await checkout(t.app, shop.auth, checkoutBody(monthly))
    await advance(at(5, 1))
    assert.equal((await act(t.app, shop.auth, cancelled!.id, 'cancel', { reason: 'test' })).statusCode, 200)
    await advance(at(10, 2)) // the weekly one renews once
    assert.ok(weeklySub)
    await checkout(t.app, shop.auth, checkoutBody(monthly, { items: [{ plan_id: monthly, quantity: 3 }] }))
    await advance(at(12, 5))
  })
  after(() => t.close())

  test('each day of a seeded store matches the summary for the same window', async () => {
    const response = await get('/api/v1/admin/analytics/timeseries?days=16')
    assert.equal(response.statusCode, 200, response.body)
    const series = response.json as { object: string; timezone: string; points: Point[] }
    assert.equal(series.object, 'analytics_timeseries')
    assert.equal(series.timezone, 'Europe/Berlin')
    assert.equal(series.points.length, 16)
    assert.equal(series.points.at(-1)!.to, at(12, 5), 'today ends at the store clock')
    assert.equal(series.points.at(-1)!.date, '2026-04-01')
    let anyFigures = 0
    for (const [index, point] of series.points.entries()) {
      if (index > 0) assert.equal(point.from, series.points[index - 1]!.to, 'the days follow one another without gaps')
      const summary = await get(`/api/v1/admin/analytics/summary?from=${encodeURIComponent(point.from)}&to=${encodeURIComponent(point.to)}`)
      assert.equal(summary.statusCode, 200, summary.body)
      assert.deepEqual(point.currencies, summary.json.currencies, `day ${point.date}`)
      anyFigures += point.currencies.length
    }
    assert.ok(anyFigures > 0, 'the seeded days have figures')
    // Days are calendar days in Berlin: midnight there, 23 hours on the day summer time begins.
    const springDay = series.points.find((p) => p.date === '2026-03-29')!
    assert.equal(springDay.from, '2026-03-28T23:00:00.000Z')
    assert.equal(Date.parse(springDay.to) - Date.parse(springDay.from), 23 * 3_600_000)
    const usd = (p: Point) => p.currencies.find((c) => c.currency === 'USD') as { mrr: number; new_subscriptions: number; churned_subscriptions: number } | undefined
    assert.equal(usd(series.points.find((p) => p.date === '2026-03-22')!)?.new_subscriptions, 1)
    assert.equal(usd(series.points.find((p) => p.date === '2026-03-25')!)?.churned_subscriptions, 1)
    assert.equal(usd(series.points.at(-1)!)?.mrr, 1200 + 3 * 1200)
  })

  test('90 days by default; days outside 1-366 or unknown parameters are 400', async () => {
    const response = await get('/api/v1/admin/analytics/timeseries')
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json.points.length, 90)
    for (const query of ['days=0', 'days=367', 'days=two', 'from=2026-01-01T00:00:00Z']) {
      assertProblem(await get(`/api/v1/admin/analytics/timeseries?${query}`), 400, 'validation_failed', { what: query })
    }
  })
})
