import { Type, type Static } from 'typebox'
import { Id, Ref, StringEnum } from '../../http/schemas.ts'

/** The whole event catalogue (docs/contract.md, Events); webhook subscriptions choose from it. */
export const SUBSCRIPTION_EVENT_TYPES = [
  'subscription.created',
  'subscription.activated',
  'subscription.charged',
  'subscription.past_due',
  'subscription.paused',
  'subscription.resumed',
  'subscription.cancelled',
  'subscription.updated',
  'subscription.renewal_upcoming',
  'subscription.skipped',
  'subscription.unskipped',
  'subscription.swapped',
  'subscription.expired',
  'subscription.payment_instrument_updated',
  'subscription.gifted',
  'subscription.rescheduled',
  'subscription.retention_accepted',
  'subscription.discount_applied',
  'subscription.discount_removed',
  'subscription.reactivated',
  'subscription.retry_requested',
  'subscription.payment_update_link_sent',
  'subscription.imported',
  'subscription.price_change_scheduled',
  'subscription.price_changed',
  'prepaid.order_created',
  'shipping.address_updated',
] as const
export const CHARGE_EVENT_TYPES = ['charge.succeeded', 'charge.failed', 'charge.refunded'] as const
export const CHANGE_REQUEST_EVENT_TYPES = ['change_request.created', 'change_request.approved', 'change_request.rejected'] as const
export const ONETIME_EVENT_TYPES = ['onetime.created', 'onetime.removed'] as const
export const TEST_EVENT_TYPES = ['webhook.test'] as const
/** A change of the store's settings (who switched billing off or on, and every other setting). */
export const STORE_EVENT_TYPES = ['store.updated'] as const

export const EVENT_TYPES = [...SUBSCRIPTION_EVENT_TYPES, ...CHARGE_EVENT_TYPES, ...CHANGE_REQUEST_EVENT_TYPES, ...ONETIME_EVENT_TYPES, ...STORE_EVENT_TYPES, ...TEST_EVENT_TYPES] as const
export type EventType = (typeof EVENT_TYPES)[number]

/** Who caused an event (docs/contract.md, Events: `actor`). */
export const EVENT_ACTOR_TYPES = ['admin_key', 'console', 'subscriber', 'platform', 'system'] as const
export type EventActorType = (typeof EVENT_ACTOR_TYPES)[number]

export const EventActor = Type.Object(
  {
    type: StringEnum(EVENT_ACTOR_TYPES, {
      description:
        '`admin_key`: the merchant through an admin API key; `console`: the merchant in the console (a session opened from the BigCommerce control panel); ' +
        '`subscriber`: the subscriber in the portal; `platform`: BigCommerce, through its callbacks and webhooks; `system`: the service itself (renewals, dunning retries, scheduled work)',
    }),
    id: Type.Optional(Type.String({
      description: "The key's id (`key_...`), the console session's id, the subscriber's id (`sub...`), or which part of the service acted (`renewals`, `due_work`). Never a secret",
    })),
    label: Type.Optional(Type.String({ description: "For people: the key's name, `Console`, the subscriber's email, or the part of the service (`Renewal worker`)" })),
  },
  { $id: 'EventActor', title: 'EventActor', description: 'Who did it. Every event carries it, except those recorded before the service kept actors', additionalProperties: false },
)
export type EventActorView = Static<typeof EventActor>

export const EventTypeSchema = StringEnum(EVENT_TYPES, { $id: 'EventType', title: 'EventType', description: 'Every event type the service emits' })

/** The body every event is delivered in, for one family of types whose data is one entity. */
export function eventEnvelope<T extends readonly string[]>(id: string, types: T, data: ReturnType<typeof Ref>, description: string) {
  return Type.Object(
    {
      id: Id('evt', 'Sorts in the order events were recorded; the webhook-id of every delivery'),
      event_type: StringEnum(types),
      timestamp: Type.String({ format: 'date-time', description: "When it happened, on the store's clock" }),
      api_version: Type.Literal('v1'),
      actor: Type.Optional(Ref(EventActor)),
      data,
      sequence: Type.Integer({ minimum: 1, description: "Grows by one per entity: drop an update whose sequence is not above the last one you applied" }),
    },
    { $id: id, title: id, description, additionalProperties: false },
  )
}
