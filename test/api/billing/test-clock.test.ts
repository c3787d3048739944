import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct, createShopWithPlan } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, addDays, checkout, checkoutBody, getSubscription, storedEvents } from '../subscriptions/fixtures.ts'
import { assertProblem } from '../../helpers/problem.ts'

describe('test clock (docs/contract.md, Billing)', () => {
  let t: TestApp
  let shop: StoreWithKey

  const read = (auth = shop.auth) => call(t.app, { method: 'GET', url: '/api/v1/admin/test-clock', headers: auth })
  const advance = (to: string, auth = shop.auth) => call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: auth, payload: { to } })

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
  })
  after(() => t.close())

  test('a test store follows real time until its clock is first advanced', async () => {
    const store = await createStoreWithKey(t.db)
    const before = Date.now()
    const response = await read(store.auth)
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json.object, 'test_clock')
    assert.equal(response.json.follows_real_time, true)
    const now = new Date(response.json.now).getTime()
    assert.ok(now >= before - 1000 && now <= Date.now() + 1000, 'real time')
  })

  test('advance moves the clock and runs due work at its own time, in due order, counting each kind', async () => {
    // A store of its own: the counts are the store's, and no other test's subscriptions may be in them.
    const { auth, planId } = await createShopWithPlan(t)
    const start = new Date((await read(auth)).json.now)
    const later = addDays(start.toISOString(), 3)
    const muchLater = addDays(start.toISOString(), 5)
    // Pending until its start, 5 days from now.
    const [pending] = await checkout(t.app, auth, checkoutBody(planId, { start_at: muchLater }))
    // Paused until 3 days from now.
    const [paused] = await checkout(t.app, auth, checkoutBody(planId))
    assert.equal((await act(t.app, auth, paused.id, 'pause', { resume_at: later })).statusCode, 200)

    const to = addDays(start.toISOString(), 10)
    const response = await advance(to, auth)
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json.now, to)
    assert.deepEqual(response.json.processed, { activations: 1, renewals: 0, retries: 0, reminders: 0, resumptions: 1, cancellations: 0, expirations: 0 })

    assert.equal((await getSubscription(t.app, auth, pending.id)).status, 'active')
    assert.equal((await getSubscription(t.app, auth, paused.id)).status, 'active')
    const activated = (await storedEvents(t.db, pending.id)).find((event) => event.event_type === 'subscription.activated')
    const resumed = (await storedEvents(t.db, paused.id)).find((event) => event.event_type === 'subscription.resumed')
    assert.equal(activated.timestamp, muchLater, 'the activation carries its due time, not the time advanced to')
    assert.equal(resumed.timestamp, later)
    assert.ok(resumed.id < activated.id, 'the resumption (due first) was recorded first')

    const clock = await read(auth)
    assert.deepEqual(clock.json, { object: 'test_clock', now: to, follows_real_time: false })
    const active = await getSubscription(t.app, auth, pending.id)
    assert.equal(active.current_period_start, muchLater, 'the period starts at the activation time on the store clock')
  })

  test('work made due by earlier work in the same advance runs too (activation, then cancellation at period end)', async () => {
    const { auth, planId } = await createShopWithPlan(t)
    const start = (await read(auth)).json.now as string
    const [sub] = await checkout(t.app, auth, checkoutBody(planId))
    const cancel = await act(t.app, auth, sub.id, 'cancel', { at_period_end: true })
    assert.equal(cancel.statusCode, 200, cancel.body)
    const periodEnd = cancel.json.current_period_end as string
    assert.ok(periodEnd > start)
    const response = await advance(addDays(periodEnd, 1), auth)
    assert.equal(response.json.processed.cancellations, 1)
    const cancelled = await getSubscription(t.app, auth, sub.id)
    assert.equal(cancelled.status, 'cancelled')
    assert.equal(cancelled.cancelled_at, periodEnd)
  })

  test('advancing to the current time is allowed and does nothing; moving back is 400 and changes nothing', async () => {
    // A clock that stands still (a store follows real time until first advanced), set here rather than left by other tests.
    const { auth } = await createStoreWithKey(t.db)
    assert.equal((await advance(addDays(new Date().toISOString(), 1), auth)).statusCode, 200)
    const now = (await read(auth)).json.now as string
    const same = await advance(now, auth)
    assert.equal(same.statusCode, 200, same.body)
    assert.deepEqual(Object.values(same.json.processed), [0, 0, 0, 0, 0, 0, 0])
    assertProblem(await advance(addDays(now, -1), auth), 400, 'validation_failed', { path: '/body/to' })
    assert.equal((await read(auth)).json.now, now)
  })

  test('bad bodies are 400: not a time, unknown fields, too far ahead', async () => {
    assertProblem(await advance('tomorrow'), 400, 'validation_failed')
    const unknown = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: new Date().toISOString(), speed: 2 } })
    assertProblem(unknown, 400, 'validation_failed')
    const now = (await read()).json.now as string
    assertProblem(await advance(addDays(now, 11 * 366)), 400, 'validation_failed', { path: '/body/to' })
  })

  test('a live store has no test clock: 404 on both routes, and its time is untouched', async () => {
    const live = await createStoreWithKey(t.db, { mode: 'live' })
    assertProblem(await read(live.auth), 404, 'not_found')
    assertProblem(await advance(addDays(new Date().toISOString(), 1), live.auth), 404, 'not_found')
    const row = await t.db.selectFrom('stores').select('test_clock_now').where('id', '=', live.store.id).executeTakeFirstOrThrow()
    assert.equal(row.test_clock_now, null)
  })

  test("advancing one store's clock leaves another store's subscriptions alone", async () => {
    const other = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, other.auth)
    const otherPlan = (await createPlan(t.app, other.auth, product.id)).id
    const [pending] = await checkout(t.app, other.auth, checkoutBody(otherPlan, { start_at: addDays(new Date().toISOString(), 2) }))
    await advance(addDays((await read()).json.now, 30))
    assert.equal((await getSubscription(t.app, other.auth, pending.id)).status, 'pending')
  })
})
