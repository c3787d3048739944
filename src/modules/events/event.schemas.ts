import { Type } from 'typebox'
import { Id, Ref, StringEnum, Timestamp } from '../../http/schemas.ts'
import { Charge } from '../billing/charge.schemas.ts'
import { ChangeRequest, Subscription } from '../subscriptions/subscription.schemas.ts'

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
  'prepaid.order_created',
  'shipping.address_updated',
] as const
export const CHARGE_EVENT_TYPES = ['charge.succeeded', 'charge.failed', 'charge.refunded'] as const
export const CHANGE_REQUEST_EVENT_TYPES = ['change_request.created', 'change_request.approved', 'change_request.rejected'] as const
export const TEST_EVENT_TYPES = ['webhook.test'] as const

export const EVENT_TYPES = [...SUBSCRIPTION_EVENT_TYPES, ...CHARGE_EVENT_TYPES, ...CHANGE_REQUEST_EVENT_TYPES, ...TEST_EVENT_TYPES] as const
export type EventType = (typeof EVENT_TYPES)[number]

export const EventTypeSchema = StringEnum(EVENT_TYPES, { $id: 'EventType', title: 'EventType', description: 'Every event type the service emits' })

export const WebhookTest = Type.Object(
  { object: Type.Literal('webhook_test'), webhook_subscription_id: Id('wh') },
  { $id: 'WebhookTest', title: 'WebhookTest', additionalProperties: false },
)

function envelope<T extends readonly string[]>(id: string, types: T, data: ReturnType<typeof Ref>, description: string) {
  return Type.Object(
    {
      id: Id('evt', 'Sorts in the order events were recorded; the webhook-id of every delivery'),
      event_type: StringEnum(types),
      timestamp: Type.String({ format: 'date-time', description: "When it happened, on the store's clock" }),
      api_version: Type.Literal('v1'),
      data,
      sequence: Type.Integer({ minimum: 1, description: "Grows by one per entity: drop an update whose sequence is not above the last one you applied" }),
    },
    { $id: id, title: id, description, additionalProperties: false },
  )
}

export const SubscriptionEvent = envelope('SubscriptionEvent', SUBSCRIPTION_EVENT_TYPES, Ref(Subscription), 'Events about a subscription; data is the subscription as the API shows it')
export const ChargeEvent = envelope('ChargeEvent', CHARGE_EVENT_TYPES, Ref(Charge), 'Events about a charge attempt; data is the charge')
export const ChangeRequestEvent = envelope('ChangeRequestEvent', CHANGE_REQUEST_EVENT_TYPES, Ref(ChangeRequest), 'Events about a B2B change request')
export const WebhookTestEvent = envelope('WebhookTestEvent', TEST_EVENT_TYPES, Ref(WebhookTest), 'A ping sent on request to test an endpoint')

export const Event = Type.Object(
  {
    id: Id('evt'),
    event_type: Ref(EventTypeSchema as typeof EventTypeSchema & { $id: string }),
    timestamp: Timestamp,
    api_version: Type.Literal('v1'),
    data: Type.Unsafe<Record<string, unknown>>({
      oneOf: [Ref(Subscription), Ref(Charge), Ref(ChangeRequest), Ref(WebhookTest)],
      description: 'The affected entity; its `object` field says which',
    }),
    sequence: Type.Integer({ minimum: 1 }),
  },
  {
    $id: 'Event',
    title: 'Event',
    description: 'The body of every webhook delivery and of the event log. See SubscriptionEvent, ChargeEvent, ChangeRequestEvent and WebhookTestEvent for which entity each type carries.',
    additionalProperties: false,
  },
)

export const eventSchemas = [Subscription, Charge, ChangeRequest, WebhookTest, EventTypeSchema, SubscriptionEvent, ChargeEvent, ChangeRequestEvent, WebhookTestEvent, Event]
