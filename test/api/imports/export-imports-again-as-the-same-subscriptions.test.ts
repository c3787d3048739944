import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, checkout, checkoutBody, OTHER_ADDRESS } from '../subscriptions/fixtures.ts'

/**
 * The subscriptions export is the `native` import format (docs/contract.md, Exports and Import): a
 * store's export imported into another store (a merchant moving stores, or rehearsing on a test
 * store) yields the same subscriptions, every date and count kept, so each continues exactly where
 * it was; imported back into the store it came from, it changes nothing.
 */
describe('an export imports again as the same subscriptions', () => {
  let t: TestApp
  let from: StoreWithKey
  let to: StoreWithKey
  let exported: string

  const upload = (shop: StoreWithKey, body: string, query = 'format=native') =>
    call(t.app, { method: 'POST', url: `/api/v1/admin/imports?${query}`, headers: { ...shop.auth, 'content-type': 'text/csv' }, payload: body })

  // What must survive the trip: everything but ids, the plan and product (the other store's), timestamps of the row itself and the version.
  const comparable = (s: any) => {
    const { id: _id, store_hash: _h, subscriber_id: _s, plan_id: _p, product_id: _pr, platform_order_id: _o, external_id: _e, created_at: _c, updated_at: _u, version: _v, start_at: _st, latest_charge_id: _l, subscriber: _sub, payment_instrument: _pi, ...rest } = s
    return rest
  }

  before(async () => {
    t = await buildTestApp()
    from = await createStoreWithKey(t.db)
    to = await createStoreWithKey(t.db)
    for (const shop of [from, to]) {
      const product = await createProduct(t.app, shop.auth, { platform_product_id: '4242', name: 'Coffee beans' })
      await createPlan(t.app, shop.auth, product.id, { amount: 1500 })
      await createPlan(t.app, shop.auth, product.id, { name: 'Prepaid', amount: 1200, prepaid_cycles: 3 })
      await createPlan(t.app, shop.auth, product.id, { name: 'Weekly', amount: 500, interval: 'week', interval_count: 2 })
    }
    const plans = (await call(t.app, { method: 'GET', url: '/api/v1/admin/plans?limit=10', headers: from.auth })).json.data
    const [monthly, prepaid, weekly] = ['Monthly', 'Prepaid', 'Weekly'].map((name) => plans.find((p: any) => p.name === name).id)
    const made = [
      ...(await checkout(t.app, from.auth, checkoutBody(monthly, { items: [{ plan_id: monthly, quantity: 3 }] }))),
      ...(await checkout(t.app, from.auth, checkoutBody(prepaid, { name: '=HYPERLINK("x")', shipping_address: OTHER_ADDRESS }))),
      ...(await checkout(t.app, from.auth, checkoutBody(weekly))),
      ...(await checkout(t.app, from.auth, checkoutBody(monthly))),
      ...(await checkout(t.app, from.auth, checkoutBody(monthly))),
    ]
    // Paused until a date, set to skip its next renewal, set to cancel at the period's end.
    const resumeAt = new Date(Date.now() + 40 * 86_400_000).toISOString()
    assert.equal((await act(t.app, from.auth, made[2]!.id, 'pause', { resume_at: resumeAt })).statusCode, 200)
    assert.equal((await act(t.app, from.auth, made[3]!.id, 'skip')).statusCode, 200)
    assert.equal((await act(t.app, from.auth, made[4]!.id, 'cancel', { at_period_end: true })).statusCode, 200)
    const response = await call(t.app, { method: 'GET', url: '/api/v1/admin/exports/subscriptions', headers: from.auth })
    assert.equal(response.statusCode, 200, response.body)
    exported = response.body
  })
  after(() => t?.close())

  test('into another store: every subscription, with its dates, counts, card and addresses', async () => {
    const report = await upload(to, exported)
    assert.equal(report.statusCode, 201, report.body)
    assert.deepEqual([report.json.status, report.json.rows, report.json.created, report.json.failed], ['completed', 5, 5, 0], JSON.stringify(report.json.errors))
    const list = async (shop: StoreWithKey) => (await call(t.app, { method: 'GET', url: '/api/v1/admin/subscriptions?limit=100', headers: shop.auth })).json.data
    const originals = await list(from)
    const imported = await list(to)
    const byExternal = new Map(imported.map((s: any) => [s.external_id, s]))
    for (const original of originals) {
      const copy = byExternal.get(original.id)
      assert.ok(copy, `${original.id} was imported`)
      assert.deepEqual(comparable(copy), comparable(original), `${original.id} is the same subscription`)
    }
    const prepaidOriginal = originals.find((s: any) => s.prepaid !== null)
    const subscriber = await t.db.selectFrom('subscribers').selectAll().where('id', '=', (byExternal.get(prepaidOriginal.id) as any).subscriber_id).executeTakeFirstOrThrow()
    assert.equal(subscriber.store_id, to.store.id)
    assert.equal(subscriber.name, '=HYPERLINK("x")', "the export's formula guard is taken off again: the name is the subscriber's own")
  })

  test('into the store it came from: nothing changes', async () => {
    const before = (await call(t.app, { method: 'GET', url: '/api/v1/admin/subscriptions?limit=100', headers: from.auth })).json.data
    const report = await upload(from, exported)
    assert.deepEqual([report.json.created, report.json.skipped, report.json.failed], [0, 5, 0])
    const after = (await call(t.app, { method: 'GET', url: '/api/v1/admin/subscriptions?limit=100', headers: from.auth })).json.data
    assert.deepEqual(after, before)
  })
})
