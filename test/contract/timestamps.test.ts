import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../helpers/catalog.ts'
import { assertInvalidField } from '../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../helpers/test-app.ts'

/**
 * Times a client sends are RFC 3339 instants between the years 1900 and 2999 (docs/contract.md,
 * Bodies): a leap second or a year no period can be computed from is 400 validation_failed, never a
 * 500 and never a stored row that every later read fails to answer.
 */
describe('timestamps in requests', () => {
  let t: TestApp
  let shop: StoreWithKey
  let plan: any

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth, { platform_product_id: 'timestamps' })
    plan = await createPlan(t.app, shop.auth, product.id, { name: 'Yearly', interval: 'year' })
  })
  after(() => t.close())

  const checkout = (startAt: string) =>
    call(t.app, {
      method: 'POST',
      url: '/api/v1/admin/checkouts',
      headers: shop.auth,
      payload: { platform_order_id: `order-${startAt}`, email: 'time@example.com', payment_instrument_id: 'pi_time', start_at: startAt, items: [{ plan_id: plan.id, quantity: 1 }] },
    })

  for (const [name, value] of [
    ['a leap second', '2026-06-30T23:59:60Z'],
    ['the last instant of year 9999', '9999-12-31T23:59:59.999Z'],
    ['year 3000', '3000-01-01T00:00:00Z'],
    ['a day February does not have', '2027-02-29T00:00:00Z'],
  ] as const) {
    test(`${name} as a checkout's start_at is 400 and stores nothing; the list still answers`, async () => {
      assertInvalidField(await checkout(value), '/body/start_at')
      const stored = await t.db.selectFrom('subscriptions').select('id').where('store_id', '=', shop.store.id).execute()
      assert.deepEqual(stored, [])
      const list = await call(t.app, { method: 'GET', url: '/api/v1/admin/subscriptions', headers: shop.auth })
      assert.equal(list.statusCode, 200)
    })
  }

  test('a leap second in a query filter and in the test clock is 400', async () => {
    const leap = encodeURIComponent('2026-06-30T23:59:60Z')
    assertInvalidField(await call(t.app, { method: 'GET', url: `/api/v1/admin/events?occurred_after=${leap}`, headers: shop.auth }), '/query/occurred_after')
    assertInvalidField(await call(t.app, { method: 'GET', url: `/api/v1/admin/events?occurred_before=${leap}`, headers: shop.auth }), '/query/occurred_before')
    assertInvalidField(
      await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: '2026-06-30T23:59:60Z' } }),
      '/body/to',
    )
  })

  test('a time in the year 2999 is accepted and answered', async () => {
    const response = await checkout('2999-01-01T00:00:00.000Z')
    assert.equal(response.statusCode, 201, response.body)
    const list = await call(t.app, { method: 'GET', url: '/api/v1/admin/subscriptions', headers: shop.auth })
    assert.equal(list.statusCode, 200, list.body)
  })
})
