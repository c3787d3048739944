/**
 * Lists read at the same moment (first pages are read together: src/modules/subscriptions/first-pages.ts)
 * each get exactly their own rows: subscribers of two stores, with different numbers of subscriptions
 * and page sizes, and the stores' admin lists, requested together, answer what each answers alone.
 * Runs on both databases.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createFirstPageLoader, type FirstPageKey } from '../../../src/modules/subscriptions/first-pages.ts'
import { listSubscriptions } from '../../../src/modules/subscriptions/subscriptions.repository.ts'
import { createShopWithPlan } from '../../helpers/catalog.ts'
import { signInSubscriber, type PortalSignIn } from '../../helpers/portal.ts'
import { checkoutInput } from '../../helpers/subscriptions.ts'
import { buildTestApp, call, type TestApp } from '../../helpers/test-app.ts'

describe('lists read together', () => {
  let t: TestApp
  const shops: Array<Awaited<ReturnType<typeof createShopWithPlan>>> = []
  /** Per store: subscriber id -> how many subscriptions they hold. */
  const subscribers: Array<Map<string, number>> = []

  before(async () => {
    t = await buildTestApp()
    for (let s = 0; s < 2; s++) {
      const shop = await createShopWithPlan(t)
      shops.push(shop)
      const held = new Map<string, number>()
      subscribers.push(held)
      for (let person = 0; person < 4; person++) {
        // 1, 2, 3 and 4 subscriptions: a page of 2 cuts some lists and not others.
        for (let n = 0; n <= person; n++) {
          const created = await call(t.app, { method: 'POST', url: '/api/v1/admin/checkouts', headers: shop.auth, payload: checkoutInput(shop.planId, { email: `p${person}-s${s}@example.com` }) })
          assert.equal(created.statusCode, 201, created.body)
          const id = created.json.data[0].subscriber_id as string
          held.set(id, (held.get(id) ?? 0) + 1)
        }
      }
    }
  })
  after(() => t.close())

  test('first pages read together are each exactly what the list query answers alone', async () => {
    const loader = createFirstPageLoader(t.db)
    const keys: FirstPageKey[] = []
    for (const [s, held] of subscribers.entries()) {
      for (const subscriberId of held.keys()) keys.push({ storeId: shops[s]!.store.id, subscriberId, limit: 2 }, { storeId: shops[s]!.store.id, subscriberId, limit: 20 })
      keys.push({ storeId: shops[s]!.store.id, subscriberId: null, limit: 3 }, { storeId: shops[s]!.store.id, subscriberId: null, limit: 50 })
    }
    // A subscriber of one store named with the other store's id owns nothing there.
    keys.push({ storeId: shops[1]!.store.id, subscriberId: [...subscribers[0]!.keys()][0]!, limit: 20 })
    const doubled = [...keys, ...keys]
    const together = await Promise.all(doubled.map((key) => loader.load(key)))
    for (const [i, key] of doubled.entries()) {
      const alone = await listSubscriptions(t.db, key.storeId, { limit: key.limit, subscriberId: key.subscriberId ?? undefined })
      assert.deepEqual(together[i]!.map((row) => row.id), alone.map((row) => row.id), `key ${JSON.stringify(key)}`)
      for (const row of together[i]!) {
        assert.equal(row.store_id, key.storeId)
        if (key.subscriberId) assert.equal(row.subscriber_id, key.subscriberId)
      }
    }
    assert.equal(together.at(-1)!.length, 0)
  })

  test('portal and admin lists requested at once each answer what they answer alone', async () => {
    const sessions: Array<{ session: PortalSignIn; count: number }> = []
    for (const [s, held] of subscribers.entries()) {
      for (const [subscriberId, count] of held) sessions.push({ session: await signInSubscriber(t.app, t.db, shops[s]!.store.id, subscriberId), count })
    }
    const requests = [
      ...sessions.map(({ session }) => ({ method: 'GET' as const, url: '/api/v1/portal/subscriptions?limit=3', headers: session.auth })),
      ...sessions.map(({ session }) => ({ method: 'GET' as const, url: '/api/v1/portal/subscriptions', headers: session.auth })),
      ...shops.map((shop) => ({ method: 'GET' as const, url: '/api/v1/admin/subscriptions?limit=4', headers: shop.auth })),
    ]
    const alone = []
    for (const request of requests) alone.push((await call(t.app, request)).json)
    const together = await Promise.all([...requests, ...requests].map((request) => call(t.app, request)))
    for (const [i, response] of together.entries()) {
      assert.equal(response.statusCode, 200)
      assert.deepEqual(response.json, alone[i % requests.length])
    }
    for (const [i, { count }] of sessions.entries()) {
      assert.equal(alone[sessions.length + i].data.length, count, "a subscriber's own subscriptions, all of them")
      assert.equal(alone[i].data.length, Math.min(count, 3))
      assert.equal(alone[i].next_cursor === null, count <= 3)
    }
  })

  test("a subscriber of one store named with another store's id owns nothing there", async () => {
    const stranger = [...subscribers[0]!.keys()][0]!
    const page = await t.services.modules.subscriptions.service.subscriptions.list(shops[1]!.store, { limit: 20 }, { kind: 'subscriber', subscriberId: stranger })
    assert.deepEqual(page.data, [])
  })
})
