import helmet from '@fastify/helmet'
import Fastify, { type FastifyInstance } from 'fastify'

/**
 * Helmet as this service configures it. Widgets on other origins read public answers, so resources
 * may be embedded cross-origin; the Swagger UI page sets its own Content-Security-Policy.
 */
export const HELMET_OPTIONS = { contentSecurityPolicy: false, crossOriginResourcePolicy: { policy: 'cross-origin' } } as const

/** The helmet headers a JSON answer needs; the others only concern HTML pages (kept at /docs). */
const API_HEADER_NAMES = [
  'strict-transport-security',
  'x-content-type-options',
  'x-frame-options',
  'cross-origin-resource-policy',
  'referrer-policy',
] as const

let computed: Promise<Readonly<Record<string, string>>> | undefined

/**
 * The values helmet would set, taken once from helmet itself rather than written by hand.
 * @fastify/helmet rebuilds its middleware chain on every request; these headers never change.
 */
export function apiSecurityHeaders(): Promise<Readonly<Record<string, string>>> {
  computed ??= (async () => {
    const probe = Fastify({ logger: false })
    await probe.register(helmet, HELMET_OPTIONS)
    probe.get('/', async () => '')
    const response = await probe.inject({ method: 'GET', url: '/' })
    await probe.close()
    const headers: Record<string, string> = {}
    for (const name of API_HEADER_NAMES) {
      const value = response.headers[name]
      if (typeof value !== 'string') throw new Error(`helmet no longer sets ${name}`)
      headers[name] = value
    }
    return Object.freeze(headers)
  })()
  return computed
}

/**
 * One synchronous hook, first on every request, so every answer (errors included) carries the
 * security headers and its X-Request-Id.
 */
export async function registerResponseHeaders(app: FastifyInstance): Promise<void> {
  const headers = await apiSecurityHeaders()
  app.addHook('onRequest', (request, reply, done) => {
    reply.headers(headers)
    reply.header('x-request-id', request.id)
    done()
  })
}
