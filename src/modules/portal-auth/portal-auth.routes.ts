import type { FastifyRequest } from 'fastify'
import { rateLimitKey } from '../../http/rate-limit-key.ts'
import { NoContent, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { waitInWords } from '../../lib/durations.ts'
import { AppError } from '../../lib/errors.ts'
import type { PortalAuthService } from './portal-auth.service.ts'
import { LinkRequested, PortalSession, RequestLinkBody, VerifyBody } from './portal-auth.schemas.ts'

/** How many sign-in links may be asked for in each window (docs/contract.md, Magic-link sign-in). */
export interface MagicLinkLimits {
  /** For one email from one client address; more is 429. */
  perEmail: number
  /** For one email from all addresses together; more is answered 202 like any other request, and nothing is sent. */
  perEmailTotal: number
  /** From one client address, whatever the email; more is 429. */
  perAddress: number
  windowMs: number
}

/** Magic-link sign-in (docs/contract.md, Magic-link sign-in): ask for a link, exchange its token for a session, sign out. */
export async function portalAuthRoutes(app: App, portalAuth: PortalAuthService, magicLinkLimits: MagicLinkLimits): Promise<void> {
  const { perEmail, perEmailTotal, perAddress, windowMs } = magicLinkLimits
  const emailOf = (request: FastifyRequest) => {
    const body = request.body as { email: string; store_hash: string }
    return [body.store_hash, body.email.toLowerCase()]
  }
  // Counted per email and client address, so that requests from elsewhere never refuse the
  // subscriber's own: nobody can lock a subscriber out of signing in by asking for their links.
  const perEmailFromAddress = app.createRateLimit({
    max: perEmail,
    timeWindow: windowMs,
    keyGenerator: (request) => `magic-link:${JSON.stringify([...emailOf(request), rateLimitKey(request)])}`,
  })
  // Counted per email from every address: past it the answer stays 202 (neither refusing nor telling
  // anything) and no email goes out, so many addresses together cannot flood one inbox.
  const perEmailOverall = app.createRateLimit({
    max: perEmailTotal,
    timeWindow: windowMs,
    keyGenerator: (request) => `magic-link-total:${JSON.stringify(emailOf(request))}`,
  })

  app.post('/auth/request-link', {
    schema: {
      operationId: 'requestPortalLink',
      summary: 'Email a one-time sign-in link to a subscriber',
      description:
        'Always 202 with the same body for a valid request, whether or not the email belongs to a subscriber of that store. ' +
        `Limited per email from one client address (${perEmail} per ${Math.round(windowMs / 60_000)} min) and per client address (${perAddress}); ` +
        `past ${perEmailTotal} for one email from all addresses together the answer is still 202 and no email is sent.`,
      tags: ['Portal sign-in'],
      body: RequestLinkBody,
      response: { 202: Ref(LinkRequested) },
    },
    // Keyed like the service-wide limit (src/http/rate-limit-key.ts): an IPv6 client counts per /64.
    config: { rateLimit: { max: perAddress, timeWindow: windowMs, keyGenerator: (request: FastifyRequest) => `magic-link-address:${rateLimitKey(request)}` } },
  }, async (request, reply) => {
    const fromHere = await perEmailFromAddress(request)
    if (!fromHere.isAllowed && fromHere.isExceeded) {
      throw new AppError('rate_limited', `too many sign-in links asked for this email; try again in ${waitInWords(fromHere.ttlInSeconds * 1_000)}`, {
        headers: { 'retry-after': String(fromHere.ttlInSeconds) },
      })
    }
    const overall = await perEmailOverall(request)
    if (!overall.isAllowed && overall.isExceeded) {
      request.log.info('sign-in links for this email reached their overall limit for now: answered, nothing sent')
    } else {
      await portalAuth.requestLink(request.body)
    }
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
  }, async (request) => portalAuth.verify(request.body.token))

  app.post('/auth/logout', {
    schema: {
      operationId: 'logoutPortal',
      summary: 'Sign the current portal session out',
      description: 'The token is refused from now on, though it has not expired.',
      tags: ['Portal sign-in'],
      security: [{ portalSession: [] }],
      response: { 204: NoContent, ...problemResponses(401) },
    },
    onRequest: portalAuth.authenticatePortal,
  }, async (request, reply) => {
    await portalAuth.logout(request.portal!.session)
    return reply.code(204).send(null)
  })
}
