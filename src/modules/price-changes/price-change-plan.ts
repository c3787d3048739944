import type { SubscriptionRow } from '../../db/database.ts'
import { addDays } from '../../lib/calendar.ts'
import { MAX_RENEWAL_AMOUNT } from '../../lib/money.ts'
import type { EventType } from '../events/index.ts'
import { firstRenewalAtOrAfter, NO_SCHEDULED_PRICE, type Mutation } from '../subscriptions/index.ts'

/**
 * What a price change does to one subscription of its plan (docs/contract.md, Price changes with
 * notice), as data: nothing reads the database or the clock here (test/unit/price-change-schedule.test.ts).
 */
export type SubscriptionPriceChange =
  /** Already at the new price, or already moving to it (its notice stands): nothing to do, nothing to send. */
  | { kind: 'unchanged' }
  /** Its row cannot take the new price (the renewal would be over the limit, its schedule cannot be walked). */
  | { kind: 'failed'; reason: string }
  | { kind: 'change'; set: Mutation['set']; events: EventType[] }

/**
 * The notice is counted from `now` on the store's clock, when the notice email is queued with the
 * event (both in the transaction that schedules the price): the subscription keeps its price until
 * its first renewal at least `noticeDays` later (in days of the store's calendar), then pays `amount`.
 * A subscription with a price of its own (imported, set by hand, an earlier change) moves too: the
 * plan's price changed for everyone on it, each told of their own price and the new one.
 */
export function priceChangeFor(subscription: SubscriptionRow, change: { amount: number; noticeDays: number }, now: Date, timeZone: string): SubscriptionPriceChange {
  if (subscription.scheduled_amount === change.amount) return { kind: 'unchanged' }
  if (subscription.amount === change.amount) {
    if (subscription.scheduled_amount === null) return { kind: 'unchanged' }
    // An earlier change was moving it elsewhere; it stays at the price it pays, which is the new one.
    return { kind: 'change', set: { ...NO_SCHEDULED_PRICE }, events: ['subscription.updated'] }
  }
  const renewal = change.amount * subscription.quantity
  if (renewal > MAX_RENEWAL_AMOUNT) return { kind: 'failed', reason: `${change.amount} x ${subscription.quantity} would make one renewal ${renewal} minor units, over ${MAX_RENEWAL_AMOUNT}` }
  try {
    const from = firstRenewalAtOrAfter(subscription, addDays(now, change.noticeDays, timeZone), timeZone)
    return { kind: 'change', set: { scheduled_amount: change.amount, scheduled_amount_from: from }, events: ['subscription.price_change_scheduled'] }
  } catch (error) {
    return { kind: 'failed', reason: error instanceof Error ? error.message : String(error) }
  }
}
