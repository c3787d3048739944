import { Type, type Static } from 'typebox'
import { Id, Nullable, PageQuery, Ref, StringEnum, Timestamp } from '../../http/schemas.ts'
import { EventTypeSchema } from '../events/index.ts'

/** The data of a `webhook.test` ping. */
export const WebhookTest = Type.Object(
  { object: Type.Literal('webhook_test'), webhook_subscription_id: Id('wh') },
  { $id: 'WebhookTest', title: 'WebhookTest', additionalProperties: false },
)

export const WEBHOOK_STATUSES = ['enabled', 'disabled'] as const
export const DELIVERY_STATUSES = ['pending', 'succeeded', 'failed'] as const

const Url = Type.String({ minLength: 8, maxLength: 2048, format: 'uri', description: 'Where deliveries are POSTed; https for live stores', example: 'https://example.com/webhooks/billing' })
const EventTypes = Type.Array(Ref(EventTypeSchema as typeof EventTypeSchema & { $id: string }), {
  minItems: 1,
  maxItems: 100,
  uniqueItems: true,
  description: 'The event types to deliver (see the EventType enum)',
})
const Description = Type.String({ maxLength: 500 })

export const WebhookSubscription = Type.Object(
  {
    id: Id('wh'),
    object: Type.Literal('webhook_subscription'),
    url: Type.String(),
    event_types: Type.Array(Type.String()),
    description: Nullable(Type.String()),
    status: StringEnum(WEBHOOK_STATUSES),
    disabled_reason: Nullable(Type.String({ description: 'Why deliveries stopped: 410 Gone, five days of failures, or an admin' })),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { $id: 'WebhookSubscription', title: 'WebhookSubscription', additionalProperties: false },
)
export type WebhookSubscriptionView = Static<typeof WebhookSubscription>

const Secret = Type.String({ pattern: '^whsec_[A-Za-z0-9+/=]{32,}$', description: 'The signing secret (Standard Webhooks): shown only here; keep it' })

export const WebhookSubscriptionWithSecret = Type.Object(
  { ...WebhookSubscription.properties, secret: Secret },
  { $id: 'WebhookSubscriptionWithSecret', title: 'WebhookSubscriptionWithSecret', additionalProperties: false },
)

export const CreateWebhookBody = Type.Object(
  {
    url: Url,
    event_types: EventTypes,
    description: Type.Optional(Nullable(Description)),
    status: Type.Optional(StringEnum(WEBHOOK_STATUSES, { default: 'enabled' })),
  },
  { additionalProperties: false },
)
export type CreateWebhookInput = Static<typeof CreateWebhookBody>

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    event_types: Type.Optional(EventTypes),
    description: Type.Optional(Nullable(Description)),
    status: Type.Optional(StringEnum(WEBHOOK_STATUSES, { description: 'enabled re-enables a disabled endpoint (clearing disabled_reason)' })),
  },
  { additionalProperties: false, minProperties: 1 },
)
export type UpdateWebhookInput = Static<typeof UpdateWebhookBody>

export const RotatedSecret = Type.Object(
  {
    object: Type.Literal('webhook_secret'),
    secret: Secret,
    previous_secret_expires_at: { ...Timestamp, description: 'Until then deliveries are signed with both secrets' },
  },
  { $id: 'RotatedSecret', title: 'RotatedSecret', additionalProperties: false },
)

export const WebhookAttempt = Type.Object(
  {
    attempted_at: Timestamp,
    status_code: Nullable(Type.Integer()),
    latency_ms: Type.Integer({ minimum: 0 }),
    error: Nullable(Type.String()),
    response_body: Nullable(Type.String({ description: 'The first KiB of the answer' })),
  },
  { additionalProperties: false },
)

export const WebhookDelivery = Type.Object(
  {
    id: Id('msg'),
    object: Type.Literal('webhook_delivery'),
    webhook_subscription_id: Id('wh'),
    event_id: Id('evt', 'Also the webhook-id header of every attempt'),
    event_type: Type.String(),
    status: StringEnum(DELIVERY_STATUSES),
    attempts: Type.Integer({ minimum: 0 }),
    next_attempt_at: Nullable(Timestamp, {
      description: 'When a pending delivery is tried next; null once it succeeded or failed for good. Retries run on real time: a test store whose clock was moved sees it at the same distance after its own now',
    }),
    last_status_code: Nullable(Type.Integer()),
    last_error: Nullable(Type.String()),
    created_at: Timestamp,
    delivered_at: Nullable(Timestamp),
    attempt_log: Type.Array(WebhookAttempt, { description: 'The latest attempts, newest first (at most 20)' }),
  },
  { $id: 'WebhookDelivery', title: 'WebhookDelivery', additionalProperties: false },
)
export type WebhookDeliveryView = Static<typeof WebhookDelivery>

/**
 * What a `read_only` key reads in place of an attempt's `webhook-signature`: the signature with the
 * body shown beside it is a request the receiver accepts again within its timestamp tolerance, so
 * only keys that may act (full, support) see it.
 */
export const HIDDEN_SIGNATURE = '(hidden: needs a full or support key)'

/** The headers of one attempt's request, as sent (Standard Webhooks). */
export const WebhookRequestHeaders = Type.Object(
  {
    'content-type': Type.Literal('application/json'),
    'user-agent': Type.String(),
    'webhook-id': Id('evt', 'The event id, the same in every attempt'),
    'webhook-timestamp': Type.String({ pattern: '^[0-9]+$', description: 'Unix seconds when the attempt was sent (real time, also on a test store)' }),
    'webhook-signature': Type.String({
      description:
        '`v1,<base64 HMAC-SHA256>` per signing secret, space-separated (two during a rotation). The signature, not the secret: the secret is never shown again. ' +
        `A \`read_only\` key reads \`${HIDDEN_SIGNATURE}\` instead (a signature with its body could be replayed to the receiver)`,
    }),
  },
  { additionalProperties: false },
)

export const WebhookAttemptDetail = Type.Object(
  {
    ...WebhookAttempt.properties,
    request_headers: Nullable(WebhookRequestHeaders, {
      description: 'The request headers exactly as sent; null when nothing was sent (the endpoint was disabled) or for attempts made before the service kept them',
    }),
  },
  { additionalProperties: false },
)

/** One delivery with what each attempt sent and got back: the delivery inspector. */
export const WebhookDeliveryDetail = Type.Object(
  {
    ...WebhookDelivery.properties,
    request_body: Type.String({ description: 'The body every attempt sent: the event exactly as stored, byte for byte (the signature covers it)' }),
    attempt_log: Type.Array(WebhookAttemptDetail, { description: 'The latest attempts, newest first (at most 20), each with its request headers, status and the first KiB of the answer' }),
  },
  { $id: 'WebhookDeliveryDetail', title: 'WebhookDeliveryDetail', additionalProperties: false },
)
export type WebhookDeliveryDetailView = Static<typeof WebhookDeliveryDetail>

export const WEBHOOK_HEALTH_WINDOW_HOURS = 24

/** How an endpoint is doing, from its real attempts (docs/contract.md, Webhook delivery: health). */
export const WebhookHealth = Type.Object(
  {
    object: Type.Literal('webhook_health'),
    webhook_subscription_id: Id('wh'),
    status: StringEnum(WEBHOOK_STATUSES),
    disabled_reason: Nullable(Type.String({ description: 'Why deliveries stopped: 410 Gone, days of failures without a success, or an admin' })),
    window_hours: Type.Literal(WEBHOOK_HEALTH_WINDOW_HOURS, { description: 'The figures below count the attempts sent in the last 24 hours (real time)' }),
    attempts: Type.Integer({ minimum: 0, description: 'Requests sent in the window: first attempts and retries alike (an attempt never sent because the endpoint was disabled is not one)' }),
    succeeded: Type.Integer({ minimum: 0, description: 'Attempts answered 2xx' }),
    failed: Type.Integer({ minimum: 0, description: 'Attempts answered otherwise (410 included), or not answered (refused, timed out)' }),
    success_rate: Nullable(Type.Number({ minimum: 0, maximum: 1, description: '`succeeded` / `attempts`; null when nothing was sent in the window' })),
    failing: Type.Boolean({ description: 'True while the endpoint is failing: its latest attempts failed and none has succeeded since `failing_since`' }),
    failing_since: Nullable(Timestamp, { description: 'When it started failing without a success; it is disabled once this is 5 days old (the service setting). Failing runs on real time: a test store whose clock was moved sees it at the same distance before its own now' }),
    failures_since_success: Type.Integer({ minimum: 0, description: "The window's attempts after its last success: all of them when none succeeded" }),
    last_success_at: Nullable(Timestamp, { description: 'The latest successful attempt in the window' }),
    last_failure: Nullable(
      Type.Object(
        { attempted_at: Timestamp, status_code: Nullable(Type.Integer()), error: Nullable(Type.String()) },
        { additionalProperties: false },
      ),
      { description: 'The latest failed attempt in the window' },
    ),
    pending: Type.Integer({ minimum: 0, description: 'Deliveries waiting to be sent or retried' }),
    next_retry_at: Nullable(Timestamp, { description: 'When the next retry of a failed delivery is due; null when none waits. Retries run on real time: a test store whose clock was moved sees it at the same distance after its own now' }),
  },
  { $id: 'WebhookHealth', title: 'WebhookHealth', additionalProperties: false },
)
export type WebhookHealthView = Static<typeof WebhookHealth>

export const DeliveryListQuery = Type.Object(
  { ...PageQuery, status: Type.Optional(StringEnum(DELIVERY_STATUSES)) },
  { additionalProperties: false },
)

export const RedeliverBody = Type.Object({ event_id: Id('evt') }, { additionalProperties: false })
export const ReplayBody = Type.Object(
  { since: { ...Timestamp, description: 'Failed deliveries created at or after this time are sent again' } },
  { additionalProperties: false },
)
export const ReplayResult = Type.Object(
  { object: Type.Literal('webhook_replay'), redelivered: Type.Integer({ minimum: 0 }) },
  { $id: 'WebhookReplay', title: 'WebhookReplay', additionalProperties: false },
)

export const webhookSchemas = [WebhookSubscription, WebhookSubscriptionWithSecret, RotatedSecret, WebhookDelivery, WebhookDeliveryDetail, WebhookHealth, ReplayResult]
