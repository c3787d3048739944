import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { checkout, checkoutBody, closeTestApp, nextEmail } from '../subscriptions/fixtures.ts'

/**
 * GET /api/v1/portal/store: what the portal pages read about the subscriber's own store (its name,
 * calendar and clock, past-due cancellation days, cancellation reasons), and nothing of another store.
 */
describe('portal: the store as the portal sees it', () => {
  let t: TestApp
  let shop: StoreWithKey
  let other: StoreWithKey
  let auth: Record<string, string>

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    other = await createStoreWithKey(t.db)
    const plan = await createPlan(t.app, shop.auth, (await createProduct(t.app, shop.auth)).id, { amount: 1500, interval: 'month' })
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(plan.id, { email: nextEmail('store-reader') }))
    auth = (await signInSubscriber(t.app, t.db, shop.store.id, subscription.subscriber_id)).auth
    const settings = await call(t.app, {
      method: 'PATCH',
      url: '/api/v1/admin/store',
      headers: shop.auth,
      payload: {
        name: 'Northwind Coffee',
        timezone: 'America/New_York',
        past_due_cancel_days: 12,
        cancellation_reasons: [{ code: 'too_expensive', label: 'It costs too much' }, { code: 'moving', label: 'I am moving' }],
      },
    })
    assert.equal(settings.statusCode, 200, settings.body)
    // Another store's settings never show through.
    await call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: other.auth, payload: { name: 'Elsewhere', past_due_cancel_days: 3 } })
  })
  after(() => closeTestApp(t))

  test('answers the name, time zone, clock, past-due days and cancellation reasons of the session store', async () => {
    const before = Date.now()
    const response = await call(t.app, { method: 'GET', url: '/api/v1/portal/store', headers: auth })
    assert.equal(response.statusCode, 200, response.body)
    const body = response.json
    assert.deepEqual({ ...body, now: undefined }, {
      object: 'portal_store',
      store_hash: shop.store.store_hash,
      name: 'Northwind Coffee',
      timezone: 'America/New_York',
      now: undefined,
      past_due_cancel_days: 12,
      cancellation_reasons: [{ code: 'too_expensive', label: 'It costs too much' }, { code: 'moving', label: 'I am moving' }],
      reactivation: false,
    })
    assert.ok(Math.abs(Date.parse(body.now) - before) < 60_000, `now is the store's clock: ${body.now}`)
  })

  test("now follows a test store's test clock", async () => {
    const to = new Date(Date.now() + 40 * 86_400_000).toISOString()
    const advanced = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to } })
    assert.equal(advanced.statusCode, 200, advanced.body)
    const response = await call(t.app, { method: 'GET', url: '/api/v1/portal/store', headers: auth })
    assert.equal(response.json.now, to)
  })

  test('needs a portal session', async () => {
    const anonymous = await call(t.app, { method: 'GET', url: '/api/v1/portal/store' })
    assert.equal(anonymous.statusCode, 401)
    const admin = await call(t.app, { method: 'GET', url: '/api/v1/portal/store', headers: shop.auth })
    assert.equal(admin.statusCode, 401)
  })
})
