import { portalActor } from '../../http/actors.ts'
import { IdParams, PageOf, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { Charge, UPCOMING_RENEWAL_DESCRIPTION, UpcomingRenewal, type UpcomingRenewals } from '../billing/index.ts'
import { Plan } from '../catalog/index.ts'
import { PaymentInstrumentList } from '../platform/index.ts'
import {
  ChangeRequest,
  ChangeRequestBody,
  ChangeRequestListQuery,
  Subscriber,
  Subscription,
  registerSubscriptionActions,
  type ChangeRequestService,
  type SubscriptionService,
} from '../subscriptions/index.ts'
import { PageOnlyQuery, PortalStore, PortalSubscriptionListQuery, ProfileUpdateBody, SubscriptionVariantList } from './portal.schemas.ts'
import type { PortalService } from './portal.service.ts'

export interface PortalRouteDeps {
  portal: PortalService
  /** The next renewal of a subscription, priced by billing (GET /subscriptions/{id}/upcoming). */
  upcoming: UpcomingRenewals
  subscriptions: SubscriptionService
  changeRequests: ChangeRequestService
}

/**
 * What a signed-in subscriber may see and do. Every route acts as the subscriber of the session token:
 * no subscriber or customer id is ever taken from the path or query, and anything of another
 * subscriber or store is simply not found.
 */
export async function portalRoutes(app: App, { portal, upcoming, subscriptions, changeRequests }: PortalRouteDeps): Promise<void> {
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
    return portal.profile(store, actor)
  })

  app.get('/store', {
    schema: {
      operationId: 'getPortalStore',
      summary: "The subscriber's store: name, time zone and clock, past-due cancellation days, cancellation reasons",
      description:
        "What the portal pages read about the signed-in subscriber's store: `now` is the store's clock (its test clock on a test store), so a date picker's tomorrow and one year ahead are the store's; `past_due_cancel_days` after a subscription's `past_due_at` it is cancelled; `cancellation_reasons` are the codes a cancellation may name as `reason_code`.",
      tags: ['Portal'],
      response: { 200: PortalStore },
    },
  }, async (request) => portal.store(portalActor(request).store))

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

  app.get('/payment-instruments', {
    schema: {
      operationId: 'listPortalPaymentInstruments',
      summary: 'Your stored payment instruments, to pay your subscriptions with',
      description:
        "On a store that charges through BigCommerce (`gateway: platform`): the stored cards of the signed-in subscriber's platform customer, read live from the platform (`token`, `brand`, `last_4`, `expiry_month`, `expiry_year`, `is_default`; never more). Only these tokens are accepted when changing a subscription's instrument. PayPal and bank accounts are not listed: renewals are paid with stored cards only. A subscriber without a platform customer of their own (a gift's recipient) has an empty list. " +
        'On a test-gateway store (`gateway: test`) the list is empty: the test gateway keeps no instruments and any instrument id is accepted. ' +
        '503 `platform_unavailable` when BigCommerce cannot be asked (the store is not connected, the platform is unreachable, refuses the store\'s token or rate limits past a few seconds).',
      tags: ['Portal'],
      response: { 200: PaymentInstrumentList, ...problemResponses(503) },
    },
  }, async (request) => {
    const { store, actor } = portalActor(request)
    return portal.paymentInstruments(store, actor)
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

  // Business plans refuse direct swap, quantity and interval changes (409): propose a change request instead.
  registerSubscriptionActions(app, {
    subscriptions,
    audience: 'portal',
    tags: ['Portal'],
    actorOf: portalActor,
    summaries: { swap: 'Move to another plan (see swap-options), or change the variant on the current plan (see variants), from the next period' },
    descriptions: {
      swap:
        'From the next period. With another `plan_id` (one of swap-options) the subscription takes that plan\'s price, cadence and variant. ' +
        'A subscriber names `platform_variant_id` only with the current `plan_id`, to change the variant alone: it must be one the platform lists for the product right now as `purchasable` (see `GET /subscriptions/{id}/variants`), ' +
        'checked live before anything changes; the price stays the subscription\'s own, since renewals are ordered at it whatever the variant. ' +
        'Else 400 `validation_failed` at `/body/platform_variant_id` (not a variant of this product, not for sale, or not the current plan). 503 `platform_unavailable` when BigCommerce cannot be asked; nothing changes then.',
      reactivate:
        "Only when the store has switched on `portal_reactivation` (`GET /store` says it as `reactivation`); else 403 `forbidden` and nothing changes. As the admin's: on the subscription's plan, terms and payment instrument, " +
        'charged at once through the renewal engine (200 once settled, 202 while pending), or from a later `next_charge_at` with nothing charged until then. ' +
        'A subscriber cannot start it later than the end of the period already paid for (400 `validation_failed` at `/body/next_charge_at`), nor restart a gift, which whoever pays for it restarts (403 `forbidden`). ' +
        '409 `invalid_state` unless it is cancelled, and when its plan is archived or the store\'s billing is stopped; 409 `billing_disabled` when it would be charged now while the store\'s billing is switched off. Records `subscription.reactivated`.',
    },
    problems: { swap: [503], reactivate: [403] },
  })

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

  app.get('/subscriptions/:id/upcoming', {
    schema: {
      operationId: 'getPortalUpcomingRenewal',
      summary: "One of your subscriptions' next renewal charge, as it stands",
      description: `${UPCOMING_RENEWAL_DESCRIPTION} Another subscriber's subscription is 404, like every portal route.`,
      tags: ['Portal'],
      params: Params,
      response: { 200: Ref(UpcomingRenewal), ...problemResponses(404, 409) },
    },
  }, async (request) => {
    const { store, actor } = portalActor(request)
    return upcoming.get(store, request.params.id, actor)
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

  app.get('/subscriptions/:id/variants', {
    schema: {
      operationId: 'listPortalSubscriptionVariants',
      summary: "The variants of the subscription's product (size, grind...) it may change to",
      description:
        "Read live from the store's BigCommerce catalogue (`GET /v3/catalog/products/{id}/variants`): each variant's id, sku, options as words (`label`, e.g. \"Grind: Whole, Size: 1 kg\"; the sku when it has none), " +
        'whether the store sells it now (`purchasable`) and whether the subscription renews with it (`current`). Change to a purchasable one with `swap` and the current `plan_id`; the price stays the same. ' +
        '`data` is empty when there is nothing to choose: a store on the test gateway or not connected to BigCommerce, a product without a platform product id, or one that has only its base variant. ' +
        "503 `platform_unavailable` when BigCommerce cannot be asked (unreachable, refuses the store's token, answers 5xx or rate limits past a few seconds). Another subscriber's subscription is 404, like every portal route.",
      tags: ['Portal'],
      params: Params,
      response: { 200: SubscriptionVariantList, ...problemResponses(404, 503) },
    },
  }, async (request) => {
    const { store, actor } = portalActor(request)
    return portal.listVariants(store, actor, request.params.id)
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
