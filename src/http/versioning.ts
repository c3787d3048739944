import type { FastifyInstance } from 'fastify'
import { AppError } from '../lib/errors.ts'
import { DEPRECATED_ROUTES, deprecationHeaders } from './deprecations.ts'

export const API_VERSION = '1'
const ACCEPTED_VERSIONS = new Set(['1', 'v1'])

/**
 * The version lives in the path; `Accept-Version` may only confirm it. Every response says which
 * version answered, and deprecated routes announce their sunset.
 */
export function registerVersioning(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    const deprecation = methods.map((method) => DEPRECATED_ROUTES[`${method} ${route.url}`]).find(Boolean)
    if (!deprecation) return
    route.schema = { ...route.schema, deprecated: true } as typeof route.schema
    const headers = deprecationHeaders(deprecation)
    const existing = route.onSend ? (Array.isArray(route.onSend) ? route.onSend : [route.onSend]) : []
    route.onSend = [
      ...existing,
      async (_request, reply, payload) => {
        reply.headers(headers)
        return payload
      },
    ]
  })

  // Synchronous: it runs on every request, and an async hook costs a promise each time.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('api-version', API_VERSION)
    const requested = request.headers['accept-version']
    if (requested !== undefined && !ACCEPTED_VERSIONS.has(String(requested).trim())) {
      // The value is not repeated: a header can hold anything, card numbers included.
      return done(new AppError('unsupported_version', 'the Accept-Version asked for is not served here; this API serves version 1 (send 1 or v1, or omit the header)'))
    }
    done()
  })
}
