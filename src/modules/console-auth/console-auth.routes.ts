import { adminStore } from '../../http/admin-auth.ts'
import { NoContent, problemResponses } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { AppError } from '../../lib/errors.ts'
import type { ConsoleSessions } from './console-sessions.ts'

/** The console's own sign-out: a console session ends here, on every process within the cache's bound. */
export async function consoleAuthRoutes(app: App, sessions: ConsoleSessions, forgetStore: (storeId: string) => void): Promise<void> {
  app.delete('/console-session', {
    schema: {
      operationId: 'signOutConsoleSession',
      summary: 'Sign the console session out',
      description:
        'Ends the console session the request is signed in with (one opened by the platform\'s load callback): it is refused from then on, on every process within a second. ' +
        'A request signed in with an admin API key is 409 `invalid_state`: revoke the key to end it.',
      tags: ['Console'],
      response: { 204: NoContent, ...problemResponses(409) },
    },
  }, async (request, reply) => {
    const store = adminStore(request)
    const admin = request.admin!
    if (admin.via !== 'console_session' || !admin.sessionId) throw new AppError('invalid_state', 'signed in with an admin API key, not a console session: revoke the key to end it')
    await sessions.signOut(store.id, admin.sessionId)
    // This process sees it at once; the others within the cache's bound.
    forgetStore(store.id)
    return reply.code(204).send(null)
  })
}
