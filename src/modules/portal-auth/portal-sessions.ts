import { errors, jwtVerify, SignJWT } from 'jose'
import { LRUCache } from 'lru-cache'
import { randomUUID } from 'node:crypto'
import type { Clock } from '../../lib/clock.ts'
import type { PortalSessionClaims } from '../../http/actors.ts'
import { AppError } from '../../lib/errors.ts'
import { lazySecretKey } from '../../lib/secret-key.ts'

/** The one algorithm portal sessions use; tokens naming any other (`none` included) are refused. */
export const SESSION_ALGORITHM = 'HS256'
export const SESSION_AUDIENCE = 'portal'
export const SESSION_TTL_SECONDS = 15 * 60

const SESSION_CLAIMS = ['sub', 'jti', 'iat', 'exp']
const MAX_VERIFIED = 10_000

export type SessionClaims = PortalSessionClaims

export interface IssuedSession {
  token: string
  claims: SessionClaims
}

export type PortalSessions = ReturnType<typeof createPortalSessions>

/**
 * `secret` is fetched on first use (it may live in the database, which need not be migrated yet when
 * the app is assembled), then imported once as a key.
 */
export function createPortalSessions({ secret, issuer, clock }: { secret: () => Promise<Uint8Array>; issuer: string; clock: Clock }) {
  const nowSeconds = () => Math.floor(clock.now().getTime() / 1000)
  // Made once: handing jose the raw bytes would import the key again on every sign and verify.
  const key = lazySecretKey(secret)
  /**
   * Tokens jose has verified, by their exact text, until a second before they expire (in the
   * service's time): the same text under the same key always verifies the same way, so jose's
   * asynchronous HMAC runs once per token and process, not on every request (about 90 µs of CPU a
   * request under the 1,000-subscriber load: BENCHMARKS.md, issue 23). Sign-out is the auth cache's (jti).
   */
  const verified = new LRUCache<string, SessionClaims>({
    max: MAX_VERIFIED,
    ttl: SESSION_TTL_SECONDS * 1000,
    ttlResolution: 0,
    perf: { now: () => clock.now().getTime() },
  })

  return {
    async issue(subscriberId: string, storeId: string): Promise<IssuedSession> {
      const iat = nowSeconds()
      const claims: SessionClaims = { sub: subscriberId, store: storeId, jti: randomUUID(), iat, exp: iat + SESSION_TTL_SECONDS }
      const token = await new SignJWT({ store: storeId })
        .setProtectedHeader({ alg: SESSION_ALGORITHM, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience(SESSION_AUDIENCE)
        .setSubject(subscriberId)
        .setJti(claims.jti)
        .setIssuedAt(iat)
        .setExpirationTime(claims.exp)
        .sign(await key.load())
      return { token, claims }
    },

    /**
     * Checks signature, the one algorithm (`none` and every other refused), issuer, audience, lifetime
     * and the claims a session carries; any failure is the same 401. Sign-out is the auth cache's (jti).
     */
    async verify(token: string): Promise<SessionClaims> {
      const known = verified.get(token)
      if (known) return known
      try {
        const { payload } = await jwtVerify(token, key.now() ?? (await key.load()), {
          algorithms: [SESSION_ALGORITHM],
          issuer,
          audience: SESSION_AUDIENCE,
          requiredClaims: SESSION_CLAIMS,
          currentDate: clock.now(),
        })
        const { sub, store, jti, iat, exp } = payload
        if (typeof store !== 'string' || typeof sub !== 'string' || typeof jti !== 'string' || typeof iat !== 'number' || typeof exp !== 'number') {
          throw new errors.JWTClaimValidationFailed('missing or mistyped claims', payload)
        }
        const claims: SessionClaims = Object.freeze({ sub, store, jti, iat, exp })
        const keepMs = exp * 1000 - clock.now().getTime() - 1000
        if (keepMs >= 1) verified.set(token, claims, { ttl: Math.floor(keepMs) })
        return claims
      } catch (error) {
        if (error instanceof errors.JOSEError) throw new AppError('invalid_token', 'the portal session is not valid or has expired: sign in again')
        throw error
      }
    },
  }
}
