import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { buildTestApp, call, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
before(async () => {
  t = await buildTestApp()
})
after(() => t.close())

test('a refused Accept-Version holding a card number is not echoed back (docs/contract.md, Card data)', async () => {
  for (const value of ['4111111111111111', '4111 1111 1111 1111']) {
    const response = await call(t.app, { method: 'GET', url: '/api/v1/storefront/plans?store_hash=s&platform_product_id=1', headers: { 'accept-version': value } })
    assert.equal(response.statusCode >= 400, true)
    assert.ok(!response.body.replace(/\D/g, '').includes('4111111111111111'), `echoed: ${response.body}`)
  }
})

test('OPTIONS without preflight headers answers problem+json like every other failure', async () => {
  const response = await call(t.app, { method: 'OPTIONS', url: '/api/v1/admin/products' })
  assert.match(String(response.headers['content-type']), /^application\/problem\+json/, `${response.statusCode} ${response.headers['content-type']} ${response.body}`)
})
