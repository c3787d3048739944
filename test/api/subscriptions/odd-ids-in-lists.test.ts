/**
 * Subscriber and store ids holding characters that mean something to SQL or to array literals, the
 * empty id, and ids that exist only with odd characters: each list gets exactly its own rows, on both
 * databases (run with and without DATABASE_URL).
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { sql } from 'kysely'
import { createFirstPageLoader } from '../../../src/modules/subscriptions/first-pages.ts'
import { listSubscriptions } from '../../../src/modules/subscriptions/subscriptions.repository.ts'
import { createShopWithPlan } from '../../helpers/catalog.ts'
import { checkoutThroughApi } from '../../helpers/subscriptions.ts'
import { buildTestApp, type TestApp } from '../../helpers/test-app.ts'

let t: TestApp
let shop: Awaited<ReturnType<typeof createShopWithPlan>>
let subscriberId: string
const ODD = ['a,b', 'a"b', 'a\\b', '{x}', 'NULL', 'null', ' sp ', "it's", 'a\\"b,{c}', '', 'é']

before(async () => {
  t = await buildTestApp()
  shop = await createShopWithPlan(t)
  subscriberId = await checkoutThroughApi(t.app, shop)
  // Clones of the subscriber and its subscription under odd subscriber ids (same store).
  for (const [i, odd] of ODD.entries()) {
    if (odd === '') continue
    await sql`INSERT INTO subscribers SELECT (jsonb_populate_record(s, jsonb_build_object('id', ${odd}::text, 'email', ${`odd${i}@example.com`}::text))).* FROM subscribers s WHERE id = ${subscriberId}`.execute(t.db)
    await sql`INSERT INTO subscriptions SELECT (jsonb_populate_record(s, jsonb_build_object('id', ${`sub_odd_${i}`}::text, 'subscriber_id', ${odd}::text))).* FROM subscriptions s WHERE subscriber_id = ${subscriberId}`.execute(t.db)
  }
})
after(() => t.close())

test("a subscriber with an odd id lists exactly their own subscriptions, and the empty id none", async () => {
  const lists = await Promise.all(ODD.map((odd) => t.services.modules.subscriptions.service.subscriptions.list(shop.store, { limit: 5 }, { kind: 'subscriber', subscriberId: odd })))
  for (const [i, odd] of ODD.entries()) {
    assert.deepEqual(lists[i]!.data.map((row) => row.id), odd === '' ? [] : [`sub_odd_${i}`], `subscriber ${JSON.stringify(odd)}`)
  }
  const own = await t.services.modules.subscriptions.service.subscriptions.list(shop.store, { limit: 5 }, { kind: 'subscriber', subscriberId })
  assert.equal(own.data.length, 1)
  assert.equal(own.data[0]!.subscriber_id, subscriberId)
})

test('a store id with odd characters owns nothing, for a subscriber or the whole store', async () => {
  for (const odd of ODD) {
    assert.deepEqual(await listSubscriptions(t.db, odd, { limit: 5, subscriberId }), [], `store ${JSON.stringify(odd)}, one subscriber`)
    assert.deepEqual(await listSubscriptions(t.db, odd, { limit: 5 }), [], `store ${JSON.stringify(odd)}, everyone`)
  }
  const whole = await listSubscriptions(t.db, shop.store.id, { limit: 50 })
  assert.equal(whole.length, ODD.length, 'the store lists its own subscription and every clone')
})

test('first pages of odd store ids read together own nothing, and the real store keeps its own', async () => {
  const loader = createFirstPageLoader(t.db)
  const keys = [...ODD.map((odd) => ({ storeId: odd, subscriberId, limit: 5 })), ...ODD.map((odd) => ({ storeId: odd, subscriberId: null, limit: 5 })), { storeId: shop.store.id, subscriberId: null, limit: 50 }]
  const pages = await Promise.all(keys.map((key) => loader.load(key)))
  for (const [i, key] of keys.slice(0, -1).entries()) assert.deepEqual(pages[i], [], `key ${JSON.stringify(key)}`)
  assert.equal(pages.at(-1)!.length, ODD.length)
})
