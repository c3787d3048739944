import type { FastifyRequest } from 'fastify'
import { requireSecurityScheme } from '../../http/contract-defaults.ts'
import { problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { notFound } from '../../lib/errors.ts'
import { portalActor } from '../portal-auth/index.ts'
import { findSubscriber, presentSubscriber, Subscriber, type ChangeRequestService, type SubscriptionService } from '../subscriptions/index.ts'
import type { Db } from '../../db/database.ts'

export interface PortalRouteDeps {
  db: Db
  subscriptions: SubscriptionService
  changeRequests: ChangeRequestService
  authenticatePortal: (request: FastifyRequest) => Promise<void>
}

/**
 * What a signed-in subscriber may see and do. Every route acts as the subscriber of the session token:
 * no subscriber or customer id is ever taken from the path or query, and anything of another
 * subscriber or store is simply not found.
 */
export async function portalRoutes(app: App, { db, subscriptions, changeRequests, authenticatePortal }: PortalRouteDeps): Promise<void> {
  requireSecurityScheme(app, 'portalSession')
  app.addHook('onRequest', authenticatePortal)

  app.get('/me', {
    schema: {
      operationId: 'getPortalProfile',
      summary: 'The signed-in subscriber',
      tags: ['Portal'],
      response: { 200: Ref(Subscriber), ...problemResponses(404) },
    },
  }, async (request) => {
    const { store, actor } = portalActor(request)
    const row = await findSubscriber(db, store.id, actor.subscriberId)
    if (!row) throw notFound('subscriber', actor.subscriberId)
    return presentSubscriber(row, store.store_hash)
  })

  void subscriptions
  void changeRequests
}
