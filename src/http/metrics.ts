import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Gauge, Registry, collectDefaultMetrics, type Metric } from 'prom-client'
import { AppError } from '../lib/errors.ts'
import { bearerToken } from './admin-auth.ts'

export interface Metrics {
  registry: Registry
}

export interface MetricsOptions {
  /** When set, a scrape must present `Authorization: Bearer <token>` (METRICS_TOKEN); otherwise /metrics is open. */
  token?: string | undefined
}

const digest = (value: string) => createHash('sha256').update(value).digest()

/**
 * The scrape guard: the presented token and the configured one are compared as SHA-256 digests with
 * timingSafeEqual, so neither the token's length nor any prefix of it shows in the time an answer takes.
 */
function metricsTokenGuard(token: string) {
  const expected = digest(token)
  return async function requireMetricsToken(request: FastifyRequest): Promise<void> {
    const presented = bearerToken(request)
    if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
      throw new AppError('unauthenticated', '/metrics needs the metrics token: Authorization: Bearer <METRICS_TOKEN>')
    }
  }
}

/** Request count and latency by route template and status, plus the process's own figures. */
export function registerMetrics(app: FastifyInstance, counts: { setAside(): Promise<Record<string, number>> }, options: MetricsOptions = {}): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  // Work set aside for a person, read from the database at each scrape, so every process reports
  // the same truth whichever worker set the row aside.
  new Gauge({
    name: 'set_aside_items',
    help: 'Work set aside for a person: renewals that failed on their own data (renewal), charges requiring review (charge_review), refunds sent whose answer was lost (refund_review), jobs that gave up (job)',
    labelNames: ['kind'] as const,
    registers: [registry],
    async collect() {
      for (const [kind, n] of Object.entries(await counts.setAside())) this.set({ kind }, n)
    },
  })
  // The request count and latency are kept in plain numbers per (method, route, status) and handed
  // to the registry in prom-client's own form at each scrape (requestMetrics): prom-client's counter
  // and histogram children validate and hash their labels on every inc and observe, ~0.6 µs per request.
  const { record } = requestMetrics(registry)

  app.addHook('onResponse', (request, reply, done) => {
    // Unmatched paths share one label so scanners cannot explode the series count.
    record(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode, reply.elapsedTime / 1000)
    done()
  })

  // Never rate-limited (docs/contract.md, Bodies and rate limits): a scraper polling from one address must not lose sight of the service.
  app.get('/metrics', {
    schema: { hide: true },
    config: { rateLimit: false },
    ...(options.token ? { onRequest: metricsTokenGuard(options.token) } : {}),
  }, async (_request, reply) => {
    reply.type(registry.contentType)
    return registry.metrics()
  })

  return { registry }
}

const REQUEST_LABELS = ['method', 'route', 'status_code'] as const

/** A metric the registry reads as it reads prom-client's own: its description, and its values at each scrape. */
function scrapedMetric(name: string, help: string, type: 'counter' | 'histogram', values: () => object[], reset: () => void) {
  // get() reads the metric's own fields at each scrape (as prom-client's classes do), not this call's.
  const metric = {
    name,
    help,
    type,
    aggregator: 'sum',
    labelNames: [...REQUEST_LABELS],
    get: async () => ({ name: metric.name, help: metric.help, type: metric.type, aggregator: metric.aggregator, values: values() }),
    reset,
  }
  return metric
}
type RequestLabels = Record<(typeof REQUEST_LABELS)[number], string>
/** Upper bounds of the latency histogram's buckets, in seconds. */
export const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

interface RequestSeries {
  labels: RequestLabels
  count: number
  sum: number
  /** Observations per bucket (not cumulative); one past the last bound falls in +Inf only. */
  buckets: number[]
}

/**
 * `http_requests_total` (counter) and `http_request_duration_seconds` (histogram, DURATION_BUCKETS),
 * by method, route template and status code, registered in `registry`. The registry reads them as
 * it reads prom-client's Counter and Histogram (the values of `metric.get()`, in the same order, with
 * the same labels, sums and empty exemplars; test/unit/request-metrics.test.ts compares them), so /metrics shows exactly what those classes showed; recording a
 * request is a map lookup and a few additions.
 */
export function requestMetrics(registry: Registry): { record(route: string, method: string, status: number, seconds: number): void } {
  const series = new Map<string, RequestSeries>()
  const all = () => [...series.values()]

  const requests = scrapedMetric('http_requests_total', 'HTTP requests answered, by method, route template and status code', 'counter', () =>
    all().map(({ labels, count }) => ({ value: count, labels: { ...labels } })), () => series.clear())
  const durationName = 'http_request_duration_seconds'
  const durations = scrapedMetric(durationName, 'Time from request to response, by method, route template and status code', 'histogram', () =>
    all().flatMap(({ labels, count, sum, buckets }) => {
      let cumulative = 0
      const bucketName = `${durationName}_bucket`
      return [
        ...DURATION_BUCKETS.map((bound, i) => {
          cumulative += buckets[i]!
          return { labels: { le: bound, ...labels }, value: cumulative, metricName: bucketName, exemplar: null }
        }),
        { labels: { le: '+Inf', ...labels }, value: count, metricName: bucketName, exemplar: null },
        { labels: { ...labels }, value: sum, metricName: `${durationName}_sum`, exemplar: undefined },
        { labels: { ...labels }, value: count, metricName: `${durationName}_count`, exemplar: undefined },
      ]
    }), () => series.clear())
  registry.registerMetric(requests as unknown as Metric)
  registry.registerMetric(durations as unknown as Metric)

  return {
    record(route, method, status, seconds) {
      const key = `${method} ${status} ${route}`
      let found = series.get(key)
      if (!found) {
        found = { labels: { method, route, status_code: String(status) }, count: 0, sum: 0, buckets: DURATION_BUCKETS.map(() => 0) }
        series.set(key, found)
      }
      found.count += 1
      found.sum += seconds
      // The first bucket whose bound holds the value, as prom-client's Histogram counts it.
      for (let i = 0; i < DURATION_BUCKETS.length; i++) {
        if (seconds <= DURATION_BUCKETS[i]!) {
          found.buckets[i]! += 1
          break
        }
      }
    },
  }
}
