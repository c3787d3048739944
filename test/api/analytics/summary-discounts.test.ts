import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { addDays, checkout, checkoutBody } from '../subscriptions/fixtures.ts'

/**
 * MRR after recurring discounts (docs/contract.md, Analytics): a `forever` or `repeating` discount
 * lowers MRR while it lasts, with the renewal's rounding; a `once` discount does not; a repeating
 * discount stops counting when its cycles are used.
 */
const T0 = '2026-02-01T12:00:00.000Z'

describe('analytics MRR after recurring discounts', () => {
  let t: TestApp
  let shop: StoreWithKey
  let planId: string

  const mrrAt = async (to: string) => {
    const response = await call(t.app, { method: 'GET', url: `/api/v1/admin/analytics/summary?from=${encodeURIComponent(addDays(to, -1))}&to=${encodeURIComponent(to)}`, headers: shop.auth })
    assert.equal(response.statusCode, 200, response.body)
    return response.json.currencies.find((row: { currency: string }) => row.currency === 'USD')?.mrr
  }
  const discount = async (body: Record<string, unknown>) => {
    const response = await call(t.app, { method: 'POST', url: '/api/v1/admin/discounts', headers: shop.auth, payload: body })
    assert.equal(response.statusCode, 201, response.body)
  }
  const subscribe = async (code?: string) => {
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(planId, { items: [{ plan_id: planId, quantity: 1, ...(code ? { discount_code: code } : {}) }] }))
    return subscription
  }

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    await t.db.updateTable('stores').set({ test_clock_now: new Date(T0) }).where('id', '=', shop.store.id).execute()
    const product = await createProduct(t.app, shop.auth)
    planId = (await createPlan(t.app, shop.auth, product.id, { amount: 999, currency: 'USD', interval: 'month' })).id
    await discount({ code: 'FOREVER15', type: 'percentage', value: 15, duration: 'forever' })
    await discount({ code: 'TWICE', type: 'fixed_amount', value: 300, currency: 'USD', duration: 'repeating', duration_in_cycles: 2 })
    await discount({ code: 'ONCE', type: 'percentage', value: 50, duration: 'once' })
  })
  after(() => t.close())

  test('forever and repeating discounts lower MRR while they last; once does not', async () => {
    await subscribe('FOREVER15') // 999 - 150 (149.85 rounded half up) = 849
    await subscribe('TWICE') // 999 - 300 = 699 for two charges, then 999
    await subscribe('ONCE') // 999
    await subscribe() // 999
    assert.equal(await mrrAt(addDays(T0, 1)), 849 + 699 + 999 + 999)

    // Two renewals use TWICE's cycles; from then on that subscription counts in full.
    for (const months of [1, 2]) {
      const to = new Date(new Date(T0).getTime() + months * 31 * 86_400_000).toISOString()
      const advanced = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to } })
      assert.equal(advanced.statusCode, 200, advanced.body)
    }
    const later = new Date(new Date(T0).getTime() + 63 * 86_400_000).toISOString()
    assert.equal(await mrrAt(later), 849 + 999 + 999 + 999)
    assert.equal(await mrrAt(addDays(T0, 1)), 849 + 699 + 999 + 999, 'the past is kept as it was')
  })
})
