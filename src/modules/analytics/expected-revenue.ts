import type { StoreRow, SubscriptionRow } from '../../db/database.ts'
import { afterSuccess, discountCycleUsed, estimatedPlatformTax, upcomingRenewal, type RenewalAddOn } from '../billing/index.ts'

/**
 * Expected revenue from renewals (docs/contract.md, Analytics): every renewal a subscription will
 * make in a window, priced by the renewal engine's own plan. Nothing is priced here. From the
 * subscription as it stands, the preview's `upcomingRenewal` finds the next charge (carried past a
 * resumption, an activation or a skipped renewal, with the add-ons waiting for it, the discount as it
 * stands, the store's shipping and test tax); then the charge is taken to succeed when due
 * (`afterSuccess`, which moves the period on by one cycle or by a prepaid block, and
 * `discountCycleUsed`, which uses a cycle of a repeating or once discount), and the next one is found
 * the same way, until one falls after the window. So a weekly subscription counts four or five times
 * in 30 days, a skipped renewal drops only itself, a prepaid block only at its renewal, and add-ons
 * ride on the first charge only.
 *
 * What makes no renewal, as the preview says it: a subscription cancelled, expired, set to cancel at
 * its period's end, paused with no resume date (or resuming after the window), past due (it waits for
 * a new payment instrument), held for an admin (a billing issue), or in a store whose billing is
 * stopped. A subscription in dunning counts its open renewal at its next retry.
 */

export interface ExpectedRenewal {
  /** When it is due; a renewal already due and not yet made counts at the window's start. */
  at: Date
  currency: string
  amount: number
}

/** Safety bound on one subscription's renewals in a window: a daily plan renews 367 times in 366 days. */
const MAX_RENEWALS = 1_000

/**
 * The renewals of one subscription due in `[from, to)`. `latestTax` is the platform tax base of its
 * latest paid renewal (a platform store's tax is estimated from it, as the preview does).
 */
export function expectedRenewals(
  subscription: SubscriptionRow,
  store: StoreRow,
  addOns: readonly RenewalAddOn[],
  window: { from: Date; to: Date },
  latestTax?: { base: number; tax: number },
): ExpectedRenewal[] {
  const found: ExpectedRenewal[] = []
  let row = subscription
  let pending = addOns
  // A charge being collected now is already a charge, not an expected renewal: the ones after it count.
  let inProgress = row.pending_charge_id !== null
  if (inProgress) row = { ...row, pending_charge_id: null }
  for (let guard = 0; guard < MAX_RENEWALS; guard++) {
    const next = upcomingRenewal(row, store, pending)
    if (next.kind === 'none') break
    const at = next.at < window.from ? window.from : next.at
    if (at >= window.to) break
    const renewal = next.renewal
    if (!inProgress) {
      const base = renewal.subtotal - renewal.discountAmount + renewal.shippingAmount
      const tax = store.gateway === 'platform' ? estimatedPlatformTax(base, latestTax) : 0
      found.push({ at, currency: renewal.currency, amount: renewal.amount + tax })
    }
    inProgress = false
    const carried = next.subscription
    const settled = afterSuccess(carried, store, renewal.periodIndex, at)
    row = { ...carried, ...settled.set, ...discountCycleUsed(carried, renewal.discountId) } as SubscriptionRow
    // The add-ons waiting were on that charge: they are gone after it.
    pending = []
  }
  return found
}

/** Sums renewals per currency, by currency code. */
export function totalsByCurrency(renewals: Iterable<ExpectedRenewal>): { currency: string; amount: number; renewals: number }[] {
  const totals = new Map<string, { currency: string; amount: number; renewals: number }>()
  for (const renewal of renewals) {
    const entry = totals.get(renewal.currency) ?? { currency: renewal.currency, amount: 0, renewals: 0 }
    entry.amount += renewal.amount
    entry.renewals += 1
    totals.set(renewal.currency, entry)
  }
  return [...totals.values()].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0))
}
