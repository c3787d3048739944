import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, ADDRESS, checkout, checkoutBody, OTHER_ADDRESS } from './fixtures.ts'

/**
 * The subscriber page (issue 26 point 5, docs/contract.md, Subscriber page): GET
 * /api/v1/admin/subscribers/{id} shows one subscriber with every subscription in any state, the
 * addresses and instruments their subscriptions use (as stored, never card data), their latest
 * charges and the emails sent to them, each longer list with a cursor for its own list filtered by
 * `subscriber_id`. Before, the route did not exist (404 for every id) and the charge and notification
 * lists had no subscriber filter (400): every test below failed.
 *
 * Ada Lovelace: a weekly subscription renewed twelve times (12 charges: more than the page's 10), a
 * monthly one cancelled, one paused shipping elsewhere and paid by another card, and a payment update
 * email. Grace Hopper in the same store, and another store, are never part of Ada's page.
 */
const START = '2027-01-05T12:00:00.000Z'

describe("a subscriber's page", () => {
  let t: TestApp
  let shop: StoreWithKey
  let other: StoreWithKey
  let weekly: any
  let cancelled: any
  let paused: any
  let grace: any
  let stranger: any

  const get = (s: StoreWithKey, url: string) => call(t.app, { method: 'GET', url, headers: s.auth })
  const page = async (id: string, s: StoreWithKey = shop) => {
    const response = await get(s, `/api/v1/admin/subscribers/${id}`)
    assert.equal(response.statusCode, 200, response.body)
    return response.json
  }

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db, { timezone: 'UTC' })
    other = await createStoreWithKey(t.db, { timezone: 'UTC' })
    for (const s of [shop, other]) await t.db.updateTable('stores').set({ test_clock_now: new Date(START) }).where('id', '=', s.store.id).execute()
    const product = await createProduct(t.app, shop.auth, { name: 'Coffee' })
    const week = await createPlan(t.app, shop.auth, product.id, { amount: 500, currency: 'USD', interval: 'week' })
    const month = await createPlan(t.app, shop.auth, product.id, { amount: 1800, currency: 'USD', interval: 'month' })
    const email = 'ada@example.com'
    weekly = (await checkout(t.app, shop.auth, checkoutBody(week.id, { email, name: 'Ada Lovelace', payment_instrument_id: 'instr_visa_4242' })))[0]
    cancelled = (await checkout(t.app, shop.auth, checkoutBody(month.id, { email, name: 'Ada Lovelace', payment_instrument_id: 'instr_visa_4242' })))[0]
    paused = (await checkout(t.app, shop.auth, checkoutBody(month.id, { email, name: 'Ada Lovelace', shipping_address: OTHER_ADDRESS, payment_instrument_id: 'instr_amex_0005' })))[0]
    grace = (await checkout(t.app, shop.auth, checkoutBody(week.id, { email: 'grace@example.com', name: 'Grace Hopper' })))[0]
    const otherProduct = await createProduct(t.app, other.auth, { name: 'Tea' })
    const otherPlan = await createPlan(t.app, other.auth, otherProduct.id, { amount: 900, currency: 'USD', interval: 'month' })
    stranger = (await checkout(t.app, other.auth, checkoutBody(otherPlan.id, { email, name: 'Ada Lovelace' })))[0]

    assert.equal((await act(t.app, shop.auth, cancelled.id, 'cancel', { at_period_end: false })).statusCode, 200)
    assert.equal((await act(t.app, shop.auth, paused.id, 'pause')).statusCode, 200)
    // Twelve weekly renewals: Jan 12 ... Mar 30.
    const advanced = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: '2027-03-31T12:00:00.000Z' } })
    assert.equal(advanced.statusCode, 200, advanced.body)
    const link = await call(t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${weekly.id}/payment-update-link`, headers: shop.auth, payload: {} })
    assert.equal(link.statusCode, 202, link.body)
  })
  after(() => t.close())

  test('the subscriber, with every subscription in any state, newest first', async () => {
    const ada = await page(weekly.subscriber_id)
    assert.deepEqual([ada.id, ada.object, ada.email, ada.name], [weekly.subscriber_id, 'subscriber', 'ada@example.com', 'Ada Lovelace'])
    assert.deepEqual(ada.subscriptions.data.map((s: any) => [s.id, s.status]), [[paused.id, 'paused'], [cancelled.id, 'cancelled'], [weekly.id, 'active']])
    assert.equal(ada.subscriptions.next_cursor, null)
  })

  test('each shipping address and payment instrument once, with the subscriptions that use it; an instrument as stored, never card data', async () => {
    const ada = await page(weekly.subscriber_id)
    const addresses = ada.shipping_addresses.map((entry: any) => [entry.address.line1, entry.subscription_ids])
    assert.deepEqual(addresses, [[OTHER_ADDRESS.line1, [paused.id]], [ADDRESS.line1, [cancelled.id, weekly.id]]])
    assert.deepEqual(ada.payment_instruments.map((entry: any) => [entry.id, entry.subscription_ids]), [['instr_amex_0005', [paused.id]], ['instr_visa_4242', [cancelled.id, weekly.id]]])
    for (const instrument of ada.payment_instruments) assert.deepEqual(Object.keys(instrument).sort(), ['brand', 'expiry_month', 'expiry_year', 'id', 'last4', 'subscription_ids'])
  })

  test('the 10 latest charges, and a cursor that pages on in GET /charges?subscriber_id= to the rest', async () => {
    const ada = await page(weekly.subscriber_id)
    assert.equal(ada.charges.data.length, 10)
    assert.ok(ada.charges.data.every((charge: any) => charge.subscription_id === weekly.id))
    assert.ok(ada.charges.next_cursor, 'twelve charges: more than the page shows')
    const rest = await get(shop, `/api/v1/admin/charges?subscriber_id=${weekly.subscriber_id}&cursor=${ada.charges.next_cursor}`)
    assert.equal(rest.statusCode, 200, rest.body)
    assert.equal(rest.json.data.length, 2)
    const all = [...ada.charges.data, ...rest.json.data].map((charge: any) => charge.id)
    assert.deepEqual(all, [...all].sort().reverse(), 'newest first, none repeated')
    assert.equal(new Set(all).size, 12)
    const graceCharges = await get(shop, `/api/v1/admin/charges?subscriber_id=${grace.subscriber_id}&limit=100`)
    assert.ok(graceCharges.json.data.length > 0 && graceCharges.json.data.every((charge: any) => charge.subscription_id === grace.id), "Grace's are only hers")
  })

  test('the emails sent to them, with a cursor for GET /notifications?subscriber_id=', async () => {
    const ada = await page(weekly.subscriber_id)
    const link = ada.notifications.data.find((email: any) => email.template === 'payment_update_link')
    assert.ok(link, JSON.stringify(ada.notifications.data))
    assert.ok(ada.notifications.data.every((email: any) => email.recipient === 'ada@example.com'))
    const listed = await get(shop, `/api/v1/admin/notifications?subscriber_id=${weekly.subscriber_id}&limit=100`)
    assert.equal(listed.statusCode, 200, listed.body)
    assert.ok(listed.json.data.some((email: any) => email.id === link.id))
    const graces = await get(shop, `/api/v1/admin/notifications?subscriber_id=${grace.subscriber_id}&limit=100`)
    assert.ok(graces.json.data.every((email: any) => email.recipient === 'grace@example.com'), "none of Ada's among Grace's")
  })

  test("another store's subscriber is 404 here, and its page never shows this store's rows", async () => {
    const response = await get(shop, `/api/v1/admin/subscribers/${stranger.subscriber_id}`)
    assert.equal(response.statusCode, 404, response.body)
    assert.equal(response.json.code, 'not_found')
    const theirs = await page(stranger.subscriber_id, other)
    assert.deepEqual(theirs.subscriptions.data.map((s: any) => s.id), [stranger.id], 'the same email in another store is another subscriber')
    assert.deepEqual(theirs.charges.data, [])
    assert.deepEqual(theirs.notifications.data, [], "the emails sent to the same address by the other store are not this store's")
    const crossCharges = await get(other, `/api/v1/admin/charges?subscriber_id=${weekly.subscriber_id}`)
    assert.deepEqual(crossCharges.json.data, [])
    const crossEmails = await get(other, `/api/v1/admin/notifications?subscriber_id=${weekly.subscriber_id}`)
    assert.deepEqual(crossEmails.json.data, [])
  })

  test('an id of no subscriber is a 404 problem, and so is a path whose id is no subscriber id (as every path of this API)', async () => {
    for (const id of [`cus_${'0'.repeat(26)}`, weekly.id]) {
      const missing = await get(shop, `/api/v1/admin/subscribers/${id}`)
      assert.equal(missing.statusCode, 404, missing.body)
      assert.equal(missing.json.code, 'not_found')
      assert.match(String(missing.headers['content-type']), /^application\/problem\+json/)
    }
  })

  test('every admin key scope may read it', async () => {
    for (const scope of ['read_only', 'support']) {
      const created = await call(t.app, { method: 'POST', url: '/api/v1/admin/api-keys', headers: shop.auth, payload: { name: `page ${scope}`, scope } })
      assert.equal(created.statusCode, 201, created.body)
      const read = await call(t.app, { method: 'GET', url: `/api/v1/admin/subscribers/${weekly.subscriber_id}`, headers: { authorization: `Bearer ${created.json.key}` } })
      assert.equal(read.statusCode, 200, `${scope}: ${read.body}`)
    }
  })
})
