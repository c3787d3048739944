import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../helpers/test-app.ts'
import { assertProblem } from '../helpers/problem.ts'

describe('bad input gets its 4xx problem+json and changes nothing', () => {
  let t: TestApp
  let shop: StoreWithKey

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
  })
  after(() => t.close())

  /** Every refusal below must leave the number of products as it found it (not as an earlier test left it). */
  const productCount = async () => Number((await t.db.selectFrom('products').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n)

  const post = (payload: string, headers: Record<string, string> = {}) =>
    call(t.app, {
      method: 'POST',
      url: '/api/v1/admin/products',
      headers: { ...shop.auth, 'content-type': 'application/json', ...headers },
      payload,
    })

  test('malformed JSON is 400 invalid_json', async () => {
    const before = await productCount()
    assertProblem(await post('{"name": "x",'), 400, 'invalid_json')
    assert.equal(await productCount(), before)
  })

  test('an empty JSON body is 400 invalid_json', async () => {
    assertProblem(await post(''), 400, 'invalid_json')
  })

  test('wrong types are 400 validation_failed with a pointer to each field', async () => {
    const before = await productCount()
    const response = await post(JSON.stringify({ platform_product_id: true, name: 42 }))
    assertProblem(response, 400, 'validation_failed', { path: '/body/name' })
    assert.equal(await productCount(), before)
  })

  test('strings are never coerced into numbers in a body', async () => {
    const product = await call(t.app, { method: 'POST', url: '/api/v1/admin/products', headers: shop.auth, payload: { platform_product_id: 'coerce', name: 'C' } })
    const response = await call(t.app, {
      method: 'POST',
      url: '/api/v1/admin/plans',
      headers: shop.auth,
      payload: { product_id: product.json.id, name: 'M', amount: '100', currency: 'USD', interval: 'month' },
    })
    assertProblem(response, 400, 'validation_failed')
    assert.deepEqual(response.json.errors.map((e: any) => e.path), ['/body/amount'])
  })

  test('unknown body fields are refused, not dropped', async () => {
    const before = await productCount()
    const response = await post(JSON.stringify({ platform_product_id: '1', name: 'x', colour: 'red' }))
    assertProblem(response, 400, 'validation_failed')
    assert.deepEqual(response.json.errors, [{ path: '/body/colour', message: 'is not a known field' }])
    assert.equal(await productCount(), before)
  })

  test('a body over 1 MiB is 413 payload_too_large', async () => {
    const before = await productCount()
    const response = await post(JSON.stringify({ platform_product_id: '1', name: 'x', description: 'a'.repeat(1024 * 1024 + 10) }))
    assertProblem(response, 413, 'payload_too_large')
    assert.equal(await productCount(), before)
  })

  test('a non-JSON content type is 415 unsupported_media_type', async () => {
    const before = await productCount()
    for (const contentType of ['text/plain', 'application/x-www-form-urlencoded', 'application/xml']) {
      const response = await post('name=x', { 'content-type': contentType })
      assertProblem(response, 415, 'unsupported_media_type')
    }
    assert.equal(await productCount(), before)
  })

  test('an unknown route is 404 not_found as problem+json', async () => {
    assertProblem(await call(t.app, { method: 'GET', url: '/api/v1/nothing-here' }), 404, 'not_found')
  })

  test('a missing admin key is 401 with WWW-Authenticate: Bearer, before the body is even looked at', async () => {
    const response = await call(t.app, { method: 'POST', url: '/api/v1/admin/products', headers: { 'content-type': 'application/json' }, payload: '{bad json' })
    assertProblem(response, 401, 'unauthenticated')
    assert.equal(response.headers['www-authenticate'], 'Bearer')
  })
})

describe('request ids and versions', () => {
  let t: TestApp

  before(async () => {
    t = await buildTestApp()
  })
  after(() => t.close())

  test('every response carries a generated X-Request-Id, different per request', async () => {
    const first = await call(t.app, { method: 'GET', url: '/healthz' })
    const second = await call(t.app, { method: 'GET', url: '/api/v1/plans?store_hash=x' })
    assert.match(String(first.headers['x-request-id']), /^req_[a-p]{32}$/)
    assert.notEqual(first.headers['x-request-id'], second.headers['x-request-id'])
  })

  test('a safe incoming X-Request-Id is echoed, and an unsafe one replaced', async () => {
    const echoed = await call(t.app, { method: 'GET', url: '/api/v1/nothing', headers: { 'x-request-id': 'trace-42.a_b' } })
    assert.equal(echoed.headers['x-request-id'], 'trace-42.a_b')
    assert.equal(echoed.json.request_id, 'trace-42.a_b')
    for (const unsafe of ['has space', 'x'.repeat(129), 'semi;colon']) {
      const replaced = await call(t.app, { method: 'GET', url: '/healthz', headers: { 'x-request-id': unsafe } })
      assert.notEqual(replaced.headers['x-request-id'], unsafe)
      assert.match(String(replaced.headers['x-request-id']), /^req_/)
    }
  })

  test('responses say API-Version: 1, errors included', async () => {
    assert.equal((await call(t.app, { method: 'GET', url: '/api/v1/plans?store_hash=x' })).headers['api-version'], '1')
    assert.equal((await call(t.app, { method: 'GET', url: '/api/v1/nope' })).headers['api-version'], '1')
  })

  test('Accept-Version 1 or v1 is served; any other value is 406 unsupported_version', async () => {
    for (const version of ['1', 'v1']) {
      const ok = await call(t.app, { method: 'GET', url: '/api/v1/plans?store_hash=x', headers: { 'accept-version': version } })
      assert.equal(ok.statusCode, 200, `Accept-Version ${version}`)
    }
    for (const version of ['2', 'v2', 'latest', '']) {
      const refused = await call(t.app, { method: 'GET', url: '/api/v1/plans?store_hash=x', headers: { 'accept-version': version } })
      assertProblem(refused, 406, 'unsupported_version')
    }
  })

  test('a 406 changes no data', async () => {
    const shop = await createStoreWithKey(t.db)
    const refused = await call(t.app, {
      method: 'POST',
      url: '/api/v1/admin/products',
      headers: { ...shop.auth, 'accept-version': '2' },
      payload: { platform_product_id: 'v', name: 'V' },
    })
    assertProblem(refused, 406, 'unsupported_version')
    const count = await t.db.selectFrom('products').select((eb) => eb.fn.countAll().as('n')).where('store_id', '=', shop.store.id).executeTakeFirstOrThrow()
    assert.equal(Number(count.n), 0)
  })
})
