import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { checkout, checkoutBody, postCheckout } from '../subscriptions/fixtures.ts'
import { updateStoreSettings } from '../../../src/modules/stores/index.ts'

/**
 * Renewals priced as the store prices them, on the test gateway (docs/contract.md, Renewal pricing):
 * tax at the store's `test_tax_rate_bps` of the discounted subtotal, rounded half up; shipping by the
 * store's `renewal_shipping` policy, untaxed and undiscounted; the charge's breakdown adds up, the
 * preview shows the same figures the charge then carries, and so do its events. Every figure is
 * worked out by hand in the test. Each store's clock starts at 2027-01-05 12:00 UTC.
 */
const START = '2027-01-05T12:00:00.000Z'
const A_MONTH_LATER = '2027-02-05T12:00:00.000Z'
const GROUND = { method: 'Ground', amount: 599 }

type Auth = Record<string, string>

describe('renewal pricing on the test gateway: tax, shipping policy, the breakdown on the charge and the preview', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp()
  })
  after(() => t.close())

  async function shop(settings: Record<string, unknown> = {}, plan: Record<string, unknown> = {}): Promise<StoreWithKey & { planId: string }> {
    const s = await createStoreWithKey(t.db)
    await t.db.updateTable('stores').set({ test_clock_now: new Date(START) }).where('id', '=', s.store.id).execute()
    if (Object.keys(settings).length > 0) {
      const patched = await patchStore(s.auth, settings)
      assert.equal(patched.statusCode, 200, patched.body)
    }
    const product = await createProduct(t.app, s.auth)
    const created = await createPlan(t.app, s.auth, product.id, { amount: 1800, currency: 'USD', interval: 'month', ...plan })
    return { ...s, planId: created.id }
  }
  const patchStore = (auth: Auth, payload: Record<string, unknown>) => call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: auth, payload })
  const get = async (auth: Auth, url: string) => {
    const response = await call(t.app, { method: 'GET', url, headers: auth })
    assert.equal(response.statusCode, 200, response.body)
    return response.json
  }
  const upcoming = (auth: Auth, id: string) => get(auth, `/api/v1/admin/subscriptions/${id}/upcoming`)
  /** Moves the store's clock past the renewal and answers the charge it made. */
  async function renew(auth: Auth, id: string) {
    const advanced = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: auth, payload: { to: A_MONTH_LATER } })
    assert.equal(advanced.statusCode, 200, advanced.body)
    const [charge] = (await get(auth, `/api/v1/admin/charges?subscription_id=${id}&limit=1`)).data
    assert.ok(charge, 'the renewal made a charge')
    return charge
  }
  const breakdown = (x: any) => [x.subtotal, x.discount_amount, x.shipping_amount, x.tax_amount, x.amount]

  test('8.25% tax and the checkout\'s Ground rate: 1,800 x 2 less 10% = 3,240, tax 267 (267.3), shipping 599 untaxed: 4,106; the preview, the charge and charge.succeeded agree', async () => {
    const { auth, planId } = await shop({ test_tax_rate_bps: 825 })
    const code = await call(t.app, { method: 'POST', url: '/api/v1/admin/discounts', headers: auth, payload: { code: 'TEN', type: 'percentage', value: 10, duration: 'forever' } })
    assert.equal(code.statusCode, 201, code.body)
    const [sub] = await checkout(t.app, auth, checkoutBody(planId, { items: [{ plan_id: planId, quantity: 2, discount_code: 'TEN' }], shipping: GROUND }))
    assert.deepEqual(sub.shipping, GROUND, 'the subscription keeps what its checkout paid for shipping')

    const preview = await upcoming(auth, sub.id)
    assert.deepEqual(breakdown(preview), [3600, 360, 599, 267, 4106])
    assert.equal(preview.shipping_method, 'Ground')

    const charge = await renew(auth, sub.id)
    assert.equal(charge.status, 'succeeded')
    assert.deepEqual(breakdown(charge), breakdown(preview), 'the preview is the charge')
    assert.equal(charge.shipping_method, 'Ground')
    assert.equal(charge.subtotal - charge.discount_amount + charge.shipping_amount + charge.tax_amount, charge.amount)
    const ledger = await t.db.selectFrom('test_gateway_charges').select('amount').where('subscription_id', '=', sub.id).executeTakeFirstOrThrow()
    assert.equal(ledger.amount, 4106, 'the gateway was asked for the whole sum')
    const events = await get(auth, '/api/v1/admin/events?event_type=charge.succeeded')
    const event = events.data.find((e: any) => e.data.id === charge.id)
    assert.ok(event, 'charge.succeeded was recorded')
    assert.deepEqual(breakdown(event.data), [3600, 360, 599, 267, 4106], 'the event carries the breakdown')
  })

  test('tax rounds half up: 1,000 at 8.25% is 82.5 -> 83; 999 is 82.4175 -> 82', async () => {
    const even = await shop({ test_tax_rate_bps: 825 }, { amount: 1000 })
    const [a] = await checkout(t.app, even.auth, checkoutBody(even.planId))
    assert.deepEqual(breakdown(await upcoming(even.auth, a.id)), [1000, 0, 0, 83, 1083])
    const odd = await shop({ test_tax_rate_bps: 825 }, { amount: 999 })
    const [b] = await checkout(t.app, odd.auth, checkoutBody(odd.planId))
    assert.deepEqual(breakdown(await upcoming(odd.auth, b.id)), [999, 0, 0, 82, 1081])
  })

  test('flat: the store\'s rate whatever the checkout paid; a subscription with no shipping address ships nothing', async () => {
    const { auth, planId } = await shop({ renewal_shipping: 'flat', renewal_shipping_amount: 450 })
    const [boxed] = await checkout(t.app, auth, checkoutBody(planId, { shipping: GROUND }))
    assert.deepEqual(breakdown(await upcoming(auth, boxed.id)), [1800, 0, 450, 0, 2250])
    const [digital] = await checkout(t.app, auth, checkoutBody(planId, { shipping_address: null }))
    assert.deepEqual(breakdown(await upcoming(auth, digital.id)), [1800, 0, 0, 0, 1800])
    const charge = await renew(auth, boxed.id)
    assert.deepEqual(breakdown(charge), [1800, 0, 450, 0, 2250])
  })

  test('free ships for nothing; requote keeps the checkout\'s rate on the test gateway (nothing quotes it again)', async () => {
    const free = await shop({ renewal_shipping: 'free' })
    const [a] = await checkout(t.app, free.auth, checkoutBody(free.planId, { shipping: GROUND }))
    assert.deepEqual(breakdown(await upcoming(free.auth, a.id)), [1800, 0, 0, 0, 1800])
    const requote = await shop({ renewal_shipping: 'requote' })
    const [b] = await checkout(t.app, requote.auth, checkoutBody(requote.planId, { shipping: GROUND }))
    assert.deepEqual(breakdown(await upcoming(requote.auth, b.id)), [1800, 0, 599, 0, 2399])
  })

  test('a discount never reduces shipping: 100% off still collects the shipping, and tax is on the goods only', async () => {
    const { auth, planId } = await shop({ test_tax_rate_bps: 2000 })
    await call(t.app, { method: 'POST', url: '/api/v1/admin/discounts', headers: auth, payload: { code: 'ALL', type: 'percentage', value: 100, duration: 'forever' } })
    const [sub] = await checkout(t.app, auth, checkoutBody(planId, { items: [{ plan_id: planId, quantity: 1, discount_code: 'ALL' }], shipping: GROUND }))
    const charge = await renew(auth, sub.id)
    assert.deepEqual(breakdown(charge), [1800, 1800, 599, 0, 599])
    assert.equal(charge.status, 'succeeded')
    const ledger = await t.db.selectFrom('test_gateway_charges').select('amount').where('subscription_id', '=', sub.id).executeTakeFirstOrThrow()
    assert.equal(ledger.amount, 599, 'the shipping was collected through the gateway')
  })

  test('store settings: flat needs a rate, the rate and tax are bounded, and a refused change leaves the store as it was', async () => {
    const { auth } = await shop()
    assertProblem(await patchStore(auth, { renewal_shipping: 'flat' }), 400, 'validation_failed', { path: '/body/renewal_shipping_amount' })
    assertProblem(await patchStore(auth, { test_tax_rate_bps: 10_001 }), 400, 'validation_failed')
    assertProblem(await patchStore(auth, { renewal_shipping_amount: -1 }), 400, 'validation_failed')
    assertProblem(await patchStore(auth, { renewal_shipping: 'pigeon' }), 400, 'validation_failed')
    const store = await get(auth, '/api/v1/admin/store')
    assert.deepEqual([store.renewal_shipping, store.renewal_shipping_amount, store.test_tax_rate_bps], ['checkout_rate', null, 0])
    const flat = await patchStore(auth, { renewal_shipping: 'flat', renewal_shipping_amount: 500 })
    assert.equal(flat.statusCode, 200, flat.body)
    // Clearing the rate while the policy is flat would ship for nothing: refused.
    assertProblem(await patchStore(auth, { renewal_shipping_amount: null }), 400, 'validation_failed', { path: '/body/renewal_shipping_amount' })
    const back = await patchStore(auth, { renewal_shipping: 'free', renewal_shipping_amount: null })
    assert.equal(back.statusCode, 200, back.body)
    assert.deepEqual([back.json.renewal_shipping, back.json.renewal_shipping_amount], ['free', null])
  })

  test('two admins at once: one sets flat while the other cleared the rate; the database refuses the pair and the loser hears 400, not 500', async () => {
    const { auth, store } = await shop({ renewal_shipping: 'free', renewal_shipping_amount: 500 })
    // The first admin's update was checked against the store as read, with its rate of 500 ...
    const stale = await t.db.selectFrom('stores').selectAll().where('id', '=', store.id).executeTakeFirstOrThrow()
    // ... while the second cleared the rate (allowed: the policy was free).
    assert.equal((await patchStore(auth, { renewal_shipping_amount: null })).statusCode, 200)
    await assert.rejects(updateStoreSettings(t.db, stale, { renewal_shipping: 'flat' }, new Date()), (error: { code?: string; details?: unknown }) => {
      assert.equal(error.code, 'validation_failed', JSON.stringify(error))
      return true
    })
    const now = await get(auth, '/api/v1/admin/store')
    assert.deepEqual([now.renewal_shipping, now.renewal_shipping_amount], ['free', null], 'nothing changed')
  })

  test('a checkout\'s shipping is checked: a method and a non-negative whole amount', async () => {
    const { auth, planId } = await shop()
    assertProblem(await postCheckout(t.app, auth, checkoutBody(planId, { shipping: { method: 'Ground', amount: 5.99 } })), 400, 'validation_failed')
    assertProblem(await postCheckout(t.app, auth, checkoutBody(planId, { shipping: { method: '', amount: 599 } })), 400, 'validation_failed')
    assertProblem(await postCheckout(t.app, auth, checkoutBody(planId, { shipping: { amount: 599 } })), 400, 'validation_failed')
    const [none] = await checkout(t.app, auth, checkoutBody(planId))
    assert.equal(none.shipping, null, 'no shipping named: none kept')
    assert.deepEqual(breakdown(await upcoming(auth, none.id)), [1800, 0, 0, 0, 1800])
  })
})
