import type { FastifyRequest } from 'fastify'
import type { Engine } from '../../db/connect.ts'
import type { Db } from '../../db/database.ts'
import type { PortalSessionClaims } from '../../http/actors.ts'
import type { Clock } from '../../lib/clock.ts'
import type { AuthCache } from '../stores/index.ts'
import { requestMagicLink, revokeSession, verifyMagicLink, type LinkRequest, type SessionAnswer } from './magic-links.ts'
import { createPortalAuthenticator } from './portal-authenticator.ts'
import { createPortalSessions, type PortalSessions } from './portal-sessions.ts'
import { resolveSessionSecret } from './session-secret.ts'

export interface PortalAuthService {
  sessions: PortalSessions
  /** The portal scope's hook: the subscriber and the store come from the verified session and nowhere else. */
  authenticatePortal(request: FastifyRequest): Promise<void>
  /** Queues the link's email: whether the address is a subscriber's is only looked at in the background. */
  requestLink(request: LinkRequest): Promise<void>
  /** Exchanges a one-time token for a session. */
  verify(token: string): Promise<SessionAnswer>
  /** Signs the session out before it expires: refused by this process from its next request, by others within a second. */
  logout(session: PortalSessionClaims): Promise<void>
}

export interface PortalAuthServiceDeps {
  db: Db
  clock: Clock
  /** JWT_ISSUER. */
  issuer: string
  /** JWT_SECRET; undefined: one is generated once and kept. */
  jwtSecret: string | undefined
  keyStore: { engine: Engine; dataDir: string }
  authCache: AuthCache
}

export function createPortalAuthService({ db, clock, issuer, jwtSecret, keyStore, authCache }: PortalAuthServiceDeps): PortalAuthService {
  const sessions = createPortalSessions({ secret: () => resolveSessionSecret({ configured: jwtSecret, ...keyStore, db }), issuer, clock })
  return {
    sessions,
    authenticatePortal: createPortalAuthenticator({ authCache, sessions }),
    requestLink: (request) => requestMagicLink(db, request),
    verify: (token) => verifyMagicLink(db, clock, sessions, token),
    async logout(session) {
      await revokeSession(db, session)
      authCache.forgetSession(session.jti)
    },
  }
}
