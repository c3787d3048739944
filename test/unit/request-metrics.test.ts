import assert from 'node:assert/strict'
import { test } from 'node:test'
import { Counter, Histogram, Registry } from 'prom-client'
import { DURATION_BUCKETS, requestMetrics } from '../../src/http/metrics.ts'

// What src/http/metrics.ts registered before it kept these figures itself: /metrics must not change.
function promClientReference(registry: Registry) {
  const labelNames = ['method', 'route', 'status_code'] as const
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests answered, by method, route template and status code', labelNames, registers: [registry] })
  const duration = new Histogram({ name: 'http_request_duration_seconds', help: 'Time from request to response, by method, route template and status code', labelNames, buckets: DURATION_BUCKETS, registers: [registry] })
  return (route: string, method: string, status: number, seconds: number) => {
    const labels = { method, route, status_code: String(status) }
    requests.inc(labels)
    duration.observe(labels, seconds)
  }
}

test('request metrics read exactly as prom-client\'s Counter and Histogram', async () => {
  const reference = new Registry()
  const ours = new Registry()
  const recordReference = promClientReference(reference)
  const { record } = requestMetrics(ours)
  const observations: Array<[string, string, number, number]> = [
    ['/api/v1/storefront/plans', 'GET', 200, 0.0003],
    ['/api/v1/storefront/plans', 'GET', 200, 0.001],
    ['/api/v1/storefront/plans', 'GET', 304, 0.0042],
    ['unmatched', 'GET', 404, 0.0025],
    ['/api/v1/plans/:id', 'GET', 404, 12.5],
    ['/api/v1/storefront/plans', 'GET', 200, 0.1234567],
    ['/api/v1/admin/products', 'POST', 201, 10],
    ['/api/v1/admin/products', 'POST', 201, 0.7],
    ['/api/v1/say "hi"\\n', 'GET', 200, 0.05],
  ]
  for (const [route, method, status, seconds] of observations) {
    recordReference(route, method, status, seconds)
    record(route, method, status, seconds)
  }
  assert.equal(await ours.metrics(), await reference.metrics())
  assert.deepEqual(await ours.getMetricsAsJSON(), await reference.getMetricsAsJSON())
  ours.setContentType(Registry.OPENMETRICS_CONTENT_TYPE as never)
  reference.setContentType(Registry.OPENMETRICS_CONTENT_TYPE as never)
  assert.equal(await ours.metrics(), await reference.metrics())
  ours.resetMetrics()
  reference.resetMetrics()
  assert.equal(await ours.metrics(), await reference.metrics())
})
