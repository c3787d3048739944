import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { buildTestApp, call, type TestApp } from '../../helpers/test-app.ts'

describe('rate limits', () => {
  let t: TestApp

  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' } })
  })
  after(() => t.close())

  test('past the limit a client gets 429 rate_limited with Retry-After, as problem+json', async () => {
    const url = '/api/v1/plans?store_hash=busy'
    const answers = []
    for (let i = 0; i < 4; i++) answers.push(await call(t.app, { method: 'GET', url, remoteAddress: '10.1.1.1' }))
    assert.deepEqual(answers.map((a) => a.statusCode), [200, 200, 200, 429])
    const limited = answers[3]!
    assert.equal(limited.json.code, 'rate_limited')
    assert.match(String(limited.headers['content-type']), /^application\/problem\+json/)
    const retryAfter = Number(limited.headers['retry-after'])
    assert.ok(retryAfter > 0 && retryAfter <= 60, `Retry-After is ${limited.headers['retry-after']}`)
  })

  test('limits are per client address', async () => {
    const response = await call(t.app, { method: 'GET', url: '/api/v1/plans?store_hash=busy', remoteAddress: '10.2.2.2' })
    assert.equal(response.statusCode, 200)
  })
})
