import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import type { Db } from '../../../src/db/database.ts'
import * as migration from '../../../src/db/migrations/0028-subscriber-search.ts'
import { createTestDatabase } from '../../helpers/database.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, checkout, checkoutBody } from './fixtures.ts'

/**
 * Search of the subscription list (issue 26 point 5, docs/contract.md, Search): `q` finds subscriptions
 * by any part of the subscriber's email or name, by a platform order id (the first order or a renewal's)
 * and by id, case-insensitively, every character literally; it combines with the other filters and
 * pages like any list, and never reaches another store. Before, only `email` (exact) existed and `q`
 * was refused (400, an unknown parameter): every test below failed.
 *
 * One store: Ada Lovelace (three subscriptions, order 1042 started one, a renewal was order 7001),
 * Grace Hopper, and subscribers whose names and emails hold LIKE's wildcards, a backslash and
 * non-ASCII letters. A second store has its own Ada Lovelace, its own order 1042.
 */
const START = '2027-01-05T12:00:00.000Z'

describe('searching subscriptions with q', () => {
  let t: TestApp
  let shop: StoreWithKey & { planId: string }
  let other: StoreWithKey & { planId: string }
  const ada: string[] = []
  let grace: any
  let percent: any
  let underscore: any
  let lookalike: any
  let backslash: any
  let unicode: any
  let otherAda: any

  async function newShop(): Promise<StoreWithKey & { planId: string }> {
    const s = await createStoreWithKey(t.db, { timezone: 'UTC' })
    await t.db.updateTable('stores').set({ test_clock_now: new Date(START) }).where('id', '=', s.store.id).execute()
    const product = await createProduct(t.app, s.auth, { name: 'Coffee' })
    const plan = await createPlan(t.app, s.auth, product.id, { amount: 1800, currency: 'USD', interval: 'month' })
    return { ...s, planId: plan.id }
  }
  const buy = async (s: StoreWithKey & { planId: string }, overrides: Record<string, unknown>) => (await checkout(t.app, s.auth, checkoutBody(s.planId, overrides)))[0]
  const search = (s: StoreWithKey, query: string) => call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions?${query}`, headers: s.auth })
  /** The ids a search finds (one page of 100), asserting it answered 200. */
  const found = async (q: string, s: StoreWithKey = shop): Promise<string[]> => {
    const response = await search(s, new URLSearchParams({ q, limit: '100' }).toString())
    assert.equal(response.statusCode, 200, response.body)
    return response.json.data.map((subscription: any) => subscription.id)
  }

  before(async () => {
    t = await buildTestApp()
    shop = await newShop()
    other = await newShop()
    const adaEmail = 'ada@example.com'
    ada.push((await buy(shop, { email: adaEmail, name: 'Ada Lovelace', platform_order_id: '1042' })).id)
    ada.push((await buy(shop, { email: adaEmail, name: 'Ada Lovelace' })).id)
    ada.push((await buy(shop, { email: adaEmail, name: 'Ada Lovelace' })).id)
    grace = await buy(shop, { email: 'grace.hopper@example.com', name: 'Grace Hopper' })
    percent = await buy(shop, { email: '100%pure@example.com', name: 'Pure Beans' })
    underscore = await buy(shop, { email: 'a_b@example.com', name: 'Alan Brown' })
    lookalike = await buy(shop, { email: 'axb@example.com', name: 'Axel Brown' })
    backslash = await buy(shop, { email: 'slash@example.com', name: 'Back\\Slash ☕ Roasters' })
    unicode = await buy(shop, { email: 'zoe@example.com', name: 'Zoë Ångström' })
    otherAda = await buy(other, { email: 'ada@example.com', name: 'Ada Lovelace', platform_order_id: '1042' })
    // Ada's first subscription renewed (the store's test clock), and BigCommerce numbered that renewal order 7001.
    const advanced = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: '2027-02-06T12:00:00.000Z' } })
    assert.equal(advanced.statusCode, 200, advanced.body)
    const renewal = await t.db.selectFrom('charges').select('id').where('subscription_id', '=', ada[0]!).executeTakeFirstOrThrow()
    await t.db.updateTable('charges').set({ platform_order_id: '7001' }).where('id', '=', renewal.id).execute()
  })
  after(() => t.close())

  test('part of an email finds that subscriber\'s subscriptions, in any case: "ada@", "ADA@EXAMPLE", "hopper@"', async () => {
    assert.deepEqual(await found('ada@'), [...ada].reverse(), 'newest first')
    assert.deepEqual(await found('ADA@EXAMPLE'), [...ada].reverse())
    assert.deepEqual(await found('hopper@'), [grace.id])
  })

  test('part of a name finds them: "Ada Lovelace", "love", "LOVELACE", and a name\'s non-ASCII letters as typed or in another case', async () => {
    for (const q of ['Ada Lovelace', 'love', 'LOVELACE', ' lovelace ']) assert.deepEqual(await found(q), [...ada].reverse(), q)
    assert.deepEqual(await found('Ångström'), [unicode.id])
    assert.deepEqual(await found('zoë å'), [unicode.id], 'case-folded beyond ASCII')
    assert.deepEqual(await found('☕'), [backslash.id])
    assert.deepEqual(await found('Lovelace Ada'), [], 'the words in their order, not each anywhere')
  })

  test('each result names its subscriber: email and name beside the subscription', async () => {
    const response = await search(shop, 'q=hopper')
    assert.equal(response.statusCode, 200, response.body)
    const [row] = response.json.data
    assert.deepEqual([row.id, row.subscriber.id, row.subscriber.email, row.subscriber.name], [grace.id, grace.subscriber_id, 'grace.hopper@example.com', 'Grace Hopper'])
  })

  test('a platform order id finds the subscription it started, and a renewal order the subscription it renewed; "#1042" is order 1042', async () => {
    assert.deepEqual(await found('1042'), [ada[0]])
    assert.deepEqual(await found('#1042'), [ada[0]])
    assert.deepEqual(await found('7001'), [ada[0]], "the renewal's order")
    assert.deepEqual(await found('104'), [], 'an order id matches whole, not in part')
  })

  test('an id finds its subscription, in any case, and the start of one finds those it starts; a subscriber id finds theirs', async () => {
    assert.deepEqual(await found(grace.id), [grace.id])
    assert.deepEqual(await found(grace.id.toLowerCase()), [grace.id])
    assert.ok((await found(grace.id.slice(0, -4))).includes(grace.id), 'a prefix of the id')
    assert.deepEqual(await found(`sub_${'0'.repeat(26)}`), [], 'an id of no subscription')
    assert.deepEqual(await found(grace.subscriber_id), [grace.id])
  })

  test("LIKE's wildcards and its escape character are matched literally: %, _ and \\ find only what holds them", async () => {
    assert.deepEqual(await found('%'), [percent.id], '% is a percent sign, not "anything"')
    assert.deepEqual(await found('100%p'), [percent.id])
    assert.deepEqual(await found('a_b'), [underscore.id], '_ is an underscore, not "any character" (axb@ is not found)')
    assert.ok(!(await found('_')).includes(lookalike.id))
    assert.deepEqual(await found('\\'), [backslash.id], 'a backslash is a backslash')
    assert.deepEqual(await found('Back\\Slash'), [backslash.id])
    assert.deepEqual(await found('\\%'), [], 'no escape sequences: backslash-percent is two characters no one has')
    assert.deepEqual(await found("o'brien"), [], 'a quote is only a quote')
  })

  test('an empty or blank q is no search; a q over 254 characters is refused with 400, as is an unknown subscriber_id shape', async () => {
    for (const q of ['', '   ']) assert.equal((await found(q)).length, 9, `q=${JSON.stringify(q)}`)
    const long = await search(shop, `q=${'a'.repeat(255)}`)
    assert.equal(long.statusCode, 400, long.body)
    assert.equal(long.json.code, 'validation_failed')
    assert.equal((await search(shop, `q=${'a'.repeat(254)}`)).statusCode, 200, '254 characters (an email\'s most) is a search')
    assert.equal((await search(shop, 'subscriber_id=bogus')).statusCode, 400)
  })

  test('q combines with status and plan, and pages with next_cursor like any list', async () => {
    assert.equal((await act(t.app, shop.auth, ada[1]!, 'cancel', { at_period_end: false })).statusCode, 200)
    const cancelled = await search(shop, 'q=lovelace&status=cancelled')
    assert.deepEqual(cancelled.json.data.map((s: any) => s.id), [ada[1]])
    const active = await search(shop, `q=lovelace&status=active&plan_id=${shop.planId}`)
    assert.deepEqual(active.json.data.map((s: any) => s.id), [ada[2], ada[0]])

    const first = await search(shop, 'q=ada%40&limit=2')
    assert.deepEqual(first.json.data.map((s: any) => s.id), [ada[2], ada[1]])
    assert.ok(first.json.next_cursor, 'more on the next page')
    const second = await search(shop, `q=ada%40&limit=2&cursor=${first.json.next_cursor}`)
    assert.deepEqual(second.json.data.map((s: any) => s.id), [ada[0]])
    assert.equal(second.json.next_cursor, null)
  })

  test("the exact email filter still filters exactly: part of an email finds nothing there", async () => {
    const exact = await search(shop, 'email=ADA@example.com')
    assert.deepEqual(exact.json.data.map((s: any) => s.id), [...ada].reverse())
    assert.deepEqual((await search(shop, 'email=ada@example')).json.data, [])
    const both = await search(shop, 'email=ada@example.com&q=1042')
    assert.deepEqual(both.json.data.map((s: any) => s.id), [ada[0]], 'and combines with q')
  })

  test("a search never finds another store's rows: its subscriber of the same name and email, its order 1042, its ids", async () => {
    for (const q of ['lovelace', 'ada@example.com', '1042', otherAda.id, otherAda.subscriber_id, otherAda.id.slice(0, 12)]) {
      assert.ok(!(await found(q)).includes(otherAda.id), `store A's search for ${q}`)
    }
    assert.deepEqual(await found('1042', other), [otherAda.id], 'the other store finds its own')
    assert.deepEqual(await found('7001', other), [], "and not the first store's renewal order")
    assert.deepEqual(await found(grace.id, other), [])
    const theirs = await search(other, `subscriber_id=${grace.subscriber_id}`)
    assert.deepEqual(theirs.json.data, [], "another store's subscriber id filters to nothing")
  })

  test('subscriber_id lists one subscriber\'s subscriptions (the subscriber page pages on with it)', async () => {
    const response = await search(shop, `subscriber_id=${grace.subscriber_id}`)
    assert.deepEqual(response.json.data.map((s: any) => s.id), [grace.id])
  })

  test('the search is served by indexes: trigram indexes on email and name, order ids by store (migration 0028)', async () => {
    assert.deepEqual(await searchIndexes(t.db), SEARCH_INDEXES)
  })
})

const SEARCH_INDEXES = ['charges_store_order_idx', 'notifications_store_recipient_idx', 'subscribers_email_trgm_idx', 'subscribers_name_trgm_idx', 'subscriptions_store_order_idx']

async function searchIndexes(db: Db): Promise<string[]> {
  const { rows } = await sql<{ indexname: string }>`SELECT indexname FROM pg_indexes WHERE schemaname = 'public' AND indexname = ANY(${SEARCH_INDEXES}) ORDER BY indexname`.execute(db)
  return rows.map((row) => row.indexname)
}

describe('migration 0028: down and up again', () => {
  test('down drops the search indexes (the extension stays), up makes them again, and a search works on either side', async () => {
    const handle = await createTestDatabase()
    try {
      const { db } = handle
      await migration.down(db as never)
      assert.deepEqual(await searchIndexes(db), [])
      const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM subscribers WHERE email ILIKE ${'%ada@%'}`.execute(db)
      assert.equal(rows[0]!.n, 0, 'a search without the indexes still runs')
      await migration.up(db as never)
      assert.deepEqual(await searchIndexes(db), SEARCH_INDEXES)
    } finally {
      await handle.close()
    }
  })
})
