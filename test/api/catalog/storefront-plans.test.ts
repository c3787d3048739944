import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createAjv } from '../../../src/http/ajv.ts'
import { Ref } from '../../../src/http/schemas.ts'
import { StorefrontPlans } from '../../../src/modules/catalog/index.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'

describe('GET /api/v1/storefront/plans', () => {
  let t: TestApp
  let shop: StoreWithKey
  let product: any
  let monthly: any
  let weekly: any

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    product = await createProduct(t.app, shop.auth, { platform_product_id: 112, one_time_price: { amount: 2400, currency: 'USD' } })
    monthly = await createPlan(t.app, shop.auth, product.id, { name: 'Monthly', amount: 2000, interval: 'month' })
    weekly = await createPlan(t.app, shop.auth, product.id, { name: 'Weekly', amount: 600, interval: 'week' })
    const archived = await createPlan(t.app, shop.auth, product.id, { name: 'Old', amount: 100 })
    await call(t.app, { method: 'PATCH', url: `/api/v1/admin/plans/${archived.id}`, headers: shop.auth, payload: { active: false } })
  })
  after(() => t.close())

  const url = (query: string) => `/api/v1/storefront/plans?${query}`

  test('lists only the active plans of that store and product, shortest cadence first, without credentials', async () => {
    const response = await call(t.app, { method: 'GET', url: url(`store_hash=${shop.store.store_hash}&platform_product_id=112`) })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json.data.map((plan: any) => plan.id), [weekly.id, monthly.id])
    assert.equal(response.json.next_cursor, null)
    assert.equal(response.json.product.id, product.id)
    assert.deepEqual(response.json.product.one_time_price, { amount: 2400, currency: 'USD' })
  })

  test('the answer, sent as cached bytes (which response validation never sees), matches its schema', async () => {
    const validate = createAjv('response', Object.values(t.app.getSchemas()) as object[]).compile(Ref(StorefrontPlans))
    for (const query of [`store_hash=${shop.store.store_hash}&platform_product_id=112`, 'store_hash=nobody&platform_product_id=112']) {
      const response = await call(t.app, { method: 'GET', url: url(query) })
      assert.equal(response.statusCode, 200)
      assert.equal(response.headers['content-type'], 'application/json; charset=utf-8')
      assert.equal(Number(response.headers['content-length']), Buffer.byteLength(response.body))
      assert.ok(validate(response.json), JSON.stringify(validate.errors))
    }
  })

  test('a missing store_hash is 400 validation_failed naming the parameter', async () => {
    const response = await call(t.app, { method: 'GET', url: url('platform_product_id=112') })
    assert.equal(response.statusCode, 400)
    assert.equal(response.json.code, 'validation_failed')
    assert.deepEqual(response.json.errors, [{ path: '/query/store_hash', message: 'is required' }])
  })

  test('an unknown store or product answers an empty list', async () => {
    for (const query of [`store_hash=nobody&platform_product_id=112`, `store_hash=${shop.store.store_hash}&platform_product_id=999`]) {
      const response = await call(t.app, { method: 'GET', url: url(query) })
      assert.equal(response.statusCode, 200)
      assert.deepEqual(response.json.data, [])
      assert.equal(response.json.product, undefined)
    }
  })

  test('is readable from any origin (CORS) and preflights succeed', async () => {
    const response = await call(t.app, {
      method: 'GET',
      url: url(`store_hash=${shop.store.store_hash}&platform_product_id=112`),
      headers: { origin: 'https://shop.example' },
    })
    assert.equal(response.headers['access-control-allow-origin'], '*')
    const preflight = await call(t.app, {
      method: 'OPTIONS',
      url: url(`store_hash=${shop.store.store_hash}&platform_product_id=112`),
      headers: { origin: 'https://shop.example', 'access-control-request-method': 'GET' },
    })
    assert.equal(preflight.statusCode, 204)
    assert.equal(preflight.headers['access-control-allow-origin'], '*')
  })

  test('answers an ETag and Cache-Control, and 304 with no body for a matching If-None-Match', async () => {
    const first = await call(t.app, { method: 'GET', url: url(`store_hash=${shop.store.store_hash}&platform_product_id=112`) })
    const etag = first.headers.etag as string
    assert.match(etag, /^"[A-Za-z0-9_-]+"$/)
    assert.match(String(first.headers['cache-control']), /public, max-age=\d+/)
    const again = await call(t.app, {
      method: 'GET',
      url: url(`store_hash=${shop.store.store_hash}&platform_product_id=112`),
      headers: { 'if-none-match': etag },
    })
    assert.equal(again.statusCode, 304)
    assert.equal(again.body, '')
    const stale = await call(t.app, {
      method: 'GET',
      url: url(`store_hash=${shop.store.store_hash}&platform_product_id=112`),
      headers: { 'if-none-match': '"something-else"' },
    })
    assert.equal(stale.statusCode, 200)
  })

  test('a catalogue change shows at once and changes the ETag', async () => {
    // A product of its own: the plans the other tests list stay as the before hook made them.
    const own = await createProduct(t.app, shop.auth, { platform_product_id: 113 })
    const kept = await createPlan(t.app, shop.auth, own.id, { name: 'Monthly', amount: 2000, interval: 'month' })
    const ownPlans = url(`store_hash=${shop.store.store_hash}&platform_product_id=113`)
    const before = await call(t.app, { method: 'GET', url: ownPlans })
    assert.deepEqual(before.json.data.map((plan: any) => plan.id), [kept.id])
    const added = await createPlan(t.app, shop.auth, own.id, { name: 'Daily', amount: 100, interval: 'day' })
    const afterward = await call(t.app, { method: 'GET', url: ownPlans })
    assert.notEqual(afterward.headers.etag, before.headers.etag)
    assert.equal(afterward.json.data[0].id, added.id)
    await call(t.app, { method: 'PATCH', url: `/api/v1/admin/plans/${added.id}`, headers: shop.auth, payload: { active: false } })
    const archived = await call(t.app, { method: 'GET', url: ownPlans })
    assert.ok(!archived.json.data.some((plan: any) => plan.id === added.id), 'an archived plan is no longer offered')
  })

  test("another store's plans for the same platform product id never appear", async () => {
    const other = await createStoreWithKey(t.db)
    const otherProduct = await createProduct(t.app, other.auth, { platform_product_id: '112' })
    const otherPlan = await createPlan(t.app, other.auth, otherProduct.id)
    const response = await call(t.app, { method: 'GET', url: url(`store_hash=${shop.store.store_hash}&platform_product_id=112`) })
    assert.ok(!response.json.data.some((plan: any) => plan.id === otherPlan.id))
    const theirs = await call(t.app, { method: 'GET', url: url(`store_hash=${other.store.store_hash}&platform_product_id=112`) })
    assert.deepEqual(theirs.json.data.map((plan: any) => plan.id), [otherPlan.id])
  })

  test('the deprecated path alias answers the same plans with Deprecation, Sunset and a successor Link', async () => {
    const response = await call(t.app, { method: 'GET', url: `/api/v1/storefront/products/112/plans?store_hash=${shop.store.store_hash}` })
    assert.equal(response.statusCode, 200)
    const current = await call(t.app, { method: 'GET', url: url(`store_hash=${shop.store.store_hash}&platform_product_id=112`) })
    assert.deepEqual(response.json, current.json)
    assert.match(String(response.headers.deprecation), /^@\d+$/)
    assert.ok(!Number.isNaN(Date.parse(String(response.headers.sunset))), 'Sunset is an HTTP date')
    assert.match(String(response.headers.sunset), /GMT$/)
    assert.equal(response.headers.link, '</api/v1/storefront/plans>; rel="successor-version"')
    assert.equal(current.headers.deprecation, undefined, 'the successor is not deprecated')
  })
})
