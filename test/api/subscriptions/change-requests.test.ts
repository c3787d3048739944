import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { ChangeSet } from '../../../src/db/database.ts'
import { systemClock } from '../../../src/lib/clock.ts'
import { AppError } from '../../../src/lib/errors.ts'
import { newId } from '../../../src/lib/ids.ts'
import { type ChangeRequestService } from '../../../src/modules/subscriptions/index.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { assertEnvelope, checkout, checkoutBody, closeTestApp, getSubscription, rowCounts, storedEvents } from './fixtures.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { testModules } from '../../helpers/modules.ts'

describe('B2B change requests', () => {
  let t: TestApp
  let shop: StoreWithKey
  let other: StoreWithKey
  let service: ChangeRequestService
  let business: any
  let businessPlus: any
  let consumer: any

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    other = await createStoreWithKey(t.db)
    // The portal route comes later: subscribers' requests are made through the service.
    service = testModules(t.db, { clock: systemClock }).changeRequests
    const product = await createProduct(t.app, shop.auth)
    business = await createPlan(t.app, shop.auth, product.id, { name: 'Office coffee', amount: 10_000, b2b: true })
    businessPlus = await createPlan(t.app, shop.auth, product.id, { name: 'Office coffee plus', amount: 15_000, b2b: true })
    consumer = await createPlan(t.app, shop.auth, product.id, { name: 'Home coffee', amount: 1500 })
  })
  after(() => closeTestApp(t))

  async function subscribe(plan = business, quantity = 10) {
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(plan.id, { items: [{ plan_id: plan.id, quantity }] }))
    return subscription
  }

  const propose = (subscription: any, changes: ChangeSet, note?: string) =>
    service.request(shop.store, subscription.id, { kind: 'subscriber', subscriberId: subscription.subscriber_id }, { changes, ...(note ? { note } : {}) })

  const getRequest = (id: string, auth = shop.auth) => call(t.app, { method: 'GET', url: `/api/v1/admin/change-requests/${id}`, headers: auth })
  const decide = (id: string, decision: 'approve' | 'reject', payload: Record<string, unknown> = {}, auth = shop.auth) =>
    call(t.app, { method: 'POST', url: `/api/v1/admin/change-requests/${id}/${decision}`, headers: auth, payload })
  const list = (query: string, auth = shop.auth) => call(t.app, { method: 'GET', url: `/api/v1/admin/change-requests?${query}`, headers: auth })

  test("a subscriber's request on a b2b plan is pending, leaves the subscription alone and records change_request.created", async () => {
    const subscription = await subscribe()
    const request = await propose(subscription, { quantity: 25 }, 'new hires')
    assert.match(request.id, /^cr_/)
    assert.equal(request.object, 'change_request')
    assert.equal(request.subscription_id, subscription.id)
    assert.equal(request.status, 'pending')
    assert.deepEqual(request.changes, { quantity: 25 })
    assert.equal(request.note, 'new hires')
    assert.equal(request.decided_at, null)
    assert.equal(request.effective_at, null)
    assert.deepEqual(await getSubscription(t.app, shop.auth, subscription.id), subscription, 'nothing changes until the merchant decides')

    const events = await storedEvents(t.db, request.id)
    assert.equal(events.length, 1)
    assertEnvelope(events[0], 'change_request.created')
    assert.equal(events[0].sequence, 1)
    assert.equal(events[0].data.object, 'change_request')
    assert.equal(events[0].data.subscription_id, subscription.id)
    assert.deepEqual(events[0].data, (await getRequest(request.id)).json)
  })

  test('the admin reads a request by id and lists them newest first, filtered by status and subscription', async () => {
    const first = await subscribe()
    const second = await subscribe()
    const a = await propose(first, { quantity: 11 })
    const b = await propose(second, { quantity: 12 })
    const c = await propose(first, { plan_id: businessPlus.id })
    assert.equal((await decide(c.id, 'reject')).statusCode, 200)

    const read = await getRequest(a.id)
    assert.equal(read.statusCode, 200)
    assert.deepEqual(read.json, a)

    const all = await list('limit=100')
    assert.equal(all.statusCode, 200)
    const ids = all.json.data.map((request: any) => request.id)
    assert.deepEqual(ids.filter((id: string) => [a.id, b.id, c.id].includes(id)), [c.id, b.id, a.id])
    assert.deepEqual([...ids].sort().reverse(), ids, 'newest first')
    assert.deepEqual((await list(`subscription_id=${first.id}`)).json.data.map((request: any) => request.id), [c.id, a.id])
    assert.deepEqual((await list(`subscription_id=${first.id}&status=pending`)).json.data.map((request: any) => request.id), [a.id])
    assert.ok((await list('status=rejected&limit=100')).json.data.every((request: any) => request.status === 'rejected'))

    const page = await list(`subscription_id=${first.id}&limit=1`)
    assert.deepEqual(page.json.data.map((request: any) => request.id), [c.id])
    const next = await list(`subscription_id=${first.id}&limit=1&cursor=${page.json.next_cursor}`)
    assert.deepEqual(next.json.data.map((request: any) => request.id), [a.id])
    assert.equal(next.json.next_cursor, null)
    assertProblem(await list('limit=0'), 400, 'validation_failed', { path: '/query/limit' })
  })

  test('approving a quantity change applies it, effective at the next charge, with subscription.updated then change_request.approved', async () => {
    const subscription = await subscribe()
    const request = await propose(subscription, { quantity: 40 })
    const eventsBefore = await storedEvents(t.db, subscription.id)
    const response = await decide(request.id, 'approve', { reason: 'fine by us' })
    assert.equal(response.statusCode, 200)
    assert.equal(response.json.status, 'approved')
    assert.equal(response.json.decision_reason, 'fine by us')
    assert.ok(response.json.decided_at)
    assert.equal(response.json.effective_at, subscription.next_charge_at)
    assert.deepEqual((await getRequest(request.id)).json, response.json)

    const changed = await getSubscription(t.app, shop.auth, subscription.id)
    assert.equal(changed.quantity, 40)
    assert.equal(changed.version, subscription.version + 1)
    assert.equal(changed.next_charge_at, subscription.next_charge_at)
    const subscriptionEvents = await storedEvents(t.db, subscription.id)
    assert.equal(subscriptionEvents.length, eventsBefore.length + 1)
    assertEnvelope(subscriptionEvents.at(-1), 'subscription.updated')
    assert.deepEqual(subscriptionEvents.at(-1).data, changed)

    const requestEvents = await storedEvents(t.db, request.id)
    assert.deepEqual(requestEvents.map((event) => [event.event_type, event.sequence]), [['change_request.created', 1], ['change_request.approved', 2]])
    assert.deepEqual(requestEvents[1].data, response.json)
    assert.ok(subscriptionEvents.at(-1).id < requestEvents[1].id, 'the change is recorded before its approval')
  })

  test('approving a plan change moves the subscription to that plan and amount with subscription.swapped', async () => {
    const subscription = await subscribe()
    const request = await propose(subscription, { plan_id: businessPlus.id, quantity: 12 })
    const response = await decide(request.id, 'approve')
    assert.equal(response.statusCode, 200)
    assert.equal(response.json.effective_at, subscription.next_charge_at)
    const changed = await getSubscription(t.app, shop.auth, subscription.id)
    assert.equal(changed.plan_id, businessPlus.id)
    assert.equal(changed.amount, 15_000)
    assert.equal(changed.quantity, 12)
    const events = await storedEvents(t.db, subscription.id)
    assert.equal(events.at(-1).event_type, 'subscription.swapped')
    assert.deepEqual(events.at(-1).data, changed)
  })

  test('rejecting records change_request.rejected and leaves the subscription unchanged', async () => {
    const subscription = await subscribe()
    const request = await propose(subscription, { quantity: 99 })
    const before = await rowCounts(t.db, shop.store.id)
    const response = await decide(request.id, 'reject', { reason: 'budget' })
    assert.equal(response.statusCode, 200)
    assert.equal(response.json.status, 'rejected')
    assert.equal(response.json.decision_reason, 'budget')
    assert.ok(response.json.decided_at)
    assert.equal(response.json.effective_at, null)
    assert.deepEqual(await getSubscription(t.app, shop.auth, subscription.id), subscription)
    assert.deepEqual(await rowCounts(t.db, shop.store.id), { ...before, events: before.events + 1 }, 'only the rejection is recorded')
    const events = await storedEvents(t.db, request.id)
    assert.deepEqual(events.map((event) => event.event_type), ['change_request.created', 'change_request.rejected'])
    assertEnvelope(events[1], 'change_request.rejected')
    assert.deepEqual(events[1].data, response.json)
  })

  test('approve and reject accept a request with no body (the reason is optional)', async () => {
    const approved = await propose(await subscribe(), { quantity: 13 })
    const rejected = await propose(await subscribe(), { quantity: 14 })
    for (const [request, decision, status] of [[approved, 'approve', 'approved'], [rejected, 'reject', 'rejected']] as const) {
      const response = await call(t.app, { method: 'POST', url: `/api/v1/admin/change-requests/${request.id}/${decision}`, headers: shop.auth })
      assert.equal(response.statusCode, 200, `${decision} without a body: ${response.body}`)
      assert.equal(response.json.status, status)
      assert.equal(response.json.decision_reason, null)
    }
  })

  test('deciding a request twice is 409 invalid_state and changes nothing', async () => {
    const subscription = await subscribe()
    const approved = await propose(subscription, { quantity: 20 })
    const rejected = await propose(subscription, { quantity: 30 })
    assert.equal((await decide(approved.id, 'approve')).statusCode, 200)
    assert.equal((await decide(rejected.id, 'reject')).statusCode, 200)
    const state = await getSubscription(t.app, shop.auth, subscription.id)
    const counts = await rowCounts(t.db, shop.store.id)
    for (const [id, decision] of [[approved.id, 'approve'], [approved.id, 'reject'], [rejected.id, 'approve'], [rejected.id, 'reject']] as const) {
      assertProblem(await decide(id, decision), 409, 'invalid_state')
    }
    assert.deepEqual(await getSubscription(t.app, shop.auth, subscription.id), state)
    assert.equal(state.quantity, 20)
    assert.deepEqual(await rowCounts(t.db, shop.store.id), counts)
  })

  test('two concurrent decisions on one request: exactly one wins', async () => {
    const subscription = await subscribe()
    const request = await propose(subscription, { quantity: 14 })
    const answers = await Promise.all([decide(request.id, 'approve'), decide(request.id, 'reject')])
    assert.deepEqual(answers.map((answer) => answer.statusCode).sort(), [200, 409])
    assertProblem(answers.find((answer) => answer.statusCode === 409)!, 409, 'invalid_state')
    assert.equal((await storedEvents(t.db, request.id)).length, 2)
  })

  test('approving after the subscription was cancelled is 409 invalid_state and the request stays pending', async () => {
    const subscription = await subscribe()
    const request = await propose(subscription, { quantity: 15 })
    assert.equal((await call(t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${subscription.id}/cancel`, headers: shop.auth, payload: {} })).statusCode, 200)
    const counts = await rowCounts(t.db, shop.store.id)
    assertProblem(await decide(request.id, 'approve'), 409, 'invalid_state')
    assert.equal((await getRequest(request.id)).json.status, 'pending')
    assert.deepEqual(await rowCounts(t.db, shop.store.id), counts)
  })

  test('approving a plan change whose plan was archived since is 409 invalid_state (no 400 naming a field the approval never sent)', async () => {
    const product = await createProduct(t.app, shop.auth)
    const retiring = await createPlan(t.app, shop.auth, product.id, { name: 'Retiring', amount: 12_000, b2b: true })
    const subscription = await subscribe()
    const request = await propose(subscription, { plan_id: retiring.id })
    await call(t.app, { method: 'PATCH', url: `/api/v1/admin/plans/${retiring.id}`, headers: shop.auth, payload: { active: false } })
    const counts = await rowCounts(t.db, shop.store.id)
    const response = await decide(request.id, 'approve')
    assert.equal((await getRequest(request.id)).json.status, 'pending')
    assert.deepEqual(await getSubscription(t.app, shop.auth, subscription.id), subscription)
    assert.deepEqual(await rowCounts(t.db, shop.store.id), counts)
    assertProblem(response, 409, 'invalid_state')
  })

  test('a request on a plan that is not b2b is refused with invalid_state (409) and writes nothing', async () => {
    const subscription = await subscribe(consumer, 1)
    const counts = await rowCounts(t.db, shop.store.id)
    await assert.rejects(propose(subscription, { quantity: 2 }), (error: unknown) => {
      assert.ok(error instanceof AppError)
      assert.equal(error.code, 'invalid_state')
      assert.equal(error.status, 409)
      return true
    })
    assert.deepEqual(await rowCounts(t.db, shop.store.id), counts)
  })

  test("a subscriber cannot request a change on someone else's subscription (not_found)", async () => {
    const mine = await subscribe()
    const theirs = await subscribe()
    await assert.rejects(
      service.request(shop.store, theirs.id, { kind: 'subscriber', subscriberId: mine.subscriber_id }, { changes: { quantity: 3 } }),
      (error: unknown) => error instanceof AppError && error.code === 'not_found' && error.status === 404,
    )
  })

  test("another store's change request is 404 not_found to read, approve or reject, and stays pending", async () => {
    const subscription = await subscribe()
    const request = await propose(subscription, { quantity: 50 })
    assertProblem(await getRequest(request.id, other.auth), 404, 'not_found')
    assertProblem(await decide(request.id, 'approve', {}, other.auth), 404, 'not_found')
    assertProblem(await decide(request.id, 'reject', {}, other.auth), 404, 'not_found')
    assert.ok(!(await list('limit=100', other.auth)).json.data.some((candidate: any) => candidate.id === request.id))
    assert.equal((await getRequest(request.id)).json.status, 'pending')
    assert.deepEqual(await getSubscription(t.app, shop.auth, subscription.id), subscription)
    assertProblem(await getRequest(newId('cr')), 404, 'not_found')
  })
})
