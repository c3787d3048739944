import type { Db, StoreRow, SubscriptionRow } from '../../db/database.ts'
import { AppError, notFound } from '../../lib/errors.ts'
import { toRfc3339 } from '../../lib/time.ts'
import { dueMutation, findSubscription, type Actor } from '../subscriptions/index.ts'
import type { UpcomingRenewalView } from './charge.schemas.ts'
import { latestTaxBase } from './charges.repository.ts'
import { loadRenewalInputs } from './renewal-inputs.ts'
import { planRenewal, type Renewal, type RenewalAddOn } from './renewal-plan.ts'

/**
 * The next renewal as it stands (docs/contract.md, Upcoming renewal). Nothing is priced here: the
 * renewal plan the engine charges with (`planRenewal`) prices it, over the inputs the engine loads
 * (`loadRenewalInputs`). What this adds is *which* renewal is next: the subscription is carried
 * forward through what happens before its next charge (activation, resumption, a skipped renewal) by
 * the same pure functions that do those things, and then planned.
 */

export type ChargeRenewal = Extract<Renewal, { kind: 'charge' }>

export type Upcoming =
  /** `subscription` is the row as it stands when the charge is made (carried past a resumption, an activation, a skip). */
  | { kind: 'charge'; at: Date; renewal: ChargeRenewal; subscription: SubscriptionRow }
  /** No renewal to show; `reason` is said to the client. */
  | { kind: 'none'; reason: string }

/** The subscription once `set` (a plan's or a due mutation's changes, plain values) has been applied. */
function applied(row: SubscriptionRow, set: object): SubscriptionRow {
  return { ...row, ...set } as SubscriptionRow
}

export function upcomingRenewal(subscription: SubscriptionRow, store: StoreRow, addOns: readonly RenewalAddOn[]): Upcoming {
  const none = (reason: string): Upcoming => ({ kind: 'none', reason })
  let row = subscription
  // The conditions the engine's claim (lockDueForRenewal) holds a renewal back on, in words.
  if (row.status === 'cancelled' || row.status === 'expired') return none(`the subscription is ${row.status}`)
  if (row.cancel_at_period_end) return none('it is set to cancel at the end of its period')
  if (store.billing_stopped_at !== null) return none("the store's billing is stopped")
  if (row.billing_issue !== null) return none(`its billing waits for an admin (${row.billing_issue.code})`)
  if (row.pending_charge_id !== null) return none(`the charge for this renewal is in progress (${row.pending_charge_id}); its amounts are on that charge`)
  if (row.status === 'past_due') return none('it is past due: the next attempt is made when its payment instrument changes')
  if (row.status === 'paused') {
    if (row.resume_at === null) return none('it is paused until resumed')
    row = applied(row, dueMutation('resumption', row, store, row.resume_at).set)
  }
  if (row.status === 'pending') row = applied(row, dueMutation('activation', row, store, row.start_at).set)
  // A skipped renewal charges nothing and moves the period on; the charge after it is the next one.
  for (let step = 0; step < 2; step++) {
    if (row.next_charge_at === null) return none('there is no scheduled renewal')
    let renewal: Renewal
    try {
      renewal = planRenewal(row, store, addOns)
    } catch (error) {
      // A row past the renewal limit (older than the limit): the engine sets it aside, never charges it.
      if (error instanceof RangeError) return none(error.message)
      throw error
    }
    if (renewal.kind === 'charge') return { kind: 'charge', at: row.next_charge_at, renewal, subscription: row }
    if (renewal.kind === 'expire') return none('its gifted prepaid block ends without a renewal')
    row = applied(row, renewal.set)
  }
  return none('there is no scheduled renewal')
}

/**
 * When the next renewal that charges is due: past a skipped one, a resumption or an activation, as
 * `upcomingRenewal` finds it; null when none is coming. One-time add-ons wait for exactly this one.
 */
export function upcomingRenewalAt(subscription: SubscriptionRow, store: StoreRow, addOns: readonly RenewalAddOn[] = []): Date | null {
  const upcoming = upcomingRenewal(subscription, store, addOns)
  return upcoming.kind === 'charge' ? upcoming.at : null
}

/**
 * A platform store's tax is its checkout's, known only when the renewal is made: the estimate is the
 * rate its latest paid renewal was taxed at (its tax over its goods and shipping, which a store may tax
 * too), applied to this one's goods and shipping, rounded half up; none without such a renewal. The
 * test gateway's tax is exact and is never estimated.
 */
export function estimatedPlatformTax(base: number, latest: { base: number; tax: number } | undefined): number {
  if (!latest || latest.base <= 0 || latest.tax <= 0 || base <= 0) return 0
  return Math.floor((2 * base * latest.tax + latest.base) / (2 * latest.base))
}

export function presentUpcomingRenewal(subscriptionId: string, upcoming: Extract<Upcoming, { kind: 'charge' }>, estimatedTax = 0): UpcomingRenewalView {
  const renewal = { ...upcoming.renewal, taxAmount: upcoming.renewal.taxAmount + estimatedTax, amount: upcoming.renewal.amount + estimatedTax }
  return {
    object: 'upcoming_renewal',
    subscription_id: subscriptionId,
    next_charge_at: toRfc3339(upcoming.at),
    period_start: toRfc3339(renewal.period.start),
    period_end: toRfc3339(renewal.period.end),
    currency: renewal.currency,
    line_items: renewal.lineItems,
    subtotal: renewal.subtotal,
    discount_amount: renewal.discountAmount,
    shipping_amount: renewal.shippingAmount,
    shipping_method: renewal.shippingMethod,
    tax_amount: renewal.taxAmount,
    amount: renewal.amount,
  }
}

export type UpcomingRenewals = ReturnType<typeof createUpcomingRenewals>

export function createUpcomingRenewals({ db }: { db: Db }) {
  return {
    /** 404 for another store's or (in the portal) another subscriber's subscription; 409 when nothing is due to renew. */
    async get(store: StoreRow, id: string, actor: Actor): Promise<UpcomingRenewalView> {
      const subscription = await findSubscription(db, store.id, id)
      if (!subscription || (actor.kind === 'subscriber' && subscription.subscriber_id !== actor.subscriberId)) throw notFound('subscription', id)
      const inputs = await loadRenewalInputs(db, [subscription])
      const upcoming = upcomingRenewal(subscription, inputs.stores.get(subscription.store_id) ?? store, inputs.addOns.get(subscription.id) ?? [])
      if (upcoming.kind === 'none') throw new AppError('invalid_state', `there is no upcoming renewal: ${upcoming.reason}`)
      const renewalStore = inputs.stores.get(subscription.store_id) ?? store
      const base = upcoming.renewal.subtotal - upcoming.renewal.discountAmount + upcoming.renewal.shippingAmount
      const estimatedTax = renewalStore.gateway === 'platform' ? estimatedPlatformTax(base, await latestTaxBase(db, subscription.id)) : 0
      return presentUpcomingRenewal(subscription.id, upcoming, estimatedTax)
    },
  }
}
