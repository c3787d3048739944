import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'

// Luhn-valid test numbers of the major schemes; none is a real card.
const VISA = '4111111111111111'
const SPACED_AMEX = '3782 822463 10005'
const DASHED_MASTERCARD = '5555-5555-5555-4444'

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

  test('digit runs that are not card numbers pass: wrong checksum, too short, too long', async () => {
    for (const [i, text] of ['4111111111111112', '411111111111', '41111111111111111111111', 'order 12345'].entries()) {
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
