import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { fixedClock } from '../../../src/lib/clock.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import {
  act,
  addDays,
  assertEnvelope,
  checkout,
  checkoutBody,
  closeTestApp,
  getSubscription,
  nextEmail,
  OTHER_ADDRESS,
  rowCounts,
  storedEvents,
} from './fixtures.ts'
import { assertProblem } from '../../helpers/problem.ts'

const clock = fixedClock('2026-05-10T09:00:00.000Z')

describe('subscription actions (admin)', () => {
  let t: TestApp
  let shop: StoreWithKey
  let other: StoreWithKey
  let product: any
  let secondProduct: any
  let monthly: any
  let premium: any
  let euro: any
  let archived: any
  let otherStorePlan: any

  before(async () => {
    t = await buildTestApp({ clock })
    shop = await createStoreWithKey(t.db)
    other = await createStoreWithKey(t.db)
    product = await createProduct(t.app, shop.auth)
    secondProduct = await createProduct(t.app, shop.auth)
    monthly = await createPlan(t.app, shop.auth, product.id, { name: 'Monthly', amount: 1500, interval: 'month' })
    premium = await createPlan(t.app, shop.auth, secondProduct.id, { name: 'Premium', amount: 2500, interval: 'month' })
    euro = await createPlan(t.app, shop.auth, product.id, { name: 'Euro', amount: 1400, currency: 'EUR' })
    archived = await createPlan(t.app, shop.auth, product.id, { name: 'Old', amount: 1000 })
    await call(t.app, { method: 'PATCH', url: `/api/v1/admin/plans/${archived.id}`, headers: shop.auth, payload: { active: false } })
    const otherProduct = await createProduct(t.app, other.auth)
    otherStorePlan = await createPlan(t.app, other.auth, otherProduct.id)
  })
  after(() => closeTestApp(t))

  const subscribe = async (planId = monthly.id, overrides: Record<string, unknown> = {}) =>
    (await checkout(t.app, shop.auth, checkoutBody(planId, overrides)))[0]

  /**
   * Runs one action and checks what every action must do: answer the subscription as GET then shows
   * it, grow `version` by one, and record exactly one event of the given type carrying that view.
   */
  async function performs(subscriptionId: string, action: string, payload: Record<string, unknown> | undefined, eventType: string) {
    clock.advance(60_000)
    const before = await getSubscription(t.app, shop.auth, subscriptionId)
    const eventsBefore = await storedEvents(t.db, subscriptionId)
    const response = await act(t.app, shop.auth, subscriptionId, action, payload)
    assert.equal(response.statusCode, 200, `${action} failed: ${response.body}`)
    const afterwards = await getSubscription(t.app, shop.auth, subscriptionId)
    assert.deepEqual(response.json, afterwards, 'the answer is the subscription as GET shows it')
    assert.equal(afterwards.version, before.version + 1)
    assert.equal(afterwards.updated_at, clock.now().toISOString())
    const events = await storedEvents(t.db, subscriptionId)
    assert.equal(events.length, eventsBefore.length + 1, `${action} records exactly one event`)
    const event = events.at(-1)
    assertEnvelope(event, eventType)
    assert.equal(event.timestamp, clock.now().toISOString())
    assert.equal(event.sequence, eventsBefore.at(-1).sequence + 1)
    assert.deepEqual(event.data, afterwards)
    const read = await call(t.app, { method: 'GET', url: `/api/v1/admin/events/${event.id}`, headers: shop.auth })
    assert.deepEqual(read.json, event)
    return { before, after: afterwards }
  }

  /** A refused action leaves the subscription and the event log exactly as they were. */
  async function refuses(subscriptionId: string, action: string, payload: Record<string, unknown> | undefined, status: number, code: string, path?: string, auth = shop.auth) {
    const before = await getSubscription(t.app, shop.auth, subscriptionId)
    const counts = await rowCounts(t.db, shop.store.id)
    assertProblem(await act(t.app, auth, subscriptionId, action, payload), status, code, { path })
    assert.deepEqual(await getSubscription(t.app, shop.auth, subscriptionId), before, `a refused ${action} changes nothing`)
    assert.deepEqual(await rowCounts(t.db, shop.store.id), counts)
  }

  describe('each action changes what it should, bumps version and records its event', () => {
    test('pause sets status paused, paused_at and resume_at: subscription.paused', async () => {
      const sub = await subscribe()
      const resumeAt = addDays(clock.now().toISOString(), 20)
      const { after } = await performs(sub.id, 'pause', { resume_at: resumeAt }, 'subscription.paused')
      assert.equal(after.status, 'paused')
      assert.equal(after.paused_at, clock.now().toISOString())
      assert.equal(after.resume_at, resumeAt)
    })

    test('pause without a resume date pauses until resumed', async () => {
      const sub = await subscribe()
      const { after } = await performs(sub.id, 'pause', {}, 'subscription.paused')
      assert.equal(after.status, 'paused')
      assert.equal(after.resume_at, null)
    })

    test('pause and cancel accept a request with no body at all (every field is optional)', async () => {
      const paused = await performs((await subscribe()).id, 'pause', undefined, 'subscription.paused')
      assert.equal(paused.after.status, 'paused')
      const cancelled = await performs((await subscribe()).id, 'cancel', undefined, 'subscription.cancelled')
      assert.equal(cancelled.after.status, 'cancelled')
      assert.equal(cancelled.after.cancel_at_period_end, false)
    })

    test('resume makes a paused subscription active and clears paused_at and resume_at: subscription.resumed', async () => {
      const sub = await subscribe()
      await act(t.app, shop.auth, sub.id, 'pause', { resume_at: addDays(clock.now().toISOString(), 5) })
      const { after } = await performs(sub.id, 'resume', undefined, 'subscription.resumed')
      assert.equal(after.status, 'active')
      assert.equal(after.paused_at, null)
      assert.equal(after.resume_at, null)
    })

    test('cancel (now) sets status cancelled, cancelled_at and the reason, and stops renewals: subscription.cancelled', async () => {
      const sub = await subscribe()
      const { after } = await performs(sub.id, 'cancel', { reason: 'moving abroad' }, 'subscription.cancelled')
      assert.equal(after.status, 'cancelled')
      assert.equal(after.cancelled_at, clock.now().toISOString())
      assert.equal(after.cancellation_reason, 'moving abroad')
      assert.equal(after.next_charge_at, null)
      assert.equal(after.cancel_at_period_end, false)
    })

    test('cancel at_period_end keeps the status and sets cancel_at_period_end: subscription.updated', async () => {
      const sub = await subscribe()
      const { before, after } = await performs(sub.id, 'cancel', { at_period_end: true, reason: 'too much coffee' }, 'subscription.updated')
      assert.equal(after.status, 'active')
      assert.equal(after.cancel_at_period_end, true)
      assert.equal(after.cancelled_at, null)
      assert.equal(after.cancellation_reason, 'too much coffee')
      assert.equal(after.current_period_end, before.current_period_end)
    })

    test('skip sets skip_next: subscription.skipped; unskip clears it: subscription.unskipped', async () => {
      const sub = await subscribe()
      const skipped = await performs(sub.id, 'skip', undefined, 'subscription.skipped')
      assert.equal(skipped.after.skip_next, true)
      assert.equal(skipped.after.status, 'active')
      const unskipped = await performs(sub.id, 'unskip', undefined, 'subscription.unskipped')
      assert.equal(unskipped.after.skip_next, false)
    })

    test('swap moves to the new plan, its product and amount: subscription.swapped', async () => {
      const sub = await subscribe(monthly.id, { items: [{ plan_id: monthly.id, quantity: 2 }] })
      const { before, after } = await performs(sub.id, 'swap', { plan_id: premium.id }, 'subscription.swapped')
      assert.equal(after.plan_id, premium.id)
      assert.equal(after.product_id, secondProduct.id)
      assert.equal(after.amount, 2500)
      assert.equal(after.quantity, 2)
      assert.equal(after.next_charge_at, before.next_charge_at, 'the paid period keeps its terms')
    })

    test('quantity changes the quantity: subscription.updated', async () => {
      const sub = await subscribe()
      const { after } = await performs(sub.id, 'quantity', { quantity: 5 }, 'subscription.updated')
      assert.equal(after.quantity, 5)
      assert.equal(after.amount, 1500)
    })

    test('interval changes the cadence from the next charge: subscription.updated', async () => {
      const sub = await subscribe()
      const { before, after } = await performs(sub.id, 'interval', { interval: 'week', interval_count: 2 }, 'subscription.updated')
      assert.equal(after.interval, 'week')
      assert.equal(after.interval_count, 2)
      assert.equal(after.next_charge_at, before.next_charge_at)
      assert.equal(after.current_period_end, before.current_period_end)
    })

    test('shipping-address replaces the address: shipping.address_updated', async () => {
      const sub = await subscribe()
      const { after } = await performs(sub.id, 'shipping-address', { shipping_address: OTHER_ADDRESS }, 'shipping.address_updated')
      assert.deepEqual(after.shipping_address, OTHER_ADDRESS)
    })

    test('payment-instrument replaces the vault instrument: subscription.payment_instrument_updated', async () => {
      const sub = await subscribe()
      const { after } = await performs(sub.id, 'payment-instrument', { payment_instrument_id: 'instr_new_1' }, 'subscription.payment_instrument_updated')
      assert.equal(after.payment_instrument_id, 'instr_new_1')
    })

    test('successive actions number one subscription\'s events 1, 2, 3, ... without gaps', async () => {
      const sub = await subscribe()
      await performs(sub.id, 'quantity', { quantity: 2 }, 'subscription.updated')
      await performs(sub.id, 'pause', {}, 'subscription.paused')
      await performs(sub.id, 'resume', undefined, 'subscription.resumed')
      const events = await storedEvents(t.db, sub.id)
      assert.deepEqual(events.map((event) => event.sequence), [1, 2, 3, 4, 5])
      assert.deepEqual(events.map((event) => event.data.version), [1, 1, 2, 3, 4])
    })

    test('concurrent actions on one subscription apply one at a time: versions and sequences have no gaps or duplicates', async () => {
      const sub = await subscribe()
      const answers = await Promise.all([2, 3, 4, 5, 6].map((quantity) => act(t.app, shop.auth, sub.id, 'quantity', { quantity })))
      assert.deepEqual(answers.map((answer) => answer.statusCode), [200, 200, 200, 200, 200])
      assert.deepEqual(answers.map((answer) => answer.json.version).sort(), [2, 3, 4, 5, 6])
      const events = await storedEvents(t.db, sub.id)
      assert.deepEqual(events.map((event) => event.sequence), [1, 2, 3, 4, 5, 6, 7])
      assert.deepEqual(events.slice(2).map((event) => event.data.version), [2, 3, 4, 5, 6])
      assert.equal((await getSubscription(t.app, shop.auth, sub.id)).quantity, events.at(-1).data.quantity)
    })

    test('two concurrent skips: one succeeds, the other is 409 invalid_state', async () => {
      const sub = await subscribe()
      const answers = await Promise.all([act(t.app, shop.auth, sub.id, 'skip'), act(t.app, shop.auth, sub.id, 'skip')])
      assert.deepEqual(answers.map((answer) => answer.statusCode).sort(), [200, 409])
      assertProblem(answers.find((answer) => answer.statusCode === 409)!, 409, 'invalid_state')
      assert.deepEqual((await storedEvents(t.db, sub.id)).map((event) => event.event_type), ['subscription.created', 'subscription.activated', 'subscription.skipped'])
    })
  })

  describe('refusals change nothing', () => {
    test('resume of an active subscription is 409 invalid_state', async () => {
      const sub = await subscribe()
      await refuses(sub.id, 'resume', undefined, 409, 'invalid_state')
    })

    test('pause of a paused subscription is 409 invalid_state', async () => {
      const sub = await subscribe()
      await act(t.app, shop.auth, sub.id, 'pause', {})
      await refuses(sub.id, 'pause', {}, 409, 'invalid_state')
    })

    test('every action on a cancelled subscription is 409 invalid_state', async () => {
      const sub = await subscribe()
      assert.equal((await act(t.app, shop.auth, sub.id, 'cancel', {})).statusCode, 200)
      const attempts: [string, Record<string, unknown> | undefined][] = [
        ['pause', {}],
        ['resume', undefined],
        ['cancel', {}],
        ['cancel', { at_period_end: true }],
        ['skip', undefined],
        ['unskip', undefined],
        ['swap', { plan_id: premium.id }],
        ['quantity', { quantity: 3 }],
        ['interval', { interval: 'week' }],
        ['shipping-address', { shipping_address: OTHER_ADDRESS }],
        ['payment-instrument', { payment_instrument_id: 'instr_other' }],
      ]
      for (const [action, payload] of attempts) await refuses(sub.id, action, payload, 409, 'invalid_state')
    })

    test('skip twice is 409 invalid_state', async () => {
      const sub = await subscribe()
      assert.equal((await act(t.app, shop.auth, sub.id, 'skip')).statusCode, 200)
      await refuses(sub.id, 'skip', undefined, 409, 'invalid_state')
    })

    test('unskip when the next renewal is not skipped is 409 invalid_state', async () => {
      const sub = await subscribe()
      await refuses(sub.id, 'unskip', undefined, 409, 'invalid_state')
    })

    test('pause with resume_at in the past is 400 validation_failed at /body/resume_at', async () => {
      const sub = await subscribe()
      await refuses(sub.id, 'pause', { resume_at: addDays(clock.now().toISOString(), -1) }, 400, 'validation_failed', '/body/resume_at')
    })

    test('swap to a plan in another currency is 400 validation_failed at /body/plan_id', async () => {
      const sub = await subscribe()
      await refuses(sub.id, 'swap', { plan_id: euro.id }, 400, 'validation_failed', '/body/plan_id')
    })

    test("swap to another store's plan is 404 not_found", async () => {
      const sub = await subscribe()
      await refuses(sub.id, 'swap', { plan_id: otherStorePlan.id }, 404, 'not_found')
    })

    test('swap to an archived plan is 400 validation_failed at /body/plan_id', async () => {
      const sub = await subscribe()
      await refuses(sub.id, 'swap', { plan_id: archived.id }, 400, 'validation_failed', '/body/plan_id')
    })

    test('quantity 0 and unknown fields are 400 validation_failed', async () => {
      const sub = await subscribe()
      await refuses(sub.id, 'quantity', { quantity: 0 }, 400, 'validation_failed', '/body/quantity')
      await refuses(sub.id, 'cancel', { reason: 'x', refund: true }, 400, 'validation_failed', '/body/refund')
    })

    test("acting on another store's subscription is 404 not_found and changes nothing", async () => {
      const sub = await subscribe()
      const attempts: [string, Record<string, unknown> | undefined][] = [
        ['pause', {}],
        ['resume', undefined],
        ['cancel', {}],
        ['skip', undefined],
        ['unskip', undefined],
        ['swap', { plan_id: premium.id }],
        ['quantity', { quantity: 3 }],
        ['interval', { interval: 'week' }],
        ['shipping-address', { shipping_address: OTHER_ADDRESS }],
        ['payment-instrument', { payment_instrument_id: 'instr_other' }],
      ]
      for (const [action, payload] of attempts) await refuses(sub.id, action, payload, 404, 'not_found', undefined, other.auth)
      assertProblem(await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${sub.id}`, headers: other.auth }), 404, 'not_found')
    })
  })

  describe('GET /api/v1/admin/subscriptions', () => {
    let listing: StoreWithKey
    let planA: any
    let planB: any
    const alice = nextEmail('alice')
    const bob = nextEmail('bob')
    const created: any[] = []

    before(async () => {
      // A store of its own, so the lists hold exactly what these tests made.
      listing = await createStoreWithKey(t.db)
      const listingProduct = await createProduct(t.app, listing.auth)
      planA = await createPlan(t.app, listing.auth, listingProduct.id, { name: 'A' })
      planB = await createPlan(t.app, listing.auth, listingProduct.id, { name: 'B' })
      for (const [email, plan] of [[alice, planA], [bob, planB], [alice, planB], [bob, planA], [alice, planA]] as const) {
        created.push(...(await checkout(t.app, listing.auth, checkoutBody(plan.id, { email }))))
      }
      assert.equal((await act(t.app, listing.auth, created[1].id, 'pause', {})).statusCode, 200)
      assert.equal((await act(t.app, listing.auth, created[3].id, 'cancel', {})).statusCode, 200)
    })

    const list = (query: string, auth = listing.auth) => call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions?${query}`, headers: auth })
    const ids = (response: Awaited<ReturnType<typeof list>>) => response.json.data.map((subscription: any) => subscription.id)
    const newestFirst = (subset: any[]) => subset.map((subscription) => subscription.id).reverse()

    test('lists the store\'s subscriptions newest first', async () => {
      const response = await list('')
      assert.equal(response.statusCode, 200)
      assert.deepEqual(ids(response), newestFirst(created))
      assert.equal(response.json.next_cursor, null)
    })

    test('filters by status', async () => {
      assert.deepEqual(ids(await list('status=paused')), [created[1].id])
      assert.deepEqual(ids(await list('status=cancelled')), [created[3].id])
      assert.deepEqual(ids(await list('status=active')), newestFirst([created[0], created[2], created[4]]))
      assert.deepEqual(ids(await list('status=pending')), [])
    })

    test("filters by the subscriber's email, whatever its case", async () => {
      assert.deepEqual(ids(await list(`email=${encodeURIComponent(alice.toUpperCase())}`)), newestFirst([created[0], created[2], created[4]]))
      assert.deepEqual(ids(await list(`email=${encodeURIComponent(bob)}`)), newestFirst([created[1], created[3]]))
      assert.deepEqual(ids(await list('email=nobody%40example.com')), [])
    })

    test('filters by plan, and filters combine', async () => {
      assert.deepEqual(ids(await list(`plan_id=${planB.id}`)), newestFirst([created[1], created[2]]))
      assert.deepEqual(ids(await list(`plan_id=${planA.id}&email=${encodeURIComponent(alice)}&status=active`)), newestFirst([created[0], created[4]]))
    })

    test('pages with limit and next_cursor, never repeating or skipping a subscription', async () => {
      const seen: string[] = []
      let cursor: string | null = null
      let pages = 0
      do {
        const response = await list(`limit=2${cursor ? `&cursor=${cursor}` : ''}`)
        assert.equal(response.statusCode, 200)
        assert.ok(response.json.data.length <= 2)
        seen.push(...ids(response))
        cursor = response.json.next_cursor
        pages += 1
      } while (cursor)
      assert.equal(pages, 3)
      assert.deepEqual(seen, newestFirst(created))
      const filtered = await list(`limit=1&plan_id=${planB.id}`)
      const next = await list(`limit=1&plan_id=${planB.id}&cursor=${filtered.json.next_cursor}`)
      assert.deepEqual([...ids(filtered), ...ids(next)], newestFirst([created[1], created[2]]))
      assert.equal(next.json.next_cursor, null)
    })

    test('a limit outside 1-100, an unknown status or a foreign cursor is 400 validation_failed', async () => {
      assertProblem(await list('limit=0'), 400, 'validation_failed', { path: '/query/limit' })
      assertProblem(await list('limit=101'), 400, 'validation_failed', { path: '/query/limit' })
      assertProblem(await list('status=sleeping'), 400, 'validation_failed', { path: '/query/status' })
      assertProblem(await list('cursor=bm90LWEtY3Vyc29y'), 400, 'validation_failed', { path: '/query/cursor' })
    })

    test("another store never sees this store's subscriptions", async () => {
      const theirs = await list('limit=100', other.auth)
      assert.equal(theirs.statusCode, 200)
      const mine = new Set(created.map((subscription) => subscription.id))
      assert.ok(!theirs.json.data.some((subscription: any) => mine.has(subscription.id)))
      assert.deepEqual(ids(await list(`plan_id=${planA.id}`, other.auth)), [])
      assert.deepEqual(ids(await list(`email=${encodeURIComponent(alice)}`, other.auth)), [])
      for (const subscription of created) {
        assertProblem(await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${subscription.id}`, headers: other.auth }), 404, 'not_found')
      }
    })
  })
})
