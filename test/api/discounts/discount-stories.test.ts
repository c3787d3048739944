import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { storedEvents } from '../../helpers/subscriptions.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { checkout, checkoutBody } from '../subscriptions/fixtures.ts'

/**
 * Discounts and one-time add-ons through the HTTP API with the test clock (docs/contract.md,
 * Discounts and add-ons): the stories, each on a store of its own whose clock starts at
 * 2027-01-05 12:00 UTC, with a plan of 1000 USD a month.
 */
const START = '2027-01-05T12:00:00.000Z'
const monthLater = (months: number) => {
  const at = new Date(START)
  at.setUTCMonth(at.getUTCMonth() + months)
  return at.toISOString()
}

describe('discounts and add-ons on renewals (test clock)', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp()
  })
  after(() => t.close())

  async function shop(): Promise<StoreWithKey & { planId: string; productId: string }> {
    const s = await createStoreWithKey(t.db)
    await t.db.updateTable('stores').set({ test_clock_now: new Date(START) }).where('id', '=', s.store.id).execute()
    const product = await createProduct(t.app, s.auth)
    const plan = await createPlan(t.app, s.auth, product.id, { amount: 1000, currency: 'USD', interval: 'month' })
    return { ...s, planId: plan.id, productId: product.id }
  }
  const post = (auth: Record<string, string>, url: string, payload: unknown) => call(t.app, { method: 'POST', url, headers: auth, payload: payload as object })
  const get = (auth: Record<string, string>, url: string) => call(t.app, { method: 'GET', url, headers: auth })
  const advance = async (auth: Record<string, string>, to: string) => {
    const response = await post(auth, '/api/v1/admin/test-clock/advance', { to })
    if (response.statusCode !== 200) console.log(t.logs.filter((line) => line.includes('"level":50')).slice(-2).join('\n'))
    assert.equal(response.statusCode, 200, response.body)
    return response.json
  }
  const charges = async (auth: Record<string, string>, subscriptionId: string) =>
    ((await get(auth, `/api/v1/admin/charges?subscription_id=${subscriptionId}&limit=100`)).json.data as any[]).reverse()
  const createDiscount = async (auth: Record<string, string>, body: Record<string, unknown>) => {
    const response = await post(auth, '/api/v1/admin/discounts', body)
    assert.equal(response.statusCode, 201, response.body)
    return response.json
  }

  test('a 20% code for 2 cycles applied at checkout: charges 800, 800, then 1000', async () => {
    const { auth, planId } = await shop()
    const discount = await createDiscount(auth, { code: 'TWENTY', type: 'percentage', value: 20, duration: 'repeating', duration_in_cycles: 2 })
    const [sub] = await checkout(t.app, auth, checkoutBody(planId, { items: [{ plan_id: planId, quantity: 1, discount_code: 'twenty' }] }))
    assert.deepEqual(sub.discount, { id: discount.id, code: 'TWENTY', type: 'percentage', value: 20, cycles_remaining: 2 })

    await advance(auth, monthLater(3))
    const made = await charges(auth, sub.id)
    assert.deepEqual(made.map((c) => [c.status, c.subtotal, c.discount_amount, c.amount]), [
      ['succeeded', 1000, 200, 800],
      ['succeeded', 1000, 200, 800],
      ['succeeded', 1000, 0, 1000],
    ])
    assert.deepEqual(made[0].line_items, [{ type: 'subscription', product_id: sub.product_id, onetime_id: null, quantity: 1, unit_amount: 1000, amount: 1000, discount_amount: 200 }])
    const after = (await get(auth, `/api/v1/admin/subscriptions/${sub.id}`)).json
    assert.equal(after.discount, null, 'gone after its two charges')
    const types = (await storedEvents(t.db, sub.id)).map((event) => event.event_type)
    assert.ok(types.includes('subscription.discount_applied'))
    assert.equal(types.filter((type) => type === 'subscription.discount_removed').length, 1)
    assert.equal((await get(auth, `/api/v1/admin/discounts/${discount.id}`)).json.times_redeemed, 1, 'one redemption for one application')
  })

  test('a fixed once code applied by the subscriber in the portal: 500 off the next charge only', async () => {
    const { auth, planId, store } = await shop()
    await createDiscount(auth, { code: 'Welcome5', type: 'fixed_amount', value: 500, currency: 'USD', duration: 'once' })
    const [sub] = await checkout(t.app, auth, checkoutBody(planId))
    const portal = await signInSubscriber(t.app, t.db, store.id, sub.subscriber_id)
    const applied = await post(portal.auth, `/api/v1/portal/subscriptions/${sub.id}/discount`, { code: 'WELCOME5' })
    assert.equal(applied.statusCode, 200, applied.body)
    assert.equal(applied.json.discount.code, 'Welcome5')
    assert.equal(applied.json.discount.cycles_remaining, 1)

    await advance(auth, monthLater(2))
    assert.deepEqual((await charges(auth, sub.id)).map((c) => [c.subtotal, c.discount_amount, c.amount]), [[1000, 500, 500], [1000, 0, 1000]])
    assert.equal((await get(portal.auth, `/api/v1/portal/subscriptions/${sub.id}`)).json.discount, null)
  })

  test('the subscriber removes a discount in the portal before it is used: the renewal is full price', async () => {
    const { auth, planId, store } = await shop()
    await createDiscount(auth, { code: 'FOREVER10', type: 'percentage', value: 10, duration: 'forever' })
    const [sub] = await checkout(t.app, auth, checkoutBody(planId))
    const portal = await signInSubscriber(t.app, t.db, store.id, sub.subscriber_id)
    assert.equal((await post(portal.auth, `/api/v1/portal/subscriptions/${sub.id}/discount`, { code: 'forever10' })).json.discount.cycles_remaining, null)
    const removed = await call(t.app, { method: 'DELETE', url: `/api/v1/portal/subscriptions/${sub.id}/discount`, headers: portal.auth })
    assert.equal(removed.statusCode, 200, removed.body)
    assert.equal(removed.json.discount, null)
    await advance(auth, monthLater(1))
    assert.deepEqual((await charges(auth, sub.id)).map((c) => c.amount), [1000])
    const types = (await storedEvents(t.db, sub.id)).map((event) => event.event_type)
    assert.ok(types.indexOf('subscription.discount_applied') < types.indexOf('subscription.discount_removed'))
  })

  test('an add-on is charged once, in the next charge, then gone; a removed one is never charged', async () => {
    const { auth, planId, store } = await shop()
    const extra = await createProduct(t.app, auth, { name: 'Mug', one_time_price: { amount: 350, currency: 'USD' } })
    const other = await createProduct(t.app, auth, { name: 'Spoon', one_time_price: { amount: 90, currency: 'USD' } })
    const [sub] = await checkout(t.app, auth, checkoutBody(planId))
    const portal = await signInSubscriber(t.app, t.db, store.id, sub.subscriber_id)
    const added = await post(portal.auth, `/api/v1/portal/subscriptions/${sub.id}/onetimes`, { product_id: extra.id, quantity: 2 })
    assert.equal(added.statusCode, 201, added.body)
    assert.equal(added.json.status, 'pending')
    assert.equal(added.json.unit_amount, 350)
    const dropped = await post(auth, `/api/v1/admin/subscriptions/${sub.id}/onetimes`, { product_id: other.id, quantity: 1 })
    assert.equal(dropped.statusCode, 201, dropped.body)
    const removed = await call(t.app, { method: 'DELETE', url: `/api/v1/admin/subscriptions/${sub.id}/onetimes/${dropped.json.id}`, headers: auth })
    assert.equal(removed.statusCode, 200, removed.body)
    assert.equal(removed.json.status, 'removed')

    await advance(auth, monthLater(2))
    const made = await charges(auth, sub.id)
    assert.deepEqual(made.map((c) => [c.subtotal, c.discount_amount, c.amount]), [[1700, 0, 1700], [1000, 0, 1000]])
    assert.deepEqual(made[0].line_items.map((line: any) => [line.type, line.product_id, line.onetime_id, line.quantity, line.amount]), [
      ['subscription', sub.product_id, null, 1, 1000],
      ['onetime', extra.id, added.json.id, 2, 700],
    ])
    const list = await get(portal.auth, `/api/v1/portal/subscriptions/${sub.id}/onetimes`)
    assert.equal(list.statusCode, 200, list.body)
    const byId = new Map(list.json.data.map((row: any) => [row.id, row]))
    assert.deepEqual([(byId.get(added.json.id) as any).status, (byId.get(added.json.id) as any).charge_id], ['charged', made[0].id])
    assert.equal((byId.get(dropped.json.id) as any).status, 'removed')
    const pending = await get(auth, `/api/v1/admin/subscriptions/${sub.id}/onetimes?status=pending`)
    assert.deepEqual(pending.json.data, [])
    const events = (await storedEvents(t.db, added.json.id)).map((event) => event.event_type)
    assert.deepEqual(events, ['onetime.created'])
    assert.deepEqual((await storedEvents(t.db, dropped.json.id)).map((event) => [event.event_type, event.data.object]), [['onetime.created', 'onetime'], ['onetime.removed', 'onetime']])
    // Charged: it can no longer be removed.
    assertProblem(await call(t.app, { method: 'DELETE', url: `/api/v1/admin/subscriptions/${sub.id}/onetimes/${added.json.id}`, headers: auth }), 409, 'invalid_state')
  })

  test('a failed renewal keeps the discount cycle and the add-on for the retry, which uses them once', async () => {
    const { auth, planId } = await shop()
    await createDiscount(auth, { code: 'ONCE20', type: 'percentage', value: 20, duration: 'once' })
    const extra = await createProduct(t.app, auth, { name: 'Filter', one_time_price: { amount: 125, currency: 'USD' } })
    const [sub] = await checkout(t.app, auth, checkoutBody(planId, { payment_instrument_id: 'instr_declined', items: [{ plan_id: planId, quantity: 1, discount_code: 'once20' }] }))
    const addOn = (await post(auth, `/api/v1/admin/subscriptions/${sub.id}/onetimes`, { product_id: extra.id, quantity: 1 })).json
    await advance(auth, monthLater(1))
    let made = await charges(auth, sub.id)
    assert.deepEqual(made.map((c) => [c.status, c.amount]), [['failed', 925]])
    let current = (await get(auth, `/api/v1/admin/subscriptions/${sub.id}`)).json
    assert.equal(current.discount.cycles_remaining, 1, 'a failed attempt uses no cycle')
    assert.equal((await get(auth, `/api/v1/admin/subscriptions/${sub.id}/onetimes?status=pending`)).json.data.length, 1)

    // Dunning retries (day 1 fails again), then a new instrument retries at once and pays.
    await advance(auth, new Date(new Date(monthLater(1)).getTime() + 2 * 86_400_000).toISOString())
    const fixed = await post(auth, `/api/v1/admin/subscriptions/${sub.id}/payment-instrument`, { payment_instrument_id: 'instr_ok' })
    assert.equal(fixed.statusCode, 200, fixed.body)
    // The new instrument makes the retry due at once; the worker (here: the clock) runs it.
    await advance(auth, new Date(new Date(monthLater(1)).getTime() + 2 * 86_400_000 + 60_000).toISOString())
    made = await charges(auth, sub.id)
    assert.deepEqual(made.map((c) => [c.status, c.attempt, c.subtotal, c.discount_amount, c.amount]), [
      ['failed', 1, 1125, 200, 925],
      ['failed', 2, 1125, 200, 925],
      ['succeeded', 3, 1125, 200, 925],
    ])
    current = (await get(auth, `/api/v1/admin/subscriptions/${sub.id}`)).json
    assert.equal(current.discount, null, 'the once discount is used by the charge that paid')
    const row = (await get(auth, `/api/v1/admin/subscriptions/${sub.id}/onetimes`)).json.data[0]
    assert.deepEqual([row.id, row.status, row.charge_id], [addOn.id, 'charged', made[2].id])

    await advance(auth, monthLater(2))
    assert.deepEqual((await charges(auth, sub.id)).at(-1).amount, 1000)
  })

  test('a 100% discount makes a charge of 0, paid without asking the gateway', async () => {
    const { auth, planId } = await shop()
    await createDiscount(auth, { code: 'FREE', type: 'percentage', value: 100, duration: 'once' })
    const [sub] = await checkout(t.app, auth, checkoutBody(planId, { items: [{ plan_id: planId, quantity: 1, discount_code: 'FREE' }] }))
    await advance(auth, monthLater(1))
    assert.deepEqual((await charges(auth, sub.id)).map((c) => [c.status, c.subtotal, c.discount_amount, c.amount]), [['succeeded', 1000, 1000, 0]])
  })
})
