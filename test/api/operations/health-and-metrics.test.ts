import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { buildTestApp, call, createStoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { assertProblem } from '../../helpers/problem.ts'

describe('health, readiness and metrics', () => {
  let t: TestApp

  before(async () => {
    t = await buildTestApp()
  })
  after(() => t.close())

  test('/healthz says the process is up', async () => {
    const response = await call(t.app, { method: 'GET', url: '/healthz' })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json, { status: 'ok' })
  })

  test('/readyz checks the database', async () => {
    const response = await call(t.app, { method: 'GET', url: '/readyz' })
    assert.equal(response.statusCode, 200)
    assert.deepEqual(response.json, { status: 'ready' })
  })

  test('/metrics counts requests and their latency by route template and status', async () => {
    // The counters live as long as the app: count from what they say now, not from what earlier tests left.
    const LIST = 'http_requests_total{method="GET",route="/api/v1/plans",status_code="200"}'
    const MISSING = 'http_requests_total{method="GET",route="/api/v1/plans/:id",status_code="404"}'
    const counter = (text: string, series: string) => Number(text.split('\n').find((line) => line.startsWith(`${series} `))?.slice(series.length + 1) ?? 0)
    const before = (await call(t.app, { method: 'GET', url: '/metrics' })).body
    await call(t.app, { method: 'GET', url: '/api/v1/plans?store_hash=a' })
    await call(t.app, { method: 'GET', url: '/api/v1/plans?store_hash=b' })
    await call(t.app, { method: 'GET', url: '/api/v1/plans/plan_01JD2Y5T1P8Q0W9KZ3M6N4R7BC' })
    const response = await call(t.app, { method: 'GET', url: '/metrics' })
    assert.equal(response.statusCode, 200)
    assert.match(String(response.headers['content-type']), /^text\/plain/)
    const text = response.body
    assert.ok(text.includes(`${LIST} `) && text.includes(`${MISSING} `), 'both series are exposed')
    assert.equal(counter(text, LIST), counter(before, LIST) + 2)
    assert.equal(counter(text, MISSING), counter(before, MISSING) + 1)
    assert.match(text, /http_request_duration_seconds_bucket\{le="[0-9.]+",method="GET",route="\/api\/v1\/plans",status_code="200"\}/)
    assert.match(text, /process_cpu_user_seconds_total/)
  })
})

describe('/metrics behind METRICS_TOKEN', () => {
  const TOKEN = 'metrics-token-0123456789-abcdefghij'
  let t: TestApp

  before(async () => {
    t = await buildTestApp({ env: { METRICS_TOKEN: TOKEN } })
  })
  after(() => t.close())

  test('answers the scrape that presents the token', async () => {
    const response = await call(t.app, { method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })
    assert.equal(response.statusCode, 200)
    assert.match(response.body, /http_requests_total/)
  })

  test('without the token, or with another, is 401 unauthenticated as problem+json and shows nothing', async () => {
    const attempts: Record<string, string | undefined> = {
      'no header': undefined,
      'another token': 'Bearer metrics-token-0123456789-abcdefghiJ',
      'a prefix of the token': `Bearer ${TOKEN.slice(0, -1)}`,
      'the token and more': `Bearer ${TOKEN}x`,
      'not a bearer credential': `Basic ${TOKEN}`,
    }
    for (const [what, authorization] of Object.entries(attempts)) {
      const response = await call(t.app, { method: 'GET', url: '/metrics', ...(authorization ? { headers: { authorization } } : {}) })
      assertProblem(response, 401, 'unauthenticated', { what })
      assert.equal(response.headers['www-authenticate'], 'Bearer', what)
      assert.ok(!response.body.includes('http_requests_total'), `${what}: no metrics in the answer`)
    }
  })

  test('health and readiness stay open', async () => {
    assert.equal((await call(t.app, { method: 'GET', url: '/healthz' })).statusCode, 200)
    assert.equal((await call(t.app, { method: 'GET', url: '/readyz' })).statusCode, 200)
  })
})

describe('readiness when the database is gone', () => {
  test('/readyz answers 503 while /healthz stays 200', async () => {
    const t = await buildTestApp()
    await t.database.close()
    const ready = await call(t.app, { method: 'GET', url: '/readyz' })
    assert.equal(ready.statusCode, 503)
    assert.equal(ready.json.status, 'unavailable')
    assert.equal((await call(t.app, { method: 'GET', url: '/healthz' })).statusCode, 200)
    await t.app.close()
  })
})

describe('logs', () => {
  test('never hold Authorization headers, admin keys or credentials in URLs', async () => {
    const t = await buildTestApp({ env: { LOG_LEVEL: 'trace' } })
    try {
      const shop = await createStoreWithKey(t.db)
      await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: shop.auth })
      await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: { authorization: 'Bearer sk_test_wrong_key_value_123456' } })
      await call(t.app, { method: 'GET', url: '/portal/login?token=one-time-secret-token' })
      const logged = t.logs.join('\n')
      assert.ok(logged.includes('/api/v1/admin/store'), 'requests are logged')
      assert.ok(!logged.includes(shop.key), 'the admin key reached the logs')
      assert.ok(!logged.includes('sk_test_wrong_key_value_123456'), 'a presented key reached the logs')
      assert.ok(!logged.includes('one-time-secret-token'), 'a URL token reached the logs')
    } finally {
      await t.close()
    }
  })
})
