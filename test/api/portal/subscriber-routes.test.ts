import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { newId } from '../../../src/lib/ids.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
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
} from '../subscriptions/fixtures.ts'
import { assertProblem } from '../../helpers/problem.ts'

type Auth = Record<string, string>
const PORTAL = '/api/v1/portal'

describe('subscriber portal routes', () => {
  let t: TestApp
  let shop: StoreWithKey
  let other: StoreWithKey
  let monthly: any
  let premium: any
  let weekly: any
  let euro: any
  let archived: any
  let business: any
  let businessPlus: any
  let otherStorePlan: any
  const alice = { email: nextEmail('alice'), id: '', auth: {} as Auth }
  const bob = { email: nextEmail('bob'), id: '', auth: {} as Auth }
  // The same email as Alice, but a subscriber of another store: her token must open nothing here.
  const aliceElsewhere = { id: '', auth: {} as Auth }

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    other = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth)
    const secondProduct = await createProduct(t.app, shop.auth)
    monthly = await createPlan(t.app, shop.auth, product.id, { name: 'Monthly', amount: 1500, interval: 'month' })
    premium = await createPlan(t.app, shop.auth, secondProduct.id, { name: 'Premium', amount: 2500, interval: 'month' })
    weekly = await createPlan(t.app, shop.auth, product.id, { name: 'Weekly', amount: 500, interval: 'week' })
    euro = await createPlan(t.app, shop.auth, product.id, { name: 'Euro', amount: 1400, currency: 'EUR' })
    archived = await createPlan(t.app, shop.auth, product.id, { name: 'Old', amount: 1000 })
    await call(t.app, { method: 'PATCH', url: `/api/v1/admin/plans/${archived.id}`, headers: shop.auth, payload: { active: false } })
    business = await createPlan(t.app, shop.auth, product.id, { name: 'Office coffee', amount: 10_000, b2b: true })
    businessPlus = await createPlan(t.app, shop.auth, product.id, { name: 'Office coffee plus', amount: 15_000, b2b: true })
    otherStorePlan = await createPlan(t.app, other.auth, (await createProduct(t.app, other.auth)).id)

    for (const person of [alice, bob]) {
      const [first] = await checkout(t.app, shop.auth, checkoutBody(monthly.id, { email: person.email }))
      person.id = first.subscriber_id
      person.auth = (await signInSubscriber(t.app, t.db, shop.store.id, person.id)).auth
    }
    const [elsewhere] = await checkout(t.app, other.auth, checkoutBody(otherStorePlan.id, { email: alice.email }))
    aliceElsewhere.id = elsewhere.subscriber_id
    aliceElsewhere.auth = (await signInSubscriber(t.app, t.db, other.store.id, aliceElsewhere.id)).auth
  })
  after(() => closeTestApp(t))

  const portal = (auth: Auth, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: unknown, headers: Auth = {}) =>
    call(t.app, { method, url: `${PORTAL}${url}`, headers: { ...auth, ...headers }, ...(payload === undefined ? {} : { payload: payload as any }) })

  /** A new subscription of `person` in the shop, made by the admin checkout as the platform would. */
  async function subscribe(person: { email: string }, plan = monthly, quantity = 1) {
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(plan.id, { email: person.email, items: [{ plan_id: plan.id, quantity }] }))
    return subscription
  }

  const ids = (response: Awaited<ReturnType<typeof portal>>) => response.json.data.map((item: { id: string }) => item.id)

  describe('profile', () => {
    test('GET /me is the subscriber of the token, in the store of the token', async () => {
      const me = await portal(alice.auth, 'GET', '/me')
      assert.equal(me.statusCode, 200, me.body)
      assert.equal(me.json.id, alice.id)
      assert.equal(me.json.email, alice.email)
      assert.equal(me.json.store_hash, shop.store.store_hash)
      const elsewhere = await portal(aliceElsewhere.auth, 'GET', '/me')
      assert.equal(elsewhere.json.id, aliceElsewhere.id)
      assert.equal(elsewhere.json.store_hash, other.store.store_hash)
    })

    test('PATCH /me changes name and default shipping address, records no event, and touches nobody else', async () => {
      const person = { email: nextEmail('profile') }
      const sub = await subscribe(person)
      const { auth } = await signInSubscriber(t.app, t.db, shop.store.id, sub.subscriber_id)
      const before = (await portal(auth, 'GET', '/me')).json
      const bobBefore = (await portal(bob.auth, 'GET', '/me')).json
      const counts = await rowCounts(t.db, shop.store.id)

      const patched = await portal(auth, 'PATCH', '/me', { name: 'Grace Hopper', shipping_address: OTHER_ADDRESS })
      assert.equal(patched.statusCode, 200, patched.body)
      assert.equal(patched.json.name, 'Grace Hopper')
      assert.deepEqual(patched.json.shipping_address, OTHER_ADDRESS)
      assert.equal(patched.json.email, before.email, 'the email is not changed')
      assert.ok(patched.json.updated_at >= before.updated_at)
      assert.deepEqual((await portal(auth, 'GET', '/me')).json, patched.json, 'GET /me shows the change')
      assert.deepEqual(await rowCounts(t.db, shop.store.id), counts, 'no event (there is no subscriber event type) and no other row')
      assert.deepEqual((await getSubscription(t.app, shop.auth, sub.id)).shipping_address, sub.shipping_address, "the subscription keeps its own address")
      assert.deepEqual((await portal(bob.auth, 'GET', '/me')).json, bobBefore)

      const nameOnly = await portal(auth, 'PATCH', '/me', { name: 'G. Hopper' })
      assert.equal(nameOnly.json.name, 'G. Hopper')
      assert.deepEqual(nameOnly.json.shipping_address, OTHER_ADDRESS, 'a field left out is kept')
      const cleared = await portal(auth, 'PATCH', '/me', { shipping_address: null })
      assert.equal(cleared.json.shipping_address, null)
    })

    test('PATCH /me refuses an empty body and fields it does not own (email, id)', async () => {
      assertProblem(await portal(alice.auth, 'PATCH', '/me', {}), 400, 'validation_failed')
      assertProblem(await portal(alice.auth, 'PATCH', '/me', { email: 'evil@example.com' }), 400, 'validation_failed', { path: '/body/email' })
      assertProblem(await portal(alice.auth, 'PATCH', '/me', { id: bob.id, name: 'x' }), 400, 'validation_failed', { path: '/body/id' })
      assert.equal((await portal(alice.auth, 'GET', '/me')).json.email, alice.email)
    })
  })

  describe('listing and reading subscriptions', () => {
    test('the list holds only the subscriber’s own subscriptions, newest first, paged and filtered by status', async () => {
      const person = { email: nextEmail('lister') }
      const first = await subscribe(person)
      const second = await subscribe(person, premium)
      const third = await subscribe(person, weekly)
      await act(t.app, shop.auth, second.id, 'pause', {})
      await subscribe(bob)
      const { auth } = await signInSubscriber(t.app, t.db, shop.store.id, first.subscriber_id)

      const all = await portal(auth, 'GET', '/subscriptions')
      assert.equal(all.statusCode, 200, all.body)
      assert.deepEqual(ids(all), [third.id, second.id, first.id])
      assert.equal(all.json.next_cursor, null)
      assert.deepEqual(all.json.data[2], await getSubscription(t.app, shop.auth, first.id), 'items are the subscription as the admin API shows it')

      const page1 = await portal(auth, 'GET', '/subscriptions?limit=2')
      assert.deepEqual(ids(page1), [third.id, second.id])
      assert.ok(page1.json.next_cursor)
      const page2 = await portal(auth, 'GET', `/subscriptions?limit=2&cursor=${page1.json.next_cursor}`)
      assert.deepEqual(ids(page2), [first.id])
      assert.equal(page2.json.next_cursor, null)

      assert.deepEqual(ids(await portal(auth, 'GET', '/subscriptions?status=paused')), [second.id])
      assert.deepEqual(ids(await portal(auth, 'GET', '/subscriptions?status=cancelled')), [])
    })

    test("a subscriber's list never shows another subscriber's or another store's subscriptions", async () => {
      const bobs = ids(await portal(bob.auth, 'GET', '/subscriptions?limit=100'))
      const stored = await t.db.selectFrom('subscriptions').select('id').where('subscriber_id', '=', bob.id).orderBy('id', 'desc').execute()
      assert.deepEqual(bobs, stored.map((row) => row.id))
      const elsewhere = await portal(aliceElsewhere.auth, 'GET', '/subscriptions?limit=100')
      assert.ok(elsewhere.json.data.length >= 1)
      assert.ok(elsewhere.json.data.every((s: any) => s.subscriber_id === aliceElsewhere.id && s.store_hash === other.store.store_hash))
    })

    test('the query cannot name another subscriber: admin filters and ids are refused, not honoured', async () => {
      for (const query of [`subscriber_id=${alice.id}`, `customer_id=${alice.id}`, `email=${encodeURIComponent(alice.email)}`, `plan_id=${monthly.id}`]) {
        assertProblem(await portal(bob.auth, 'GET', `/subscriptions?${query}`), 400, 'validation_failed')
      }
    })

    test('GET /subscriptions/:id answers an own subscription as the admin API shows it; anyone else gets 404', async () => {
      const sub = await subscribe(alice)
      const read = await portal(alice.auth, 'GET', `/subscriptions/${sub.id}`)
      assert.equal(read.statusCode, 200, read.body)
      assert.deepEqual(read.json, await getSubscription(t.app, shop.auth, sub.id))
      assertProblem(await portal(bob.auth, 'GET', `/subscriptions/${sub.id}`), 404, 'not_found')
      assertProblem(await portal(aliceElsewhere.auth, 'GET', `/subscriptions/${sub.id}`), 404, 'not_found')
      assertProblem(await portal(alice.auth, 'GET', `/subscriptions/${newId('sub')}`), 404, 'not_found')
    })
  })

  describe('actions', () => {
    /**
     * Runs one action through the portal and checks what every action must do: answer the subscription
     * as the admin API then shows it, grow `version` by one, and record one event carrying that view.
     */
    async function performs(subscriptionId: string, action: string, payload: Record<string, unknown> | undefined, eventType: string, auth = alice.auth) {
      const before = await getSubscription(t.app, shop.auth, subscriptionId)
      const eventsBefore = await storedEvents(t.db, subscriptionId)
      const response = await portal(auth, 'POST', `/subscriptions/${subscriptionId}/${action}`, payload)
      assert.equal(response.statusCode, 200, `${action} failed: ${response.body}`)
      const afterwards = await getSubscription(t.app, shop.auth, subscriptionId)
      assert.deepEqual(response.json, afterwards, 'the answer is the subscription as GET shows it')
      assert.equal(afterwards.version, before.version + 1)
      const events = await storedEvents(t.db, subscriptionId)
      assert.equal(events.length, eventsBefore.length + 1, `${action} records exactly one event`)
      assertEnvelope(events.at(-1), eventType)
      assert.deepEqual(events.at(-1).data, afterwards)
      return { before, after: afterwards }
    }

    test('pause without a body (no content type) pauses until resumed: subscription.paused', async () => {
      const sub = await subscribe(alice)
      const { after } = await performs(sub.id, 'pause', undefined, 'subscription.paused')
      assert.equal(after.status, 'paused')
      assert.equal(after.resume_at, null)
    })

    test('pause with resume_at sets it: subscription.paused', async () => {
      const sub = await subscribe(alice)
      const resumeAt = addDays(new Date().toISOString(), 20)
      const { after } = await performs(sub.id, 'pause', { resume_at: resumeAt }, 'subscription.paused')
      assert.equal(after.resume_at, resumeAt)
    })

    test('resume without a body makes a paused subscription active: subscription.resumed', async () => {
      const sub = await subscribe(alice)
      await act(t.app, shop.auth, sub.id, 'pause', {})
      const { after } = await performs(sub.id, 'resume', undefined, 'subscription.resumed')
      assert.equal(after.status, 'active')
      assert.equal(after.paused_at, null)
    })

    test('cancel without a body cancels now: subscription.cancelled', async () => {
      const sub = await subscribe(alice)
      const { after } = await performs(sub.id, 'cancel', undefined, 'subscription.cancelled')
      assert.equal(after.status, 'cancelled')
      assert.equal(after.next_charge_at, null)
      assert.equal(after.cancellation_reason, null)
    })

    test('cancel at_period_end with a reason keeps it active until the period ends: subscription.updated', async () => {
      const sub = await subscribe(alice)
      const { after } = await performs(sub.id, 'cancel', { at_period_end: true, reason: 'too much coffee' }, 'subscription.updated')
      assert.equal(after.status, 'active')
      assert.equal(after.cancel_at_period_end, true)
      assert.equal(after.cancellation_reason, 'too much coffee')
    })

    test('skip and unskip without a body set and clear skip_next: subscription.skipped, subscription.unskipped', async () => {
      const sub = await subscribe(alice)
      assert.equal((await performs(sub.id, 'skip', undefined, 'subscription.skipped')).after.skip_next, true)
      assert.equal((await performs(sub.id, 'unskip', undefined, 'subscription.unskipped')).after.skip_next, false)
    })

    test('an explicit JSON null body counts as no body', async () => {
      const sub = await subscribe(alice)
      const response = await portal(alice.auth, 'POST', `/subscriptions/${sub.id}/skip`, 'null', { 'content-type': 'application/json' })
      assert.equal(response.statusCode, 200, response.body)
      const paused = await portal(alice.auth, 'POST', `/subscriptions/${sub.id}/pause`, 'null', { 'content-type': 'application/json' })
      assert.equal(paused.statusCode, 200, paused.body)
      assert.equal(paused.json.status, 'paused')
    })

    test('swap moves to another plan: subscription.swapped', async () => {
      const sub = await subscribe(alice)
      const { after } = await performs(sub.id, 'swap', { plan_id: premium.id }, 'subscription.swapped')
      assert.equal(after.plan_id, premium.id)
      assert.equal(after.product_id, premium.product_id)
      assert.equal(after.amount, premium.amount)
    })

    test('swap to a plan of another store is 404 and to another currency is 400, as for the admin', async () => {
      const sub = await subscribe(alice)
      assertProblem(await portal(alice.auth, 'POST', `/subscriptions/${sub.id}/swap`, { plan_id: otherStorePlan.id }), 404, 'not_found')
      assertProblem(await portal(alice.auth, 'POST', `/subscriptions/${sub.id}/swap`, { plan_id: euro.id }), 400, 'validation_failed', { path: '/body/plan_id' })
      assert.equal((await getSubscription(t.app, shop.auth, sub.id)).version, sub.version)
    })

    test('quantity changes the quantity: subscription.updated', async () => {
      const sub = await subscribe(alice)
      assert.equal((await performs(sub.id, 'quantity', { quantity: 3 }, 'subscription.updated')).after.quantity, 3)
    })

    test('interval changes the cadence: subscription.updated', async () => {
      const sub = await subscribe(alice)
      const { after } = await performs(sub.id, 'interval', { interval: 'week', interval_count: 2 }, 'subscription.updated')
      assert.equal(after.interval, 'week')
      assert.equal(after.interval_count, 2)
    })

    test('shipping-address changes where it ships: shipping.address_updated', async () => {
      const sub = await subscribe(alice)
      const { after } = await performs(sub.id, 'shipping-address', { shipping_address: OTHER_ADDRESS }, 'shipping.address_updated')
      assert.deepEqual(after.shipping_address, OTHER_ADDRESS)
    })

    test('payment-instrument changes the vault instrument: subscription.payment_instrument_updated', async () => {
      const sub = await subscribe(alice)
      const { after } = await performs(sub.id, 'payment-instrument', { payment_instrument_id: 'instr_new_1' }, 'subscription.payment_instrument_updated')
      assert.equal(after.payment_instrument_id, 'instr_new_1')
    })

    test('on a business plan, swap, quantity and interval are 409 for the subscriber (propose a change request)', async () => {
      const sub = await subscribe(alice, business, 10)
      const counts = await rowCounts(t.db, shop.store.id)
      for (const [action, payload] of [['swap', { plan_id: businessPlus.id }], ['quantity', { quantity: 20 }], ['interval', { interval: 'week' }]] as const) {
        assertProblem(await portal(alice.auth, 'POST', `/subscriptions/${sub.id}/${action}`, payload), 409, 'invalid_state')
      }
      assert.deepEqual(await getSubscription(t.app, shop.auth, sub.id), sub)
      assert.deepEqual(await rowCounts(t.db, shop.store.id), counts)
    })

    test('a retried action with the same Idempotency-Key is replayed, not applied twice', async () => {
      const sub = await subscribe(alice)
      const headers = { 'idempotency-key': `skip-${sub.id}` }
      const first = await portal(alice.auth, 'POST', `/subscriptions/${sub.id}/skip`, undefined, headers)
      const second = await portal(alice.auth, 'POST', `/subscriptions/${sub.id}/skip`, undefined, headers)
      assert.equal(first.statusCode, 200, first.body)
      assert.equal(second.statusCode, 200, second.body)
      assert.equal(second.headers['idempotent-replayed'], 'true')
      assert.deepEqual(second.json, first.json)
      assert.equal((await storedEvents(t.db, sub.id)).filter((event) => event.event_type === 'subscription.skipped').length, 1)
    })
  })

  describe('B2B change requests', () => {
    test('a subscriber proposes a change on a business plan: 201, change_request.created, the subscription unchanged', async () => {
      const sub = await subscribe(alice, business, 10)
      const response = await portal(alice.auth, 'POST', `/subscriptions/${sub.id}/change-requests`, { changes: { quantity: 25 }, note: 'new hires' })
      assert.equal(response.statusCode, 201, response.body)
      assert.match(response.json.id, /^cr_/)
      assert.equal(response.json.subscription_id, sub.id)
      assert.equal(response.json.status, 'pending')
      assert.deepEqual(response.json.changes, { quantity: 25 })
      assert.equal(response.json.note, 'new hires')
      assert.deepEqual(await getSubscription(t.app, shop.auth, sub.id), sub, 'nothing changes until the merchant decides')
      const events = await storedEvents(t.db, response.json.id)
      assert.equal(events.length, 1)
      assertEnvelope(events[0], 'change_request.created')
      assert.deepEqual(events[0].data, response.json)
      const adminView = await call(t.app, { method: 'GET', url: `/api/v1/admin/change-requests/${response.json.id}`, headers: shop.auth })
      assert.deepEqual(adminView.json, response.json, 'the merchant sees the same request')
    })

    test('a change request on a consumer plan is 409, and interval_count needs an interval (400)', async () => {
      const consumer = await subscribe(alice)
      assertProblem(await portal(alice.auth, 'POST', `/subscriptions/${consumer.id}/change-requests`, { changes: { quantity: 2 } }), 409, 'invalid_state')
      const sub = await subscribe(alice, business, 10)
      const counts = await rowCounts(t.db, shop.store.id)
      assertProblem(
        await portal(alice.auth, 'POST', `/subscriptions/${sub.id}/change-requests`, { changes: { interval_count: 2 } }),
        400,
        'validation_failed',
        { path: '/body/changes/interval' },
      )
      assert.deepEqual(await rowCounts(t.db, shop.store.id), counts)
    })

    test('the subscriber lists and reads only their own change requests, and sees the decision', async () => {
      const person = { email: nextEmail('b2b') }
      const first = await subscribe(person, business, 5)
      const second = await subscribe(person, business, 6)
      const { auth } = await signInSubscriber(t.app, t.db, shop.store.id, first.subscriber_id)
      const a = (await portal(auth, 'POST', `/subscriptions/${first.id}/change-requests`, { changes: { quantity: 7 } })).json
      const b = (await portal(auth, 'POST', `/subscriptions/${second.id}/change-requests`, { changes: { plan_id: businessPlus.id } })).json
      const bobsSub = await subscribe(bob, business, 3)
      const bobs = await portal(bob.auth, 'POST', `/subscriptions/${bobsSub.id}/change-requests`, { changes: { quantity: 4 } })
      assert.equal(bobs.statusCode, 201, bobs.body)
      await call(t.app, { method: 'POST', url: `/api/v1/admin/change-requests/${a.id}/approve`, headers: shop.auth, payload: { reason: 'fine' } })

      const list = await portal(auth, 'GET', '/change-requests')
      assert.equal(list.statusCode, 200, list.body)
      assert.deepEqual(ids(list), [b.id, a.id])
      assert.deepEqual(ids(await portal(auth, 'GET', '/change-requests?status=approved')), [a.id])
      assert.deepEqual(ids(await portal(auth, 'GET', `/change-requests?subscription_id=${second.id}`)), [b.id])
      const page = await portal(auth, 'GET', '/change-requests?limit=1')
      assert.deepEqual(ids(page), [b.id])
      assert.deepEqual(ids(await portal(auth, 'GET', `/change-requests?limit=1&cursor=${page.json.next_cursor}`)), [a.id])

      const read = await portal(auth, 'GET', `/change-requests/${a.id}`)
      assert.equal(read.statusCode, 200, read.body)
      assert.equal(read.json.status, 'approved')
      assert.equal(read.json.decision_reason, 'fine')
      assert.deepEqual(ids(await portal(bob.auth, 'GET', '/change-requests?limit=100')).includes(a.id), false)
      assert.deepEqual(ids(await portal(bob.auth, 'GET', `/change-requests?subscription_id=${first.id}`)), [], "naming another's subscription selects nothing")
      assert.deepEqual(ids(await portal(aliceElsewhere.auth, 'GET', '/change-requests?limit=100')), [])
    })
  })

  describe('charge history', () => {
    let chargeCounter = 0
    async function insertCharge(subscription: any, values: Record<string, unknown> = {}) {
      chargeCounter += 1
      return t.db
        .insertInto('charges')
        .values({
          id: newId('ch'),
          store_id: shop.store.id,
          subscription_id: subscription.id,
          amount: subscription.amount,
          currency: subscription.currency,
          status: 'succeeded',
          attempt: 1,
          payment_instrument_id: subscription.payment_instrument_id,
          idempotency_key: `test-charge-${process.pid}-${chargeCounter}`,
          period_start: new Date('2026-06-01T00:00:00.000Z'),
          period_end: new Date('2026-07-01T00:00:00.000Z'),
          created_at: new Date('2026-06-01T00:00:05.000Z'),
          ...values,
        })
        .returningAll()
        .executeTakeFirstOrThrow()
    }

    test("lists a subscription's charge attempts newest first, as docs/contract.md (Resources) shapes them, paged", async () => {
      const sub = await subscribe(alice)
      const sibling = await subscribe(alice)
      const failed = await insertCharge(sub, {
        status: 'failed',
        attempt: 1,
        failure_code: 'card_declined',
        failure_message: 'The card was declined',
        next_retry_at: new Date('2026-06-03T00:00:00.000Z'),
        settled_at: new Date('2026-06-01T00:00:06.000Z'),
      })
      const retried = await insertCharge(sub, { status: 'succeeded', attempt: 2, created_at: new Date('2026-06-03T00:00:01.000Z'), settled_at: new Date('2026-06-03T00:00:02.000Z') })
      const pending = await insertCharge(sub, {
        status: 'pending',
        attempt: 1,
        period_start: new Date('2026-07-01T00:00:00.000Z'),
        period_end: new Date('2026-08-01T00:00:00.000Z'),
        created_at: new Date('2026-07-01T00:00:01.000Z'),
      })
      await insertCharge(sibling)

      const response = await portal(alice.auth, 'GET', `/subscriptions/${sub.id}/charges`)
      assert.equal(response.statusCode, 200, response.body)
      assert.deepEqual(ids(response), [pending.id, retried.id, failed.id], "only this subscription's charges, newest first")
      assert.deepEqual(response.json.data[2], {
        id: failed.id,
        object: 'charge',
        subscription_id: sub.id,
        amount: sub.amount,
        subtotal: sub.amount,
        discount_amount: 0,
        shipping_amount: 0,
        shipping_method: null,
        tax_amount: 0,
        line_items: [],
        currency: sub.currency,
        status: 'failed',
        amount_refunded: 0,
        refund_status: 'none',
        review: null,
        attempt: 1,
        payment_instrument_id: sub.payment_instrument_id,
        platform_order_id: null,
        failure_code: 'card_declined',
        failure_message: 'The card was declined',
        next_retry_at: '2026-06-03T00:00:00.000Z',
        period_start: '2026-06-01T00:00:00.000Z',
        period_end: '2026-07-01T00:00:00.000Z',
        created_at: '2026-06-01T00:00:05.000Z',
        settled_at: '2026-06-01T00:00:06.000Z',
      })
      assert.equal(response.json.data[0].settled_at, null)
      assert.equal(response.json.data[0].failure_code, null)

      const page1 = await portal(alice.auth, 'GET', `/subscriptions/${sub.id}/charges?limit=2`)
      assert.deepEqual(ids(page1), [pending.id, retried.id])
      const page2 = await portal(alice.auth, 'GET', `/subscriptions/${sub.id}/charges?limit=2&cursor=${page1.json.next_cursor}`)
      assert.deepEqual(ids(page2), [failed.id])
      assert.equal(page2.json.next_cursor, null)
      assert.deepEqual(ids(await portal(alice.auth, 'GET', `/subscriptions/${(await subscribe(alice)).id}/charges`)), [], 'a subscription with no charges answers an empty page')
    })

    test("another subscriber's or another store's token cannot read the charges (404)", async () => {
      const sub = await subscribe(alice)
      await insertCharge(sub)
      assertProblem(await portal(bob.auth, 'GET', `/subscriptions/${sub.id}/charges`), 404, 'not_found')
      assertProblem(await portal(aliceElsewhere.auth, 'GET', `/subscriptions/${sub.id}/charges`), 404, 'not_found')
    })
  })

  describe('swap options', () => {
    test('are the active consumer plans of the store in the same currency, without the current plan; each is accepted by swap', async () => {
      const sub = await subscribe(alice)
      const response = await portal(alice.auth, 'GET', `/subscriptions/${sub.id}/swap-options?limit=100`)
      assert.equal(response.statusCode, 200, response.body)
      const offered = ids(response)
      // Newest first, like every list: these plans were created in this order.
      assert.deepEqual(offered, [weekly.id, premium.id])
      for (const refused of [monthly.id, euro.id, archived.id, otherStorePlan.id, business.id, businessPlus.id]) assert.ok(!offered.includes(refused), `${refused} is not offered`)
      const premiumView = response.json.data.find((plan: any) => plan.id === premium.id)
      const adminPlan = await call(t.app, { method: 'GET', url: `/api/v1/admin/plans/${premium.id}`, headers: shop.auth })
      assert.deepEqual(premiumView, adminPlan.json, 'plans are shown as the catalogue shows them')

      const page = await portal(alice.auth, 'GET', `/subscriptions/${sub.id}/swap-options?limit=1`)
      assert.deepEqual(ids(page), offered.slice(0, 1))
      assert.deepEqual(ids(await portal(alice.auth, 'GET', `/subscriptions/${sub.id}/swap-options?limit=1&cursor=${page.json.next_cursor}`)), offered.slice(1))

      const swapped = await portal(alice.auth, 'POST', `/subscriptions/${sub.id}/swap`, { plan_id: weekly.id })
      assert.equal(swapped.statusCode, 200, swapped.body)
      const afterSwap = ids(await portal(alice.auth, 'GET', `/subscriptions/${sub.id}/swap-options?limit=100`))
      assert.deepEqual(afterSwap, [premium.id, monthly.id], 'the new current plan drops out, the old one comes in')
    })

    test('a subscriber cannot swap onto a business plan (the merchant grants those), and nothing changes', async () => {
      const sub = await subscribe(alice)
      const refused = await portal(alice.auth, 'POST', `/subscriptions/${sub.id}/swap`, { plan_id: business.id })
      assertProblem(refused, 400, 'validation_failed')
      assert.equal((await getSubscription(t.app, shop.auth, sub.id)).plan_id, monthly.id)
      const byMerchant = await call(t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${sub.id}/swap`, headers: shop.auth, payload: { plan_id: business.id } })
      assert.equal(byMerchant.statusCode, 200, byMerchant.body)
    })

    test('a business subscription may propose any plan of its currency, business ones included', async () => {
      const sub = await subscribe(alice, business, 10)
      assert.deepEqual(ids(await portal(alice.auth, 'GET', `/subscriptions/${sub.id}/swap-options?limit=100`)), [businessPlus.id, weekly.id, premium.id, monthly.id])
    })

    test('a euro subscription is offered only euro plans', async () => {
      const sub = await subscribe(alice, euro)
      assert.deepEqual(ids(await portal(alice.auth, 'GET', `/subscriptions/${sub.id}/swap-options`)), [])
    })
  })

  describe('isolation: every route with an id answers 404 to anyone but the owner, and changes nothing', () => {
    test("subscriber B and a token of another store get 404 on A's subscription and change request, for every id route", async () => {
      const sub = await subscribe(alice, monthly)
      const b2b = await subscribe(alice, business, 10)
      const request = (await portal(alice.auth, 'POST', `/subscriptions/${b2b.id}/change-requests`, { changes: { quantity: 11 } })).json
      await act(t.app, shop.auth, sub.id, 'skip')
      const routes: Array<['GET' | 'POST', string, unknown?]> = [
        ['GET', `/subscriptions/${sub.id}`],
        ['POST', `/subscriptions/${sub.id}/pause`],
        ['POST', `/subscriptions/${sub.id}/resume`],
        ['POST', `/subscriptions/${sub.id}/cancel`, { reason: 'not mine' }],
        ['POST', `/subscriptions/${sub.id}/skip`],
        ['POST', `/subscriptions/${sub.id}/unskip`],
        ['POST', `/subscriptions/${sub.id}/swap`, { plan_id: premium.id }],
        ['POST', `/subscriptions/${sub.id}/quantity`, { quantity: 9 }],
        ['POST', `/subscriptions/${sub.id}/interval`, { interval: 'week' }],
        ['POST', `/subscriptions/${sub.id}/shipping-address`, { shipping_address: OTHER_ADDRESS }],
        ['POST', `/subscriptions/${sub.id}/payment-instrument`, { payment_instrument_id: 'instr_thief' }],
        ['GET', `/subscriptions/${sub.id}/charges`],
        ['GET', `/subscriptions/${sub.id}/swap-options`],
        ['POST', `/subscriptions/${b2b.id}/change-requests`, { changes: { quantity: 99 } }],
        ['GET', `/change-requests/${request.id}`],
      ]
      const snapshot = async () => ({
        sub: await getSubscription(t.app, shop.auth, sub.id),
        b2b: await getSubscription(t.app, shop.auth, b2b.id),
        counts: await rowCounts(t.db, shop.store.id),
      })
      const before = await snapshot()
      for (const [who, auth] of [['another subscriber', bob.auth], ['another store', aliceElsewhere.auth]] as const) {
        for (const [method, url, payload] of routes) {
          const response = await portal(auth, method, url, payload)
          assert.equal(response.statusCode, 404, `${who}: ${method} ${url} answered ${response.statusCode}: ${response.body}`)
          assert.equal(response.json.code, 'not_found')
        }
      }
      assert.deepEqual(await snapshot(), before, 'no refused call changed anything')
      // The owner, by contrast, reaches them.
      assert.equal((await portal(alice.auth, 'GET', `/subscriptions/${sub.id}`)).statusCode, 200)
      assert.equal((await portal(alice.auth, 'GET', `/change-requests/${request.id}`)).statusCode, 200)
    })

    test('no portal path takes a subscriber or customer id: the subscriber comes only from the token', async () => {
      const document = (await call(t.app, { method: 'GET', url: '/api/v1/openapi.json' })).json
      const portalPaths = Object.entries(document.paths).filter(([path]) => path.startsWith(PORTAL) && !path.startsWith(`${PORTAL}/auth/`))
      assert.ok(portalPaths.length >= 17, `expected the portal routes, found ${portalPaths.length}`)
      for (const [path, item] of portalPaths as Array<[string, Record<string, any>]>) {
        assert.doesNotMatch(path, /subscriber|customer|cus_/i, path)
        for (const operation of Object.values(item)) {
          for (const parameter of operation.parameters ?? []) {
            assert.doesNotMatch(parameter.name, /subscriber|customer|email/i, `${path} takes ${parameter.in} ${parameter.name}`)
          }
          assert.deepEqual(operation.security, [{ portalSession: [] }], path)
          assert.deepEqual(operation.tags, ['Portal'], path)
        }
      }
    })
  })
})
