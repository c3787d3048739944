import { decodeJwt, errors, jwtVerify, SignJWT } from 'jose'
import { randomUUID } from 'node:crypto'
import type { Engine } from '../../db/connect.ts'
import type { Db, Executor } from '../../db/database.ts'
import { keptSecret } from '../../db/kept-secrets.ts'
import type { Clock } from '../../lib/clock.ts'
import { AppError } from '../../lib/errors.ts'
import { lazySecretKey } from '../../lib/secret-key.ts'
import { randomToken } from '../../lib/secrets.ts'
import { endConsoleSession, endStoreConsoleSessions, insertConsoleSession } from './console-auth.repository.ts'

/**
 * Console sessions: what the platform's load callback (GET /platform/load, a verified
 * signed_payload_jwt) hands the merchant console instead of an admin API key. Single-purpose and
 * short-lived: HS256 with a key of their own (never the portal's), `aud: console`, `sub` = the store
 * id, one hour. The admin authenticator accepts them beside admin keys; the portal's verifier never
 * does (another key and another audience), and the console's verifier never accepts a portal token.
 *
 * Each session is also a row (console_sessions): the token proves who signed it, the row that it is
 * still good. Signing out, uninstalling the app and disconnecting the store end the row, and the
 * authenticator asks the row (through the authentication cache, so every process sees an end within
 * its bound). A load payload opens one session: its `jti` is kept with the session, and a replay of
 * the same payload is refused.
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
export type ConsoleSessionTokens = ReturnType<typeof createConsoleSessionTokens>

/** The signing key, generated once and kept beside the portal's (a file in DATA_DIR, or a row of service_secrets). */
export async function resolveConsoleSessionSecret(source: { engine: Engine; dataDir: string; db: Db }): Promise<Uint8Array> {
  return new TextEncoder().encode(await keptSecret(source, { file: SECRET_FILE, row: SECRET_ROW }, () => randomToken(32)))
}

/** A JWT's shape (three base64url parts): told apart from an admin key without trying either. */
export function looksLikeJwt(token: string): boolean {
  return /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/.test(token)
}

/** The tokens alone: signed and verified, nothing recorded (the sessions below keep a row of each). */
export function createConsoleSessionTokens({ secret, issuer, clock, ttlSeconds = CONSOLE_SESSION_TTL_SECONDS }: { secret: () => Promise<Uint8Array>; issuer: string; clock: Clock; ttlSeconds?: number }) {
  const nowSeconds = () => Math.floor(clock.now().getTime() / 1000)
  // Made once: handing jose the raw bytes would import the key again on every sign.
  const key = lazySecretKey(secret)

  return {
    async sign(storeId: string): Promise<{ token: string; claims: ConsoleSessionClaims }> {
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

/** Console sessions: a signed token and a row each (see the module comment). */
export function createConsoleSessions({ db, clock, tokens }: { db: Db; clock: Clock; tokens: ConsoleSessionTokens }) {
  return {
    /**
     * A new session for the store, signed now (the signing key may have to be read first, so never
     * inside a transaction), good once `record` keeps its row in the caller's transaction; `record` is
     * 401 when the load payload `loadKey` names already opened one.
     */
    async prepare(storeId: string): Promise<{ token: string; claims: ConsoleSessionClaims; record: (executor: Executor, loadKey: string) => Promise<void> }> {
      const issued = await tokens.sign(storeId)
      const { jti, iat, exp } = issued.claims
      const record = async (executor: Executor, loadKey: string) => {
        const recorded = await insertConsoleSession(executor, { jti, store_id: storeId, load_key: loadKey, created_at: new Date(iat * 1000), expires_at: new Date(exp * 1000) })
        if (!recorded) throw new AppError('invalid_token', 'this sign-in from the BigCommerce control panel was already used: open the app again from the control panel')
      }
      return { ...issued, record }
    },

    /** The token's signature and claims; whether its session is still good is the authenticator's next question (its row). */
    verify: tokens.verify,

    /** Signs the session out; false when it had ended already. */
    signOut(storeId: string, jti: string): Promise<boolean> {
      return endConsoleSession(db, storeId, jti, clock.now(), 'signed_out')
    },

    /** Ends every open session of the store, in the caller's transaction (its app uninstalled or its connection removed). */
    endForStore(trx: Executor, storeId: string, at: Date): Promise<number> {
      return endStoreConsoleSessions(trx, storeId, at, 'disconnected')
    },
  }
}
