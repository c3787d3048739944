import assert from 'node:assert/strict'
import { after, before, test } from 'node:test'
import { assertProblem } from '../helpers/problem.ts'
import { buildTestApp, call, type TestApp } from '../helpers/test-app.ts'

/**
 * A path that is no route counts against the client's limit like any route (docs/contract.md, Bodies
 * and rate limits), and past it the body is not even read: unknown paths are no way around the limit.
 */
let t: TestApp
before(async () => {
  t = await buildTestApp({ env: { RATE_LIMIT_MAX: '3' } })
})
after(() => t.close())

test('requests for unknown paths are limited per client, before their bodies are read; health stays open', async () => {
  const statuses: number[] = []
  for (let i = 0; i < 5; i++) statuses.push((await call(t.app, { method: 'GET', url: '/nope', remoteAddress: '203.0.113.9' })).statusCode)
  assert.deepEqual(statuses, [404, 404, 404, 429, 429])
  // Past the limit a body that would be refused if it were read (a card number) is answered 429 unread.
  const body = await call(t.app, { method: 'POST', url: '/api/v1/nope', remoteAddress: '203.0.113.9', payload: { number: '4111111111111111' } })
  assertProblem(body, 429, 'rate_limited')
  assert.equal((await call(t.app, { method: 'GET', url: '/nope', remoteAddress: '203.0.113.10' })).statusCode, 404, 'another client has its own limit')
  assert.equal((await call(t.app, { method: 'GET', url: '/healthz', remoteAddress: '203.0.113.9' })).statusCode, 200)
})
