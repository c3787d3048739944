import type { FastifyRequest } from 'fastify'
import type { TSchema } from 'typebox'
import type { StoreRow } from '../../db/database.ts'
import { IdParams, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import type { Actor } from './subscription-mutation.ts'
import {
  CancelBody,
  IntervalBody,
  OptionalBody,
  PauseBody,
  PaymentInstrumentBody,
  QuantityBody,
  ShippingAddressBody,
  Subscription,
  SwapBody,
} from './subscription.schemas.ts'
import type { SubscriptionService } from './subscriptions.service.ts'

interface SubscriptionAction {
  path: string
  /** The admin operation id; the portal's inserts "Portal" after its verb (pauseSubscription, pausePortalSubscription). */
  operationId: string
  summary: string
  description?: string
  /** Problem statuses beyond 404 and 409. */
  problems?: number[]
  body?: TSchema
  run(subscriptions: SubscriptionService, store: StoreRow, id: string, actor: Actor, input: any): Promise<unknown>
}

/** Every action on one subscription: the merchant and the subscriber reach the same use cases. */
const ACTIONS: SubscriptionAction[] = [
  { path: 'pause', operationId: 'pauseSubscription', summary: 'Pause, optionally until a date', body: OptionalBody(PauseBody), run: (s, store, id, actor, input) => s.pause(store, id, actor, input) },
  { path: 'resume', operationId: 'resumeSubscription', summary: 'Resume a paused subscription', run: (s, store, id, actor) => s.resume(store, id, actor) },
  { path: 'cancel', operationId: 'cancelSubscription', summary: 'Cancel now or at the end of the paid period', body: OptionalBody(CancelBody), run: (s, store, id, actor, input) => s.cancel(store, id, actor, input) },
  { path: 'skip', operationId: 'skipNextRenewal', summary: 'Skip the next renewal (no charge; the period advances)', run: (s, store, id, actor) => s.skip(store, id, actor) },
  { path: 'unskip', operationId: 'unskipNextRenewal', summary: 'Undo a skip of the next renewal', run: (s, store, id, actor) => s.unskip(store, id, actor) },
  { path: 'swap', operationId: 'swapSubscriptionPlan', summary: 'Move to another plan of the same store and currency from the next period', body: SwapBody, run: (s, store, id, actor, input) => s.swap(store, id, actor, input) },
  { path: 'quantity', operationId: 'changeSubscriptionQuantity', summary: 'Change the quantity from the next charge', body: QuantityBody, run: (s, store, id, actor, input) => s.changeQuantity(store, id, actor, input) },
  { path: 'interval', operationId: 'changeSubscriptionInterval', summary: 'Change how often it renews, from the next charge', body: IntervalBody, run: (s, store, id, actor, input) => s.changeInterval(store, id, actor, input) },
  { path: 'shipping-address', operationId: 'updateSubscriptionShippingAddress', summary: 'Change where it ships', body: ShippingAddressBody, run: (s, store, id, actor, input) => s.updateShippingAddress(store, id, actor, input) },
  {
    path: 'payment-instrument',
    operationId: 'updateSubscriptionPaymentInstrument',
    summary: 'Charge another vault instrument from now on',
    description:
      "On a store whose gateway is `platform`, the instrument must be one of the stored cards of the paying platform customer (the subscriber's, else the one the checkout named; see `GET /api/v1/portal/payment-instruments`), else 400 `invalid_payment_instrument`; " +
      "the subscription then shows the card's brand and last 4 and pays as that customer. 503 `platform_unavailable` when BigCommerce cannot be asked; nothing changes then.",
    problems: [503],
    body: PaymentInstrumentBody,
    run: (s, store, id, actor, input) => s.updatePaymentInstrument(store, id, actor, input),
  },
]

export interface ActionRouteOptions {
  subscriptions: SubscriptionService
  audience: 'admin' | 'portal'
  tags: string[]
  /** Who acts, and in which store, as the scope's authentication established it. */
  actorOf: (request: FastifyRequest) => { store: StoreRow; actor: Actor }
  summaries?: Partial<Record<string, string>>
}

/** Registers `POST /subscriptions/:id/<action>` for every action, in one scope's terms. */
export function registerSubscriptionActions(app: App, { subscriptions, audience, tags, actorOf, summaries = {} }: ActionRouteOptions): void {
  const Params = IdParams('sub')
  for (const action of ACTIONS) {
    app.post(`/subscriptions/:id/${action.path}`, {
      schema: {
        operationId: audience === 'portal' ? action.operationId.replace(/^[a-z]+/, (verb) => `${verb}Portal`) : action.operationId,
        summary: summaries[action.path] ?? action.summary,
        ...(action.description ? { description: action.description } : {}),
        tags,
        params: Params,
        ...(action.body ? { body: action.body } : {}),
        response: { 200: Ref(Subscription), ...problemResponses(404, 409, ...(action.problems ?? [])) },
      },
    }, async (request) => {
      const { store, actor } = actorOf(request)
      return action.run(subscriptions, store, request.params.id, actor, request.body ?? {}) as never
    })
  }
}
