import { Type } from 'typebox'
import { Id, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { portalActor } from '../../http/actors.ts'
import { Subscription } from '../subscriptions/index.ts'
import { ApplicableRetentionOffers, RetentionOfferType } from './retention.schemas.ts'
import type { RetentionService } from './retention.service.ts'

/** The portal's retention step: the offers shown before a cancellation is confirmed, and taking one. */
export async function retentionPortalRoutes(app: App, retention: RetentionService): Promise<void> {
  app.get('/subscriptions/:id/retention-offers', {
    schema: {
      operationId: 'listPortalRetentionOffers',
      summary: 'The retention offers that apply to this subscription, to show before a cancellation is confirmed',
      description:
        "The store's `retention_offers` that apply now, in the store's order: `pause` when the subscription is active; `skip` when it is active with a next renewal not already skipped; " +
        '`discount` when it is active or paused (and the service applies discount codes). Nothing once it is cancelled, expired or set to cancel at the end of the period.',
      tags: ['Portal'],
      params: Type.Object({ id: Id('sub') }, { additionalProperties: false }),
      response: { 200: ApplicableRetentionOffers, ...problemResponses(404) },
    },
  }, async (request) => {
    const { store, actor } = portalActor(request)
    return retention.listOffers(store, request.params.id, actor)
  })

  app.post('/subscriptions/:id/retention-offers/:type/accept', {
    schema: {
      operationId: 'acceptPortalRetentionOffer',
      summary: "Take the store's retention offer of this type instead of cancelling",
      description:
        'Performs the offer as its own action does (`pause` for the offer\'s days, resuming by itself; `skip` the next renewal; `discount` applies the offer\'s code) with that action\'s event, ' +
        'then records `subscription.retention_accepted` and a retention save (counted by the analytics). 404 when the store offers nothing of this type; ' +
        '409 `invalid_state` when the offer does not apply to the subscription now (see the list).',
      tags: ['Portal'],
      params: Type.Object({ id: Id('sub'), type: RetentionOfferType }, { additionalProperties: false }),
      response: { 200: Ref(Subscription), ...problemResponses(404, 409) },
    },
  }, async (request) => {
    const { store, actor } = portalActor(request)
    return retention.accept(store, request.params.id, actor, request.params.type)
  })
}
