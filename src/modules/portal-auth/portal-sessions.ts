import { errors, jwtVerify, SignJWT } from 'jose'
import { randomUUID, type webcrypto } from 'node:crypto'
import type { Clock } from '../../lib/clock.ts'
import { AppError } from '../../lib/errors.ts'

/** The one algorithm portal sessions use; tokens naming any other (`none` included) are refused. */
export const SESSION_ALGORITHM = 'HS256'
export const SESSION_AUDIENCE = 'portal'
export const SESSION_TTL_SECONDS = 15 * 60

export interface SessionClaims {
  /** The subscriber: the only source of who is asking. */
  sub: string
  /** The store the subscriber belongs to. */
  store: string
  jti: string
  iat: number
  exp: number
}

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
  // Imported once: handing jose the raw bytes would import the key again on every sign and verify.
  let imported: Promise<webcrypto.CryptoKey> | undefined
  const signingKey = (): Promise<webcrypto.CryptoKey> => {
    imported ??= secret()
      .then((bytes) => crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']))
      .catch((error: unknown) => {
        imported = undefined // a database hiccup must not poison every later request
        throw error
      })
    return imported
  }

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
        .sign(await signingKey())
      return { token, claims }
    },

    /** Checks signature, algorithm, issuer, audience and lifetime; any failure is the same 401. */
    async verify(token: string): Promise<SessionClaims> {
      try {
        const { payload } = await jwtVerify(token, await signingKey(), {
          algorithms: [SESSION_ALGORITHM],
          issuer,
          audience: SESSION_AUDIENCE,
          currentDate: clock.now(),
          requiredClaims: ['sub', 'jti', 'iat', 'exp'],
        })
        if (typeof payload.store !== 'string' || typeof payload.sub !== 'string') throw new errors.JWTClaimValidationFailed('missing claims', payload)
        return { sub: payload.sub, store: payload.store, jti: payload.jti!, iat: payload.iat!, exp: payload.exp! }
      } catch (error) {
        if (error instanceof errors.JOSEError) throw new AppError('invalid_token', 'the portal session is not valid or has expired: sign in again')
        throw error
      }
    },
  }
}
