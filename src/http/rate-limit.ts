import rateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit'
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, RouteOptions } from 'fastify'
import { LRUCache } from 'lru-cache'
import { AppError } from '../lib/errors.ts'
import { rateLimitKey } from './rate-limit-key.ts'

// As @fastify/rate-limit's own store: at most this many client keys are remembered, least recently seen dropped first.
const REMEMBERED_KEYS = 5000

interface Window {
  current: number
  ttl: number
  iterationStartMs: number
}

/**
 * @fastify/rate-limit's in-process store (store/LocalStore.js, same counting and the same bound on
 * keys), plus `admit`: a synchronous count for the requests that stay within the limit.
 */
class CountingStore implements FastifyRateLimitStore {
  readonly #windows = new LRUCache<string, Window>({ max: REMEMBERED_KEYS })
  readonly #continueExceeding: boolean
  readonly #exponentialBackoff: boolean

  // The plugin passes its settings, merged with a route's own for a child store.
  constructor(options: object) {
    const { continueExceeding, exponentialBackoff } = options as { continueExceeding?: unknown; exponentialBackoff?: unknown }
    this.#continueExceeding = continueExceeding === true
    this.#exponentialBackoff = exponentialBackoff === true
  }

  incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number): void {
    const now = Date.now()
    let window = this.#windows.get(key)
    if (!window) {
      window = { current: 1, ttl: timeWindow, iterationStartMs: now }
    } else if (window.iterationStartMs + timeWindow <= now) {
      window.current = 1
      window.ttl = timeWindow
      window.iterationStartMs = now
    } else {
      window.current += 1
      if (this.#continueExceeding && window.current > max) {
        window.ttl = timeWindow
        window.iterationStartMs = now
      } else if (this.#exponentialBackoff && window.current > max) {
        const ttl = timeWindow * 2 ** (window.current - max - 1)
        window.ttl = Number.isSafeInteger(ttl) ? ttl : Number.MAX_SAFE_INTEGER
        window.iterationStartMs = now
      } else {
        window.ttl = timeWindow - (now - window.iterationStartMs)
      }
    }
    this.#windows.set(key, window)
    callback(null, window)
  }

  read(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number): void {
    const window = this.#windows.get(key)
    const now = Date.now()
    if (!window || window.iterationStartMs + timeWindow <= now) return callback(null, { current: 0, ttl: 0 })
    callback(null, { current: window.current, ttl: timeWindow - (now - window.iterationStartMs) })
  }

  /**
   * Counts the request and answers true when that keeps the key within `max`, exactly as `incr`
   * would; otherwise counts nothing and answers false (the plugin then counts and refuses it).
   */
  admit(key: string, timeWindow: number, max: number): boolean {
    const now = Date.now()
    const window = this.#windows.get(key)
    if (!window || window.iterationStartMs + timeWindow <= now) {
      if (max < 1) return false
      if (window) {
        window.current = 1
        window.ttl = timeWindow
        window.iterationStartMs = now
      } else {
        this.#windows.set(key, { current: 1, ttl: timeWindow, iterationStartMs: now })
      }
      return true
    }
    if (window.current + 1 > max) return false
    window.current += 1
    window.ttl = timeWindow - (now - window.iterationStartMs)
    return true
  }

  child(routeOptions: object): CountingStore {
    return new CountingStore(routeOptions)
  }
}

export interface RateLimitSettings {
  max: number
  windowMs: number
}

/**
 * The per-address limit on every route (docs/contract.md, Bodies and rate limits), through
 * @fastify/rate-limit: its options, its 429 answer, its per-route settings (`config.rateLimit`:
 * false, or a bucket of the route's own), `app.rateLimit()` and `app.createRateLimit()`.
 *
 * The plugin's route hook is asynchronous, with three promises per request. Routes on the global
 * limit get a synchronous hook instead, which counts in the plugin's own store; only a request that
 * would go past the limit is handed to the plugin's handler, which counts it and refuses it as before.
 * A request for no route gets the same limit, before its body is read, so unknown paths are not a
 * way around it (or a free way to make the guards scan bodies).
 */
export async function registerRateLimit(app: FastifyInstance, settings: RateLimitSettings): Promise<void> {
  let store: CountingStore | undefined
  class GlobalStore extends CountingStore {
    constructor(options: object) {
      super(options)
      store = this
    }
  }

  await app.register(rateLimit, {
    // Routes without settings of their own get the hook below rather than the plugin's.
    global: false,
    max: settings.max,
    timeWindow: settings.windowMs,
    keyGenerator: rateLimitKey,
    store: GlobalStore,
    // Only a refused request learns about the limit (429 with Retry-After); allowed answers stay lean.
    addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
    errorResponseBuilder: (_request, context) =>
      new AppError('rate_limited', `too many requests: at most ${context.max} per ${Math.round(settings.windowMs / 1000)} s; retry in ${context.after}`),
  })
  const counting = store
  if (!counting) throw new Error('@fastify/rate-limit did not make its store')
  // The plugin's handler for the global limit: same options, same store.
  const refuseOrCount = app.rateLimit()
  const { max, windowMs } = settings

  function limitRequest(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
    if (counting!.admit(rateLimitKey(request), windowMs, max)) return done()
    refuseOrCount.call(app, request, reply).then(() => done(), done)
  }

  app.addHook('onRoute', (route: RouteOptions) => {
    // A route with settings of its own (false, or its own bucket) is left to the plugin.
    if (route.config?.rateLimit != null) return
    const existing = route.onRequest ? (Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]) : []
    route.onRequest = [...existing, limitRequest as never]
  })

  app.addHook('onRequest', (request, reply, done) => {
    if (!request.is404) return done()
    limitRequest(request, reply, done)
  })
}
