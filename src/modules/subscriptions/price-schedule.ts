import type { SubscriptionRow } from '../../db/database.ts'
import { periodBoundary } from '../../lib/calendar.ts'
import type { Mutation } from './subscription-mutation.ts'

/**
 * When a price change with notice reaches a subscription (docs/contract.md, Price changes with
 * notice), as data. The renewal engine charges `scheduled_amount` from the renewal whose period
 * starts at or after `scheduled_amount_from` (billing's renewal plan); this file decides that date.
 */

type Scheduled = Pick<
  SubscriptionRow,
  | 'billing_anchor_at'
  | 'interval'
  | 'interval_count'
  | 'period_index'
  | 'next_charge_at'
  | 'prepaid_cycles_total'
  | 'pending_charge_id'
  | 'unpaid_period_start'
  | 'dunning_attempts'
  | 'stock_attempts'
>

// A daily plan with two years' notice walks 730 periods; more means a schedule that cannot be walked.
const MAX_STEPS = 100_000

/**
 * The first renewal of the subscription's schedule whose period starts at or after `threshold`, past
 * the renewal being charged or retried now (its price was fixed when it was claimed). Renewals are
 * the period boundaries counted from the billing anchor, one charge per period (or prepaid block).
 * With no next renewal known (pending, past due, paused without one), `threshold` itself: the first
 * renewal at or after it charges the new price, and a later change of schedule (activation, resume)
 * finds that renewal (`rescheduledPrice`).
 */
export function firstRenewalAtOrAfter(subscription: Scheduled, threshold: Date, timeZone: string): Date {
  const anchor = subscription.billing_anchor_at
  if (subscription.next_charge_at === null || anchor === null) return threshold
  const boundary = (index: number) => periodBoundary(anchor, subscription.interval, subscription.interval_count, index, timeZone)
  const step = subscription.prepaid_cycles_total ?? 1
  const retrying = subscription.unpaid_period_start !== null && (subscription.dunning_attempts > 0 || subscription.stock_attempts > 0)
  // The period the next charge pays: the unpaid one being retried, else the one starting at next_charge_at.
  const nextStart = retrying ? subscription.unpaid_period_start! : subscription.next_charge_at
  let index = Math.max(0, subscription.period_index + 1)
  let steps = 0
  while (boundary(index) < nextStart) {
    index++
    if (++steps > MAX_STEPS) return threshold
  }
  if (retrying || subscription.pending_charge_id !== null) index += step
  while (boundary(index) < threshold) {
    index += step
    if (++steps > MAX_STEPS) return threshold
  }
  return boundary(index)
}

/**
 * A change that moves the subscription's schedule (order now, reschedule, activation, resumption, a
 * new cadence) moves its scheduled price to the first renewal of the new schedule at or after the
 * date it was due: never sooner, so the notice given still holds. Nothing when it has none, when the
 * schedule stays, or when the change sets the scheduled price itself (a plan change drops it).
 */
export function rescheduledPrice(subscription: SubscriptionRow, set: Mutation['set'], timeZone: string): Mutation['set'] {
  const from = subscription.scheduled_amount_from
  if (subscription.scheduled_amount === null || from === null) return {}
  if ('scheduled_amount' in set || 'scheduled_amount_from' in set) return {}
  if (!('billing_anchor_at' in set) && !('interval' in set) && !('interval_count' in set)) return {}
  const after = { ...subscription, ...set } as Record<string, unknown>
  const at = (value: unknown) => (value === null || value === undefined ? null : value instanceof Date ? value : new Date(String(value)))
  const moved = firstRenewalAtOrAfter(
    {
      ...subscription,
      ...(after as Partial<SubscriptionRow>),
      billing_anchor_at: at(after.billing_anchor_at),
      next_charge_at: at(after.next_charge_at),
      unpaid_period_start: at(after.unpaid_period_start),
    },
    from,
    timeZone,
  )
  return moved.getTime() === from.getTime() ? {} : { scheduled_amount_from: moved }
}

/** What a subscription no longer moves to when it changes plans: the price announced was the old plan's. */
export const NO_SCHEDULED_PRICE = { scheduled_amount: null, scheduled_amount_from: null } as const
