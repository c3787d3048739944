import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../helpers/test-app.ts'
import { checkoutBody, postCheckout } from '../api/subscriptions/fixtures.ts'

// Identifiers other systems generate at random. Each of these happens to hold a 13-19 digit run
// (hyphens count as separators) with a Luhn-valid window, as about 0.7% of random UUIDs and 1.5%
// of random 64-hex tokens do. None is a card number; refusing them fails real clients at random.
const UUID_V4 = '8add71c2-17f9-4b73-9984-81006846f5ff'
// BigCommerce stored-instrument tokens are 64 characters (docs/platform-api.md, stored_instruments[].token).
const VAULT_TOKEN = '880093f8f2113c15413283997736987dd8acbf323f3c9f8e1cec99e8ea1e4052'

describe('the card guard does not refuse generated identifiers', () => {
  let t: TestApp
  let shop: StoreWithKey
  let plan: any

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth)
    plan = await createPlan(t.app, shop.auth, product.id)
  })
  after(() => t.close())

  test('a proxy-made UUID X-Request-Id (Envoy, Heroku) does not fail the request, health checks included', async () => {
    for (const url of ['/healthz', '/readyz', `/api/v1/storefront/store?store_hash=${shop.store.store_hash}`]) {
      const response = await call(t.app, { method: 'GET', url, headers: { 'x-request-id': UUID_V4 } })
      assert.equal(response.statusCode, 200, `${url}: ${response.body}`)
    }
  })

  test('a UUID v4 Idempotency-Key is accepted', async () => {
    const response = await postCheckout(t.app, { ...shop.auth, 'idempotency-key': UUID_V4 } as any, checkoutBody(plan.id))
    assert.equal(response.statusCode, 201, response.body)
  })

  test('a 64-character vault instrument token is accepted as payment_instrument_id', async () => {
    const response = await postCheckout(t.app, shop.auth, checkoutBody(plan.id, { payment_instrument_id: VAULT_TOKEN }))
    assert.equal(response.statusCode, 201, response.body)
  })
})
