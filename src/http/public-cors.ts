import cors from '@fastify/cors'
import type { FastifyInstance } from 'fastify'
import { AppError } from '../lib/errors.ts'
import { sendProblem } from './error-handler.ts'

// Widgets run on storefront origins; nothing here depends on cookies, so any origin may read.
const CORS_OPTIONS = { origin: '*', methods: ['GET', 'HEAD', 'OPTIONS'], maxAge: 86_400 } as const

/**
 * CORS for the public (credential-free) routes of a scope, as @fastify/cors with CORS_OPTIONS answers
 * it. The plugin's hook handles preflights; on any other request, all it does with these options is
 * set `Access-Control-Allow-Origin: *`, at a cost of a copy of its options and a closure per request.
 * So the plugin runs only for OPTIONS (it lives in a scope of its own holding just its OPTIONS route),
 * and one synchronous hook here sets that header on every other request of the scope.
 */
export async function registerPublicCors(scope: FastifyInstance): Promise<void> {
  scope.addHook('onRequest', (request, reply, done) => {
    if (request.method !== 'OPTIONS') {
      reply.header('access-control-allow-origin', CORS_OPTIONS.origin)
      return done()
    }
    // The plugin answers an OPTIONS request that is not a preflight with a plain-text 400; this
    // runs first so that refusal is problem+json like every other.
    if (request.headers.origin && request.headers['access-control-request-method']) return done()
    sendProblem(request, reply, new AppError('validation_failed', 'OPTIONS is only answered as a CORS preflight, with Origin and Access-Control-Request-Method headers'))
  })
  await scope.register(async (preflights) => {
    await preflights.register(cors, { ...CORS_OPTIONS, methods: [...CORS_OPTIONS.methods] })
  })
}
