/**
 * Review of issue 17 (first-page-batcher.ts): keys holding array-literal metacharacters, a key list of
 * 10,000, and ids that exist only with odd characters: each key gets exactly its own rows, on both
 * databases (run with and without DATABASE_URL).
 */
import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { sql } from 'kysely'
import { createFirstPageBatcher, type FirstPageKey } from '../../../src/modules/subscriptions/first-page-batcher.ts'
import { listSubscriptions } from '../../../src/modules/subscriptions/subscriptions.repository.ts'
import { createShopWithPlan } from '../../helpers/catalog.ts'
import { checkoutThroughApi } from '../../helpers/subscriptions.ts'
import { buildTestApp, call, type TestApp } from '../../helpers/test-app.ts'

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

test('odd subscriber and store ids each get exactly their own rows, batched', async () => {
  const batcher = createFirstPageBatcher(t.db)
  const keys: FirstPageKey[] = [
    { storeId: shop.store.id, subscriberId, limit: 5 },
    ...ODD.filter((odd) => odd !== '').map((odd) => ({ storeId: shop.store.id, subscriberId: odd, limit: 5 })),
    ...ODD.map((odd) => ({ storeId: odd, subscriberId, limit: 5 })),
    ...ODD.map((odd) => ({ storeId: odd, subscriberId: null, limit: 5 })),
    { storeId: shop.store.id, subscriberId: null, limit: 50 },
  ]
  const together = await Promise.all(keys.map((key) => batcher.read(key)))
  for (const [i, key] of keys.entries()) {
    const alone = await listSubscriptions(t.db, key.storeId, { limit: key.limit, subscriberId: key.subscriberId ?? undefined })
    assert.deepEqual(together[i]!.map((row) => row.id), alone.map((row) => row.id), `key ${JSON.stringify(key)}`)
    for (const row of together[i]!) if (key.subscriberId !== null) assert.equal(row.subscriber_id, key.subscriberId)
  }
})

test('10,000 different keys in one turn', async () => {
  const batcher = createFirstPageBatcher(t.db)
  const keys: FirstPageKey[] = Array.from({ length: 10_000 }, (_, i) => ({ storeId: shop.store.id, subscriberId: i === 5_000 ? subscriberId : `cus_missing_${i}`, limit: 20 }))
  const together = await Promise.all(keys.map((key) => batcher.read(key)))
  assert.equal(batcher.stats.statements, 1)
  assert.equal(together[5_000]!.length, 1)
  assert.equal(together.filter((rows) => rows.length > 0).length, 1)
})
