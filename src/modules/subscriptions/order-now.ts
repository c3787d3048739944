import { setTimeout as sleep } from 'node:timers/promises'
import type { StoreRow, SubscriptionRow } from '../../db/database.ts'
import { periodBoundary } from '../../lib/calendar.ts'
import { AppError, invalidField } from '../../lib/errors.ts'
import { toRfc3339 } from '../../lib/time.ts'
import { RENEWAL_FAILED } from './billing-issues.ts'

/**
 * Order now and reschedule (docs/contract.md, Order now and reschedule): when they are allowed, and
 * how long an order now waits for its charge. The charge itself is the renewal engine's: this module
 * only makes the renewal due and asks the engine (through `RenewNow`, given by the composition root)
 * to run it for this one subscription.
 */

/** Runs the renewal engine's claim, charge and settlement for one subscription of one store. */
export type RenewNow = (storeId: string, subscriptionId: string) => Promise<unknown>

/** Below the usual 30-60 s of load balancers and gateways: the request answers 202 past it, the charge goes on. */
export const RENEW_NOW_WAIT_MS = 10_000
const POLL_MS = 100

/** 409 unless the subscription is active with nothing holding its renewal back. */
export function assertCanRenewNow(store: StoreRow, subscription: SubscriptionRow, now: Date, action: 'order now' | 'reschedule' = 'order now'): void {
  const refuse = (why: string) => new AppError('invalid_state', `cannot ${action}: ${why}`)
  if (subscription.status !== 'active') throw refuse(`the subscription is ${subscription.status.replace('_', ' ')}; only an active subscription renews`)
  if (subscription.pending_charge_id !== null) throw refuse('a charge is already in flight for this subscription')
  if (subscription.dunning_attempts > 0) throw refuse('a failed charge is being retried (dunning); retry the failed charge now, send the subscriber a link to update their payment method, or change the payment instrument')
  if (subscription.stock_attempts > 0) throw refuse('the renewal is waiting for an item to come back in stock; it is tried again daily')
  if (subscription.billing_issue !== null && subscription.billing_issue.code !== RENEWAL_FAILED) throw refuse(`billing waits for an admin (${subscription.billing_issue.code})`)
  if (subscription.cancel_at_period_end) throw refuse('it is set to cancel at the end of the period, so there is no next renewal')
  if (store.billing_stopped_at !== null) throw refuse("the store's billing is stopped")
  if (subscription.next_charge_at === null) throw refuse('there is no scheduled renewal')
  // A gift's prepaid block expires instead of renewing (renewal-plan.ts): nobody agreed to pay another.
  if (subscription.gift !== null && subscription.prepaid_cycles_total !== null) throw refuse('a gifted prepaid block ends without a renewal to charge')
  if (subscription.prepaid_cycles_total !== null && subscription.current_period_end !== null && subscription.current_period_end < subscription.next_charge_at) {
    throw refuse('cycles of the prepaid block already paid are still to come; the next block can move once its last cycle has begun')
  }
  if (action === 'order now' && subscription.current_period_start !== null && subscription.current_period_start >= now) {
    throw refuse('the current period began at this very moment')
  }
  // Only order now charges at once; a reschedule charges nothing (moving renewals past the cutover is part of one).
  if (action === 'order now') assertBillingEnabled(store, 'order now')
}

/**
 * 409 `billing_disabled` while the merchant has switched the store's billing off (the cutover switch,
 * docs/contract.md): an action that would charge at once is refused rather than left waiting, so the
 * merchant learns why nothing was charged. The detail is worded for a subscriber in the portal too.
 * Checked after the subscription's own state: its refusal outlasts the switch.
 */
export function assertBillingEnabled(store: Pick<StoreRow, 'billing_enabled'>, action: string): void {
  if (!store.billing_enabled) {
    throw new AppError('billing_disabled', `cannot ${action}: billing is switched off for this store; nothing is charged, retried or reminded until the store turns it back on`)
  }
}

/**
 * Retry now (docs/contract.md, Payment recovery): 409 unless the subscription owes a renewal whose
 * card failed (in dunning, or past due) and nothing holds its next attempt back. The attempt is the
 * renewal engine's next dunning retry, brought forward.
 */
export function assertCanRetryNow(store: StoreRow, subscription: SubscriptionRow): void {
  const refuse = (why: string) => new AppError('invalid_state', `cannot retry the charge: ${why}`)
  if (subscription.status !== 'active' && subscription.status !== 'past_due') {
    throw refuse(`the subscription is ${subscription.status.replace('_', ' ')}; only a subscription in dunning or past due has a failed renewal to retry`)
  }
  if (subscription.billing_issue !== null && subscription.billing_issue.code !== RENEWAL_FAILED) {
    throw refuse(`billing waits for an admin (${subscription.billing_issue.code}): resolve the charge under review first`)
  }
  if (subscription.pending_charge_id !== null) throw refuse('a charge is already in flight for this subscription')
  if (subscription.stock_attempts > 0) throw refuse('the renewal is waiting for an item to come back in stock, not for a payment; it is tried again daily')
  if (subscription.dunning_attempts === 0 || subscription.unpaid_period_start === null) throw refuse('no renewal charge of this subscription has failed; nothing is owed')
  if (subscription.cancel_at_period_end) throw refuse('it is set to cancel at the end of the period, so its renewal is not retried')
  if (store.billing_stopped_at !== null) throw refuse("the store's billing is stopped")
  assertBillingEnabled(store, 'retry the charge')
}

/** The new renewal time: later than now on the store's clock, at most one year ahead on its calendar; else 400. */
export function requireRescheduleTime(store: StoreRow, text: string, now: Date): Date {
  const at = new Date(text)
  if (at <= now) throw invalidField('/body/next_charge_at', `must be later than the store's current time ${toRfc3339(now)}`)
  const latest = periodBoundary(now, 'year', 1, 1, store.timezone)
  if (at > latest) throw invalidField('/body/next_charge_at', `may be at most one year ahead, until ${toRfc3339(latest)}`)
  return at
}

/**
 * Runs the renewal and waits until `settled()` says its charge has an outcome, for at most `waitMs`
 * of real time. Past it (a slow gateway, a platform outage) the answer is "not yet": the engine goes
 * on in the background under its lease, and if this process dies the reconciler takes the charge over.
 * An engine failure is the runner's to log; the renewal stays due and the worker charges it.
 */
export async function waitForRenewal(run: () => Promise<unknown>, settled: () => Promise<boolean>, waitMs = RENEW_NOW_WAIT_MS): Promise<boolean> {
  const deadline = Date.now() + waitMs
  const ran = run().then(() => true, () => true)
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), waitMs)
    timer.unref()
  })
  await Promise.race([ran, timedOut])
  clearTimeout(timer)
  for (;;) {
    if (await settled()) return true
    const left = deadline - Date.now()
    if (left <= 0) return false
    await sleep(Math.min(POLL_MS, left))
  }
}
