import { Type } from 'typebox'
import { Id, Ref, Timestamp } from './http/schemas.ts'
import { Charge } from './modules/billing/index.ts'
import { CHANGE_REQUEST_EVENT_TYPES, CHARGE_EVENT_TYPES, EventActor, eventEnvelope, EventTypeSchema, ONETIME_EVENT_TYPES, STORE_EVENT_TYPES, SUBSCRIPTION_EVENT_TYPES, TEST_EVENT_TYPES } from './modules/events/index.ts'
import { Onetime } from './modules/onetimes/index.ts'
import { StoreChange } from './modules/stores/index.ts'
import { ChangeRequest, Subscription } from './modules/subscriptions/index.ts'
import { WebhookTest } from './modules/webhooks/index.ts'

/**
 * The event payloads as the OpenAPI document describes them, assembled here from the schemas of the
 * modules that own each entity: the event log itself knows only the type names and the envelope.
 */
export const SubscriptionEvent = eventEnvelope('SubscriptionEvent', SUBSCRIPTION_EVENT_TYPES, Ref(Subscription), 'Events about a subscription; data is the subscription as the API shows it')
export const ChargeEvent = eventEnvelope('ChargeEvent', CHARGE_EVENT_TYPES, Ref(Charge), 'Events about a charge attempt; data is the charge')
export const ChangeRequestEvent = eventEnvelope('ChangeRequestEvent', CHANGE_REQUEST_EVENT_TYPES, Ref(ChangeRequest), 'Events about a B2B change request')
export const OnetimeEvent = eventEnvelope('OnetimeEvent', ONETIME_EVENT_TYPES, Ref(Onetime), 'Events about a one-time add-on on a subscription\'s next renewal; data is the add-on')
export const StoreEvent = eventEnvelope('StoreEvent', STORE_EVENT_TYPES, Ref(StoreChange), "A change of the store's settings; data is the store after it, with `changes` (each changed setting before and after), and `actor` says who made it")
export const WebhookTestEvent = eventEnvelope('WebhookTestEvent', TEST_EVENT_TYPES, Ref(WebhookTest), 'A ping sent on request to test an endpoint')

export const Event = Type.Object(
  {
    id: Id('evt'),
    event_type: Ref(EventTypeSchema as typeof EventTypeSchema & { $id: string }),
    timestamp: Timestamp,
    api_version: Type.Literal('v1'),
    actor: Type.Optional(Ref(EventActor)),
    data: Type.Unsafe<Record<string, unknown>>({
      oneOf: [Ref(Subscription), Ref(Charge), Ref(ChangeRequest), Ref(Onetime), Ref(StoreChange), Ref(WebhookTest)],
      description: 'The affected entity; its `object` field says which',
    }),
    sequence: Type.Integer({ minimum: 1 }),
  },
  {
    $id: 'Event',
    title: 'Event',
    description: 'The body of every webhook delivery and of the event log. See SubscriptionEvent, ChargeEvent, ChangeRequestEvent, OnetimeEvent, StoreEvent and WebhookTestEvent for which entity each type carries.',
    additionalProperties: false,
  },
)

export const eventSchemas = [Subscription, Charge, ChangeRequest, Onetime, StoreChange, WebhookTest, EventTypeSchema, EventActor, SubscriptionEvent, ChargeEvent, ChangeRequestEvent, OnetimeEvent, StoreEvent, WebhookTestEvent, Event]
