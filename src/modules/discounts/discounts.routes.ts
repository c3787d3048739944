import { adminActor, portalActor, type ActorOf } from '../../http/actors.ts'
import { adminStore } from '../../http/admin-auth.ts'
import { IdParams, NoContent, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { Subscription } from '../subscriptions/index.ts'
import { ApplyDiscountBody, CreateDiscountBody, Discount, DiscountListQuery, DiscountPage, UpdateDiscountBody } from './discount.schemas.ts'
import type { DiscountService } from './discounts.service.ts'

/** The merchant's discount codes, and applying them to subscriptions. Registered under the admin prefix. */
export async function discountAdminRoutes(app: App, discounts: DiscountService): Promise<void> {
  const Params = IdParams('disc')
  const tags = ['Discounts']
  registerSubscriptionDiscountRoutes(app, { discounts, audience: 'admin', tags: ['Subscriptions'], actorOf: adminActor })

  app.post('/discounts', {
    schema: {
      operationId: 'createDiscount',
      summary: 'Create a discount code',
      description:
        '`percentage` (`value` 1-100) or `fixed_amount` (`value` in minor units of `currency`), for `once` (the next charge), `repeating` (`duration_in_cycles` charges) or `forever`. ' +
        'Codes are unique per store whatever their case: a taken code is 409 `conflict`. The terms (type, value, currency, duration) never change once made.',
      tags,
      body: CreateDiscountBody,
      response: { 201: Ref(Discount), ...problemResponses(409) },
    },
  }, async (request, reply) => reply.code(201).send(await discounts.create(adminStore(request), request.body)))

  app.get('/discounts', {
    schema: { operationId: 'listDiscounts', summary: 'List discount codes, newest first', tags, querystring: DiscountListQuery, response: { 200: DiscountPage } },
  }, async (request) => discounts.list(adminStore(request), request.query))

  app.get('/discounts/:id', {
    schema: { operationId: 'getDiscount', summary: 'Read a discount code', tags, params: Params, response: { 200: Ref(Discount), ...problemResponses(404) } },
  }, async (request) => discounts.get(adminStore(request), request.params.id))

  app.patch('/discounts/:id', {
    schema: {
      operationId: 'updateDiscount',
      summary: 'Change a discount code (its code, plans, limit, window or active flag)',
      description: 'Applies to later applications only: subscriptions that carry the discount keep its terms. `max_redemptions` below `times_redeemed` is 400.',
      tags,
      params: Params,
      body: UpdateDiscountBody,
      response: { 200: Ref(Discount), ...problemResponses(404, 409) },
    },
  }, async (request) => discounts.update(adminStore(request), request.params.id, request.body))

  app.delete('/discounts/:id', {
    schema: {
      operationId: 'deleteDiscount',
      summary: 'Delete a discount code',
      description: 'It can no longer be applied (its code becomes free); subscriptions that carry it keep it until its cycles run out or it is removed from them.',
      tags,
      params: Params,
      response: { 204: NoContent, ...problemResponses(404) },
    },
  }, async (request, reply) => {
    await discounts.remove(adminStore(request), request.params.id)
    return reply.code(204).send(null)
  })
}

export interface SubscriptionDiscountRouteOptions {
  discounts: DiscountService
  audience: 'admin' | 'portal'
  tags: string[]
  actorOf: ActorOf
}

/** `POST` and `DELETE /subscriptions/:id/discount`, for the admin and for the signed-in subscriber alike. */
export function registerSubscriptionDiscountRoutes(app: App, { discounts, audience, tags, actorOf }: SubscriptionDiscountRouteOptions): void {
  const Params = IdParams('sub')
  const portal = audience === 'portal'
  app.post('/subscriptions/:id/discount', {
    schema: {
      operationId: portal ? 'applyPortalSubscriptionDiscount' : 'applySubscriptionDiscount',
      summary: 'Apply a discount code to the renewals',
      description:
        "The code (any case) must be active, within its `starts_at`/`ends_at` on the store's clock, for this plan (when it names plans) and, for a fixed amount, in the subscription's currency: " +
        'else 400 `discount_not_found`, `discount_expired` or `discount_not_applicable`, and 409 `discount_exhausted` once `max_redemptions` are used; nothing is written then. ' +
        'It replaces a discount the subscription carried; the code it already carries answers unchanged. Each application counts one redemption. Records `subscription.discount_applied`. ' +
        '409 `invalid_state` on a cancelled or expired subscription.',
      tags,
      params: Params,
      body: ApplyDiscountBody,
      response: { 200: Ref(Subscription), ...problemResponses(404, 409) },
    },
  }, async (request) => {
    const { store, actor } = actorOf(request)
    return discounts.applyToSubscription(store, request.params.id, actor, request.body.code)
  })

  app.delete('/subscriptions/:id/discount', {
    schema: {
      operationId: portal ? 'removePortalSubscriptionDiscount' : 'removeSubscriptionDiscount',
      summary: 'Take the discount off the renewals',
      description: 'From the next charge on (a charge already in progress keeps its amount). Records `subscription.discount_removed`; a subscription without a discount answers unchanged.',
      tags,
      params: Params,
      response: { 200: Ref(Subscription), ...problemResponses(404, 409) },
    },
  }, async (request) => {
    const { store, actor } = actorOf(request)
    return discounts.removeFromSubscription(store, request.params.id, actor)
  })
}

/** The signed-in subscriber applies and removes codes on their own subscriptions. Registered under the portal prefix. */
export async function discountPortalRoutes(app: App, discounts: DiscountService): Promise<void> {
  registerSubscriptionDiscountRoutes(app, { discounts, audience: 'portal', tags: ['Portal'], actorOf: portalActor })
}
