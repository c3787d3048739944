import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { buildTestApp, call, type TestApp } from '../helpers/test-app.ts'

const API_HEADERS = {
  'strict-transport-security': /^max-age=\d+/,
  'x-content-type-options': /^nosniff$/,
  'x-frame-options': /^SAMEORIGIN$/,
  // Widgets on other origins read public answers.
  'cross-origin-resource-policy': /^cross-origin$/,
  'referrer-policy': /^no-referrer$/,
}

describe('security headers', () => {
  let t: TestApp

  before(async () => {
    t = await buildTestApp()
  })
  after(() => t.close())

  test('every API answer carries them, errors included, with its X-Request-Id', async () => {
    for (const url of ['/api/v1/storefront/plans?store_hash=s&platform_product_id=1', '/api/v1/storefront/plans', '/api/v1/nothing', '/api/v1/admin/plans', '/healthz']) {
      const response = await call(t.app, { method: 'GET', url })
      for (const [name, value] of Object.entries(API_HEADERS)) assert.match(String(response.headers[name]), value, `${url}: ${name}`)
      assert.match(String(response.headers['x-request-id']), /^req_/, url)
    }
  })

  test('allowed answers say nothing about the rate limit (only a 429 does, with Retry-After)', async () => {
    const response = await call(t.app, { method: 'GET', url: '/api/v1/plans?store_hash=s' })
    assert.equal(response.statusCode, 200)
    for (const name of Object.keys(response.headers)) assert.ok(!name.startsWith('x-ratelimit-'), name)
  })

  test('the HTML reference page at /docs also gets the headers only pages need', async () => {
    const page = await call(t.app, { method: 'GET', url: '/docs/' })
    assert.equal(page.statusCode, 200)
    for (const [name, value] of Object.entries(API_HEADERS)) assert.match(String(page.headers[name]), value, name)
    assert.equal(page.headers['x-dns-prefetch-control'], 'off')
    assert.equal(page.headers['cross-origin-opener-policy'], 'same-origin')
    assert.match(String(page.headers['content-security-policy']), /default-src/)
  })
})
