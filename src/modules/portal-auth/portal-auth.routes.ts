import type { FastifyRequest } from 'fastify'
import { NoContent, problemResponses, Ref } from '../../http/schemas.ts'
import type { App, AppDeps } from '../../http/types.ts'
import { AppError } from '../../lib/errors.ts'
import { requestMagicLink, revokeSession, verifyMagicLink } from './magic-links.ts'
import type { PortalSessions } from './portal-sessions.ts'
import { LinkRequested, PortalSession, RequestLinkBody, VerifyBody } from './portal-auth.schemas.ts'

/** How many sign-in links may be asked for, per email and per client address, in each window. */
export interface MagicLinkLimits {
  perEmail: number
  perAddress: number
  windowMs: number
}

export interface PortalAuthRouteOptions extends AppDeps {
  magicLinkLimits: MagicLinkLimits
  sessions: PortalSessions
  authenticatePortal: (request: FastifyRequest) => Promise<void>
}

/** Magic-link sign-in (docs/contract.md, Magic-link sign-in): ask for a link, exchange its token for a session, sign out. */
export async function portalAuthRoutes(app: App, { db, clock, magicLinkLimits, sessions, authenticatePortal }: PortalAuthRouteOptions): Promise<void> {
  const { perEmail, perAddress, windowMs } = magicLinkLimits
  const perEmailLimit = app.createRateLimit({
    max: perEmail,
    timeWindow: windowMs,
    keyGenerator: (request) => {
      const body = request.body as { email: string; store_hash: string }
      return `magic-link:${body.store_hash}:${body.email.toLowerCase()}`
    },
  })

  app.post('/auth/request-link', {
    schema: {
      operationId: 'requestPortalLink',
      summary: 'Email a one-time sign-in link to a subscriber',
      description:
        'Always 202 with the same body for a valid request, whether or not the email belongs to a subscriber of that store. ' +
        `Limited per email (${perEmail} per ${Math.round(windowMs / 60_000)} min) and per client address (${perAddress}).`,
      tags: ['Portal sign-in'],
      body: RequestLinkBody,
      response: { 202: Ref(LinkRequested) },
    },
    config: { rateLimit: { max: perAddress, timeWindow: windowMs, keyGenerator: (request: FastifyRequest) => `magic-link-address:${request.ip}` } },
    preHandler: async (request) => {
      const limit = await perEmailLimit(request)
      if (!limit.isAllowed && limit.isExceeded) {
        throw new AppError('rate_limited', `too many sign-in links asked for this email; retry in ${limit.ttlInSeconds} s`, {
          headers: { 'retry-after': String(limit.ttlInSeconds) },
        })
      }
    },
  }, async (request, reply) => {
    await requestMagicLink(db, request.body)
    return reply.code(202).send({ status: 'sent' as const })
  })

  app.post('/auth/verify', {
    schema: {
      operationId: 'verifyPortalLink',
      summary: 'Exchange a one-time sign-in token for a portal session',
      description: 'Each token works once, for 15 minutes. A used, expired or unknown token is 401 invalid_token.',
      tags: ['Portal sign-in'],
      body: VerifyBody,
      response: { 200: Ref(PortalSession), ...problemResponses(401) },
    },
  }, async (request) => verifyMagicLink(db, clock, sessions, request.body.token))

  app.post('/auth/logout', {
    schema: {
      operationId: 'logoutPortal',
      summary: 'Sign the current portal session out',
      description: 'The token is refused from now on, though it has not expired.',
      tags: ['Portal sign-in'],
      security: [{ portalSession: [] }],
      response: { 204: NoContent, ...problemResponses(401) },
    },
    onRequest: authenticatePortal,
  }, async (request, reply) => {
    await revokeSession(db, request.portal!.session)
    return reply.code(204).send(null)
  })
}
