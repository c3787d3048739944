import rateLimit from '@fastify/rate-limit'
import type { FastifyInstance } from 'fastify'
import { AppError } from '../lib/errors.ts'
import { rateLimitKey } from './rate-limit-key.ts'

export interface RateLimitSettings {
  max: number
  windowMs: number
}

/**
 * The per-address limit on every route (docs/contract.md, Bodies and rate limits): @fastify/rate-limit
 * as published, with its own in-process store, on every route (`global`), a route's own settings in
 * `config.rateLimit` (false, or a bucket of its own), and a 429 problem+json with Retry-After.
 *
 * A request for no route draws on the same limit, as the plugin's README says to do for the not-found
 * handler, but in an onRequest hook rather than the handler's preHandler: before its body is read, so
 * unknown paths are not a way around the limit (or a free way to make the guards scan bodies).
 */
export async function registerRateLimit(app: FastifyInstance, settings: RateLimitSettings): Promise<void> {
  await app.register(rateLimit, {
    global: true,
    max: settings.max,
    timeWindow: settings.windowMs,
    keyGenerator: rateLimitKey,
    // Only a refused request learns about the limit (429 with Retry-After); allowed answers stay lean.
    addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', `too many requests: at most ${context.max} per ${Math.round(settings.windowMs / 1000)} s; retry in ${context.after}`),
  })
  // The plugin's handler with its global settings and store: the same bucket as the routes'.
  const limitUnknownPath = app.rateLimit()
  app.addHook('onRequest', (request, reply, done) => {
    if (!request.is404) return done()
    limitUnknownPath.call(app, request, reply).then(() => done(), done)
  })
}
