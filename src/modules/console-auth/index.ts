import type { Engine } from '../../db/connect.ts'
import type { Db } from '../../db/database.ts'
import { handleJob } from '../../jobs/job-kinds.ts'
import { runAgainIn } from '../../jobs/runner.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Module } from '../module.ts'
import { PurgeConsoleSessions } from './console-auth.jobs.ts'
import { deleteStaleConsoleSessions } from './console-auth.repository.ts'
import { consoleAuthRoutes } from './console-auth.routes.ts'
import { createConsoleSessions, createConsoleSessionTokens, resolveConsoleSessionSecret, type ConsoleSessions } from './console-sessions.ts'

const PURGE_EVERY_MS = 3_600_000
/** Ended or expired sessions are kept this long for the record, then dropped. */
const KEEP_ENDED_MS = 24 * 3_600_000

export interface ConsoleAuthModuleDeps {
  db: Db
  clock: Clock
  /** JWT_ISSUER. */
  issuer: string
  /** Where the generated signing key is kept: beside the embedded database's data, or in PostgreSQL. */
  keyStore: { engine: Engine; dataDir: string }
  /** Tells the authentication cache a store's sessions changed (this process sees a sign-out at once). */
  forgetStore: (storeId: string) => void
}

/**
 * The merchant console's sessions, opened by the platform's load callback: a key of their own, never
 * the portal's, and a row each that says whether the session is still good. The admin authenticator
 * (src/http/admin-auth.ts) accepts them beside admin keys.
 */
export function createConsoleAuthModule({ db, clock, issuer, keyStore, forgetStore }: ConsoleAuthModuleDeps): Module<ConsoleSessions> {
  const tokens = createConsoleSessionTokens({ secret: () => resolveConsoleSessionSecret({ ...keyStore, db }), issuer, clock })
  const service = createConsoleSessions({ db, clock, tokens })
  return {
    name: 'console-auth',
    service,
    routes: { admin: (app) => consoleAuthRoutes(app, service, forgetStore) },
    jobs: [
      handleJob(PurgeConsoleSessions, async () => {
        await deleteStaleConsoleSessions(db, new Date(clock.now().getTime() - KEEP_ENDED_MS))
        return runAgainIn(PURGE_EVERY_MS)
      }, { recurring: { instances: 1 } }),
    ],
  }
}

export { PurgeConsoleSessions } from './console-auth.jobs.ts'
export { CONSOLE_SESSION_AUDIENCE, createConsoleSessionTokens, looksLikeJwt, type ConsoleSessionClaims, type ConsoleSessions } from './console-sessions.ts'
