import { Type } from 'typebox'
import { adminActor, portalActor, type ActorOf } from '../../http/actors.ts'
import { Id, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { CreateOnetimeBody, Onetime, OnetimeListQuery, OnetimePage } from './onetime.schemas.ts'
import type { OnetimeService } from './onetimes.service.ts'

export interface OnetimeRouteOptions {
  onetimes: OnetimeService
  audience: 'admin' | 'portal'
  tags: string[]
  actorOf: ActorOf
}

/** `.../subscriptions/:id/onetimes`, for the admin and for the signed-in subscriber alike. */
export function registerOnetimeRoutes(app: App, { onetimes, audience, tags, actorOf }: OnetimeRouteOptions): void {
  const Params = Type.Object({ id: Id('sub') }, { additionalProperties: false })
  const ItemParams = Type.Object({ id: Id('sub'), onetime_id: Id('ot') }, { additionalProperties: false })
  const name = (verb: string, rest: string) => (audience === 'portal' ? `${verb}Portal${rest}` : `${verb}${rest}`)

  app.post('/subscriptions/:id/onetimes', {
    schema: {
      operationId: name('add', 'SubscriptionOnetime'),
      summary: 'Add a product once to the next renewal',
      description:
        'The product must have a `one_time_price` in the subscription\'s currency (else 400 `validation_failed` at `/body/product_id`; an unknown product is 404); `quantity` 1-100. ' +
        'The price is fixed now; the next renewal charges it in the same charge (`line_items`) and, on a platform store, the same order, then it is `charged`. ' +
        'A failed renewal keeps it for the retry; a skipped renewal leaves it for the next one. Records `onetime.created`. 409 `invalid_state` on a cancelled or expired subscription; ' +
        '400 `amount_too_large` when the next renewal would pass 10^11 minor units.',
      tags,
      params: Params,
      body: CreateOnetimeBody,
      response: { 201: Ref(Onetime), ...problemResponses(404, 409) },
    },
  }, async (request, reply) => {
    const { store, actor } = actorOf(request)
    return reply.code(201).send(await onetimes.create(store, request.params.id, actor, request.body))
  })

  app.get('/subscriptions/:id/onetimes', {
    schema: {
      operationId: name('list', 'SubscriptionOnetimes'),
      summary: "The subscription's add-ons, newest first (filter by `status`)",
      tags,
      params: Params,
      querystring: OnetimeListQuery,
      response: { 200: OnetimePage, ...problemResponses(404) },
    },
  }, async (request) => {
    const { store, actor } = actorOf(request)
    return onetimes.list(store, request.params.id, actor, request.query)
  })

  app.delete('/subscriptions/:id/onetimes/:onetime_id', {
    schema: {
      operationId: name('remove', 'SubscriptionOnetime'),
      summary: 'Take a pending add-on off the next renewal',
      description: 'Answers the add-on, now `removed` (never charged). Records `onetime.removed`. 409 `invalid_state` when it was charged or removed already, or while a renewal charge is in progress.',
      tags,
      params: ItemParams,
      response: { 200: Ref(Onetime), ...problemResponses(404, 409) },
    },
  }, async (request) => {
    const { store, actor } = actorOf(request)
    return onetimes.remove(store, request.params.id, request.params.onetime_id, actor)
  })
}

/** The merchant adds and removes add-ons on any subscription of the store. Registered under the admin prefix. */
export async function onetimeAdminRoutes(app: App, onetimes: OnetimeService): Promise<void> {
  registerOnetimeRoutes(app, { onetimes, audience: 'admin', tags: ['Subscriptions'], actorOf: adminActor })
}

/** The signed-in subscriber, on their own subscriptions. Registered under the portal prefix. */
export async function onetimePortalRoutes(app: App, onetimes: OnetimeService): Promise<void> {
  registerOnetimeRoutes(app, { onetimes, audience: 'portal', tags: ['Portal'], actorOf: portalActor })
}
