import type { FastifyInstance, FastifyRequest, RouteOptions } from 'fastify'
import { AppError } from '../lib/errors.ts'

/**
 * What each admin key scope may do (docs/contract.md, Admin key scopes), decided in this one place
 * from each route's method and path when the route is added: every admin operation lists the scopes
 * it takes in the OpenAPI document (`x-admin-scopes`), and a request whose key has another is 403
 * `insufficient_scope` before anything else of the route runs.
 *
 * - `full`: everything (console sessions from the control panel are full, but cannot create keys);
 * - `read_only`: reads only;
 * - `support`: reads, and the actions a support desk takes for a subscriber: on subscriptions, their
 *   charges and change requests; no keys at all, no webhooks, settings, platform connection or
 *   catalogue changes.
 */
export type AdminScope = 'full' | 'read_only' | 'support'

const ADMIN = '/api/v1/admin'
/** Where a support key may make changes. */
const SUPPORT_CHANGES = [`${ADMIN}/subscriptions/`, `${ADMIN}/charges/`, `${ADMIN}/change-requests/`]
/** What a support key may not even read. */
const NOT_FOR_SUPPORT = [`${ADMIN}/api-keys`]
/** Open to any signed-in admin: signing one's own console session out. */
const ANY_SCOPE = [`${ADMIN}/console-session`]

const starts = (url: string, prefixes: readonly string[]) => prefixes.some((prefix) => url.startsWith(prefix))

/** The scopes that may call `method` on `url` (the route's path, with its prefix). */
export function scopesFor(method: string, url: string): AdminScope[] {
  if (starts(url, ANY_SCOPE)) return ['full', 'read_only', 'support']
  const reads = method === 'GET' || method === 'HEAD'
  if (starts(url, NOT_FOR_SUPPORT)) return reads ? ['full', 'read_only'] : ['full']
  if (reads) return ['full', 'read_only', 'support']
  return starts(url, SUPPORT_CHANGES) ? ['full', 'support'] : ['full']
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The admin key scopes this route takes (src/http/admin-scopes.ts). */
    adminScopes?: AdminScope[]
    /** false: a console session is refused (403) before anything of the route runs, an idempotent replay included. */
    consoleSessions?: boolean
    /** false: `Idempotency-Key` is ignored and the answer never stored (it holds a secret shown once). */
    idempotentReplay?: boolean
  }
}

/** Declares each admin route's scopes, in its OpenAPI operation and its config; call before the routes are added. */
export function declareAdminScopes(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    // A route answering several methods takes what its most demanding one needs.
    const scopes = methods.map((method) => scopesFor(String(method), route.url)).reduce((a, b) => a.filter((scope) => b.includes(scope)))
    route.config = { ...(route.config ?? {}), adminScopes: scopes }
    const schema = (route.schema ?? {}) as Record<string, unknown>
    // An extension the OpenAPI generator copies onto the operation as it is.
    if (!schema.hide) route.schema = { ...schema, 'x-admin-scopes': scopes } as RouteOptions['schema']
  })
}

/** After authentication: 403 `insufficient_scope` when the key's scope is not one the route takes. */
export function requireAdminScope(request: FastifyRequest, scope: AdminScope): void {
  const allowed = request.routeOptions.config.adminScopes
  if (!allowed || allowed.includes(scope)) return
  const can = scope === 'read_only' ? 'only read' : 'only read, and act on subscriptions, charges and change requests'
  throw new AppError('insufficient_scope', `this key's scope is ${scope}: it can ${can}; this operation needs ${allowed.join(' or ')}`)
}
