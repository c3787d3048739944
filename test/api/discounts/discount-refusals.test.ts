import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { checkout, checkoutBody, postCheckout, rowCounts } from '../subscriptions/fixtures.ts'

/**
 * Bad input gets a clear answer (issue 15; docs/contract.md, Discounts and add-ons): unknown,
 * expired, exhausted and inapplicable codes each have their code, and nothing is written; add-ons
 * need a one-time price and a quantity of 1-100; two applications racing for the last redemption:
 * one wins. Dates are on the store's test clock (2027-03-01).
 */
const NOW = '2027-03-01T00:00:00.000Z'

describe('discounts and add-ons refuse bad input', () => {
  let t: TestApp
  let shop: StoreWithKey
  let planId: string
  let otherPlanId: string
  let plainProductId: string
  let mugId: string
  let euroMugId: string

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    await t.db.updateTable('stores').set({ test_clock_now: new Date(NOW) }).where('id', '=', shop.store.id).execute()
    const product = await createProduct(t.app, shop.auth)
    plainProductId = product.id
    planId = (await createPlan(t.app, shop.auth, product.id, { amount: 1000 })).id
    otherPlanId = (await createPlan(t.app, shop.auth, product.id, { amount: 2000, name: 'Other' })).id
    mugId = (await createProduct(t.app, shop.auth, { name: 'Mug', one_time_price: { amount: 300, currency: 'USD' } })).id
    euroMugId = (await createProduct(t.app, shop.auth, { name: 'Euro mug', one_time_price: { amount: 300, currency: 'EUR' } })).id
    const codes = [
      { code: 'LATER', type: 'percentage', value: 10, duration: 'forever', starts_at: '2027-04-01T00:00:00.000Z' },
      { code: 'ENDED', type: 'percentage', value: 10, duration: 'forever', ends_at: '2027-02-28T00:00:00.000Z' },
      { code: 'OFF', type: 'percentage', value: 10, duration: 'forever', active: false },
      { code: 'OTHERPLAN', type: 'percentage', value: 10, duration: 'forever', applies_to_plan_ids: [otherPlanId] },
      { code: 'EUROS', type: 'fixed_amount', value: 100, currency: 'EUR', duration: 'once' },
      { code: 'USED', type: 'percentage', value: 10, duration: 'forever', max_redemptions: 1 },
    ]
    for (const body of codes) assert.equal((await post('/api/v1/admin/discounts', body)).statusCode, 201)
  })
  after(() => t.close())

  const post = (url: string, payload: unknown, headers: Record<string, string> = shop.auth) => call(t.app, { method: 'POST', url, headers, payload: payload as object })

  test('creating a discount: cross-field rules and a code taken in another case', async () => {
    assertProblem(await post('/api/v1/admin/discounts', { code: 'BIG', type: 'percentage', value: 150, duration: 'once' }), 400, 'validation_failed', { path: '/body/value' })
    assertProblem(await post('/api/v1/admin/discounts', { code: 'FIX', type: 'fixed_amount', value: 100, duration: 'once' }), 400, 'validation_failed', { path: '/body/currency' })
    assertProblem(await post('/api/v1/admin/discounts', { code: 'PCT', type: 'percentage', value: 10, currency: 'USD', duration: 'once' }), 400, 'validation_failed', { path: '/body/currency' })
    assertProblem(await post('/api/v1/admin/discounts', { code: 'REP', type: 'percentage', value: 10, duration: 'repeating' }), 400, 'validation_failed', { path: '/body/duration_in_cycles' })
    assertProblem(await post('/api/v1/admin/discounts', { code: 'NOREP', type: 'percentage', value: 10, duration: 'once', duration_in_cycles: 2 }), 400, 'validation_failed', { path: '/body/duration_in_cycles' })
    assertProblem(await post('/api/v1/admin/discounts', { code: 'WIN', type: 'percentage', value: 10, duration: 'once', starts_at: NOW, ends_at: NOW }), 400, 'validation_failed', { path: '/body/ends_at' })
    assertProblem(await post('/api/v1/admin/discounts', { code: 'x y', type: 'percentage', value: 10, duration: 'once' }), 400, 'validation_failed', { path: '/body/code' })
    assertProblem(await post('/api/v1/admin/discounts', { code: 'ZERO', type: 'percentage', value: 0, duration: 'once' }), 400, 'validation_failed', { path: '/body/value' })
    assertProblem(await post('/api/v1/admin/discounts', { code: 'later', type: 'percentage', value: 5, duration: 'once' }), 409, 'conflict')
    const listed = await call(t.app, { method: 'GET', url: '/api/v1/admin/discounts?code=later', headers: shop.auth })
    assert.deepEqual(listed.json.data.map((d: any) => d.code), ['LATER'])
  })

  test('applying: unknown, not yet started, ended, inactive, other plan, other currency, used up; nothing written', async () => {
    const [sub] = await checkout(t.app, shop.auth, checkoutBody(planId))
    const apply = (code: string) => post(`/api/v1/admin/subscriptions/${sub.id}/discount`, { code })
    const cases: [string, number, string][] = [
      ['NOPE', 400, 'discount_not_found'],
      ['later', 400, 'discount_expired'],
      ['ended', 400, 'discount_expired'],
      ['off', 400, 'discount_expired'],
      ['otherplan', 400, 'discount_not_applicable'],
      ['euros', 400, 'discount_not_applicable'],
    ]
    for (const [code, status, problem] of cases) assertProblem(await apply(code), status, problem, { path: '/body/code', what: code })
    const used = await checkout(t.app, shop.auth, checkoutBody(planId))
    assert.equal((await post(`/api/v1/admin/subscriptions/${used[0].id}/discount`, { code: 'used' })).statusCode, 200)
    assertProblem(await apply('USED'), 409, 'discount_exhausted', { path: '/body/code' })
    const after = (await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${sub.id}`, headers: shop.auth })).json
    assert.deepEqual([after.discount, after.version], [null, sub.version], 'nothing written')
    const events = await t.db.selectFrom('events').select('event_type').where('entity_id', '=', sub.id).execute()
    assert.ok(!events.some((event) => event.event_type.startsWith('subscription.discount')))
  })

  test('a checkout naming a bad code is refused at its item, and creates nothing', async () => {
    const before = await rowCounts(t.db, shop.store.id)
    const body = checkoutBody([planId, planId])
    body.items[1].discount_code = 'ended'
    assertProblem(await postCheckout(t.app, shop.auth, body), 400, 'discount_expired', { path: '/body/items/1/discount_code' })
    body.items[1].discount_code = 'nope'
    assertProblem(await postCheckout(t.app, shop.auth, body), 400, 'discount_not_found', { path: '/body/items/1/discount_code' })
    assert.deepEqual(await rowCounts(t.db, shop.store.id), before)
  })

  test('two applications racing for the last redemption: one wins, the other is discount_exhausted', async () => {
    assert.equal((await post('/api/v1/admin/discounts', { code: 'LAST', type: 'percentage', value: 10, duration: 'forever', max_redemptions: 1 })).statusCode, 201)
    const subs = await checkout(t.app, shop.auth, checkoutBody([planId, planId]))
    const answers = await Promise.all(subs.map((sub: any) => post(`/api/v1/admin/subscriptions/${sub.id}/discount`, { code: 'last' })))
    assert.deepEqual(answers.map((answer) => answer.statusCode).sort(), [200, 409])
    assertProblem(answers.find((answer) => answer.statusCode === 409)!, 409, 'discount_exhausted')
    const discount = (await call(t.app, { method: 'GET', url: '/api/v1/admin/discounts?code=LAST', headers: shop.auth })).json.data[0]
    assert.equal(discount.times_redeemed, 1)
  })

  test('add-ons: a product without a one-time price, in another currency, quantity 0 or 101, an unknown product', async () => {
    const [sub] = await checkout(t.app, shop.auth, checkoutBody(planId))
    const portal = await signInSubscriber(t.app, t.db, shop.store.id, sub.subscriber_id)
    for (const auth of [shop.auth, portal.auth]) {
      const base = auth === shop.auth ? '/api/v1/admin' : '/api/v1/portal'
      const add = (payload: unknown) => post(`${base}/subscriptions/${sub.id}/onetimes`, payload, auth)
      assertProblem(await add({ product_id: plainProductId, quantity: 1 }), 400, 'validation_failed', { path: '/body/product_id' })
      assertProblem(await add({ product_id: euroMugId, quantity: 1 }), 400, 'validation_failed', { path: '/body/product_id' })
      assertProblem(await add({ product_id: mugId, quantity: 0 }), 400, 'validation_failed', { path: '/body/quantity' })
      assertProblem(await add({ product_id: mugId, quantity: 101 }), 400, 'validation_failed', { path: '/body/quantity' })
      assertProblem(await add({ product_id: 'prod_01JD2Y5T1P8Q0W9KZ3M6N4R7BC', quantity: 1 }), 404, 'not_found')
    }
    const list = await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${sub.id}/onetimes`, headers: shop.auth })
    assert.deepEqual(list.json.data, [], 'nothing written')
  })

  test("another subscriber's subscription is not found; a cancelled one takes no discount or add-on", async () => {
    const [mine] = await checkout(t.app, shop.auth, checkoutBody(planId))
    const [theirs] = await checkout(t.app, shop.auth, checkoutBody(planId))
    const portal = await signInSubscriber(t.app, t.db, shop.store.id, mine.subscriber_id)
    assertProblem(await post(`/api/v1/portal/subscriptions/${theirs.id}/discount`, { code: 'LATER' }, portal.auth), 404, 'not_found')
    assertProblem(await post(`/api/v1/portal/subscriptions/${theirs.id}/onetimes`, { product_id: mugId, quantity: 1 }, portal.auth), 404, 'not_found')
    assertProblem(await call(t.app, { method: 'GET', url: `/api/v1/portal/subscriptions/${theirs.id}/onetimes`, headers: portal.auth }), 404, 'not_found')
    assert.equal((await post(`/api/v1/admin/subscriptions/${mine.id}/cancel`, {})).statusCode, 200)
    assertProblem(await post(`/api/v1/admin/subscriptions/${mine.id}/discount`, { code: 'OTHERPLAN' }), 409, 'invalid_state')
    assertProblem(await post(`/api/v1/admin/subscriptions/${mine.id}/onetimes`, { product_id: mugId, quantity: 1 }), 409, 'invalid_state')
  })
})
