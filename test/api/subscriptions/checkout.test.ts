import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { fixedClock } from '../../../src/lib/clock.ts'
import { newId } from '../../../src/lib/ids.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import {
  addDays,
  ADDRESS,
  assertEnvelope,
  checkout,
  checkoutBody,
  closeTestApp,
  getSubscription,
  nextEmail,
  nextOrderId,
  postCheckout,
  rowCounts,
  storedEvents,
  VISA,
  VISA_INTEGER,
} from './fixtures.ts'
import { assertProblem } from '../../helpers/problem.ts'

// The last day of a month, so the first period shows end-of-month clamping.
const NOW = '2026-01-31T10:00:00.000Z'

describe('POST /api/v1/admin/checkouts', () => {
  let t: TestApp
  let shop: StoreWithKey
  let other: StoreWithKey
  let product: any
  let monthly: any
  let biweekly: any
  let trial: any
  let prepaid: any
  let archived: any
  let otherStorePlan: any

  before(async () => {
    t = await buildTestApp({ clock: fixedClock(NOW) })
    shop = await createStoreWithKey(t.db)
    other = await createStoreWithKey(t.db)
    product = await createProduct(t.app, shop.auth)
    monthly = await createPlan(t.app, shop.auth, product.id, { name: 'Monthly', amount: 1500, currency: 'USD', interval: 'month' })
    biweekly = await createPlan(t.app, shop.auth, product.id, { name: 'Every two weeks', amount: 700, currency: 'EUR', interval: 'week', interval_count: 2 })
    trial = await createPlan(t.app, shop.auth, product.id, { name: 'Trial', amount: 900, trial_days: 14 })
    prepaid = await createPlan(t.app, shop.auth, product.id, { name: 'Quarter up front', amount: 4000, prepaid_cycles: 3 })
    archived = await createPlan(t.app, shop.auth, product.id, { name: 'Old', amount: 100 })
    const archiving = await call(t.app, { method: 'PATCH', url: `/api/v1/admin/plans/${archived.id}`, headers: shop.auth, payload: { active: false } })
    assert.equal(archiving.statusCode, 200)
    const otherProduct = await createProduct(t.app, other.auth)
    otherStorePlan = await createPlan(t.app, other.auth, otherProduct.id)
  })
  after(() => closeTestApp(t))

  const subscribersByEmail = (email: string) =>
    t.db.selectFrom('subscribers').selectAll().where('store_id', '=', shop.store.id).where('email', '=', email).execute()
  const subscriptionsOfOrder = (orderId: string) =>
    t.db.selectFrom('subscriptions').select('id').where('store_id', '=', shop.store.id).where('platform_order_id', '=', orderId).execute()

  test('creates one subscription per item, in item order, with the plan amount, currency, interval and the item quantity', async () => {
    const body = checkoutBody([monthly.id, biweekly.id])
    body.items[0].quantity = 3
    body.items[1].quantity = 1
    const response = await postCheckout(t.app, shop.auth, body)
    assert.equal(response.statusCode, 201)
    assert.deepEqual(Object.keys(response.json), ['data'])
    const [first, second] = response.json.data
    assert.equal(response.json.data.length, 2)
    for (const [subscription, plan, quantity] of [[first, monthly, 3], [second, biweekly, 1]] as const) {
      assert.match(subscription.id, /^sub_/)
      assert.equal(subscription.object, 'subscription')
      assert.equal(subscription.store_hash, shop.store.store_hash)
      assert.equal(subscription.plan_id, plan.id)
      assert.equal(subscription.product_id, product.id)
      assert.equal(subscription.amount, plan.amount)
      assert.equal(subscription.currency, plan.currency)
      assert.equal(subscription.interval, plan.interval)
      assert.equal(subscription.interval_count, plan.interval_count)
      assert.equal(subscription.quantity, quantity)
      assert.equal(subscription.platform_order_id, body.platform_order_id)
      assert.equal(subscription.payment_instrument_id, 'instr_9f8e7d')
      assert.deepEqual(subscription.shipping_address, ADDRESS)
      assert.equal(subscription.version, 1)
      assert.equal(subscription.skip_next, false)
      assert.equal(subscription.cancel_at_period_end, false)
      assert.equal(subscription.gift, null)
      assert.equal(subscription.prepaid, null)
      assert.deepEqual(await getSubscription(t.app, shop.auth, subscription.id), subscription, 'GET shows what the checkout answered')
    }
    assert.equal(first.subscriber_id, second.subscriber_id, 'one buyer, one subscriber')
    assert.equal((await subscriptionsOfOrder(body.platform_order_id)).length, 2)
  })

  test('a subscription starting now is active with next_charge_at = current_period_end one interval later, and records created then activated (sequence 1, 2)', async () => {
    const [sub, everyTwoWeeks] = await checkout(t.app, shop.auth, checkoutBody([monthly.id, biweekly.id]))
    assert.equal(sub.status, 'active')
    assert.equal(sub.start_at, NOW)
    assert.equal(sub.current_period_start, NOW)
    // January 31st plus one calendar month clamps to February 28th.
    assert.equal(sub.current_period_end, '2026-02-28T10:00:00.000Z')
    assert.equal(sub.next_charge_at, sub.current_period_end)
    assert.equal(everyTwoWeeks.current_period_end, addDays(NOW, 14))
    assert.equal(everyTwoWeeks.next_charge_at, addDays(NOW, 14))

    const events = await storedEvents(t.db, sub.id)
    assert.deepEqual(events.map((event) => [event.event_type, event.sequence]), [['subscription.created', 1], ['subscription.activated', 2]])
    const view = await getSubscription(t.app, shop.auth, sub.id)
    for (const event of events) {
      assertEnvelope(event, event.event_type)
      assert.equal(event.timestamp, NOW)
      assert.deepEqual(event.data, view)
    }
    assert.ok(events[0].id < events[1].id, 'event ids sort in the order they were recorded')
  })

  test('a plan with trial days makes it pending, activated when the trial ends, with no activated event yet', async () => {
    const [sub] = await checkout(t.app, shop.auth, checkoutBody(trial.id))
    assert.equal(sub.status, 'pending')
    assert.equal(sub.start_at, addDays(NOW, 14))
    assert.equal(sub.current_period_start, null)
    assert.equal(sub.current_period_end, null)
    const events = await storedEvents(t.db, sub.id)
    assert.deepEqual(events.map((event) => [event.event_type, event.sequence]), [['subscription.created', 1]])
    assert.deepEqual(events[0].data, await getSubscription(t.app, shop.auth, sub.id))
  })

  test('a future start_at makes it pending until then, with no activated event', async () => {
    const startAt = addDays(NOW, 10)
    const [sub] = await checkout(t.app, shop.auth, checkoutBody(monthly.id, { start_at: startAt }))
    assert.equal(sub.status, 'pending')
    assert.equal(sub.start_at, startAt)
    const events = await storedEvents(t.db, sub.id)
    assert.deepEqual(events.map((event) => event.event_type), ['subscription.created'])
  })

  test('a gift makes the recipient the subscriber, names the buyer as gifter and records subscription.gifted', async () => {
    const buyer = nextEmail('gifter')
    const recipient = nextEmail('recipient')
    const [sub] = await checkout(
      t.app,
      shop.auth,
      checkoutBody(monthly.id, { email: buyer.toUpperCase(), gift: { recipient_email: recipient, message: 'Happy birthday' } }),
    )
    assert.deepEqual(sub.gift, { gifter_email: buyer, recipient_email: recipient, message: 'Happy birthday' })
    const read = await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${sub.id}`, headers: shop.auth })
    assert.equal(read.json.subscriber.email, recipient)
    assert.equal(read.json.subscriber.id, sub.subscriber_id)
    assert.equal(read.json.subscriber.object, 'subscriber')
    assert.equal((await subscribersByEmail(buyer)).length, 0, 'the buyer does not become a subscriber')
    const events = await storedEvents(t.db, sub.id)
    assert.deepEqual(events.map((event) => event.event_type), ['subscription.created', 'subscription.gifted', 'subscription.activated'])
    assert.deepEqual(events.map((event) => event.sequence), [1, 2, 3])
    assert.deepEqual(events[1].data.gift, sub.gift)
  })

  test('a prepaid plan (3 cycles) starts with cycles_remaining 2, its next charge at the end of the block, and records prepaid.order_created', async () => {
    const [sub] = await checkout(t.app, shop.auth, checkoutBody(prepaid.id))
    assert.equal(sub.status, 'active')
    assert.deepEqual(sub.prepaid, { cycles_total: 3, cycles_remaining: 2 })
    assert.equal(sub.current_period_end, '2026-02-28T10:00:00.000Z')
    assert.equal(sub.next_charge_at, '2026-04-30T10:00:00.000Z')
    const events = await storedEvents(t.db, sub.id)
    assert.deepEqual(events.map((event) => event.event_type), ['subscription.created', 'subscription.activated', 'prepaid.order_created'])
    assert.deepEqual(events.at(-1).data, await getSubscription(t.app, shop.auth, sub.id))
  })

  test('subscribers are one per (store, email), whatever the case of the email, across checkouts', async () => {
    const email = nextEmail('Repeat')
    const [first] = await checkout(t.app, shop.auth, checkoutBody(monthly.id, { email: email.toUpperCase() }))
    const [second] = await checkout(t.app, shop.auth, checkoutBody(biweekly.id, { email }))
    const [third] = await checkout(t.app, shop.auth, checkoutBody(monthly.id, { email: email.replace('repeat', 'rePEAT') }))
    assert.equal(second.subscriber_id, first.subscriber_id)
    assert.equal(third.subscriber_id, first.subscriber_id)
    const rows = await subscribersByEmail(email.toLowerCase())
    assert.equal(rows.length, 1)
    assert.equal(rows[0]!.email, email.toLowerCase())
    const [elsewhere] = await checkout(t.app, other.auth, checkoutBody(otherStorePlan.id, { email }))
    assert.notEqual(elsewhere.subscriber_id, first.subscriber_id, 'another store has its own subscriber for the same email')
  })

  test('the same order twice answers the same body and creates nothing new', async () => {
    const body = checkoutBody([monthly.id, prepaid.id], { gift: { recipient_email: nextEmail('giftee') } })
    const first = await postCheckout(t.app, shop.auth, body)
    assert.equal(first.statusCode, 201)
    const counts = await rowCounts(t.db, shop.store.id)
    const again = await postCheckout(t.app, shop.auth, body)
    assert.equal(again.statusCode, 201)
    assert.equal(again.body, first.body)
    assert.deepEqual(await rowCounts(t.db, shop.store.id), counts)
  })

  test('the same order id with a different body is 409 conflict and writes nothing', async () => {
    const body = checkoutBody(monthly.id)
    await checkout(t.app, shop.auth, body)
    const counts = await rowCounts(t.db, shop.store.id)
    for (const changed of [
      { ...body, items: [{ plan_id: monthly.id, quantity: 2 }] },
      { ...body, email: nextEmail() },
      { ...body, items: [{ plan_id: biweekly.id, quantity: 1 }] },
    ]) {
      assertProblem(await postCheckout(t.app, shop.auth, changed), 409, 'conflict')
    }
    assert.deepEqual(await rowCounts(t.db, shop.store.id), counts)
  })

  test('a retry of the same order whose JSON lists the same fields in another order replays, not 409', async () => {
    const body = checkoutBody(monthly.id)
    const first = await postCheckout(t.app, shop.auth, body)
    assert.equal(first.statusCode, 201)
    const counts = await rowCounts(t.db, shop.store.id)
    const reordered = Object.fromEntries(Object.entries(body).reverse())
    reordered.shipping_address = Object.fromEntries(Object.entries(ADDRESS).reverse())
    const again = await postCheckout(t.app, shop.auth, reordered)
    assert.equal(again.statusCode, 201, `the same order, serialized differently, was refused: ${again.body}`)
    assert.equal(again.body, first.body)
    assert.deepEqual(await rowCounts(t.db, shop.store.id), counts)
  })

  test('an order id sent as an integer and then as the string the API answered is the same order', async () => {
    const orderId = 800_000 + process.pid
    const first = await postCheckout(t.app, shop.auth, checkoutBody(monthly.id, { platform_order_id: orderId, email: 'same-order@example.com' }))
    assert.equal(first.statusCode, 201)
    const counts = await rowCounts(t.db, shop.store.id)
    const again = await postCheckout(t.app, shop.auth, checkoutBody(monthly.id, { platform_order_id: String(orderId), email: 'same-order@example.com' }))
    assert.equal(again.statusCode, 201, `the same order id as a string was refused: ${again.body}`)
    assert.equal(again.body, first.body)
    assert.deepEqual(await rowCounts(t.db, shop.store.id), counts)
  })

  test('concurrent identical checkouts create one set of subscriptions and all answer it', async () => {
    const body = checkoutBody([monthly.id, biweekly.id], { email: nextEmail('racer') })
    const counts = await rowCounts(t.db, shop.store.id)
    const answers = await Promise.all(Array.from({ length: 6 }, () => postCheckout(t.app, shop.auth, body)))
    assert.deepEqual(answers.map((answer) => answer.statusCode), [201, 201, 201, 201, 201, 201], answers.map((a) => a.body).join('\n'))
    assert.equal(new Set(answers.map((answer) => answer.body)).size, 1, 'every answer is the same body')
    assert.equal((await subscriptionsOfOrder(body.platform_order_id)).length, 2)
    assert.deepEqual(await rowCounts(t.db, shop.store.id), {
      ...counts,
      subscriptions: counts.subscriptions + 2,
      subscribers: counts.subscribers + 1,
      checkouts: counts.checkouts + 1,
      events: counts.events + 4,
    })
  })

  test('concurrent checkouts of different orders by one new email share one subscriber', async () => {
    const email = nextEmail('parallel')
    const answers = await Promise.all(Array.from({ length: 4 }, () => postCheckout(t.app, shop.auth, checkoutBody(monthly.id, { email }))))
    assert.deepEqual(answers.map((answer) => answer.statusCode), [201, 201, 201, 201], answers.map((a) => a.body).join('\n'))
    assert.equal(new Set(answers.map((answer) => answer.json.data[0].subscriber_id)).size, 1)
    assert.equal((await subscribersByEmail(email)).length, 1)
  })

  test('an integer platform_order_id is answered as a string', async () => {
    const orderId = 900_000 + process.pid
    const [sub] = await checkout(t.app, shop.auth, checkoutBody(monthly.id, { platform_order_id: orderId }))
    assert.equal(sub.platform_order_id, String(orderId))
    assert.equal((await getSubscription(t.app, shop.auth, sub.id)).platform_order_id, String(orderId))
  })

  describe('bad input writes nothing', () => {
    // Every refusal is checked against every table a checkout writes.
    const refused = async (payload: Record<string, unknown>, status: number, code: string, path?: string) => {
      const before = await rowCounts(t.db, shop.store.id)
      const response = await postCheckout(t.app, shop.auth, payload)
      assertProblem(response, status, code, { path })
      assert.deepEqual(await rowCounts(t.db, shop.store.id), before, 'nothing was written')
      return response
    }

    test('an unknown plan id is 404 not_found, even after a valid item', async () => {
      await refused(checkoutBody(newId('plan')), 404, 'not_found')
      await refused(checkoutBody([monthly.id, newId('plan')]), 404, 'not_found')
    })

    test("another store's plan is 404 not_found", async () => {
      await refused(checkoutBody(otherStorePlan.id), 404, 'not_found')
    })

    test('an archived plan is 400 validation_failed at its item', async () => {
      await refused(checkoutBody(archived.id), 400, 'validation_failed', '/body/items/0/plan_id')
      await refused(checkoutBody([monthly.id, archived.id]), 400, 'validation_failed', '/body/items/1/plan_id')
    })

    test('quantity 0 is 400 validation_failed', async () => {
      await refused(checkoutBody(monthly.id, { items: [{ plan_id: monthly.id, quantity: 0 }] }), 400, 'validation_failed', '/body/items/0/quantity')
    })

    test('an empty items list is 400 validation_failed', async () => {
      await refused(checkoutBody(monthly.id, { items: [] }), 400, 'validation_failed', '/body/items')
    })

    test('a start_at in the past is 400 validation_failed at /body/start_at', async () => {
      await refused(checkoutBody(monthly.id, { start_at: addDays(NOW, -1) }), 400, 'validation_failed', '/body/start_at')
    })

    test('a card number as payment_instrument_id is 400 card_data_rejected and is not echoed', async () => {
      const response = await refused(checkoutBody(monthly.id, { payment_instrument_id: VISA }), 400, 'card_data_rejected', '/body/payment_instrument_id')
      assert.ok(!response.body.includes(VISA))
    })

    test('a card number in the shipping address is 400 card_data_rejected', async () => {
      await refused(checkoutBody(monthly.id, { shipping_address: { ...ADDRESS, line2: `card ${VISA}` } }), 400, 'card_data_rejected', '/body/shipping_address/line2')
    })

    test('an integer platform_order_id that is a Luhn-valid card number is 400 card_data_rejected, not a 500', async () => {
      await refused(checkoutBody(monthly.id, { platform_order_id: VISA_INTEGER }), 400, 'card_data_rejected', '/body/platform_order_id')
    })

    test('unknown fields are 400 validation_failed, top-level and in items', async () => {
      await refused(checkoutBody(monthly.id, { coupon: 'FREE' }), 400, 'validation_failed', '/body/coupon')
      await refused(checkoutBody(monthly.id, { items: [{ plan_id: monthly.id, quantity: 1, discount: 5 }] }), 400, 'validation_failed', '/body/items/0/discount')
    })

    test('a refused order does not claim its id: the corrected order with the same id goes through', async () => {
      const orderId = nextOrderId()
      await refused(checkoutBody(newId('plan'), { platform_order_id: orderId }), 404, 'not_found')
      const [sub] = await checkout(t.app, shop.auth, checkoutBody(monthly.id, { platform_order_id: orderId }))
      assert.equal(sub.platform_order_id, orderId)
    })
  })
})
