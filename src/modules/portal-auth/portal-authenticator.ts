import type { FastifyRequest } from 'fastify'
import { bearerToken } from '../../http/admin-auth.ts'
import { AppError } from '../../lib/errors.ts'
import type { AuthCache } from '../stores/index.ts'
import type { PortalSessions } from './portal-sessions.ts'

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
