import type { Executor } from '../../db/database.ts'
import { enqueueJobs, type NewJob } from '../../jobs/runner.ts'
import { discountOn, type DiscountRate } from '../../lib/money.ts'
import type { NotificationTemplate } from './notification-settings.ts'

/**
 * How a state change becomes an email (docs/contract.md, Subscriber emails). The event log calls
 * `enqueueNotificationJobs` with the events it records, inside the transaction that records them, so
 * the send job exists exactly when the change does: a rollback leaves no email behind, a commit
 * always leaves one to send, and a crash after the commit loses nothing (the job is in the table).
 * Each job is keyed by its event (`dedupe_key`), and the log row it writes is unique by that key, so
 * the job runner's retries never make a second email, except when a worker dies between the mail
 * server's acceptance and recording it (at least once, like every job).
 */

export const SEND_NOTIFICATION_JOB = 'notifications.send'
/** Retries back off 2 s, 4 s, 8 s ... (src/jobs/retry-schedule.ts): twelve attempts span about an hour and a half. */
export const SEND_ATTEMPTS = 12

const TEMPLATE_OF_EVENT: Readonly<Record<string, NotificationTemplate>> = {
  'subscription.created': 'subscription_created',
  'subscription.renewal_upcoming': 'renewal_upcoming',
  'charge.failed': 'payment_failed',
  'subscription.past_due': 'past_due',
  'subscription.cancelled': 'cancelled',
}

/** What the email states, as it was when the event happened (later changes do not rewrite it). */
export interface NotificationFacts {
  amount?: number
  currency?: string
  /** The renewal announced, or the next one. */
  next_charge_at?: string | null
  next_retry_at?: string | null
  cancellation_reason?: string | null
  /** The card's expiry, for payment_instrument_expiring. */
  expiry_month?: number
  expiry_year?: number
}

export interface NotificationPayload {
  template: NotificationTemplate
  store_id: string
  subscription_id: string
  /** One email per key: the event id, or the instrument and renewal. */
  dedupe_key: string
  /** When it happened, on the store's clock. */
  occurred_at: string
  facts: NotificationFacts
}

export interface RecordedForNotification {
  id: string
  storeId: string
  eventType: string
  occurredAt: Date
  data: Record<string, unknown>
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)
const integer = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) ? value : undefined)

function factsOf(template: NotificationTemplate, data: Record<string, unknown>): NotificationFacts {
  switch (template) {
    case 'payment_failed':
      return { amount: integer(data.amount), currency: text(data.currency), next_retry_at: text(data.next_retry_at) ?? null }
    case 'cancelled':
      return { cancellation_reason: text(data.cancellation_reason) ?? null }
    default: {
      const amount = integer(data.amount)
      const quantity = integer(data.quantity) ?? 1
      const currency = text(data.currency)
      // The next charge as the renewal will compute it: price x quantity less the discount it carries
      // (one-time add-ons are not in the subscription's data: the email names the subscription's own line).
      const base = amount === undefined ? undefined : amount * quantity
      const discount = data.discount as DiscountRate | null | undefined
      const next = base === undefined || !currency ? base : base - discountOn(base, discount && typeof discount === 'object' ? { type: discount.type, value: discount.value, currency: discount.currency ?? null } : null, currency)
      return { amount: next, currency, next_charge_at: text(data.next_charge_at) ?? null }
    }
  }
}

export function sendJob(payload: NotificationPayload): NewJob {
  return { kind: SEND_NOTIFICATION_JOB, payload: payload as unknown as Record<string, unknown>, dedupeKey: `notification:${payload.dedupe_key}`, maxAttempts: SEND_ATTEMPTS }
}

/** Queues the emails these freshly recorded events call for, in the caller's transaction. */
export async function enqueueNotificationJobs(trx: Executor, events: readonly RecordedForNotification[]): Promise<void> {
  const jobs: NewJob[] = []
  for (const event of events) {
    const template = TEMPLATE_OF_EVENT[event.eventType]
    if (!template) continue
    const subscriptionId = event.eventType.startsWith('charge.') ? text(event.data.subscription_id) : text(event.data.id)
    if (!subscriptionId) continue
    jobs.push(
      sendJob({
        template,
        store_id: event.storeId,
        subscription_id: subscriptionId,
        dedupe_key: `event:${event.id}`,
        occurred_at: event.occurredAt.toISOString(),
        facts: factsOf(template, event.data),
      }),
    )
  }
  await enqueueJobs(trx, jobs)
}
