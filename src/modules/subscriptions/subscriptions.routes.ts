import { adminStore } from '../../http/admin-auth.ts'
import { IdParams, PageOf, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import type { Actor } from '../../http/actors.ts'
import type { ChangeRequestService } from './change-requests.service.ts'
import type { CheckoutService } from './checkout.service.ts'
import {
  ChangeRequest,
  ChangeRequestListQuery,
  CheckoutBody,
  CheckoutResult,
  DecisionBody,
  OptionalBody,
  Subscription,
  SubscriptionListQuery,
  SubscriptionWithSubscriber,
} from './subscription.schemas.ts'
import type { SubscriptionService } from './subscriptions.service.ts'
import { registerSubscriptionActions } from './subscription-action.routes.ts'

const ADMIN: Actor = { kind: 'admin' }

export interface SubscriptionRouteDeps {
  subscriptions: SubscriptionService
  checkouts: CheckoutService
  changeRequests: ChangeRequestService
}

/** The merchant's view of subscriptions: ingest checkouts, read, and act on a subscriber's behalf. */
export async function subscriptionAdminRoutes(app: App, { subscriptions, checkouts, changeRequests }: SubscriptionRouteDeps): Promise<void> {
  const Params = IdParams('sub')

  app.post('/checkouts', {
    schema: {
      operationId: 'ingestCheckout',
      summary: 'Turn a completed platform checkout into subscriptions',
      description:
        'One subscription per item. Idempotent by `platform_order_id`: the same order again creates nothing and answers the same subscriptions; ' +
        'the same order with other contents is 409 `conflict`. ' +
        'On a store whose gateway is `platform`, `platform_customer_id` and `billing_address` are required (400 `validation_failed`) and ' +
        "`payment_instrument_id` must be one of that customer's stored cards on BigCommerce (400 `invalid_payment_instrument`); the subscriptions keep its brand and last 4. " +
        'When BigCommerce cannot be asked it is 503 `platform_unavailable` and nothing is created.',
      tags: ['Subscriptions'],
      body: CheckoutBody,
      response: { 201: Ref(CheckoutResult), ...problemResponses(404, 409, 503) },
    },
  }, async (request, reply) => {
    const outcome = await checkouts.checkout(adminStore(request), request.body)
    return reply.code(201).send({ data: outcome.data })
  })

  app.get('/subscriptions', {
    schema: {
      operationId: 'listSubscriptions',
      summary: 'List subscriptions, newest first',
      tags: ['Subscriptions'],
      querystring: SubscriptionListQuery,
      response: { 200: PageOf(Ref(Subscription), 'A page of subscriptions, newest first') },
    },
  }, async (request) => subscriptions.list(adminStore(request), request.query, ADMIN))

  app.get('/subscriptions/:id', {
    schema: {
      operationId: 'getSubscription',
      summary: 'Read a subscription with its subscriber',
      tags: ['Subscriptions'],
      params: Params,
      response: { 200: Ref(SubscriptionWithSubscriber), ...problemResponses(404) },
    },
  }, async (request) => subscriptions.getWithSubscriber(adminStore(request), request.params.id))

  registerSubscriptionActions(app, { subscriptions, audience: 'admin', tags: ['Subscriptions'], actorOf: (request) => ({ store: adminStore(request), actor: ADMIN }) })

  const RequestParams = IdParams('cr')

  app.get('/change-requests', {
    schema: {
      operationId: 'listChangeRequests',
      summary: 'List B2B change requests, newest first',
      tags: ['Change requests'],
      querystring: ChangeRequestListQuery,
      response: { 200: PageOf(Ref(ChangeRequest), 'A page of change requests, newest first') },
    },
  }, async (request) => changeRequests.list(adminStore(request), request.query, ADMIN))

  app.get('/change-requests/:id', {
    schema: { operationId: 'getChangeRequest', summary: 'Read a change request', tags: ['Change requests'], params: RequestParams, response: { 200: Ref(ChangeRequest), ...problemResponses(404) } },
  }, async (request) => changeRequests.get(adminStore(request), request.params.id, ADMIN))

  app.post('/change-requests/:id/approve', {
    schema: {
      operationId: 'approveChangeRequest',
      summary: 'Approve: the change applies from the next period',
      tags: ['Change requests'],
      params: RequestParams,
      body: OptionalBody(DecisionBody),
      response: { 200: Ref(ChangeRequest), ...problemResponses(404, 409) },
    },
  }, async (request) => changeRequests.approve(adminStore(request), request.params.id, request.body?.reason))

  app.post('/change-requests/:id/reject', {
    schema: {
      operationId: 'rejectChangeRequest',
      summary: 'Reject a change request',
      tags: ['Change requests'],
      params: RequestParams,
      body: OptionalBody(DecisionBody),
      response: { 200: Ref(ChangeRequest), ...problemResponses(404, 409) },
    },
  }, async (request) => changeRequests.reject(adminStore(request), request.params.id, request.body?.reason))
}
