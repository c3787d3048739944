import { adminActor } from '../../http/actors.ts'
import { IdParams, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { SubscriberDetail } from './customer.schemas.ts'
import type { CustomersService } from './customers.service.ts'

/** A merchant's page on one subscriber: read by every admin key scope (docs/contract.md, Search and the subscriber page). */
export async function customerAdminRoutes(app: App, customers: CustomersService): Promise<void> {
  app.get('/subscribers/:id', {
    schema: {
      operationId: 'getSubscriber',
      summary: 'One subscriber with everything of theirs',
      description:
        'The subscriber with every subscription (any state), the shipping addresses and payment instruments their subscriptions use (as stored: brand, last 4, expiry), ' +
        'their latest charges and the latest emails sent to them; each list that can be longer has `next_cursor` for its own list filtered by `subscriber_id`.',
      tags: ['Subscribers'],
      params: IdParams('cus'),
      response: { 200: Ref(SubscriberDetail), ...problemResponses(404) },
    },
  }, async (request) => {
    const { store, actor } = adminActor(request)
    return customers.get(store, request.params.id, actor)
  })
}
