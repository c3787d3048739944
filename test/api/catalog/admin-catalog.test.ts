import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { assertInvalidField, assertProblem } from '../../helpers/problem.ts'

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/

describe('admin catalogue: products', () => {
  let t: TestApp
  let shop: StoreWithKey
  let other: StoreWithKey

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    other = await createStoreWithKey(t.db)
  })
  after(() => t.close())

  const productRow = (id: string) => t.db.selectFrom('products').selectAll().where('id', '=', id).executeTakeFirst()
  const productCount = async (storeId: string) =>
    Number((await t.db.selectFrom('products').select((eb) => eb.fn.countAll().as('n')).where('store_id', '=', storeId).executeTakeFirstOrThrow()).n)

  test('POST /admin/products answers 201 with the whole product, and GET by id reads the same', async () => {
    const created = await call(t.app, {
      method: 'POST',
      url: '/api/v1/admin/products',
      headers: shop.auth,
      payload: { platform_product_id: 'coffee-1', name: 'Coffee', description: 'Beans, monthly' },
    })
    assert.equal(created.statusCode, 201, `create failed: ${created.body}`)
    const product = created.json
    assert.match(product.id, /^prod_[0-9A-HJKMNP-TV-Z]{26}$/, 'id is prod_ + a ULID')
    assert.equal(product.object, 'product')
    assert.equal(product.store_hash, shop.store.store_hash)
    assert.equal(product.platform_product_id, 'coffee-1')
    assert.equal(product.name, 'Coffee')
    assert.equal(product.description, 'Beans, monthly')
    assert.equal(product.active, true, 'products are active unless told otherwise')
    assert.match(product.created_at, RFC3339_UTC)
    assert.match(product.updated_at, RFC3339_UTC)

    const read = await call(t.app, { method: 'GET', url: `/api/v1/admin/products/${product.id}`, headers: shop.auth })
    assert.equal(read.statusCode, 200)
    assert.deepEqual(read.json, product, 'the read answers exactly what the create answered')
  })

  test('a platform_product_id given as an integer is stored and answered as a string', async () => {
    const product = await createProduct(t.app, shop.auth, { platform_product_id: 4711 })
    assert.equal(product.platform_product_id, '4711')
    const read = await call(t.app, { method: 'GET', url: `/api/v1/admin/products/${product.id}`, headers: shop.auth })
    assert.equal(read.json.platform_product_id, '4711')
  })

  test('the admin list shows every product of the key\'s store, archived ones too, and none of another store', async () => {
    const live = await createProduct(t.app, shop.auth)
    const archived = await createProduct(t.app, shop.auth, { active: false })
    const theirs = await createProduct(t.app, other.auth)
    const response = await call(t.app, { method: 'GET', url: '/api/v1/admin/products?limit=100', headers: shop.auth })
    assert.equal(response.statusCode, 200)
    const ids = response.json.data.map((product: any) => product.id)
    assert.ok(ids.includes(live.id), 'active product listed')
    assert.ok(ids.includes(archived.id), 'archived product listed for the admin')
    assert.ok(!ids.includes(theirs.id), "another store's product is never listed")
    assert.ok(response.json.data.every((product: any) => product.store_hash === shop.store.store_hash))
  })

  test('PATCH changes name, description and active, and the change is read back', async () => {
    const product = await createProduct(t.app, shop.auth, { name: 'Before', description: 'old' })
    const response = await call(t.app, {
      method: 'PATCH',
      url: `/api/v1/admin/products/${product.id}`,
      headers: shop.auth,
      payload: { name: 'After', description: null, active: false },
    })
    assert.equal(response.statusCode, 200, `update failed: ${response.body}`)
    assert.equal(response.json.name, 'After')
    assert.equal(response.json.description, null)
    assert.equal(response.json.active, false)
    assert.equal(response.json.platform_product_id, product.platform_product_id, 'fields not sent are kept')
    assert.equal(response.json.created_at, product.created_at)
    assert.ok(response.json.updated_at >= product.updated_at, 'updated_at does not go back')
    const read = await call(t.app, { method: 'GET', url: `/api/v1/admin/products/${product.id}`, headers: shop.auth })
    assert.deepEqual(read.json, response.json)
  })

  test('an empty PATCH body is 400 validation_failed', async () => {
    const product = await createProduct(t.app, shop.auth)
    const response = await call(t.app, { method: 'PATCH', url: `/api/v1/admin/products/${product.id}`, headers: shop.auth, payload: {} })
    assertProblem(response, 400, 'validation_failed', { what: 'PATCH {}' })
  })

  test('unknown body fields are 400 validation_failed naming the field, and nothing is created', async () => {
    const before = await productCount(shop.store.id)
    const response = await call(t.app, {
      method: 'POST',
      url: '/api/v1/admin/products',
      headers: shop.auth,
      payload: { platform_product_id: 'unknown-field', name: 'X', colour: 'red' },
    })
    assertInvalidField(response, '/body/colour', 'unknown field on create')
    assert.equal(await productCount(shop.store.id), before, 'no product was created')

    const product = await createProduct(t.app, shop.auth)
    const patch = await call(t.app, { method: 'PATCH', url: `/api/v1/admin/products/${product.id}`, headers: shop.auth, payload: { name: 'Y', colour: 'red' } })
    assertInvalidField(patch, '/body/colour', 'unknown field on update')
    assert.equal((await productRow(product.id))?.name, product.name, 'the valid part of a refused PATCH is not applied')
  })

  test('a duplicate platform_product_id in one store is 409 conflict; the same id in another store is fine', async () => {
    const first = await createProduct(t.app, shop.auth, { platform_product_id: 'dup-1', name: 'First' })
    const before = await productCount(shop.store.id)
    const duplicate = await call(t.app, {
      method: 'POST',
      url: '/api/v1/admin/products',
      headers: shop.auth,
      payload: { platform_product_id: 'dup-1', name: 'Second' },
    })
    assertProblem(duplicate, 409, 'conflict', { what: 'duplicate platform_product_id' })
    assert.equal(await productCount(shop.store.id), before, 'no second product was created')
    assert.equal((await productRow(first.id))?.name, 'First', 'the first product is unchanged')

    const asInteger = await createProduct(t.app, shop.auth, { platform_product_id: 9001 })
    const sameAsText = await call(t.app, { method: 'POST', url: '/api/v1/admin/products', headers: shop.auth, payload: { platform_product_id: '9001', name: 'Z' } })
    assertProblem(sameAsText, 409, 'conflict', { what: 'integer 9001 and text "9001" are the same platform product' })
    assert.ok(asInteger.id)

    const elsewhere = await call(t.app, { method: 'POST', url: '/api/v1/admin/products', headers: other.auth, payload: { platform_product_id: 'dup-1', name: 'Theirs' } })
    assert.equal(elsewhere.statusCode, 201, `another store may use the same platform id: ${elsewhere.body}`)
    assert.equal(elsewhere.json.store_hash, other.store.store_hash)
  })

  test('deleting a product that has plans is 409 conflict and the product is unchanged', async () => {
    const product = await createProduct(t.app, shop.auth, { name: 'Has plans' })
    const plan = await createPlan(t.app, shop.auth, product.id)
    const response = await call(t.app, { method: 'DELETE', url: `/api/v1/admin/products/${product.id}`, headers: shop.auth })
    assertProblem(response, 409, 'conflict', { what: 'deleting a product with plans' })
    const read = await call(t.app, { method: 'GET', url: `/api/v1/admin/products/${product.id}`, headers: shop.auth })
    assert.equal(read.statusCode, 200, 'the product still exists')
    assert.deepEqual(read.json, product, 'the product is unchanged')
    const planRead = await call(t.app, { method: 'GET', url: `/api/v1/admin/plans/${plan.id}`, headers: shop.auth })
    assert.equal(planRead.statusCode, 200, 'its plan still exists')
  })

  test('deleting an unused product is 204 with no body, then it is 404', async () => {
    const product = await createProduct(t.app, shop.auth)
    const response = await call(t.app, { method: 'DELETE', url: `/api/v1/admin/products/${product.id}`, headers: shop.auth })
    assert.equal(response.statusCode, 204, `delete failed: ${response.body}`)
    assert.equal(response.body, '')
    assert.equal(await productRow(product.id), undefined, 'the row is gone')
    assertProblem(await call(t.app, { method: 'GET', url: `/api/v1/admin/products/${product.id}`, headers: shop.auth }), 404, 'not_found', { what: 'read after delete' })
    assertProblem(await call(t.app, { method: 'DELETE', url: `/api/v1/admin/products/${product.id}`, headers: shop.auth }), 404, 'not_found', { what: 'second delete' })
  })

  test("another store's product is 404 for read, update and delete, and stays unchanged", async () => {
    const theirs = await createProduct(t.app, other.auth, { name: 'Theirs' })
    const url = `/api/v1/admin/products/${theirs.id}`
    const read = await call(t.app, { method: 'GET', url, headers: shop.auth })
    assertProblem(read, 404, 'not_found', { what: "reading another store's product" })
    const update = await call(t.app, { method: 'PATCH', url, headers: shop.auth, payload: { name: 'Hijacked', active: false } })
    assertProblem(update, 404, 'not_found', { what: "updating another store's product" })
    const remove = await call(t.app, { method: 'DELETE', url, headers: shop.auth })
    assertProblem(remove, 404, 'not_found', { what: "deleting another store's product" })

    const unknown = await call(t.app, { method: 'GET', url: '/api/v1/admin/products/prod_00000000000000000000000000', headers: shop.auth })
    assert.equal(read.json.detail.replace(theirs.id, 'ID'), unknown.json.detail.replace('prod_00000000000000000000000000', 'ID'), 'the answer is the same as for an id that does not exist')

    const mine = await call(t.app, { method: 'GET', url, headers: other.auth })
    assert.deepEqual(mine.json, theirs, 'the owner still reads it unchanged')
  })

  test('a malformed product id in the path is 404 not_found: ids are opaque', async () => {
    const response = await call(t.app, { method: 'GET', url: '/api/v1/admin/products/not-an-id', headers: shop.auth })
    assertProblem(response, 404, 'not_found', { what: 'malformed id' })
  })
})

describe('admin catalogue: plans', () => {
  let t: TestApp
  let shop: StoreWithKey
  let other: StoreWithKey
  let product: any

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    other = await createStoreWithKey(t.db)
    product = await createProduct(t.app, shop.auth, { platform_product_id: 'tea' })
  })
  after(() => t.close())

  const planCount = async () => Number((await t.db.selectFrom('plans').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)
  const postPlan = (body: Record<string, unknown>, auth: Record<string, string> = shop.auth) =>
    call(t.app, {
      method: 'POST',
      url: '/api/v1/admin/plans',
      headers: auth,
      payload: { product_id: product.id, name: 'Monthly', amount: 1500, currency: 'USD', interval: 'month', ...body },
    })

  test('POST /admin/plans answers 201 with the whole plan and its defaults', async () => {
    const response = await postPlan({})
    assert.equal(response.statusCode, 201, `create failed: ${response.body}`)
    const plan = response.json
    assert.match(plan.id, /^plan_[0-9A-HJKMNP-TV-Z]{26}$/, 'id is plan_ + a ULID')
    assert.equal(plan.object, 'plan')
    assert.equal(plan.store_hash, shop.store.store_hash)
    assert.equal(plan.product_id, product.id)
    assert.equal(plan.platform_product_id, 'tea', "the product's platform id is repeated on the plan")
    assert.equal(plan.name, 'Monthly')
    assert.equal(plan.amount, 1500)
    assert.equal(plan.currency, 'USD')
    assert.equal(plan.interval, 'month')
    assert.equal(plan.interval_count, 1, 'interval_count defaults to 1')
    assert.equal(plan.trial_days, 0, 'trial_days defaults to 0')
    assert.equal(plan.prepaid_cycles, null, 'prepaid_cycles defaults to null')
    assert.equal(plan.b2b, false, 'b2b defaults to false')
    assert.equal(plan.active, true)
    assert.match(plan.created_at, RFC3339_UTC)
    assert.match(plan.updated_at, RFC3339_UTC)
    const read = await call(t.app, { method: 'GET', url: `/api/v1/admin/plans/${plan.id}`, headers: shop.auth })
    assert.equal(read.statusCode, 200)
    assert.deepEqual(read.json, plan)
  })

  test('interval_count, trial_days, prepaid_cycles and the b2b flag are stored as given', async () => {
    const response = await postPlan({ name: 'B2B quarterly prepaid', amount: 0, interval: 'week', interval_count: 13, trial_days: 14, prepaid_cycles: 2, b2b: true })
    assert.equal(response.statusCode, 201, `create failed: ${response.body}`)
    const read = await call(t.app, { method: 'GET', url: `/api/v1/admin/plans/${response.json.id}`, headers: shop.auth })
    assert.equal(read.json.amount, 0, 'a free plan (amount 0) is allowed')
    assert.equal(read.json.interval, 'week')
    assert.equal(read.json.interval_count, 13)
    assert.equal(read.json.trial_days, 14)
    assert.equal(read.json.prepaid_cycles, 2)
    assert.equal(read.json.b2b, true)
    const row = await t.db.selectFrom('plans').select(['b2b', 'prepaid_cycles']).where('id', '=', response.json.id).executeTakeFirstOrThrow()
    assert.equal(row.b2b, true, 'b2b is stored, not only echoed')
    assert.equal(row.prepaid_cycles, 2)
  })

  test('each interval of day, week, month and year is accepted; prepaid_cycles may be null', async () => {
    for (const interval of ['day', 'week', 'month', 'year']) {
      const response = await postPlan({ interval, prepaid_cycles: null })
      assert.equal(response.statusCode, 201, `interval ${interval}: ${response.body}`)
      assert.equal(response.json.interval, interval)
      assert.equal(response.json.prepaid_cycles, null)
    }
  })

  const invalidPlans: Array<[string, Record<string, unknown>, string]> = [
    ['a fractional amount (1.5)', { amount: 1.5 }, '/body/amount'],
    ['an amount as a string ("100"): bodies are not coerced', { amount: '100' }, '/body/amount'],
    ['a negative amount (-1)', { amount: -1 }, '/body/amount'],
    ['a lower-case currency ("usd")', { currency: 'usd' }, '/body/currency'],
    ['an interval outside day|week|month|year ("fortnight")', { interval: 'fortnight' }, '/body/interval'],
    ['interval_count 0', { interval_count: 0 }, '/body/interval_count'],
    ['a negative trial_days (-1)', { trial_days: -1 }, '/body/trial_days'],
    ['prepaid_cycles 1 (a prepaid plan covers at least 2 cycles)', { prepaid_cycles: 1 }, '/body/prepaid_cycles'],
    ['b2b as a string ("true")', { b2b: 'true' }, '/body/b2b'],
    ['an unknown field', { price: 1500 }, '/body/price'],
    ['a missing name', { name: undefined }, '/body/name'],
  ]
  for (const [what, body, path] of invalidPlans) {
    test(`${what} is 400 validation_failed at ${path} and creates nothing`, async () => {
      const before = await planCount()
      assertInvalidField(await postPlan(body), path, what)
      assert.equal(await planCount(), before, `${what}: no plan was created`)
    })
  }

  test('a well-formed currency that is not ISO 4217 ("XYZ") is 400 validation_failed at /body/currency and creates nothing', async () => {
    const before = await planCount()
    const response = await postPlan({ currency: 'XYZ' })
    assertProblem(response, 400, 'validation_failed', { what: 'currency XYZ' })
    assert.deepEqual(response.json.errors.map((error: any) => error.path), ['/body/currency'])
    assert.equal(await planCount(), before, 'no plan was created')
  })

  test("a plan for another store's product is 404 not_found and nothing is created", async () => {
    const theirs = await createProduct(t.app, other.auth)
    const before = await planCount()
    const response = await postPlan({ product_id: theirs.id })
    assertProblem(response, 404, 'not_found', { what: "plan for another store's product" })
    assert.equal(await planCount(), before, 'no plan was created in either store')
  })

  test('a plan for an unknown product is 404 not_found', async () => {
    assertProblem(await postPlan({ product_id: 'prod_00000000000000000000000000' }), 404, 'not_found', { what: 'unknown product' })
  })

  test('PATCH changes name, trial_days, b2b and active and keeps the price', async () => {
    const plan = await createPlan(t.app, shop.auth, product.id, { name: 'Old name', amount: 990 })
    const response = await call(t.app, {
      method: 'PATCH',
      url: `/api/v1/admin/plans/${plan.id}`,
      headers: shop.auth,
      payload: { name: 'New name', trial_days: 7, b2b: true, active: false },
    })
    assert.equal(response.statusCode, 200, `update failed: ${response.body}`)
    assert.equal(response.json.name, 'New name')
    assert.equal(response.json.trial_days, 7)
    assert.equal(response.json.b2b, true)
    assert.equal(response.json.active, false)
    assert.equal(response.json.amount, 990)
    assert.equal(response.json.currency, plan.currency)
    assert.equal(response.json.interval, plan.interval)
    assert.equal(response.json.platform_product_id, plan.platform_product_id)
    assert.ok(response.json.updated_at >= plan.updated_at, 'updated_at does not go back')
    const read = await call(t.app, { method: 'GET', url: `/api/v1/admin/plans/${plan.id}`, headers: shop.auth })
    assert.deepEqual(read.json, response.json, 'the change is stored')
  })

  for (const [field, value] of [['amount', 2000], ['currency', 'EUR'], ['interval', 'year'], ['interval_count', 2], ['product_id', 'prod_00000000000000000000000000']] as const) {
    test(`PATCH of the fixed field ${field} is refused as an unknown field (400) and the plan is unchanged`, async () => {
      const plan = await createPlan(t.app, shop.auth, product.id)
      const response = await call(t.app, { method: 'PATCH', url: `/api/v1/admin/plans/${plan.id}`, headers: shop.auth, payload: { name: 'Renamed', [field]: value } })
      assertInvalidField(response, `/body/${field}`, `PATCH ${field}`)
      const read = await call(t.app, { method: 'GET', url: `/api/v1/admin/plans/${plan.id}`, headers: shop.auth })
      assert.deepEqual(read.json, plan, 'nothing of the refused PATCH was applied')
    })
  }

  test('active: false archives a plan: still readable by id, hidden from public lists and the storefront', async () => {
    const shelf = await createProduct(t.app, shop.auth, { platform_product_id: 'archive-me' })
    const kept = await createPlan(t.app, shop.auth, shelf.id, { name: 'Kept' })
    const plan = await createPlan(t.app, shop.auth, shelf.id, { name: 'Archived' })
    const archive = await call(t.app, { method: 'PATCH', url: `/api/v1/admin/plans/${plan.id}`, headers: shop.auth, payload: { active: false } })
    assert.equal(archive.statusCode, 200, `archive failed: ${archive.body}`)

    const adminRead = await call(t.app, { method: 'GET', url: `/api/v1/admin/plans/${plan.id}`, headers: shop.auth })
    assert.equal(adminRead.statusCode, 200, 'the admin still reads an archived plan')
    assert.equal(adminRead.json.active, false)
    const publicRead = await call(t.app, { method: 'GET', url: `/api/v1/plans/${plan.id}` })
    assert.equal(publicRead.statusCode, 200, 'an archived plan stays readable by id for its subscribers')
    assert.equal(publicRead.json.active, false)

    const adminList = await call(t.app, { method: 'GET', url: `/api/v1/admin/plans?product_id=${shelf.id}`, headers: shop.auth })
    assert.deepEqual(adminList.json.data.map((p: any) => p.id), [plan.id, kept.id], 'the admin list still shows it')
    const publicList = await call(t.app, { method: 'GET', url: `/api/v1/plans?store_hash=${shop.store.store_hash}&product_id=${shelf.id}` })
    assert.deepEqual(publicList.json.data.map((p: any) => p.id), [kept.id], 'the public list hides it')
    const storefront = await call(t.app, { method: 'GET', url: `/api/v1/storefront/plans?store_hash=${shop.store.store_hash}&platform_product_id=archive-me` })
    assert.deepEqual(storefront.json.data.map((p: any) => p.id), [kept.id], 'the storefront hides it')

    const restore = await call(t.app, { method: 'PATCH', url: `/api/v1/admin/plans/${plan.id}`, headers: shop.auth, payload: { active: true } })
    assert.equal(restore.json.active, true, 'active: true restores it')
    const restored = await call(t.app, { method: 'GET', url: `/api/v1/plans?store_hash=${shop.store.store_hash}&product_id=${shelf.id}` })
    assert.deepEqual(restored.json.data.map((p: any) => p.id), [plan.id, kept.id])
  })

  test('deleting an unused plan is 204 with no body, then it is 404', async () => {
    const plan = await createPlan(t.app, shop.auth, product.id)
    const response = await call(t.app, { method: 'DELETE', url: `/api/v1/admin/plans/${plan.id}`, headers: shop.auth })
    assert.equal(response.statusCode, 204, `delete failed: ${response.body}`)
    assert.equal(response.body, '')
    assertProblem(await call(t.app, { method: 'GET', url: `/api/v1/admin/plans/${plan.id}`, headers: shop.auth }), 404, 'not_found', { what: 'admin read after delete' })
    assertProblem(await call(t.app, { method: 'GET', url: `/api/v1/plans/${plan.id}` }), 404, 'not_found', { what: 'public read after delete' })
  })

  test('once its last plan is deleted, a product can be deleted', async () => {
    const lonely = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, lonely.id)
    assert.equal((await call(t.app, { method: 'DELETE', url: `/api/v1/admin/products/${lonely.id}`, headers: shop.auth })).statusCode, 409)
    assert.equal((await call(t.app, { method: 'DELETE', url: `/api/v1/admin/plans/${plan.id}`, headers: shop.auth })).statusCode, 204)
    assert.equal((await call(t.app, { method: 'DELETE', url: `/api/v1/admin/products/${lonely.id}`, headers: shop.auth })).statusCode, 204)
  })

  test("another store's plan is 404 for read, update and delete, and stays unchanged", async () => {
    const theirProduct = await createProduct(t.app, other.auth)
    const theirs = await createPlan(t.app, other.auth, theirProduct.id, { name: 'Theirs' })
    const url = `/api/v1/admin/plans/${theirs.id}`
    assertProblem(await call(t.app, { method: 'GET', url, headers: shop.auth }), 404, 'not_found', { what: "reading another store's plan" })
    assertProblem(await call(t.app, { method: 'PATCH', url, headers: shop.auth, payload: { name: 'Hijacked', active: false } }), 404, 'not_found', { what: "updating another store's plan" })
    assertProblem(await call(t.app, { method: 'DELETE', url, headers: shop.auth }), 404, 'not_found', { what: "deleting another store's plan" })
    const list = await call(t.app, { method: 'GET', url: '/api/v1/admin/plans?limit=100', headers: shop.auth })
    assert.ok(!list.json.data.some((p: any) => p.id === theirs.id), "another store's plan is never listed")
    const mine = await call(t.app, { method: 'GET', url, headers: other.auth })
    assert.deepEqual(mine.json, theirs, 'the owner still reads it unchanged')
  })
})

describe('admin catalogue: pagination', () => {
  let t: TestApp
  let shop: StoreWithKey
  let created: any[]

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    created = []
    for (let i = 0; i < 5; i++) created.push(await createProduct(t.app, shop.auth, { name: `Page item ${i}` }))
  })
  after(() => t.close())

  const list = (query: string) => call(t.app, { method: 'GET', url: `/api/v1/admin/products?${query}`, headers: shop.auth })

  test('following next_cursor from limit=2 yields every product exactly once, newest first, and the last page has next_cursor null', async () => {
    const first = await list('limit=2')
    assert.equal(first.statusCode, 200)
    assert.equal(first.json.data.length, 2, 'limit=2 answers 2 items')
    assert.equal(typeof first.json.next_cursor, 'string', 'a first page of a longer list has a next_cursor')

    const seen: string[] = first.json.data.map((product: any) => product.id)
    const pageSizes = [first.json.data.length]
    let cursor: string | null = first.json.next_cursor
    while (cursor) {
      const page = await list(`limit=2&cursor=${encodeURIComponent(cursor)}`)
      assert.equal(page.statusCode, 200, `page after ${cursor}: ${page.body}`)
      pageSizes.push(page.json.data.length)
      seen.push(...page.json.data.map((product: any) => product.id))
      cursor = page.json.next_cursor
      assert.ok(pageSizes.length <= 5, 'the pages end')
    }
    assert.deepEqual(pageSizes, [2, 2, 1])
    assert.deepEqual(seen, created.map((product) => product.id).reverse(), 'all five, once each, newest first')
  })

  test('when the items fit one page exactly, next_cursor is null', async () => {
    const page = await list('limit=5')
    assert.equal(page.json.data.length, 5)
    assert.equal(page.json.next_cursor, null)
  })

  test('limit defaults to 20', async () => {
    const page = await list('')
    assert.equal(page.statusCode, 200)
    assert.equal(page.json.data.length, 5)
    assert.equal(page.json.next_cursor, null)
  })

  for (const limit of ['0', '101', '-1', 'ten']) {
    test(`limit=${limit} is 400 validation_failed at /query/limit`, async () => {
      assertInvalidField(await list(`limit=${limit}`), '/query/limit', `limit=${limit}`)
    })
  }

  test('a cursor this API did not issue is 400 validation_failed at /query/cursor', async () => {
    for (const cursor of ['garbage', Buffer.from('v2:prod_X').toString('base64url'), Buffer.from('v1:; drop table products').toString('base64url')]) {
      assertInvalidField(await list(`cursor=${encodeURIComponent(cursor)}`), '/query/cursor', `cursor ${cursor}`)
    }
  })

  test('the plan list pages the same way', async () => {
    const product = created[0]
    const plans = []
    for (let i = 0; i < 3; i++) plans.push(await createPlan(t.app, shop.auth, product.id, { name: `Plan ${i}` }))
    const first = await call(t.app, { method: 'GET', url: `/api/v1/admin/plans?limit=2&product_id=${product.id}`, headers: shop.auth })
    const second = await call(t.app, { method: 'GET', url: `/api/v1/admin/plans?limit=2&product_id=${product.id}&cursor=${first.json.next_cursor}`, headers: shop.auth })
    assert.deepEqual([...first.json.data, ...second.json.data].map((plan: any) => plan.id), plans.map((plan) => plan.id).reverse())
    assert.equal(second.json.next_cursor, null)
  })
})
