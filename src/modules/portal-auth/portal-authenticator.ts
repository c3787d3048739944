import type { FastifyInstance, FastifyRequest } from 'fastify'
import type { StoreRow } from '../../db/database.ts'
import { bearerToken } from '../../http/admin-auth.ts'
import { AppError } from '../../lib/errors.ts'
import type { AuthCache } from '../stores/index.ts'
import type { Actor } from '../subscriptions/index.ts'
import type { PortalSessions, SessionClaims } from './portal-sessions.ts'

export interface PortalContext {
  subscriberId: string
  store: StoreRow
  session: SessionClaims
}

declare module 'fastify' {
  interface FastifyRequest {
    portal: PortalContext | null
  }
}

export function registerPortalContext(app: FastifyInstance): void {
  app.decorateRequest('portal', null)
}

/** Portal routes: the subscriber and the store come from the verified session token and nowhere else. */
export function createPortalAuthenticator({ authCache, sessions }: { authCache: AuthCache; sessions: PortalSessions }) {
  return async function authenticatePortal(request: FastifyRequest): Promise<void> {
    const token = bearerToken(request)
    if (!token) throw new AppError('unauthenticated', 'this route needs a portal session: Authorization: Bearer <token from /portal/auth/verify>')
    const claims = await sessions.verify(token)
    // "Does the store exist" and "was this session signed out": from memory for under a second (src/modules/stores/auth-cache.ts).
    const store = await authCache.portalStore(claims.store, claims.jti)
    if (!store) throw new AppError('invalid_token', 'the portal session is not valid or has expired: sign in again')
    request.portal = { subscriberId: claims.sub, store, session: claims }
  }
}

/** The signed-in subscriber as the subscription services see them. */
export function portalActor(request: FastifyRequest): { store: StoreRow; actor: Actor & { kind: 'subscriber' } } {
  if (!request.portal) throw new AppError('unauthenticated', 'this route needs a portal session')
  return { store: request.portal.store, actor: { kind: 'subscriber', subscriberId: request.portal.subscriberId } }
}
