import { decodeJwt, errors, jwtVerify, SignJWT } from 'jose'
import { randomUUID } from 'node:crypto'
import type { Engine } from '../../db/connect.ts'
import type { Db } from '../../db/database.ts'
import { keptSecret } from '../../db/kept-secrets.ts'
import type { Clock } from '../../lib/clock.ts'
import { AppError } from '../../lib/errors.ts'
import { lazySecretKey } from '../../lib/secret-key.ts'
import { randomToken } from '../../lib/secrets.ts'

/**
 * Console sessions: what the platform's load callback (GET /platform/load, a verified
 * signed_payload_jwt) hands the merchant console instead of an admin API key. Single-purpose and
 * short-lived: HS256 with a key of their own (never the portal's), `aud: console`, `sub` = the store
 * id, one hour. The admin authenticator accepts them beside admin keys; the portal's verifier never
 * does (another key and another audience), and the console's verifier never accepts a portal token.
 */
export const CONSOLE_SESSION_ALGORITHM = 'HS256'
export const CONSOLE_SESSION_AUDIENCE = 'console'
export const CONSOLE_SESSION_TTL_SECONDS = 60 * 60

const SECRET_FILE = 'console-session-secret'
const SECRET_ROW = 'console_session_signing_key'

export interface ConsoleSessionClaims {
  /** The store: the only source of which store the session may see. */
  sub: string
  jti: string
  iat: number
  exp: number
}

export type ConsoleSessions = ReturnType<typeof createConsoleSessions>

/** The signing key, generated once and kept beside the portal's (a file in DATA_DIR, or a row of service_secrets). */
export async function resolveConsoleSessionSecret(source: { engine: Engine; dataDir: string; db: Db }): Promise<Uint8Array> {
  return new TextEncoder().encode(await keptSecret(source, { file: SECRET_FILE, row: SECRET_ROW }, () => randomToken(32)))
}

/** A JWT's shape (three base64url parts): told apart from an admin key without trying either. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token)
}

export function createConsoleSessions({ secret, issuer, clock, ttlSeconds = CONSOLE_SESSION_TTL_SECONDS }: { secret: () => Promise<Uint8Array>; issuer: string; clock: Clock; ttlSeconds?: number }) {
  const nowSeconds = () => Math.floor(clock.now().getTime() / 1000)
  // Made once: handing jose the raw bytes would import the key again on every sign.
  const key = lazySecretKey(secret)

  return {
    async issue(storeId: string): Promise<{ token: string; claims: ConsoleSessionClaims }> {
      const iat = nowSeconds()
      const claims: ConsoleSessionClaims = { sub: storeId, jti: randomUUID(), iat, exp: iat + ttlSeconds }
      const token = await new SignJWT({})
        .setProtectedHeader({ alg: CONSOLE_SESSION_ALGORITHM, typ: 'JWT' })
        .setIssuer(issuer)
        .setAudience(CONSOLE_SESSION_AUDIENCE)
        .setSubject(storeId)
        .setJti(claims.jti)
        .setIssuedAt(iat)
        .setExpirationTime(claims.exp)
        .sign(await key.load())
      return { token, claims }
    },

    /** Signature, algorithm, issuer, audience and lifetime; any failure is the same 401. */
    async verify(token: string): Promise<ConsoleSessionClaims> {
      try {
        // Another audience (a portal session, say) is refused before the key is loaded: a refused
        // request must not be what first generates and stores the signing key.
        const claimed = decodeJwt(token)
        const audience = Array.isArray(claimed.aud) ? claimed.aud : [claimed.aud]
        if (!audience.includes(CONSOLE_SESSION_AUDIENCE)) throw new errors.JWTClaimValidationFailed('not a console session', claimed, 'aud')
        const { payload } = await jwtVerify(token, key.now() ?? (await key.load()), {
          algorithms: [CONSOLE_SESSION_ALGORITHM],
          issuer,
          audience: CONSOLE_SESSION_AUDIENCE,
          requiredClaims: ['sub', 'jti', 'iat', 'exp'],
          currentDate: clock.now(),
        })
        const { sub, jti, iat, exp } = payload
        if (typeof sub !== 'string' || typeof jti !== 'string' || typeof iat !== 'number' || typeof exp !== 'number') throw new errors.JWTClaimValidationFailed('missing or mistyped claims', payload)
        // Never longer than the lifetime it is issued with, whatever a token claims.
        if (exp - iat > ttlSeconds) throw new errors.JWTClaimValidationFailed('lifetime too long', payload, 'exp')
        return { sub, jti, iat, exp }
      } catch (error) {
        if (error instanceof errors.JOSEError) throw new AppError('invalid_token', 'the console session is not valid or has expired: open the app again from the BigCommerce control panel, or sign in with an admin API key')
        throw error
      }
    },
  }
}
