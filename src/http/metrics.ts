import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
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
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests answered, by method, route template and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [registry],
  })
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from request to response, by method, route template and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  })

  // One pair of labelled children per (route, method, status): prom-client then skips building and
  // validating a label object on every observation.
  type Series = { count: Counter.Internal; time: Histogram.Internal<string> }
  const series = new Map<string, Series>()
  function seriesFor(route: string, method: string, status: number): Series {
    const key = `${method} ${status} ${route}`
    let found = series.get(key)
    if (!found) {
      const labels = { method, route, status_code: String(status) }
      found = { count: requests.labels(labels), time: duration.labels(labels) }
      series.set(key, found)
    }
    return found
  }

  app.addHook('onResponse', (request, reply, done) => {
    // Unmatched paths share one label so scanners cannot explode the series count.
    const found = seriesFor(request.routeOptions.url ?? 'unmatched', request.method, reply.statusCode)
    found.count.inc()
    found.time.observe(reply.elapsedTime / 1000)
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
