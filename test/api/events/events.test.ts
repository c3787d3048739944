import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { containsCardNumber } from '../../../src/lib/card-data.ts'
import { fixedClock } from '../../../src/lib/clock.ts'
import { newId } from '../../../src/lib/ids.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import {
  act,
  ADDRESS,
  assertEnvelope,
  checkout,
  checkoutBody,
  closeTestApp,
  nextEmail,
  OTHER_ADDRESS,
  postCheckout,
  VISA,
  VISA_INTEGER,
} from '../subscriptions/fixtures.ts'
import { assertProblem } from '../../helpers/problem.ts'

const T0 = '2026-03-01T00:00:00.000Z'
const at = (hours: number) => new Date(new Date(T0).getTime() + hours * 3_600_000).toISOString()

describe('GET /api/v1/admin/events', () => {
  const clock = fixedClock(T0)
  let t: TestApp
  let shop: StoreWithKey
  let other: StoreWithKey
  let first: any
  let second: any
  let otherSubscription: any

  // Each step happens an hour after the last, so time filters have clear boundaries.
  before(async () => {
    t = await buildTestApp({ clock })
    shop = await createStoreWithKey(t.db)
    other = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, product.id)

    ;[first] = await checkout(t.app, shop.auth, checkoutBody(plan.id)) // T0: created, activated
    clock.set(at(1))
    assert.equal((await act(t.app, shop.auth, first.id, 'pause', {})).statusCode, 200) // T1: paused
    clock.set(at(2))
    assert.equal((await act(t.app, shop.auth, first.id, 'resume')).statusCode, 200) // T2: resumed
    clock.set(at(3))
    ;[second] = await checkout(t.app, shop.auth, checkoutBody(plan.id, { gift: { recipient_email: nextEmail('giftee'), message: 'enjoy' } })) // T3: created, gifted, activated
    clock.set(at(4))
    assert.equal((await act(t.app, shop.auth, second.id, 'quantity', { quantity: 2 })).statusCode, 200) // T4: updated
    assert.equal((await act(t.app, shop.auth, first.id, 'shipping-address', { shipping_address: OTHER_ADDRESS })).statusCode, 200) // T4: shipping

    const otherProduct = await createProduct(t.app, other.auth)
    const otherPlan = await createPlan(t.app, other.auth, otherProduct.id)
    ;[otherSubscription] = await checkout(t.app, other.auth, checkoutBody(otherPlan.id))
  })
  after(() => closeTestApp(t))

  const list = (query: string, auth = shop.auth) => call(t.app, { method: 'GET', url: `/api/v1/admin/events?${query}`, headers: auth })
  const summary = (response: Awaited<ReturnType<typeof list>>) =>
    response.json.data.map((event: any) => `${event.event_type}@${event.data.id === first.id ? 'first' : event.data.id === second.id ? 'second' : event.data.id}`)

  test('lists every event of the store, newest first, exactly as stored', async () => {
    const response = await list('limit=100')
    assert.equal(response.statusCode, 200)
    assert.equal(response.json.next_cursor, null)
    assert.deepEqual(summary(response), [
      'shipping.address_updated@first',
      'subscription.updated@second',
      'subscription.activated@second',
      'subscription.gifted@second',
      'subscription.created@second',
      'subscription.resumed@first',
      'subscription.paused@first',
      'subscription.activated@first',
      'subscription.created@first',
    ])
    const stored = await t.db.selectFrom('events').select('payload').where('store_id', '=', shop.store.id).orderBy('position', 'desc').execute()
    assert.deepEqual(response.json.data, stored.map((row) => JSON.parse(row.payload)))
    const ids = response.json.data.map((event: any) => event.id)
    assert.deepEqual([...ids].sort().reverse(), ids, 'ids sort in the order events were recorded')
    for (const event of response.json.data) assertEnvelope(event, event.event_type)
  })

  test('filters by event_type', async () => {
    assert.deepEqual(summary(await list('event_type=subscription.created')), ['subscription.created@second', 'subscription.created@first'])
    assert.deepEqual(summary(await list('event_type=subscription.gifted')), ['subscription.gifted@second'])
    assert.deepEqual(summary(await list('event_type=charge.succeeded')), [])
  })

  test("filters by entity_id: one entity's events, their sequence counting down from the latest", async () => {
    const response = await list(`entity_id=${first.id}`)
    assert.ok(response.json.data.every((event: any) => event.data.id === first.id))
    assert.deepEqual(response.json.data.map((event: any) => event.sequence), [5, 4, 3, 2, 1])
    assert.deepEqual(summary(await list(`entity_id=${second.id}&event_type=subscription.updated`)), ['subscription.updated@second'])
    assert.deepEqual(summary(await list(`entity_id=${otherSubscription.id}`)), [], "another store's entity has no events here")
  })

  test('occurred_after is inclusive and occurred_before exclusive, on the store clock', async () => {
    const between = await list(`occurred_after=${at(1)}&occurred_before=${at(3)}`)
    assert.deepEqual(summary(between), ['subscription.resumed@first', 'subscription.paused@first'])
    assert.deepEqual(between.json.data.map((event: any) => event.timestamp), [at(2), at(1)])
    assert.deepEqual(summary(await list(`occurred_before=${at(1)}`)), ['subscription.activated@first', 'subscription.created@first'])
    assert.deepEqual(summary(await list(`occurred_after=${at(4)}`)), ['shipping.address_updated@first', 'subscription.updated@second'])
    assert.deepEqual(summary(await list(`occurred_after=${at(3)}&occurred_before=${at(4)}&event_type=subscription.activated`)), ['subscription.activated@second'])
    assert.deepEqual(summary(await list(`occurred_after=${at(5)}`)), [])
  })

  test('pages with limit and next_cursor, never repeating or skipping an event, filters included', async () => {
    const everything = (await list('limit=100')).json.data.map((event: any) => event.id)
    const walk = async (query: string) => {
      const seen: string[] = []
      const sizes: number[] = []
      let cursor: string | null = null
      do {
        const response = await list(`${query}${cursor ? `&cursor=${cursor}` : ''}`)
        assert.equal(response.statusCode, 200)
        seen.push(...response.json.data.map((event: any) => event.id))
        sizes.push(response.json.data.length)
        cursor = response.json.next_cursor
      } while (cursor)
      return { seen, sizes }
    }
    const paged = await walk('limit=4')
    assert.deepEqual(paged.sizes, [4, 4, 1])
    assert.deepEqual(paged.seen, everything)
    const filtered = await walk(`limit=2&entity_id=${first.id}`)
    assert.deepEqual(filtered.sizes, [2, 2, 1])
    assert.deepEqual(filtered.seen, (await list(`entity_id=${first.id}`)).json.data.map((event: any) => event.id))
    const exact = await list('limit=9')
    assert.equal(exact.json.next_cursor, null, 'no cursor when nothing more exists')
  })

  test('bad filters are 400 validation_failed naming the parameter', async () => {
    assertProblem(await list('event_type=subscription.exploded'), 400, 'validation_failed', { path: '/query/event_type' })
    assertProblem(await list('limit=0'), 400, 'validation_failed', { path: '/query/limit' })
    assertProblem(await list('limit=101'), 400, 'validation_failed', { path: '/query/limit' })
    assertProblem(await list('occurred_after=yesterday'), 400, 'validation_failed', { path: '/query/occurred_after' })
    assertProblem(await list('cursor=not-ours'), 400, 'validation_failed', { path: '/query/cursor' })
  })

  test("another store never sees this store's events", async () => {
    const theirs = await list('limit=100', other.auth)
    assert.equal(theirs.statusCode, 200)
    assert.deepEqual(theirs.json.data.map((event: any) => event.data.id), [otherSubscription.id, otherSubscription.id])
    assert.deepEqual((await list(`entity_id=${first.id}`, other.auth)).json.data, [])
  })

  describe('GET /api/v1/admin/events/{id}', () => {
    test('answers each event exactly as the list does', async () => {
      for (const event of (await list('limit=100')).json.data) {
        const response = await call(t.app, { method: 'GET', url: `/api/v1/admin/events/${event.id}`, headers: shop.auth })
        assert.equal(response.statusCode, 200)
        assert.deepEqual(response.json, event)
      }
    })

    test("an unknown id, another store's event and a malformed id are all 404 not_found", async () => {
      const mine = (await list('limit=1')).json.data[0]
      const theirs = (await list('limit=1', other.auth)).json.data[0]
      const get = (id: string, auth = shop.auth) => call(t.app, { method: 'GET', url: `/api/v1/admin/events/${id}`, headers: auth })
      assertProblem(await get(newId('evt')), 404, 'not_found')
      assertProblem(await get(theirs.id), 404, 'not_found')
      assertProblem(await get(mine.id, other.auth), 404, 'not_found')
      assertProblem(await get('sub_01JD2Y5T1P8Q0W9KZ3M6N4R7BC'), 404, 'not_found')
    })
  })

  test('no stored event payload, in any store, holds a card number, whatever was attempted', async () => {
    const product = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, product.id)
    const attempts = [
      checkoutBody(plan.id, { payment_instrument_id: VISA }),
      checkoutBody(plan.id, { shipping_address: { ...ADDRESS, line1: '3782 822463 10005 Main St' } }),
      checkoutBody(plan.id, { gift: { recipient_email: nextEmail(), message: `use 5555-5555-5555-4444` } }),
      checkoutBody(plan.id, { name: `Card ${VISA}` }),
      checkoutBody(plan.id, { platform_order_id: VISA_INTEGER }),
    ]
    for (const body of attempts) {
      const response = await postCheckout(t.app, shop.auth, body)
      assert.ok(response.statusCode >= 400, `a checkout carrying card data was accepted: ${response.body}`)
    }
    for (const [action, payload] of [
      ['payment-instrument', { payment_instrument_id: VISA }],
      ['shipping-address', { shipping_address: { ...OTHER_ADDRESS, phone: VISA } }],
      ['cancel', { reason: `refund to ${VISA}` }],
    ] as const) {
      assertProblem(await act(t.app, shop.auth, first.id, action, payload), 400, 'card_data_rejected')
    }

    const rows = await t.db.selectFrom('events').select(['id', 'payload']).execute()
    assert.ok(rows.length >= 11)
    for (const row of rows) assert.ok(!containsCardNumber(row.payload), `event ${row.id} holds a card number`)
  })
})
