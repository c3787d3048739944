// Bodies and rate limits (docs/contract.md, Bodies and rate limits): the per-address limit, the routes it
// never applies to, and whose address a request counts against (TRUST_PROXY, IPv6 /64).
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { buildTestApp, call, type TestApp } from '../../helpers/test-app.ts'
import { assertProblem } from '../../helpers/problem.ts'

const LIST = '/api/v1/plans?store_hash=busy'

describe('rate limits', () => {
  let t: TestApp

  before(async () => {
    t = await buildTestApp({ env: { RATE_LIMIT_MAX: '3', RATE_LIMIT_WINDOW_MS: '60000' } })
  })
  after(() => t.close())

  test('past the limit a client gets 429 rate_limited with Retry-After, as problem+json', async () => {
    const answers = []
    for (let i = 0; i < 4; i++) answers.push(await call(t.app, { method: 'GET', url: LIST, remoteAddress: '10.1.1.1' }))
    assert.deepEqual(answers.map((a) => a.statusCode), [200, 200, 200, 429])
    const limited = answers[3]!
    assertProblem(limited, 429, 'rate_limited')
    const retryAfter = Number(limited.headers['retry-after'])
    assert.ok(retryAfter > 0 && retryAfter <= 60, `Retry-After is ${limited.headers['retry-after']}`)
  })

  test('BigCommerce\'s webhook callbacks count in a bucket of their own, ten times the API\'s limit', async () => {
    // The platform delivers every store's callbacks from shared addresses; they must not starve the API or be starved by it.
    const address = '10.9.9.9'
    const post = () => call(t.app, { method: 'POST', url: '/platform/webhooks', remoteAddress: address, headers: { 'content-type': 'application/json', 'x-subscription-billing-secret': 'x'.repeat(43) }, payload: '{}' })
    const answers = []
    for (let i = 0; i < 31; i++) answers.push((await post()).statusCode)
    assert.ok(answers.slice(0, 30).every((status) => status !== 429), answers.join(','))
    assert.equal(answers[30], 429)
    assert.equal((await call(t.app, { method: 'GET', url: LIST, remoteAddress: address })).statusCode, 200, 'the API bucket of the same address is untouched')
  })

  test('limits are per client address', async () => {
    const response = await call(t.app, { method: 'GET', url: LIST, remoteAddress: '10.2.2.2' })
    assert.equal(response.statusCode, 200)
  })

  test('known and unknown paths draw on one limit; only the refused answer carries the limit headers', async () => {
    const address = '10.4.4.4'
    const known = await call(t.app, { method: 'GET', url: LIST, remoteAddress: address })
    assert.equal(known.statusCode, 200)
    assert.equal(known.headers['x-ratelimit-limit'], undefined)
    assert.equal(known.headers['x-ratelimit-remaining'], undefined)
    assert.equal((await call(t.app, { method: 'GET', url: '/api/v1/no-such-route', remoteAddress: address })).statusCode, 404)
    assert.equal((await call(t.app, { method: 'GET', url: LIST, remoteAddress: address })).statusCode, 200)
    const refused = await call(t.app, { method: 'GET', url: '/api/v1/no-such-route', remoteAddress: address })
    assertProblem(refused, 429, 'rate_limited')
    const again = await call(t.app, { method: 'GET', url: LIST, remoteAddress: address })
    assertProblem(again, 429, 'rate_limited')
    assert.equal(again.headers['x-ratelimit-limit'], '3')
    assert.equal(again.headers['x-ratelimit-remaining'], '0')
    assert.ok(Number(again.headers['x-ratelimit-reset']) > 0)
    assert.equal(again.headers['retry-after'], again.headers['x-ratelimit-reset'])
    assert.match(JSON.parse(again.body).detail, /^too many requests: at most 3 per 60 s; retry in \d+ (?:seconds?|minutes?)$/)
  })

  test('/healthz, /readyz and /metrics are never limited, and do not use up the limit', async () => {
    // A load balancer polling from one address must never see the service as down because of the limit.
    const address = '10.3.3.3'
    for (let i = 0; i < 10; i++) {
      for (const url of ['/healthz', '/readyz', '/metrics']) {
        const response = await call(t.app, { method: 'GET', url, remoteAddress: address })
        assert.equal(response.statusCode, 200, `${url} (request ${i + 1}): ${response.body.slice(0, 200)}`)
      }
    }
    // The probes counted for nothing: the address still has its whole allowance for the API.
    for (let i = 0; i < 3; i++) assert.equal((await call(t.app, { method: 'GET', url: LIST, remoteAddress: address })).statusCode, 200)
    assertProblem(await call(t.app, { method: 'GET', url: LIST, remoteAddress: address }), 429, 'rate_limited')
    // And once the API is refused, the probes still answer.
    for (const url of ['/healthz', '/readyz', '/metrics']) {
      assert.equal((await call(t.app, { method: 'GET', url, remoteAddress: address })).statusCode, 200, `${url} after the limit`)
    }
  })
})

/** Sends `count` list requests from a socket address with an X-Forwarded-For header; answers their statuses. */
async function burst(t: TestApp, remoteAddress: string, forwardedFor: string | undefined, count: number): Promise<number[]> {
  const statuses = []
  for (let i = 0; i < count; i++) {
    const response = await call(t.app, {
      method: 'GET',
      url: LIST,
      remoteAddress,
      ...(forwardedFor === undefined ? {} : { headers: { 'x-forwarded-for': forwardedFor } }),
    })
    statuses.push(response.statusCode)
  }
  return statuses
}

describe('whose address a request counts against', () => {
  test('without TRUST_PROXY, X-Forwarded-For is ignored: a client cannot escape the limit by making addresses up', async () => {
    const t = await buildTestApp({ env: { RATE_LIMIT_MAX: '2' } })
    try {
      assert.deepEqual(await burst(t, '10.4.4.4', '198.51.100.1', 2), [200, 200])
      assert.deepEqual(await burst(t, '10.4.4.4', '198.51.100.2', 1), [429], 'another forwarded address, same socket: same client')
      assert.deepEqual(await burst(t, '10.4.4.4', undefined, 1), [429])
    } finally {
      await t.close()
    }
  })

  test('with TRUST_PROXY=1, clients behind the same proxy are limited separately, by their forwarded address', async () => {
    const t = await buildTestApp({ env: { RATE_LIMIT_MAX: '2', TRUST_PROXY: '1' } })
    try {
      const proxy = '10.5.5.5'
      assert.deepEqual(await burst(t, proxy, '198.51.100.1', 3), [200, 200, 429])
      assert.deepEqual(await burst(t, proxy, '198.51.100.2', 3), [200, 200, 429], 'the second client has its own allowance')
      // Only the hop the proxy added counts: an address the client wrote itself in front is not believed.
      assert.deepEqual(await burst(t, proxy, '203.0.113.9, 198.51.100.1', 1), [429])
    } finally {
      await t.close()
    }
  })

  test('with TRUST_PROXY as a list, only those proxies are believed', async () => {
    const t = await buildTestApp({ env: { RATE_LIMIT_MAX: '2', TRUST_PROXY: '10.0.0.0/8' } })
    try {
      assert.deepEqual(await burst(t, '10.6.6.6', '198.51.100.1', 2), [200, 200])
      assert.deepEqual(await burst(t, '10.6.6.6', '198.51.100.2', 2), [200, 200], 'a trusted proxy forwards another client')
      assert.deepEqual(await burst(t, '10.8.8.8', '198.51.100.1', 1), [429], 'the first client through another trusted proxy is still the first client')
      // A socket outside the list is the client itself, whatever it claims.
      assert.deepEqual(await burst(t, '192.0.2.50', '198.51.100.3', 2), [200, 200])
      assert.deepEqual(await burst(t, '192.0.2.50', '198.51.100.4', 1), [429])
    } finally {
      await t.close()
    }
  })

  test('IPv6 clients count per /64: addresses within one /64 share a limit, another /64 has its own', async () => {
    const t = await buildTestApp({ env: { RATE_LIMIT_MAX: '2', TRUST_PROXY: '1' } })
    try {
      const proxy = '10.7.7.7'
      assert.deepEqual(await burst(t, proxy, '2001:db8:1:2::1', 2), [200, 200])
      assert.deepEqual(await burst(t, proxy, '2001:db8:1:2:ffff:ffff:ffff:fffe', 1), [429], 'same /64')
      assert.deepEqual(await burst(t, proxy, '2001:db8:1:3::1', 2), [200, 200], 'another /64')
      // Directly connected IPv6 clients too.
      assert.deepEqual(await burst(t, '2001:db8:9:9::1', undefined, 2), [200, 200])
      assert.deepEqual(await burst(t, '2001:db8:9:9::2', undefined, 1), [429])
    } finally {
      await t.close()
    }
  })
})
