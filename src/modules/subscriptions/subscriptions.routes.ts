import { adminStore } from '../../http/admin-auth.ts'
import { IdParams, PageOf, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { adminActor } from '../../http/actors.ts'
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
import { PaymentInstrumentList } from '../platform/index.ts'

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
    const { store, actor } = adminActor(request)
    const outcome = await checkouts.checkout(store, request.body, actor)
    return reply.code(201).send({ data: outcome.data })
  })

  app.get('/subscriptions', {
    schema: {
      operationId: 'listSubscriptions',
      summary: 'List or search subscriptions, newest first',
      description:
        'Each with its subscriber. `q` searches (docs/contract.md, Search and the subscriber page): part of the email or name, an order id, an id. ' +
        'Filters combine; a search pages like any list, with `next_cursor`.',
      tags: ['Subscriptions'],
      querystring: SubscriptionListQuery,
      response: { 200: PageOf(Ref(SubscriptionWithSubscriber), 'A page of subscriptions with their subscribers, newest first'), ...problemResponses(400) },
    },
  }, async (request) => subscriptions.listWithSubscribers(adminStore(request), request.query, adminActor(request).actor))

  app.get('/subscriptions/:id', {
    schema: {
      operationId: 'getSubscription',
      summary: 'Read a subscription with its subscriber',
      tags: ['Subscriptions'],
      params: Params,
      response: { 200: Ref(SubscriptionWithSubscriber), ...problemResponses(404) },
    },
  }, async (request) => subscriptions.getWithSubscriber(adminStore(request), request.params.id))

  app.get('/subscriptions/:id/payment-instruments', {
    schema: {
      operationId: 'listSubscriptionPaymentInstruments',
      summary: 'The stored payment instruments this subscription may change to',
      description:
        "What `POST .../payment-instrument` accepts, as the portal's `GET /api/v1/portal/payment-instruments` lists it for the subscriber: on a store whose gateway is `platform`, the stored cards of the subscription's paying platform customer (the subscriber's, else the one its checkout named), read live from BigCommerce; its current one is the card whose `token` is the subscription's `payment_instrument_id`. " +
        'A subscription without a platform customer has an empty list. On a test-gateway store (`gateway: test`) the list is empty: any instrument id is accepted. ' +
        '503 `platform_unavailable` when BigCommerce cannot be asked (not connected, unreachable, refusing the token or rate limiting past a few seconds).',
      tags: ['Subscriptions'],
      params: Params,
      response: { 200: PaymentInstrumentList, ...problemResponses(404, 503) },
    },
  }, async (request) => subscriptions.paymentInstrumentsOf(adminStore(request), request.params.id))

  registerSubscriptionActions(app, { subscriptions, audience: 'admin', tags: ['Subscriptions'], actorOf: adminActor })

  const RequestParams = IdParams('cr')

  app.get('/change-requests', {
    schema: {
      operationId: 'listChangeRequests',
      summary: 'List B2B change requests, newest first',
      tags: ['Change requests'],
      querystring: ChangeRequestListQuery,
      response: { 200: PageOf(Ref(ChangeRequest), 'A page of change requests, newest first') },
    },
  }, async (request) => changeRequests.list(adminStore(request), request.query, adminActor(request).actor))

  app.get('/change-requests/:id', {
    schema: { operationId: 'getChangeRequest', summary: 'Read a change request', tags: ['Change requests'], params: RequestParams, response: { 200: Ref(ChangeRequest), ...problemResponses(404) } },
  }, async (request) => changeRequests.get(adminStore(request), request.params.id, adminActor(request).actor))

  app.post('/change-requests/:id/approve', {
    schema: {
      operationId: 'approveChangeRequest',
      summary: 'Approve: the change applies from the next period',
      tags: ['Change requests'],
      params: RequestParams,
      body: OptionalBody(DecisionBody),
      response: { 200: Ref(ChangeRequest), ...problemResponses(404, 409) },
    },
  }, async (request) => changeRequests.approve(adminStore(request), request.params.id, adminActor(request).actor, request.body?.reason))

  app.post('/change-requests/:id/reject', {
    schema: {
      operationId: 'rejectChangeRequest',
      summary: 'Reject a change request',
      tags: ['Change requests'],
      params: RequestParams,
      body: OptionalBody(DecisionBody),
      response: { 200: Ref(ChangeRequest), ...problemResponses(404, 409) },
    },
  }, async (request) => changeRequests.reject(adminStore(request), request.params.id, adminActor(request).actor, request.body?.reason))
}
