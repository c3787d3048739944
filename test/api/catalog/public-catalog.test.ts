import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { assertInvalidField, assertProblem } from '../../helpers/problem.ts'

type Reply = Awaited<ReturnType<typeof call>>

const ids = (response: Reply): string[] => response.json.data.map((item: { id: string }) => item.id)

describe('public catalogue: GET /api/v1/products, /products/{id}, /plans, /plans/{id} without credentials', () => {
  let t: TestApp
  let shop: StoreWithKey
  let other: StoreWithKey
  let coffee: any
  let tea: any
  let archivedProduct: any
  let coffeeMonthly: any
  let coffeeWeekly: any
  let coffeeArchived: any
  let teaMonthly: any
  let planOfArchivedProduct: any
  let theirProduct: any
  let theirPlan: any

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    other = await createStoreWithKey(t.db)
    coffee = await createProduct(t.app, shop.auth, { platform_product_id: 'coffee', name: 'Coffee' })
    tea = await createProduct(t.app, shop.auth, { platform_product_id: 'tea', name: 'Tea' })
    archivedProduct = await createProduct(t.app, shop.auth, { platform_product_id: 'retired', name: 'Retired', active: false })
    coffeeMonthly = await createPlan(t.app, shop.auth, coffee.id, { name: 'Coffee monthly' })
    coffeeWeekly = await createPlan(t.app, shop.auth, coffee.id, { name: 'Coffee weekly', interval: 'week', amount: 500 })
    coffeeArchived = await createPlan(t.app, shop.auth, coffee.id, { name: 'Coffee old', active: false })
    teaMonthly = await createPlan(t.app, shop.auth, tea.id, { name: 'Tea monthly' })
    planOfArchivedProduct = await createPlan(t.app, shop.auth, archivedProduct.id, { name: 'Retired monthly' })
    theirProduct = await createProduct(t.app, other.auth, { platform_product_id: 'coffee', name: 'Their coffee' })
    theirPlan = await createPlan(t.app, other.auth, theirProduct.id, { name: 'Their monthly' })
  })
  after(() => t.close())

  test("GET /products?store_hash= lists only that store's active products, newest first", async () => {
    const response = await call(t.app, { method: 'GET', url: `/api/v1/products?store_hash=${shop.store.store_hash}` })
    assert.equal(response.statusCode, 200, response.body)
    assert.match(String(response.headers['content-type']), /^application\/json/)
    assert.deepEqual(ids(response), [tea.id, coffee.id], 'the archived product and the other store are left out')
    assert.equal(response.json.next_cursor, null)
    assert.deepEqual(response.json.data[1], coffee, 'items are the same product resource the admin sees')
  })

  test("GET /plans?store_hash= lists only that store's active plans, newest first", async () => {
    const response = await call(t.app, { method: 'GET', url: `/api/v1/plans?store_hash=${shop.store.store_hash}` })
    assert.equal(response.statusCode, 200, response.body)
    const listed = ids(response)
    assert.ok(!listed.includes(coffeeArchived.id), 'an archived plan is hidden')
    assert.ok(!listed.includes(theirPlan.id), "another store's plan is never listed")
    assert.ok(response.json.data.every((plan: any) => plan.active === true && plan.store_hash === shop.store.store_hash))
    for (const plan of [teaMonthly, coffeeWeekly, coffeeMonthly]) assert.ok(listed.includes(plan.id), `active plan ${plan.name} is listed`)
  })

  test('plans of an archived product are hidden from the public plan list, as they are from the storefront', async () => {
    const all = await call(t.app, { method: 'GET', url: `/api/v1/plans?store_hash=${shop.store.store_hash}` })
    assert.deepEqual(ids(all), [teaMonthly.id, coffeeWeekly.id, coffeeMonthly.id], 'only active plans of active products')
    const ofArchived = await call(t.app, { method: 'GET', url: `/api/v1/plans?store_hash=${shop.store.store_hash}&product_id=${archivedProduct.id}` })
    assert.equal(ofArchived.statusCode, 200)
    assert.deepEqual(ids(ofArchived), [], `${planOfArchivedProduct.name} belongs to an archived product and is not offered`)
  })

  test('product_id narrows the public plan list to that product', async () => {
    const response = await call(t.app, { method: 'GET', url: `/api/v1/plans?store_hash=${shop.store.store_hash}&product_id=${coffee.id}` })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(ids(response), [coffeeWeekly.id, coffeeMonthly.id])
    const crossStore = await call(t.app, { method: 'GET', url: `/api/v1/plans?store_hash=${shop.store.store_hash}&product_id=${theirProduct.id}` })
    assert.deepEqual(ids(crossStore), [], "another store's product id under this store_hash lists nothing")
  })

  test('the public lists page with limit and next_cursor', async () => {
    const first = await call(t.app, { method: 'GET', url: `/api/v1/plans?store_hash=${shop.store.store_hash}&limit=2` })
    assert.equal(first.json.data.length, 2)
    assert.equal(typeof first.json.next_cursor, 'string')
    const second = await call(t.app, { method: 'GET', url: `/api/v1/plans?store_hash=${shop.store.store_hash}&limit=2&cursor=${first.json.next_cursor}` })
    assert.equal(second.statusCode, 200)
    assert.ok(!ids(second).some((id) => ids(first).includes(id)), 'no item repeats across pages')
    assertInvalidField(await call(t.app, { method: 'GET', url: `/api/v1/products?store_hash=${shop.store.store_hash}&limit=0` }), '/query/limit', 'limit=0')
    assertInvalidField(await call(t.app, { method: 'GET', url: `/api/v1/products?store_hash=${shop.store.store_hash}&cursor=garbage` }), '/query/cursor', 'garbage cursor')
  })

  test('a missing store_hash is 400 validation_failed at /query/store_hash on both lists', async () => {
    assertInvalidField(await call(t.app, { method: 'GET', url: '/api/v1/products' }), '/query/store_hash', 'products without store_hash')
    assertInvalidField(await call(t.app, { method: 'GET', url: `/api/v1/plans?product_id=${coffee.id}` }), '/query/store_hash', 'plans without store_hash')
  })

  test('an unknown store answers an empty list, not an error', async () => {
    for (const url of ['/api/v1/products?store_hash=no-such-store', '/api/v1/plans?store_hash=no-such-store']) {
      const response = await call(t.app, { method: 'GET', url })
      assert.equal(response.statusCode, 200, `${url}: ${response.body}`)
      assert.deepEqual(response.json, { data: [], next_cursor: null }, url)
    }
  })

  test('GET /products/{id} and /plans/{id} read one resource without credentials', async () => {
    const product = await call(t.app, { method: 'GET', url: `/api/v1/products/${coffee.id}` })
    assert.equal(product.statusCode, 200, product.body)
    assert.deepEqual(product.json, coffee)
    const plan = await call(t.app, { method: 'GET', url: `/api/v1/plans/${coffeeMonthly.id}` })
    assert.equal(plan.statusCode, 200, plan.body)
    assert.deepEqual(plan.json, coffeeMonthly)
  })

  test('an unknown id is 404 not_found problem+json', async () => {
    assertProblem(await call(t.app, { method: 'GET', url: '/api/v1/products/prod_00000000000000000000000000' }), 404, 'not_found', { what: 'unknown product' })
    assertProblem(await call(t.app, { method: 'GET', url: '/api/v1/plans/plan_00000000000000000000000000' }), 404, 'not_found', { what: 'unknown plan' })
  })

  test('a malformed id in the path is 404 not_found: ids are opaque', async () => {
    assertProblem(await call(t.app, { method: 'GET', url: '/api/v1/plans/not-an-id' }), 404, 'not_found', { what: 'malformed plan id' })
    assertProblem(await call(t.app, { method: 'GET', url: '/api/v1/products/not-an-id' }), 404, 'not_found', { what: 'malformed product id' })
    assertProblem(await call(t.app, { method: 'GET', url: `/api/v1/plans/${coffee.id}` }), 404, 'not_found', { what: 'a product id where a plan id belongs' })
  })

  test('public routes do not offer writes', async () => {
    const response = await call(t.app, { method: 'POST', url: '/api/v1/products', payload: { platform_product_id: 'x', name: 'x' } })
    assert.ok(response.statusCode === 404 || response.statusCode === 405, `POST /api/v1/products is not a route: ${response.statusCode}`)
    assert.match(String(response.headers['content-type']), /^application\/problem\+json/)
    const count = await t.db.selectFrom('products').select((eb) => eb.fn.countAll().as('n')).where('platform_product_id', '=', 'x').executeTakeFirstOrThrow()
    assert.equal(Number(count.n), 0)
  })
})
