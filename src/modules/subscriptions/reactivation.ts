import type { PlanRow, StoreRow, SubscriptionRow } from '../../db/database.ts'
import type { Actor } from '../../http/actors.ts'
import { AppError, invalidField } from '../../lib/errors.ts'
import { RENEWAL_FAILED } from './billing-issues.ts'
import { assertBillingEnabled } from './order-now.ts'
import type { Mutation } from './subscription-mutation.ts'
import { transition } from './subscription-state.ts'

/**
 * Reactivation (docs/contract.md, Reactivation): a cancelled subscription starts again on its plan,
 * its own terms (price, quantity, interval, discount) and its payment instrument. From now, a new
 * period begins at once and is charged through the renewal engine, as an order now is; from a later
 * `next_charge_at`, it is active and nothing is charged until then. Expired subscriptions are not
 * reactivated: they ended by their own terms (a gift's prepaid block), which nobody agreed to renew.
 */

/** 403 when a subscriber asks and the store has not switched portal reactivation on. */
export function assertMayReactivate(store: Pick<StoreRow, 'portal_reactivation'>, actor: Actor): void {
  if (actor.kind === 'subscriber' && !store.portal_reactivation) {
    throw new AppError('forbidden', 'this store does not let subscribers reactivate a cancelled subscription here; ask the store to do it')
  }
}

/**
 * What a subscriber may not do that the merchant may: restart a gift (someone else pays for it), or
 * pick a start after the end of the period already paid for (service with nothing charged until
 * then). The merchant's admin may do both.
 */
export function assertSubscriberMayStart(subscription: Pick<SubscriptionRow, 'gift' | 'current_period_end'>, actor: Actor, now: Date, at: Date): void {
  if (actor.kind !== 'subscriber') return
  if (subscription.gift !== null) throw new AppError('forbidden', 'a gift is started again by whoever pays for it; ask the store')
  const paidUntil = subscription.current_period_end && subscription.current_period_end > now ? subscription.current_period_end : now
  if (at > paidUntil) throw invalidField('/body/next_charge_at', `must not be later than the end of the period already paid for (${paidUntil.toISOString()})`)
}

/**
 * 409 unless the subscription is cancelled and can start again now on its plan. `chargesNow`: the
 * reactivation starts a period now and charges it at once, refused (`billing_disabled`) while the
 * store's billing is switched off; one from a later `next_charge_at` charges nothing now and is let through.
 */
export function assertCanReactivate(store: Pick<StoreRow, 'billing_stopped_at' | 'billing_enabled'>, subscription: SubscriptionRow, plan: Pick<PlanRow, 'active'> | undefined, chargesNow = true): void {
  const refuse = (why: string) => new AppError('invalid_state', `cannot reactivate: ${why}`)
  if (subscription.status !== 'cancelled') {
    throw refuse(
      subscription.status === 'expired'
        ? 'the subscription expired at the end of its terms (a gift or a fixed number of cycles); start a new subscription instead'
        : `the subscription is ${subscription.status.replace('_', ' ')}; only a cancelled subscription can be reactivated`,
    )
  }
  if (store.billing_stopped_at !== null) throw refuse("the store's billing is stopped")
  if (!plan || !plan.active) throw refuse('its plan is archived; start a new subscription on a plan that is sold')
  if (subscription.pending_charge_id !== null) throw refuse('a charge of the subscription is still in flight; try again once it has settled')
  if (subscription.billing_issue !== null && subscription.billing_issue.code !== RENEWAL_FAILED) throw refuse(`billing waits for an admin (${subscription.billing_issue.code}): resolve the charge under review first`)
  // A gift's prepaid block expires instead of renewing: nobody agreed to pay another one.
  if (subscription.gift !== null && subscription.prepaid_cycles_total !== null) throw refuse('a gifted prepaid block ends without a renewal to charge')
  if (chargesNow) assertBillingEnabled(store, 'reactivate now')
}

/**
 * What reactivation writes: active again, the cancellation forgotten, and the billing anchor at `at`
 * (now, or the `next_charge_at` asked for), whose renewal pays the first period, or prepaid block,
 * counted from it. The current period runs from now until that renewal, so a cancellation at period end
 * asked for before it still comes due. Dunning, skips and reminders of the old periods end with it.
 */
export function reactivation(subscription: SubscriptionRow, now: Date, at: Date): Mutation {
  return {
    set: {
      status: transition(subscription.status, 'reactivate'),
      cancelled_at: null,
      cancellation_reason: null,
      cancellation_reason_code: null,
      cancel_at_period_end: false,
      paused_at: null,
      resume_at: null,
      past_due_at: null,
      billing_anchor_at: at,
      period_index: -1,
      current_period_start: now,
      current_period_end: at,
      next_charge_at: at,
      prepaid_cycles_remaining: subscription.prepaid_cycles_total,
      skip_next: false,
      skip_reason: null,
      dunning_attempts: 0,
      dunning_started_at: null,
      unpaid_period_start: null,
      stock_attempts: 0,
      out_of_stock_since: null,
      reminded_for: null,
      billing_issue: null,
    },
    events: ['subscription.reactivated'],
  }
}
