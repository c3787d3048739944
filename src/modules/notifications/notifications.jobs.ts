import { Type, type Static } from 'typebox'
import { jobKind, NoPayload } from '../../jobs/job-kinds.ts'
import { StringEnum } from '../../http/schemas.ts'
import { EMAIL_TEMPLATES } from './email-templates.ts'

/** Retries back off 2 s, 4 s, 8 s ... (src/jobs/retry-schedule.ts): twelve attempts span about an hour and a half. */
export const SEND_ATTEMPTS = 12

const OptionalText = Type.Optional(Type.Union([Type.String(), Type.Null()]))

/** What the email states, as it was when the event happened (later changes do not rewrite it). */
export const NotificationFacts = Type.Object(
  {
    amount: Type.Optional(Type.Integer()),
    currency: Type.Optional(Type.String()),
    /** The renewal announced, or the next one. */
    next_charge_at: OptionalText,
    next_retry_at: OptionalText,
    /** The price before a price change (price_change_notice), as `amount` is after it: price x quantity. */
    previous_amount: Type.Optional(Type.Integer()),
    /** The renewal that first charges the new price (price_change_notice). */
    effective_at: OptionalText,
    /** The period a skipped renewal was for (renewal_skipped). */
    skipped_period_start: OptionalText,
    cancellation_reason: OptionalText,
    /** The card's expiry, for payment_instrument_expiring. */
    expiry_month: Type.Optional(Type.Integer()),
    expiry_year: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
)
export type NotificationFacts = Static<typeof NotificationFacts>

/** One subscriber email to send (docs/contract.md, Subscriber emails): one per key, however often it is queued. */
export const SendNotification = jobKind(
  'notifications.send',
  Type.Object(
    {
      template: StringEnum(EMAIL_TEMPLATES),
      store_id: Type.String(),
      subscription_id: Type.String(),
      /** One email per key: the event id, or the instrument and renewal. */
      dedupe_key: Type.String(),
      /** When it happened, on the store's clock. */
      occurred_at: Type.String(),
      facts: NotificationFacts,
    },
    { additionalProperties: false },
  ),
  { maxAttempts: SEND_ATTEMPTS },
)
export type NotificationPayload = Static<typeof SendNotification.payload>

/** The daily check for cards that expire before the next renewal. */
export const InstrumentExpiryCheck = jobKind('notifications.instrument_expiry_check', NoPayload, { maxAttempts: 1_000_000 })

/** The queue entry of one email: keyed by the email's own key, so it is queued once, in its store's lane of the queue. */
export function sendEntry(payload: NotificationPayload) {
  return { payload, dedupeKey: `notification:${payload.dedupe_key}`, storeId: payload.store_id }
}
