import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../helpers/catalog.ts'
import { assertInvalidField } from '../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../helpers/test-app.ts'

/**
 * The storefront plan list keeps the list contract (docs/contract.md, Lists and paging): `limit`
 * (1-100, default 20) and `cursor` in, `next_cursor` out, in its own order (shortest cadence first,
 * then the lower price), with its in-process cache working page by page.
 */
describe('GET /api/v1/storefront/plans pages like every list', () => {
  let t: TestApp
  let shop: StoreWithKey
  let product: any
  /** Every active plan, in the order the storefront lists them. */
  let ordered: string[]

  before(async () => {
    // A long cache TTL: the test below sees whether pages are served from memory.
    t = await buildTestApp({ env: { STOREFRONT_CACHE_TTL_MS: '600000' } })
    shop = await createStoreWithKey(t.db)
    product = await createProduct(t.app, shop.auth, { platform_product_id: 'paged' })
    const plans = []
    // 23 plans: more than one default page. Cadence and price vary so the order is not creation order.
    for (let i = 0; i < 23; i++) {
      const interval = (['month', 'week', 'day', 'year'] as const)[i % 4]
      plans.push(await createPlan(t.app, shop.auth, product.id, { name: `Plan ${i}`, interval, amount: 1000 + ((i * 7919) % 500) }))
    }
    const days = { day: 1, week: 7, month: 30.44, year: 365.25 } as Record<string, number>
    ordered = plans
      .sort((a, b) => days[a.interval]! - days[b.interval]! || a.amount - b.amount || (a.id < b.id ? -1 : 1))
      .map((plan) => plan.id)
  })
  after(() => t.close())

  const url = (query = '') => `/api/v1/storefront/plans?store_hash=${shop.store.store_hash}&platform_product_id=paged${query}`

  async function everyPage(limit: number, path = url): Promise<string[][]> {
    const pages: string[][] = []
    let cursor: string | null = null
    do {
      const response = await call(t.app, { method: 'GET', url: path(`&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`) })
      assert.equal(response.statusCode, 200, response.body)
      pages.push(response.json.data.map((plan: any) => plan.id))
      cursor = response.json.next_cursor
      assert.ok(pages.length <= 30, 'paging ends')
    } while (cursor)
    return pages
  }

  test('without limit a page holds 20 plans and names the next', async () => {
    const first = await call(t.app, { method: 'GET', url: url() })
    assert.equal(first.statusCode, 200)
    assert.deepEqual(first.json.data.map((plan: any) => plan.id), ordered.slice(0, 20))
    assert.equal(typeof first.json.next_cursor, 'string')
    assert.equal(first.json.product.id, product.id)
    const second = await call(t.app, { method: 'GET', url: url(`&cursor=${first.json.next_cursor}`) })
    assert.deepEqual(second.json.data.map((plan: any) => plan.id), ordered.slice(20))
    assert.equal(second.json.next_cursor, null)
  })

  test('following next_cursor visits every plan once, in storefront order, whatever the page size', async () => {
    for (const limit of [1, 2, 5, 22, 23, 100]) {
      const pages = await everyPage(limit)
      assert.ok(pages.every((page) => page.length <= limit), `limit=${limit}`)
      assert.deepEqual(pages.flat(), ordered, `limit=${limit}`)
    }
    const legacy = await everyPage(7, (query) => `/api/v1/storefront/products/paged/plans?store_hash=${shop.store.store_hash}${query}`)
    assert.deepEqual(legacy.flat(), ordered, 'the deprecated path pages the same')
  })

  test('limit and cursor are checked like on every list', async () => {
    for (const limit of ['0', '101', '1e309', '-1', '2.5', 'ten']) {
      assertInvalidField(await call(t.app, { method: 'GET', url: url(`&limit=${limit}`) }), '/query/limit', `limit=${limit}`)
    }
    assertInvalidField(await call(t.app, { method: 'GET', url: url('&cursor=garbage') }), '/query/cursor', 'a cursor this API did not issue')
  })

  test('a plan archived between pages does not make the next page repeat or skip one', async () => {
    const own = await createProduct(t.app, shop.auth, { platform_product_id: 'archived-mid-way' })
    const made = []
    for (const amount of [100, 200, 300, 400]) made.push(await createPlan(t.app, shop.auth, own.id, { amount, interval: 'month' }))
    const ownUrl = (query: string) => `/api/v1/storefront/plans?store_hash=${shop.store.store_hash}&platform_product_id=archived-mid-way${query}`
    const first = await call(t.app, { method: 'GET', url: ownUrl('&limit=2') })
    assert.deepEqual(first.json.data.map((plan: any) => plan.id), [made[0].id, made[1].id])
    // The plan the cursor points after is archived before the next page is asked for.
    await call(t.app, { method: 'PATCH', url: `/api/v1/admin/plans/${made[1].id}`, headers: shop.auth, payload: { active: false } })
    const second = await call(t.app, { method: 'GET', url: ownUrl(`&limit=2&cursor=${first.json.next_cursor}`) })
    assert.equal(second.statusCode, 200, second.body)
    assert.deepEqual(second.json.data.map((plan: any) => plan.id), [made[2].id, made[3].id])
    assert.equal(second.json.next_cursor, null)
  })

  test('a cursor whose plan was deleted since is 400 at /query/cursor: start again without one', async () => {
    const own = await createProduct(t.app, shop.auth, { platform_product_id: 'deleted-mid-way' })
    for (const amount of [100, 200, 300]) await createPlan(t.app, shop.auth, own.id, { amount, interval: 'month' })
    const ownUrl = (query: string) => `/api/v1/storefront/plans?store_hash=${shop.store.store_hash}&platform_product_id=deleted-mid-way${query}`
    const first = await call(t.app, { method: 'GET', url: ownUrl('&limit=1') })
    const deleted = await call(t.app, { method: 'DELETE', url: `/api/v1/admin/plans/${first.json.data[0].id}`, headers: shop.auth })
    assert.equal(deleted.statusCode, 204, deleted.body)
    assertInvalidField(await call(t.app, { method: 'GET', url: ownUrl(`&limit=1&cursor=${first.json.next_cursor}`) }), '/query/cursor')
    const again = await call(t.app, { method: 'GET', url: ownUrl('&limit=5') })
    assert.equal(again.json.data.length, 2)
  })

  test('each page is cached, carries its own ETag, and a catalogue write clears them all', async () => {
    const first = await call(t.app, { method: 'GET', url: url('&limit=5') })
    const second = await call(t.app, { method: 'GET', url: url(`&limit=5&cursor=${first.json.next_cursor}`) })
    assert.notEqual(first.headers.etag, second.headers.etag)
    const notModified = await call(t.app, {
      method: 'GET',
      url: url(`&limit=5&cursor=${first.json.next_cursor}`),
      headers: { 'if-none-match': String(second.headers.etag) },
    })
    assert.equal(notModified.statusCode, 304)

    // A change behind the service's back (another process, say) shows only when the cache lets go.
    const renamed = second.json.data[0].id
    await t.db.updateTable('plans').set({ name: 'Renamed elsewhere' }).where('id', '=', renamed).execute()
    const cached = await call(t.app, { method: 'GET', url: url(`&limit=5&cursor=${first.json.next_cursor}`) })
    assert.equal(cached.json.data[0].name, second.json.data[0].name, 'the second page is served from memory')
    assert.equal(cached.headers.etag, second.headers.etag)

    // A write through this process drops every cached page at once.
    await call(t.app, { method: 'PATCH', url: `/api/v1/admin/plans/${renamed}`, headers: shop.auth, payload: { name: 'Renamed here' } })
    const fresh = await call(t.app, { method: 'GET', url: url(`&limit=5&cursor=${first.json.next_cursor}`) })
    assert.equal(fresh.json.data[0].name, 'Renamed here')
    assert.notEqual(fresh.headers.etag, second.headers.etag)
  })
})
