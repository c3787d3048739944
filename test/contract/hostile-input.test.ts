import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../helpers/catalog.ts'
import { assertInvalidField, assertProblem } from '../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../helpers/test-app.ts'

/**
 * Input nobody sends by accident gets a 4xx problem+json, never a 500 (docs/contract.md, Errors, Ids,
 * Lists and paging, Bodies and rate limits). Each rule is enforced in one place for every route.
 */
describe('hostile input', () => {
  let t: TestApp
  let shop: StoreWithKey
  let product: any
  let plan: any

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    product = await createProduct(t.app, shop.auth, { platform_product_id: 'hostile' })
    plan = await createPlan(t.app, shop.auth, product.id, { name: 'Monthly' })
  })
  after(() => t.close())

  const json = (method: 'POST' | 'PATCH', url: string, payload: string) =>
    call(t.app, { method, url, headers: { ...shop.auth, 'content-type': 'application/json' }, payload })

  describe('a NUL character in any string is 400 validation_failed naming where', () => {
    test('in a body field (PATCH a plan): nothing is changed', async () => {
      const response = await json('PATCH', `/api/v1/admin/plans/${plan.id}`, JSON.stringify({ name: 'Mon\u0000thly' }))
      assertInvalidField(response, '/body/name')
      const read = await call(t.app, { method: 'GET', url: `/api/v1/admin/plans/${plan.id}`, headers: shop.auth })
      assert.equal(read.json.name, 'Monthly')
    })

    test('in a checkout, at the top and nested: nothing is stored', async () => {
      const checkout = (body: Record<string, unknown>) =>
        json('POST', '/api/v1/admin/checkouts', JSON.stringify({
          platform_order_id: 'order-nul',
          email: 'nul@example.com',
          payment_instrument_id: 'pi_nul',
          items: [{ plan_id: plan.id, quantity: 1 }],
          ...body,
        }))
      assertInvalidField(await checkout({ platform_order_id: 'order\u0000nul' }), '/body/platform_order_id', 'platform_order_id')
      const address = { name: 'Ada', line1: '12 Analytical\u0000 Way', city: 'Portland', postal_code: '97201', country: 'US' }
      assertInvalidField(await checkout({ shipping_address: address }), '/body/shipping_address/line1', 'a nested field')
      const stored = await t.db.selectFrom('subscriptions').select('id').where('store_id', '=', shop.store.id).execute()
      assert.deepEqual(stored, [])
    })

    test('in a query parameter', async () => {
      assertInvalidField(await call(t.app, { method: 'GET', url: '/api/v1/storefront/store?store_hash=%00' }), '/query/store_hash')
      assertInvalidField(
        await call(t.app, { method: 'GET', url: '/api/v1/admin/subscriptions?email=a%00@example.com', headers: shop.auth }),
        '/query/email',
      )
    })

    test('in a header (Idempotency-Key): nothing is stored', async () => {
      const response = await call(t.app, {
        method: 'POST',
        url: '/api/v1/admin/products',
        headers: { ...shop.auth, 'idempotency-key': 'key\u0000nul' },
        payload: { platform_product_id: 'nul-key', name: 'Nul key' },
      })
      assertInvalidField(response, '/header/idempotency-key')
      const stored = await t.db.selectFrom('products').select('id').where('platform_product_id', '=', 'nul-key').execute()
      assert.deepEqual(stored, [])
    })

    test('a lone surrogate, valid JSON but no character, is refused the same way', async () => {
      // JSON.stringify writes the lone surrogate as the escape \ud800, which JSON.parse reads back as one.
      const checkout = JSON.stringify({
        platform_order_id: 'order-surrogate',
        email: 'surrogate@example.com',
        payment_instrument_id: 'pi_surrogate',
        items: [{ plan_id: plan.id, quantity: 1 }],
        shipping_address: { name: 'Ada', line1: 'x', city: 'x', postal_code: 'x', country: 'US', phone: 'x\ud800y' },
      })
      const response = await json('POST', '/api/v1/admin/checkouts', checkout)
      assertInvalidField(response, '/body/shipping_address/phone')
      assert.match(response.json.errors[0].message, /well-formed Unicode/)
    })

    test('in a path parameter', async () => {
      assertInvalidField(
        await call(t.app, { method: 'GET', url: `/api/v1/storefront/products/11%002/plans?store_hash=${shop.store.store_hash}` }),
        '/path/platform_product_id',
      )
      assertInvalidField(await call(t.app, { method: 'GET', url: '/api/v1/admin/plans/%00', headers: shop.auth }), '/path/id')
    })
  })

  describe('a JSON body nested deeper than 64 levels is 400 invalid_json', () => {
    const url = '/api/v1/admin/products'

    test('100,000 nested arrays or objects', async () => {
      const levels = 100_000
      assertProblem(await json('POST', url, '['.repeat(levels) + ']'.repeat(levels)), 400, 'invalid_json', { what: 'arrays' })
      assertProblem(await json('POST', url, '{"a":'.repeat(levels) + '1' + '}'.repeat(levels)), 400, 'invalid_json', { what: 'objects' })
      assertProblem(await json('POST', url, '{"name":' + '[{"a":'.repeat(levels / 2) + '1' + '}]'.repeat(levels / 2) + '}'), 400, 'invalid_json', { what: 'both' })
    })

    test('64 levels parse; 65 do not', async () => {
      // One object and 63 arrays: 64 levels, so the body parses and only the schema refuses it.
      const deepest = (arrays: number) => `{"platform_product_id": "deep", "name": ${'['.repeat(arrays)}${']'.repeat(arrays)}}`
      assertInvalidField(await json('POST', url, deepest(63)), '/body/name', '64 levels')
      assertProblem(await json('POST', url, deepest(64)), 400, 'invalid_json', { what: '65 levels' })
    })

    test('brackets inside strings, escaped quotes included, are text, not depth', async () => {
      const description = '\\"'.repeat(10) + '[{'.repeat(2000)
      const response = await json('POST', url, `{"platform_product_id": "brackets", "name": "B", "description": "${description}"}`)
      assert.equal(response.statusCode, 201, response.body)
      assert.equal(response.json.description, '"'.repeat(10) + '[{'.repeat(2000))
      // A string ending in an escaped backslash ends there: the nesting after it still counts.
      const afterBackslash = `{"platform_product_id": "bs", "name": "ends in \\\\", "x": ${'['.repeat(70)}${']'.repeat(70)}}`
      assertProblem(await json('POST', url, afterBackslash), 400, 'invalid_json', { what: 'nesting after an escaped backslash' })
    })

    test('prototype poisoning is still refused', async () => {
      for (const payload of ['{"__proto__": {"x": 1}, "platform_product_id": "p", "name": "x"}', '{"constructor": {"prototype": {"x": 1}}, "platform_product_id": "p", "name": "x"}']) {
        assertProblem(await json('POST', url, payload), 400, 'invalid_json', { what: payload })
      }
    })
  })

  describe('a number outside its range is 400 validation_failed, never a 500', () => {
    test('a cursor this API did not issue is 400 even where the list is empty (an unknown store)', async () => {
      for (const url of ['/api/v1/plans?store_hash=nobody&cursor=caller', '/api/v1/products?store_hash=nobody&cursor=caller', '/api/v1/storefront/plans?store_hash=nobody&platform_product_id=1&cursor=caller']) {
        assertInvalidField(await call(t.app, { method: 'GET', url }), '/query/cursor', url)
      }
    })

    test('limit=1e309 (Infinity), -1e309, 1e20, -0 and 1e-400 on every kind of list', async () => {
      const lists = [
        { url: '/api/v1/admin/plans', headers: shop.auth },
        { url: '/api/v1/admin/products', headers: shop.auth },
        { url: '/api/v1/admin/subscriptions', headers: shop.auth },
        { url: '/api/v1/admin/events', headers: shop.auth },
        { url: '/api/v1/admin/charges', headers: shop.auth },
        { url: '/api/v1/admin/webhook-subscriptions', headers: shop.auth },
        { url: `/api/v1/plans?store_hash=${shop.store.store_hash}`, headers: {} },
        { url: `/api/v1/products?store_hash=${shop.store.store_hash}`, headers: {} },
      ]
      for (const { url, headers } of lists) {
        for (const limit of ['1e309', '-1e309', '1e20', '-0', '1e-400']) {
          const response = await call(t.app, { method: 'GET', url: `${url}${url.includes('?') ? '&' : '?'}limit=${limit}`, headers })
          assertInvalidField(response, '/query/limit', `${url} limit=${limit}`)
        }
      }
    })
  })

  describe('refusals of the framework itself are problem+json', () => {
    test('a malformed %-escape in the path is 400 validation_failed', async () => {
      for (const url of ['/api/v1/admin/plans/%E0%A4%A', '/api/v1/plans/%E0%A4%A', '/api/v1/admin/subscriptions/%zz']) {
        const response = await call(t.app, { method: 'GET', url, headers: shop.auth })
        assertProblem(response, 400, 'validation_failed', { what: url, path: '/path' })
        assert.equal(response.headers['api-version'], '1')
        assert.equal(response.headers['x-content-type-options'], 'nosniff')
      }
    })

    test('an over-long path parameter is 404 not_found (no id of this API is that long)', async () => {
      for (const url of [`/api/v1/admin/plans/plan_${'A'.repeat(200)}`, `/api/v1/plans/${'x'.repeat(101)}`]) {
        const response = await call(t.app, { method: 'GET', url, headers: shop.auth })
        assertProblem(response, 404, 'not_found', { what: url })
        assert.equal(response.headers['api-version'], '1')
      }
    })

    test('a body that does not parse and a body of another type', async () => {
      assertProblem(await json('POST', '/api/v1/admin/products', '{"name": '), 400, 'invalid_json')
      const xml = await call(t.app, { method: 'POST', url: '/api/v1/admin/products', headers: { ...shop.auth, 'content-type': 'application/xml' }, payload: '<a/>' })
      assertProblem(xml, 415, 'unsupported_media_type')
    })
  })

  describe('ids are opaque: a path id that is not ours, well-formed or not, is 404 not_found', () => {
    test('malformed ids, foreign prefixes and blanks', async () => {
      const cases = [
        { method: 'GET', url: '/api/v1/plans/plan_tpntfcojyknp' },
        { method: 'GET', url: `/api/v1/plans/${product.id}` },
        { method: 'GET', url: '/api/v1/products/not-an-id' },
        { method: 'GET', url: '/api/v1/admin/plans/x' },
        { method: 'GET', url: '/api/v1/admin/subscriptions/%20' },
        { method: 'GET', url: '/api/v1/admin/events/sub_01JD2Y5T1P8Q0W9KZ3M6N4R7BC' },
        { method: 'POST', url: '/api/v1/admin/subscriptions/x/pause', payload: {} },
        { method: 'PATCH', url: '/api/v1/admin/plans/x', payload: { name: 'Renamed' } },
        { method: 'DELETE', url: '/api/v1/admin/webhook-subscriptions/wh_' },
        { method: 'GET', url: `/api/v1/storefront/products/not%20an%20id/plans?store_hash=${shop.store.store_hash}` },
      ] as const
      for (const { method, url, ...rest } of cases) {
        const response = await call(t.app, { method, url, headers: shop.auth, ...rest })
        assertProblem(response, 404, 'not_found', { what: `${method} ${url}` })
        assert.equal(response.json.errors, undefined, `${method} ${url} names no field`)
      }
    })

    test('an id in a body keeps its form: a malformed one is 400 at its field', async () => {
      const response = await call(t.app, {
        method: 'POST',
        url: '/api/v1/admin/plans',
        headers: shop.auth,
        payload: { product_id: 'x', name: 'M', amount: 100, currency: 'USD', interval: 'month' },
      })
      assertInvalidField(response, '/body/product_id')
    })

    test('without credentials an admin path is still 401 first', async () => {
      assertProblem(await call(t.app, { method: 'GET', url: '/api/v1/admin/plans/x' }), 401, 'unauthenticated')
    })
  })
})
