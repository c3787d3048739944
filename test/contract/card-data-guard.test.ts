import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../helpers/test-app.ts'

// Luhn-valid test numbers of the major schemes; none is a real card.
const VISA = '4111111111111111'
const SPACED_AMEX = '3782 822463 10005'
const DASHED_MASTERCARD = '5555-5555-5555-4444'
const FULL_WIDTH_VISA = '４１１１１１１１１１１１１１１１'

describe('no field accepts a card number', () => {
  let t: TestApp
  let shop: StoreWithKey

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
  })
  after(() => t.close())

  const createProduct = (payload: Record<string, unknown>) =>
    call(t.app, { method: 'POST', url: '/api/v1/admin/products', headers: shop.auth, payload })

  test('a card number in any body string is 400 card_data_rejected naming where, never what', async () => {
    for (const [field, value] of [['name', VISA], ['description', `pay with ${SPACED_AMEX} please`], ['description', DASHED_MASTERCARD]] as const) {
      const response = await createProduct({ platform_product_id: `p-${field}`, name: 'n', [field]: value })
      assert.equal(response.statusCode, 400)
      assert.equal(response.json.code, 'card_data_rejected')
      assert.deepEqual(response.json.errors, [{ path: `/body/${field}`, message: 'looks like a card number' }])
      const digits = value.replace(/\D/g, '')
      assert.ok(!response.body.replace(/\D/g, ' ').includes(digits), 'the number is not echoed back')
    }
  })

  test('nested values are checked too', async () => {
    const product = await createProduct({ platform_product_id: 'nested', name: 'n' })
    const response = await call(t.app, {
      method: 'PATCH',
      url: `/api/v1/admin/products/${product.json.id}`,
      headers: shop.auth,
      payload: { description: 'ok', name: `card ${VISA}` },
    })
    assert.equal(response.json.code, 'card_data_rejected')
    assert.equal(response.json.errors[0].path, '/body/name')
  })

  test('query strings are checked', async () => {
    const response = await call(t.app, { method: 'GET', url: `/api/v1/storefront/plans?store_hash=s&platform_product_id=${VISA}` })
    assert.equal(response.statusCode, 400)
    assert.equal(response.json.code, 'card_data_rejected')
    assert.equal(response.json.errors[0].path, '/query/platform_product_id')
  })

  test('percent-encoded digits and path segments are checked too', async () => {
    const encoded = [...VISA].map((digit) => `%3${digit}`).join('')
    const query = await call(t.app, { method: 'GET', url: `/api/v1/storefront/plans?store_hash=s&platform_product_id=${encoded}` })
    assert.equal(query.json.code, 'card_data_rejected')
    assert.equal(query.json.errors[0].path, '/query/platform_product_id')
    const path = await call(t.app, { method: 'GET', url: `/api/v1/storefront/products/${VISA}/plans?store_hash=s` })
    assert.equal(path.json.code, 'card_data_rejected')
    assert.equal(path.json.errors[0].path, '/path/platform_product_id')
  })

  test('digit runs that are not card numbers pass: no Luhn-valid window, too short', async () => {
    const notCards = ['4111111111111113', '411111111111', '1'.repeat(25), 'order 12345', 'plan_01JD2Y5T1P8Q0W9KZ3M6N4R7BC', '2026-11-22T05:00:00.000Z', '2026-11-22 05:00']
    for (const [i, text] of notCards.entries()) {
      const response = await createProduct({ platform_product_id: `ok-${i}`, name: text })
      assert.equal(response.statusCode, 201, `${text} was refused: ${response.body}`)
    }
  })

  test('a refused card number is never stored and never logged', async () => {
    const before = t.logs.length
    await createProduct({ platform_product_id: 'logged', name: VISA })
    await call(t.app, { method: 'GET', url: `/api/v1/storefront/plans?store_hash=s&platform_product_id=${VISA}` })
    const logged = t.logs.slice(before).join('\n')
    assert.ok(logged.length > 0, 'the requests were logged at all')
    assert.ok(!logged.includes(VISA), 'the card number reached the logs')
    const stored = await t.db.selectFrom('products').select('name').execute()
    assert.ok(!stored.some((row) => row.name === VISA), 'the refused product was stored')
  })
})

describe('card numbers however they are written (docs/contract.md, Card data)', () => {
  let t: TestApp
  let shop: StoreWithKey

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
  })
  after(() => t.close())

  test('a number followed by its CVV, its expiry or both, in full-width digits or grouped by other separators is refused and not stored', async () => {
    // A number glued to other digits, or after other digit groups of its run, is an ordinary long number,
    // not a card as written (contract section 13: refusing every window of a run refused two in three
    // random order numbers).
    const written = [
      '4111 1111 1111 1111 123',
      `${VISA} 123`,
      `order 000, ${VISA} 123 12/27`,
      '4111.1111.1111.1111',
      '4111_1111_1111_1111',
      '4111/1111/1111/1111',
      '4111  1111  1111  1111',
      '4111\u00a01111\u00a01111\u00a01111',
      '4111\u20091111\u20091111\u20091111',
      FULL_WIDTH_VISA,
    ]
    for (const [i, text] of written.entries()) {
      const response = await call(t.app, { method: 'POST', url: '/api/v1/admin/products', headers: shop.auth, payload: { platform_product_id: `w-${i}`, name: 'n', description: `card ${text}` } })
      assert.equal(response.statusCode, 400, `${JSON.stringify(text)} was accepted: ${response.body}`)
      assert.equal(response.json.code, 'card_data_rejected')
      assert.deepEqual(response.json.errors, [{ path: '/body/description', message: 'looks like a card number' }])
    }
    const stored = await t.db.selectFrom('products').select('platform_product_id').where('store_id', '=', shop.store.id).execute()
    assert.deepEqual(stored, [], 'nothing was stored')
  })

  test('a card number in a key is refused naming the object that holds it, never the key', async () => {
    const body = await call(t.app, { method: 'POST', url: '/api/v1/admin/products', headers: shop.auth, payload: { platform_product_id: 'k', name: 'n', [VISA]: 1 } })
    assert.equal(body.statusCode, 400)
    assert.deepEqual(body.json.errors, [{ path: '/body', message: 'has a key that looks like a card number' }])
    const query = await call(t.app, { method: 'GET', url: `/api/v1/storefront/plans?store_hash=s&platform_product_id=1&${VISA}=1` })
    assert.equal(query.json.code, 'card_data_rejected')
    assert.deepEqual(query.json.errors, [{ path: '/query', message: 'has a key that looks like a card number' }])
    for (const response of [body, query]) assert.ok(!response.body.includes(VISA.slice(0, 8)), `echoed: ${response.body}`)
  })

  test('zero-padded ids are not card numbers', async () => {
    const response = await call(t.app, { method: 'POST', url: '/api/v1/admin/products', headers: shop.auth, payload: { platform_product_id: '00000000000000000000', name: 'store_00000000000000000000000000' } })
    assert.equal(response.statusCode, 201, response.body)
  })

  test('full-width digits in the query, raw or percent-encoded, are refused', async () => {
    for (const value of [encodeURIComponent(FULL_WIDTH_VISA), encodeURIComponent(`${VISA} 123`)]) {
      const response = await call(t.app, { method: 'GET', url: `/api/v1/storefront/plans?store_hash=s&platform_product_id=${value}` })
      assert.equal(response.json.code, 'card_data_rejected', value)
      assert.equal(response.json.errors[0].path, '/query/platform_product_id')
    }
  })
})

describe('headers the service echoes or stores are held to the same rule', () => {
  let t: TestApp
  let shop: StoreWithKey

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
  })
  after(() => t.close())

  const digitsIn = (text: string) => text.normalize('NFKC').replace(/\D/g, '')

  test('an X-Request-Id holding a card number is 400 naming the header; a request id is made instead, and the value is never echoed or logged', async () => {
    for (const value of [VISA, '4111.1111.1111.1111', '4111-1111-1111-1111-123']) {
      const before = t.logs.length
      for (const url of ['/api/v1/storefront/plans?store_hash=s&platform_product_id=112', '/api/v1/nowhere', '/healthz']) {
        const response = await call(t.app, { method: 'GET', url, headers: { 'x-request-id': value } })
        assert.equal(response.statusCode, 400, `${url}: ${response.body}`)
        assert.equal(response.json.code, 'card_data_rejected')
        assert.deepEqual(response.json.errors, [{ path: '/header/x-request-id', message: 'looks like a card number' }])
        assert.match(String(response.headers['x-request-id']), /^req_[a-p]{32}$/)
        assert.equal(response.json.request_id, response.headers['x-request-id'])
        for (const [name, header] of Object.entries(response.headers)) assert.ok(!digitsIn(String(header)).includes('41111111'), `echoed in ${name}`)
        assert.ok(!digitsIn(response.body).includes('41111111'), 'echoed in the body')
      }
      const logged = t.logs.slice(before).join('\n')
      assert.ok(logged.length > 0, 'the requests were logged at all')
      assert.ok(!logged.includes(value) && !digitsIn(logged).includes('4111111111111111'), `${value} reached the logs`)
    }
  })

  test('an Idempotency-Key holding a card number is 400 naming the header, and nothing is stored', async () => {
    const before = t.logs.length
    for (const [i, key] of [VISA, '4111 1111 1111 1111 123', FULL_WIDTH_VISA].entries()) {
      const response = await call(t.app, {
        method: 'POST',
        url: '/api/v1/admin/products',
        headers: { ...shop.auth, 'idempotency-key': key },
        payload: { platform_product_id: `idem-${i}`, name: 'n' },
      })
      assert.equal(response.statusCode, 400, response.body)
      assert.equal(response.json.code, 'card_data_rejected')
      assert.deepEqual(response.json.errors, [{ path: '/header/idempotency-key', message: 'looks like a card number' }])
      assert.ok(!digitsIn(response.body).includes('41111111'), 'echoed in the body')
    }
    const keys = await t.db.selectFrom('idempotency_keys').select(['key', 'scope']).execute()
    assert.ok(!keys.some((row) => digitsIn(row.key).includes('4111111111111111')), `stored: ${JSON.stringify(keys)}`)
    const products = await t.db.selectFrom('products').select('id').where('store_id', '=', shop.store.id).execute()
    assert.deepEqual(products, [])
    assert.ok(!digitsIn(t.logs.slice(before).join('\n')).includes('4111111111111111'), 'logged')
  })

  test('ordinary request ids and idempotency keys still work', async () => {
    const echoed = await call(t.app, { method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-2026-11-22.0001' } })
    assert.equal(echoed.headers['x-request-id'], 'trace-2026-11-22.0001')
    const created = await call(t.app, {
      method: 'POST',
      url: '/api/v1/admin/products',
      headers: { ...shop.auth, 'idempotency-key': 'order-12345-2026-11-22' },
      payload: { platform_product_id: 'idem-ok', name: 'n' },
    })
    assert.equal(created.statusCode, 201, created.body)
  })
})
