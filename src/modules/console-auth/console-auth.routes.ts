import { adminStore } from '../../http/admin-auth.ts'
import { Type } from 'typebox'
import { NoContent, problemResponses, StringEnum } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { AppError } from '../../lib/errors.ts'
import type { ConsoleSessions } from './console-sessions.ts'

/** The console's own sign-out: a console session ends here, on every process within the cache's bound. */
const AdminCredential = Type.Object(
  {
    object: Type.Literal('admin_credential'),
    via: StringEnum(['api_key', 'console_session'] as const, { description: 'An admin API key, or a console session opened from the BigCommerce control panel' }),
    scope: StringEnum(['full', 'read_only', 'support'] as const, { description: "What it may do (a console session is `full`, but cannot create keys): the console hides what it cannot" }),
  },
  { additionalProperties: false },
)

export async function consoleAuthRoutes(app: App, sessions: ConsoleSessions, forgetStore: (storeId: string) => void): Promise<void> {
  app.get('/credential', {
    schema: {
      operationId: 'getAdminCredential',
      summary: 'What the credential of this request is and may do',
      tags: ['Console'],
      response: { 200: AdminCredential },
    },
  }, async (request) => {
    adminStore(request)
    const admin = request.admin!
    return { object: 'admin_credential' as const, via: admin.via, scope: admin.scope }
  })


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
