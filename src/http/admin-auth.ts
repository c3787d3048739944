import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { StoreRow } from '../db/database.ts'
import { AppError } from '../lib/errors.ts'
import { requireAdminScope, type AdminScope } from './admin-scopes.ts'
import { sha256Hex } from '../lib/secrets.ts'

export interface AdminContext {
  /** The admin API key's id; for a console session, `console_session:{jti}` (no key row has it). */
  keyId: string
  /** The admin API key's name as the merchant gave it (never the key itself): how events name who acted. */
  keyName?: string
  store: StoreRow
  /** How the request signed in: an admin API key, or a console session from the platform's load callback. */
  via: 'api_key' | 'console_session'
  /** The console session's id (its `jti`), for a console session. */
  sessionId?: string
  /** What the key may do (src/http/admin-scopes.ts); a console session is `full`, but cannot create keys. */
  scope: AdminScope
}

declare module 'fastify' {
  interface FastifyRequest {
    admin: AdminContext | null
  }
}

export interface AdminKeyLookup {
  findActiveKey(keyHash: string): Promise<Omit<AdminContext, 'via'> | undefined>
  /** Stamps the key's `last_used_at` with the store's time (a test store's test clock, as its pages show). */
  recordUse(keyId: string, store: StoreRow): Promise<void>
}

/**
 * Console sessions (src/modules/console-auth): a JWT-shaped Bearer is verified as one (HS256, its own
 * key, aud console, at most an hour) and names the store by id; anything else is looked up as a key.
 */
export interface ConsoleSessionLookup {
  looksLikeSession(token: string): boolean
  verify(token: string): Promise<{ sub: string; jti: string }>
  /** The session's store while the session is still good (not signed out, its store not disconnected since). */
  findStore(storeId: string, jti: string): Promise<StoreRow | undefined>
}

// Recording last use on every request would turn each read into a write; once a minute per key tells enough.
const TOUCH_INTERVAL_MS = 60_000

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization
  if (!header) return undefined
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  if (!match) throw new AppError('unauthenticated', 'Authorization must be "Bearer <credential>"')
  return match[1]
}

/** Admin API keys: the key names its store, and every admin route sees that store only. */
export function createAdminAuthenticator(keys: AdminKeyLookup, consoleSessions?: ConsoleSessionLookup) {
  // Per key: when it was last stamped (real time), and where its store's test clock stood then.
  const lastTouched = new Map<string, { at: number; storeClock: number | null }>()

  return async function authenticateAdmin(request: FastifyRequest): Promise<void> {
    const token = bearerToken(request)
    if (!token) throw new AppError('unauthenticated', 'this route needs an admin API key: Authorization: Bearer <key>')
    if (consoleSessions?.looksLikeSession(token)) {
      const claims = await consoleSessions.verify(token)
      const store = await consoleSessions.findStore(claims.sub, claims.jti)
      if (!store) throw new AppError('invalid_token', 'the console session is not valid, has ended or has expired: open the app again from the BigCommerce control panel, or sign in with an admin API key')
      request.admin = { keyId: `console_session:${claims.jti}`, store, via: 'console_session', sessionId: claims.jti, scope: 'full' }
      if (request.routeOptions.config.consoleSessions === false) {
        throw new AppError('forbidden', 'a console session cannot do this (it would outlive the app): sign in with an admin API key')
      }
      return
    }
    const found = await keys.findActiveKey(sha256Hex(token))
    if (!found) throw new AppError('unauthenticated', 'the admin API key is not valid or was revoked')
    request.admin = { ...found, via: 'api_key' }
    requireAdminScope(request, found.scope)
    const now = Date.now()
    const last = lastTouched.get(found.keyId)
    const storeClock = found.store.test_clock_now?.getTime() ?? null
    // The interval is real time; a test clock moved since the last stamp is stamped again at once.
    if (!last || last.at + TOUCH_INTERVAL_MS < now || last.storeClock !== storeClock) {
      lastTouched.set(found.keyId, { at: now, storeClock })
      keys.recordUse(found.keyId, found.store).catch((error) => request.log.warn({ err: error }, 'could not record key use'))
    }
  }
}

export function registerAdminContext(app: FastifyInstance): void {
  app.decorateRequest('admin', null)
}

/** The authenticated admin's store; only call on routes behind the admin authenticator. */
export function adminStore(request: FastifyRequest): StoreRow {
  if (!request.admin) throw new AppError('unauthenticated', 'this route needs an admin API key')
  return request.admin.store
}
