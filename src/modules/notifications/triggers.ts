import type { Executor } from '../../db/database.ts'
import { enqueueMany } from '../../jobs/job-kinds.ts'
import { discountOn, type DiscountRate } from '../../lib/money.ts'
import type { EventRecorded } from '../events/index.ts'
import type { NotificationTemplate } from '../stores/index.ts'
import type { EmailTemplate } from './email-templates.ts'
import { sendEntry, SendNotification, type NotificationFacts } from './notifications.jobs.ts'

/**
 * How a state change becomes an email (docs/contract.md, Subscriber emails). This module reacts to
 * the events the log records (`queueNotificationsFor`), inside the transaction that records them, so
 * the send job exists exactly when the change does: a rollback leaves no email behind, a commit
 * always leaves one to send, and a crash after the commit loses nothing (the job is in the table).
 * Each job is keyed by its event (`dedupe_key`), and the log row it writes is unique by that key, so
 * the job runner's retries never make a second email, except when a worker dies between the mail
 * server's acceptance and recording it (at least once, like every job).
 */

const TEMPLATE_OF_EVENT: Readonly<Record<string, NotificationTemplate>> = {
  'subscription.created': 'subscription_created',
  'subscription.renewal_upcoming': 'renewal_upcoming',
  'charge.failed': 'payment_failed',
  'subscription.past_due': 'past_due',
  'subscription.cancelled': 'cancelled',
  'subscription.price_change_scheduled': 'price_change_notice',
}

/**
 * The email an event calls for, if any. Only a renewal skipped because an item was out of stock is
 * announced (a skip the subscriber asked for is theirs already), and a charge that failed because an
 * item was out of stock moved no money and needs no new card: no payment-failed email.
 */
function templateOf(eventType: string, data: Record<string, unknown>): EmailTemplate | undefined {
  if (eventType === 'subscription.skipped') return data.skip_reason === 'out_of_stock' ? 'renewal_skipped' : undefined
  // An import emails only the subscribers it could not give a card: a link to add one (nothing else is news to them).
  if (eventType === 'subscription.imported') return (data.billing_issue as { code?: unknown } | null)?.code === 'payment_method_required' ? 'payment_update_link' : undefined
  // Out of stock, or billing switched off before the charge was sent: no money moved and no new card helps.
  if (eventType === 'charge.failed' && (data.failure_code === 'out_of_stock' || data.failure_code === 'billing_disabled')) return undefined
  return TEMPLATE_OF_EVENT[eventType]
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined)
const integer = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) ? value : undefined)

function factsOf(template: EmailTemplate, data: Record<string, unknown>): NotificationFacts {
  switch (template) {
    case 'payment_failed':
      return { amount: integer(data.amount), currency: text(data.currency), next_retry_at: text(data.next_retry_at) ?? null }
    case 'cancelled':
      return { cancellation_reason: text(data.cancellation_reason) ?? null }
    case 'renewal_skipped':
      return { next_charge_at: text(data.next_charge_at) ?? null, skipped_period_start: text(data.current_period_start) ?? null }
    case 'price_change_notice': {
      // The subscription's line before and after, price x quantity, as its renewals charge them (before discounts, shipping and tax).
      const quantity = integer(data.quantity) ?? 1
      const before = integer(data.amount)
      const scheduled = data.scheduled_price as { amount?: unknown; effective_at?: unknown } | null | undefined
      const after = integer(scheduled?.amount)
      return {
        ...(before === undefined ? {} : { previous_amount: before * quantity }),
        ...(after === undefined ? {} : { amount: after * quantity }),
        currency: text(data.currency),
        effective_at: text(scheduled?.effective_at) ?? null,
      }
    }
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

/** Queues the emails these freshly recorded events call for, in the caller's transaction (an event reaction). */
export async function queueNotificationsFor(trx: Executor, recorded: readonly EventRecorded[]): Promise<void> {
  const entries = []
  for (const { storeId, occurredAt, event } of recorded) {
    const template = templateOf(event.event_type, event.data)
    if (!template) continue
    const subscriptionId = event.event_type.startsWith('charge.') ? text(event.data.subscription_id) : text(event.data.id)
    if (!subscriptionId) continue
    entries.push(sendEntry({ template, store_id: storeId, subscription_id: subscriptionId, dedupe_key: `event:${event.id}`, occurred_at: occurredAt.toISOString(), facts: factsOf(template, event.data) }))
  }
  await enqueueMany(trx, SendNotification, entries)
}
