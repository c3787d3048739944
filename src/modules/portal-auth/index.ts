import type { FastifyBaseLogger } from 'fastify'
import type { Db } from '../../db/database.ts'
import { handleJob } from '../../jobs/job-kinds.ts'
import { runAgainIn } from '../../jobs/runner.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Mailer } from '../../lib/mailer.ts'
import type { Module } from '../module.ts'
import { createMagicLinkSender } from './magic-links.ts'
import { PurgePortalAuth, SendMagicLink } from './portal-auth.jobs.ts'
import { purgeExpired } from './portal-auth.repository.ts'
import { portalAuthRoutes, type MagicLinkLimits } from './portal-auth.routes.ts'
import { portalAuthSchemas } from './portal-auth.schemas.ts'
import { createPortalAuthService, type PortalAuthService, type PortalAuthServiceDeps } from './portal-auth.service.ts'

const PURGE_EVERY_MS = 3_600_000

export interface PortalAuthModuleDeps extends PortalAuthServiceDeps {
  magicLinkLimits: MagicLinkLimits
  mailer: Mailer
  /** Where sign-in links point; a function because the listening address is known only after start. */
  portalUrl: () => string
  log: FastifyBaseLogger
}

/** Magic-link sign-in to the subscriber portal: links by email, sessions as signed tokens, sign-out. */
export function createPortalAuthModule({ db, clock, issuer, jwtSecret, keyStore, authCache, magicLinkLimits, mailer, portalUrl, log }: PortalAuthModuleDeps): Module<PortalAuthService> {
  const service = createPortalAuthService({ db, clock, issuer, jwtSecret, keyStore, authCache })
  const sendMagicLink = createMagicLinkSender({ db, clock, mailer, portalUrl, log })
  return {
    name: 'portal-auth',
    service,
    routes: { portalSignIn: (app) => portalAuthRoutes(app, service, magicLinkLimits) },
    jobs: [
      handleJob(SendMagicLink, (payload) => sendMagicLink(payload)),
      handleJob(PurgePortalAuth, async () => {
        await purgeExpired(db, clock.now())
        return runAgainIn(PURGE_EVERY_MS)
      }, { recurring: { instances: 1 } }),
    ],
    schemas: portalAuthSchemas,
  }
}

export { requireMailForLiveStores } from './mailer.ts'
export { EMAIL_LINK_TTL_MS, issueEmailSignInLink, MAGIC_LINK_TTL_MS, type PortalLinkTarget } from './magic-links.ts'
export { PurgePortalAuth, SendMagicLink } from './portal-auth.jobs.ts'
export type { MagicLinkLimits } from './portal-auth.routes.ts'
export type { PortalAuthService } from './portal-auth.service.ts'
export { createPortalSessions, SESSION_ALGORITHM, SESSION_AUDIENCE, SESSION_TTL_SECONDS, type PortalSessions, type SessionClaims } from './portal-sessions.ts'
export { resolveSessionSecret } from './session-secret.ts'
