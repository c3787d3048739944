import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { StoreRow } from '../db/database.ts'
import { AppError } from '../lib/errors.ts'
import { requireAdminScope, type AdminScope } from './admin-scopes.ts'
import { sha256Hex } from '../lib/secrets.ts'

export interface AdminContext {
  /** The admin API key's id; for a console session, `console_session:{jti}` (no key row has it). */
  keyId: string
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
  recordUse(keyId: string, at: Date): Promise<void>
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
  const lastTouched = new Map<string, number>()

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
    if ((lastTouched.get(found.keyId) ?? 0) + TOUCH_INTERVAL_MS < now) {
      lastTouched.set(found.keyId, now)
      keys.recordUse(found.keyId, new Date(now)).catch((error) => request.log.warn({ err: error }, 'could not record key use'))
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
