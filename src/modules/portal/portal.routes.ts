import type { FastifyRequest } from 'fastify'
import type { TSchema } from 'typebox'
import type { Db, StoreRow } from '../../db/database.ts'
import { requireSecurityScheme } from '../../http/contract-defaults.ts'
import { IdParams, PageOf, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import type { Clock } from '../../lib/clock.ts'
import { notFound } from '../../lib/errors.ts'
import { Charge } from '../billing/index.ts'
import { Plan, type CatalogService } from '../catalog/index.ts'
import { portalActor } from '../portal-auth/index.ts'
import {
  CancelBody,
  ChangeRequest,
  ChangeRequestBody,
  ChangeRequestListQuery,
  findSubscriber,
  IntervalBody,
  OptionalBody,
  PauseBody,
  PaymentInstrumentBody,
  presentSubscriber,
  QuantityBody,
  ShippingAddressBody,
  Subscriber,
  Subscription,
  SwapBody,
  type ChangeRequestService,
  type SubscriptionService,
} from '../subscriptions/index.ts'
import { PageOnlyQuery, PortalSubscriptionListQuery, ProfileUpdateBody } from './portal.schemas.ts'
import { createPortalService } from './portal.service.ts'

export interface PortalRouteDeps {
  db: Db
  clock: Clock
  subscriptions: SubscriptionService
  changeRequests: ChangeRequestService
  catalog: CatalogService
  authenticatePortal: (request: FastifyRequest) => Promise<void>
}

type SubscriberActor = ReturnType<typeof portalActor>['actor']

/**
 * What a signed-in subscriber may see and do. Every route acts as the subscriber of the session token:
 * no subscriber or customer id is ever taken from the path or query, and anything of another
 * subscriber or store is simply not found.
 */
export async function portalRoutes(app: App, { db, clock, subscriptions, changeRequests, catalog, authenticatePortal }: PortalRouteDeps): Promise<void> {
  requireSecurityScheme(app, 'portalSession')
  app.addHook('onRequest', authenticatePortal)
  const portal = createPortalService({ db, clock, subscriptions, catalog })
  const Params = IdParams('sub')

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

  app.patch('/me', {
    schema: {
      operationId: 'updatePortalProfile',
      summary: "Change the signed-in subscriber's name or default shipping address",
      tags: ['Portal'],
      body: ProfileUpdateBody,
      response: { 200: Ref(Subscriber), ...problemResponses(404) },
    },
  }, async (request) => {
    const { store, actor } = portalActor(request)
    return portal.updateProfile(store, actor, request.body)
  })

  app.get('/subscriptions', {
    schema: {
      operationId: 'listPortalSubscriptions',
      summary: "The subscriber's own subscriptions, newest first",
      tags: ['Portal'],
      querystring: PortalSubscriptionListQuery,
      response: { 200: PageOf(Ref(Subscription), 'A page of your subscriptions, newest first') },
    },
  }, async (request) => {
    const { store, actor } = portalActor(request)
    return subscriptions.list(store, request.query, actor)
  })

  app.get('/subscriptions/:id', {
    schema: {
      operationId: 'getPortalSubscription',
      summary: 'Read one of your subscriptions',
      tags: ['Portal'],
      params: Params,
      response: { 200: Ref(Subscription), ...problemResponses(404) },
    },
  }, async (request) => {
    const { store, actor } = portalActor(request)
    return subscriptions.get(store, request.params.id, actor)
  })

  const action = (
    path: string,
    operationId: string,
    summary: string,
    body: TSchema | undefined,
    run: (store: StoreRow, id: string, actor: SubscriberActor, input: any) => Promise<unknown>,
  ) =>
    app.post(`/subscriptions/:id/${path}`, {
      schema: {
        operationId,
        summary,
        tags: ['Portal'],
        params: Params,
        ...(body ? { body } : {}),
        response: { 200: Ref(Subscription), ...problemResponses(404, 409) },
      },
    }, async (request) => {
      const { store, actor } = portalActor(request)
      return run(store, request.params.id, actor, request.body ?? {}) as never
    })

  // Business plans refuse direct swap, quantity and interval changes (409): propose a change request instead.
  action('pause', 'pausePortalSubscription', 'Pause, optionally until a date', OptionalBody(PauseBody), (store, id, actor, input) => subscriptions.pause(store, id, actor, input))
  action('resume', 'resumePortalSubscription', 'Resume a paused subscription', undefined, (store, id, actor) => subscriptions.resume(store, id, actor))
  action('cancel', 'cancelPortalSubscription', 'Cancel now or at the end of the paid period', OptionalBody(CancelBody), (store, id, actor, input) => subscriptions.cancel(store, id, actor, input))
  action('skip', 'skipPortalNextRenewal', 'Skip the next renewal (no charge; the period advances)', undefined, (store, id, actor) => subscriptions.skip(store, id, actor))
  action('unskip', 'unskipPortalNextRenewal', 'Undo a skip of the next renewal', undefined, (store, id, actor) => subscriptions.unskip(store, id, actor))
  action('swap', 'swapPortalSubscriptionPlan', 'Move to another plan (see swap-options) from the next period', SwapBody, (store, id, actor, input) => subscriptions.swap(store, id, actor, input))
  action('quantity', 'changePortalSubscriptionQuantity', 'Change the quantity from the next charge', QuantityBody, (store, id, actor, input) => subscriptions.changeQuantity(store, id, actor, input))
  action('interval', 'changePortalSubscriptionInterval', 'Change how often it renews, from the next charge', IntervalBody, (store, id, actor, input) => subscriptions.changeInterval(store, id, actor, input))
  action('shipping-address', 'updatePortalSubscriptionShippingAddress', 'Change where it ships', ShippingAddressBody, (store, id, actor, input) => subscriptions.updateShippingAddress(store, id, actor, input))
  action('payment-instrument', 'updatePortalSubscriptionPaymentInstrument', 'Charge another vault instrument from now on', PaymentInstrumentBody, (store, id, actor, input) => subscriptions.updatePaymentInstrument(store, id, actor, input))

  app.get('/subscriptions/:id/charges', {
    schema: {
      operationId: 'listPortalSubscriptionCharges',
      summary: "A subscription's charge attempts, newest first",
      tags: ['Portal'],
      params: Params,
      querystring: PageOnlyQuery,
      response: { 200: PageOf(Ref(Charge), 'A page of charge attempts, newest first'), ...problemResponses(404) },
    },
  }, async (request) => {
    const { store, actor } = portalActor(request)
    return portal.listCharges(store, actor, request.params.id, request.query)
  })

  app.get('/subscriptions/:id/swap-options', {
    schema: {
      operationId: 'listPortalSwapOptions',
      summary: 'The plans this subscription may swap to',
      description: "Active plans of the store in the subscription's currency, other than its current plan; newest first.",
      tags: ['Portal'],
      params: Params,
      querystring: PageOnlyQuery,
      response: { 200: PageOf(Ref(Plan), 'A page of plans, newest first'), ...problemResponses(404) },
    },
  }, async (request) => {
    const { store, actor } = portalActor(request)
    return portal.listSwapOptions(store, actor, request.params.id, request.query)
  })

  app.post('/subscriptions/:id/change-requests', {
    schema: {
      operationId: 'createPortalChangeRequest',
      summary: 'Propose a change to a business-plan subscription for the merchant to decide',
      description: 'Only for subscriptions on b2b plans (409 `invalid_state` otherwise). Nothing changes until the merchant approves.',
      tags: ['Portal'],
      params: Params,
      body: ChangeRequestBody,
      response: { 201: Ref(ChangeRequest), ...problemResponses(404, 409) },
    },
  }, async (request, reply) => {
    const { store, actor } = portalActor(request)
    const created = await changeRequests.request(store, request.params.id, actor, request.body)
    return reply.code(201).send(created)
  })

  app.get('/change-requests', {
    schema: {
      operationId: 'listPortalChangeRequests',
      summary: 'Your change requests, newest first',
      tags: ['Portal'],
      querystring: ChangeRequestListQuery,
      response: { 200: PageOf(Ref(ChangeRequest), 'A page of your change requests, newest first') },
    },
  }, async (request) => {
    const { store, actor } = portalActor(request)
    return changeRequests.list(store, request.query, actor)
  })

  app.get('/change-requests/:id', {
    schema: {
      operationId: 'getPortalChangeRequest',
      summary: 'Read one of your change requests',
      tags: ['Portal'],
      params: IdParams('cr'),
      response: { 200: Ref(ChangeRequest), ...problemResponses(404) },
    },
  }, async (request) => {
    const { store, actor } = portalActor(request)
    return changeRequests.get(store, request.params.id, actor)
  })
}
