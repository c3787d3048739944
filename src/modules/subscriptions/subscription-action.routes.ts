import type { TSchema } from 'typebox'
import type { Actor, ActorOf } from '../../http/actors.ts'
import { IdParams, problemResponses, Ref } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import {
  CancelBody,
  IntervalBody,
  OptionalBody,
  PauseBody,
  PaymentInstrumentBody,
  QuantityBody,
  ReactivateBody,
  RescheduleBody,
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
  /** Statuses beyond 200 it answers with the subscription (run returns a `StatusReply` for them). */
  alsoAnswers?: number[]
  run(subscriptions: SubscriptionService, store: Parameters<SubscriptionService['get']>[0], id: string, actor: Actor, input: any): Promise<unknown>
}

/** An answer other than 200, still with the subscription as its body. */
class StatusReply {
  readonly status: number
  readonly body: unknown
  constructor(status: number, body: unknown) {
    this.status = status
    this.body = body
  }
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
  {
    path: 'charge-now',
    operationId: 'chargeSubscriptionNow',
    summary: 'Order now: renew at once, the new period starting now',
    description:
      'Makes the next renewal due now and runs it through the renewal engine (the same claim, idempotency key, events and settlement as a scheduled renewal: ' +
      '`subscription.charged`, then `charge.succeeded` or `charge.failed`). The billing anchor moves to now: the next renewal is one interval (or prepaid block) later. ' +
      'A pending skip is dropped (this renewal replaces the skipped one). The request waits up to 10 s for the outcome: 200 with the subscription after it ' +
      '(`latest_charge_id` is the charge; a failed charge enters dunning as any renewal), or 202 with the subscription while the charge is still pending (the worker finishes it; ' +
      'read it with `latest_charge_id`). 409 `invalid_state` unless the subscription is active with no charge in flight or in dunning, no charge under review, no cancellation at period end, ' +
      'no prepaid cycles still to come, not a gifted prepaid block (it expires instead), and a store whose billing runs. ' +
      "409 `billing_disabled` while the store's billing is switched off (`billing_enabled` false, the cutover switch); nothing changes then.",
    alsoAnswers: [202],
    run: async (s, store, id, actor) => {
      const { view, settled } = await s.chargeNow(store, id, actor)
      return settled ? view : new StatusReply(202, view)
    },
  },
  {
    path: 'reschedule',
    operationId: 'rescheduleSubscription',
    summary: 'Move the next renewal to another date',
    description:
      "`next_charge_at` must be later than the store's current time and at most one year ahead (else 400 `validation_failed`). Nothing is charged at the old date. " +
      'The billing anchor moves to the new date: renewals after it follow one interval apart from it, and the current period ends there. Records `subscription.rescheduled`. ' +
      '409 `invalid_state` in the same cases as charge-now; allowed while the store\'s billing is switched off (it charges nothing).',
    body: RescheduleBody,
    run: (s, store, id, actor, input) => s.reschedule(store, id, actor, input),
  },
  {
    path: 'reactivate',
    operationId: 'reactivateSubscription',
    summary: 'Start a cancelled subscription again',
    description:
      'On its plan, its own terms (price, quantity, interval, discount) and its payment instrument; the cancellation and its reason are cleared, and `subscription.reactivated` is recorded. ' +
      'Without `next_charge_at`, a new period starts now and its renewal is charged at once through the renewal engine, as order now does (then `subscription.charged` and `charge.succeeded` or `charge.failed`; ' +
      'a failed charge enters dunning as any renewal): 200 with the subscription once the charge settled, or 202 while it is still pending. ' +
      "With `next_charge_at` (later than the store's current time, at most one year ahead, else 400 `validation_failed`) it is active from now and nothing is charged until then: 200. " +
      '409 `invalid_state` unless the subscription is cancelled (an expired one ended by its own terms and is not reactivated), and when its plan is archived, the store\'s billing is stopped, ' +
      'a charge of it is still in flight or under review, or it is a gifted prepaid block. ' +
      "Without `next_charge_at`, 409 `billing_disabled` while the store's billing is switched off (`billing_enabled` false); with one it may be reactivated then.",
    body: OptionalBody(ReactivateBody),
    alsoAnswers: [202],
    run: async (s, store, id, actor, input) => {
      const { view, settled } = await s.reactivate(store, id, actor, input)
      return settled ? view : new StatusReply(202, view)
    },
  },
]

export interface ActionRouteOptions {
  subscriptions: SubscriptionService
  audience: 'admin' | 'portal'
  tags: string[]
  /** Who acts, and in which store, as the scope's authentication established it. */
  actorOf: ActorOf
  summaries?: Partial<Record<string, string>>
  /** Descriptions in this scope's terms, by action path (replacing the action's own). */
  descriptions?: Partial<Record<string, string>>
  /** Problem statuses this scope adds to an action's, by action path. */
  problems?: Partial<Record<string, number[]>>
}

/** Registers `POST /subscriptions/:id/<action>` for every action, in one scope's terms. */
export function registerSubscriptionActions(app: App, { subscriptions, audience, tags, actorOf, summaries = {}, descriptions = {}, problems = {} }: ActionRouteOptions): void {
  const Params = IdParams('sub')
  for (const action of ACTIONS) {
    const description = descriptions[action.path] ?? action.description
    app.post(`/subscriptions/:id/${action.path}`, {
      schema: {
        operationId: audience === 'portal' ? action.operationId.replace(/^[a-z]+/, (verb) => `${verb}Portal`) : action.operationId,
        summary: summaries[action.path] ?? action.summary,
        ...(description ? { description } : {}),
        tags,
        params: Params,
        ...(action.body ? { body: action.body } : {}),
        response: {
          200: Ref(Subscription),
          ...Object.fromEntries((action.alsoAnswers ?? []).map((status) => [status, Ref(Subscription)])),
          ...problemResponses(404, 409, ...(action.problems ?? []), ...(problems[action.path] ?? [])),
        },
      },
    }, async (request, reply) => {
      const { store, actor } = actorOf(request)
      const result = await action.run(subscriptions, store, request.params.id, actor, request.body ?? {})
      if (result instanceof StatusReply) return reply.code(result.status as 200).send(result.body as never)
      return result as never
    })
  }
}
