import { SignJWT } from 'jose'
import { randomUUID } from 'node:crypto'
import type { Clock } from '../../lib/clock.ts'
import type { PortalSessionClaims } from '../../http/actors.ts'
import { AppError } from '../../lib/errors.ts'
import { InvalidJwt, lazySecretKey, verifyHs256 } from '../../lib/hs256-jwt.ts'

/** The one algorithm portal sessions use; tokens naming any other (`none` included) are refused. */
export const SESSION_ALGORITHM = 'HS256'
export const SESSION_AUDIENCE = 'portal'
export const SESSION_TTL_SECONDS = 15 * 60

const SESSION_CLAIMS = ['sub', 'jti', 'iat', 'exp'] as const
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
  // Made once: handing jose the raw bytes would import the key again on every sign.
  const key = lazySecretKey(secret)

  // Tokens already verified, by their exact text: the same text always verifies the same way, except
  // for its lifetime, which is checked again on every use. Sign-out is the auth cache's (it checks jti).
  const verified = new Map<string, SessionClaims>()

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

    /** Checks signature, algorithm, issuer, audience and lifetime; any failure is the same 401. */
    async verify(token: string): Promise<SessionClaims> {
      const known = verified.get(token)
      if (known && known.exp > nowSeconds()) return known
      try {
        // Synchronous once the key is loaded (src/lib/hs256-jwt.ts says why not jose's jwtVerify).
        const payload = verifyHs256(token, key.now() ?? (await key.load()), {
          issuer,
          audience: SESSION_AUDIENCE,
          nowSeconds: nowSeconds(),
          requiredClaims: SESSION_CLAIMS,
        })
        if (typeof payload.store !== 'string' || typeof payload.sub !== 'string' || typeof payload.jti !== 'string') throw new InvalidJwt('missing claims')
        const claims: SessionClaims = Object.freeze({ sub: payload.sub, store: payload.store, jti: payload.jti, iat: payload.iat as number, exp: payload.exp as number })
        if (verified.size >= MAX_VERIFIED) verified.delete(verified.keys().next().value!)
        verified.set(token, claims)
        return claims
      } catch (error) {
        if (error instanceof InvalidJwt) throw new AppError('invalid_token', 'the portal session is not valid or has expired: sign in again')
        throw error
      }
    },
  }
}
