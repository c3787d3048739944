import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { addDays, checkout, checkoutBody } from '../subscriptions/fixtures.ts'

/**
 * MRR of a prepaid plan (CONTRACT section 12): a charge that pays for several cycles counts once per
 * cycle, not once a cycle: a 3-month block charged 6,120 is 2,040 a month. It counted 6,120 a month
 * before (the demo's MRR was some 15% high).
 */
const T0 = '2026-02-01T12:00:00.000Z'

describe('analytics MRR of prepaid plans', () => {
  let t: TestApp
  let shop: StoreWithKey

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    await t.db.updateTable('stores').set({ test_clock_now: new Date(T0) }).where('id', '=', shop.store.id).execute()
  })
  after(() => t.close())

  const mrrAt = async (to: string) => {
    const response = await call(t.app, { method: 'GET', url: `/api/v1/admin/analytics/summary?from=${encodeURIComponent(addDays(to, -1))}&to=${encodeURIComponent(to)}`, headers: shop.auth })
    assert.equal(response.statusCode, 200, response.body)
    return response.json.currencies.find((row: { currency: string }) => row.currency === 'USD')?.mrr
  }

  test('a 3-month block of 6,120 is 2,040 a month; with a monthly plan of 999 beside it, 3,039; two of the block, 5,079', async () => {
    const product = await createProduct(t.app, shop.auth)
    const block = (await createPlan(t.app, shop.auth, product.id, { amount: 6120, currency: 'USD', interval: 'month', prepaid_cycles: 3 })).id
    const monthly = (await createPlan(t.app, shop.auth, product.id, { amount: 999, currency: 'USD', interval: 'month' })).id
    await checkout(t.app, shop.auth, checkoutBody(block))
    const to = addDays(T0, 1)
    assert.equal(await mrrAt(to), 2040)
    await checkout(t.app, shop.auth, checkoutBody(monthly))
    assert.equal(await mrrAt(to), 3039)
    await checkout(t.app, shop.auth, checkoutBody(block, { items: [{ plan_id: block, quantity: 1 }] }))
    assert.equal(await mrrAt(to), 5079)
  })
})
