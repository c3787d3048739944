import type { Engine } from '../../db/connect.ts'
import type { Db } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Module } from '../module.ts'
import { createConsoleSessions, resolveConsoleSessionSecret, type ConsoleSessions } from './console-sessions.ts'

export interface ConsoleAuthModuleDeps {
  db: Db
  clock: Clock
  /** JWT_ISSUER. */
  issuer: string
  /** Where the generated signing key is kept: beside the embedded database's data, or in PostgreSQL. */
  keyStore: { engine: Engine; dataDir: string }
}

/**
 * The merchant console's sessions, opened by the platform's load callback: a key of their own, never
 * the portal's. The admin authenticator (src/http/admin-auth.ts) accepts them beside admin keys.
 */
export function createConsoleAuthModule({ db, clock, issuer, keyStore }: ConsoleAuthModuleDeps): Module<ConsoleSessions> {
  return {
    name: 'console-auth',
    service: createConsoleSessions({ secret: () => resolveConsoleSessionSecret({ ...keyStore, db }), issuer, clock }),
  }
}

export { CONSOLE_SESSION_AUDIENCE, looksLikeJwt, type ConsoleSessionClaims, type ConsoleSessions } from './console-sessions.ts'
