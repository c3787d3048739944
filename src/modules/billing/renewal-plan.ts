import type { Updateable } from 'kysely'
import type { StoreRow, SubscriptionRow, SubscriptionsTable } from '../../db/database.ts'
import { addDays, periodBoundary, type Period } from '../../lib/calendar.ts'
import { discountOn, MAX_CHARGE_AMOUNT, MAX_RENEWAL_AMOUNT, type DiscountRate } from '../../lib/money.ts'
import type { EventType } from '../events/index.ts'
import { transition } from '../subscriptions/index.ts'
import type { FailureCode } from './gateways/index.ts'
import type { ChargeLineItem } from './billing.tables.ts'

/**
 * The renewal engine's decisions as data: what a due renewal does, and what a settled charge does to
 * its subscription. Nothing here reads the database or the clock, so every rule is tested on its own
 * (test/unit/renewal-plan.test.ts) and the engine only carries the results to the database.
 */

type SubscriptionChanges = Updateable<SubscriptionsTable>

export type Renewal =
  /** The subscriber asked to skip: the period advances, nothing is charged. */
  | { kind: 'skip'; set: SubscriptionChanges; events: EventType[] }
  /** A gift's prepaid block ran out: nobody agreed to pay the next one. */
  | { kind: 'expire'; set: SubscriptionChanges; events: EventType[] }
  | ({ kind: 'charge'; attempt: number; currency: string; period: Period; periodIndex: number } & RenewalAmounts)

/** A one-time add-on waiting for the next renewal (module onetimes), as the plan needs it. */
export interface RenewalAddOn {
  id: string
  product_id: string
  quantity: number
  unit_amount: number
  currency: string
}

/** The terms of the discount a subscription carries, as the plan needs them. */
export interface DiscountTerms extends DiscountRate {
  id: string
}

/** What one renewal charge is made of (docs/contract.md, Discounts and add-ons; Renewal pricing). */
export interface RenewalAmounts {
  /** Price x quantity plus the add-ons. */
  subtotal: number
  discountAmount: number
  /** By the store's `renewal_shipping` policy; 0 for a subscription with nothing to ship. */
  shippingAmount: number
  /** The method the renewal ships by; null when it does not ship or the method is not known. */
  shippingMethod: string | null
  /** The `test` gateway's rate on the discounted subtotal; on the platform, the checkout's tax (0 until then). */
  taxAmount: number
  /** subtotal - discountAmount + shippingAmount + taxAmount: what is collected, never below 0. */
  amount: number
  /** The discount applied, whose cycle the charge uses when it succeeds; null when none. */
  discountId: string | null
  lineItems: ChargeLineItem[]
}

/** The store settings that price a renewal beyond its lines. */
export type RenewalPricing = Pick<StoreRow, 'gateway' | 'currency' | 'renewal_shipping' | 'renewal_shipping_amount' | 'test_tax_rate_bps'>

type PricedSubscription = Pick<SubscriptionRow, 'amount' | 'quantity' | 'currency' | 'product_id' | 'discount'> &
  Partial<Pick<SubscriptionRow, 'shipping_address' | 'shipping_method' | 'shipping_amount'>>

export { discountOn }

/**
 * A renewal's shipping by the store's policy. Only a subscription with a shipping address ships: a
 * digital one pays none under any policy. `checkout_rate` and (until the platform quotes it at
 * renewal) `requote` keep the rate the checkout paid; `flat` is the store's rate (in the store's
 * currency); `free` is 0.
 */
export function renewalShipping(subscription: PricedSubscription, pricing: RenewalPricing): { amount: number; method: string | null } {
  if (!subscription.shipping_address) return { amount: 0, method: null }
  const method = subscription.shipping_method ?? null
  switch (pricing.renewal_shipping) {
    case 'free':
      return { amount: 0, method }
    case 'flat':
      // The flat rate is in the store's currency: a subscription in another keeps its checkout's rate.
      if (subscription.currency.trim() === pricing.currency.trim()) return { amount: pricing.renewal_shipping_amount ?? 0, method }
      return { amount: subscription.shipping_amount ?? 0, method }
    default:
      return { amount: subscription.shipping_amount ?? 0, method }
  }
}

/**
 * The `test` gateway's tax: `taxable` x `bps` / 10000 rounded half up, in integers (taxable <= 10^11
 * and bps <= 10^4 keep the product below 2^53). The platform's tax is its checkout's, never this.
 */
export function testTax(taxable: number, bps: number): number {
  if (taxable <= 0 || bps <= 0) return 0
  return Math.floor((taxable * bps + 5_000) / 10_000)
}

/**
 * Subtotal, discount, shipping, tax and lines of the next charge: the subscription's line, then each
 * pending add-on. Without `pricing` (a caller that prices lines only) there is no shipping or tax.
 */
export function renewalAmounts(subscription: PricedSubscription, addOns: readonly RenewalAddOn[] = [], pricing?: RenewalPricing): RenewalAmounts {
  const currency = subscription.currency.trim()
  const base = subscription.amount * subscription.quantity
  const discount = subscription.discount ?? null
  const discountAmount = discountOn(base, discount, currency)
  const lineItems: ChargeLineItem[] = [
    { type: 'subscription', product_id: subscription.product_id, onetime_id: null, quantity: subscription.quantity, unit_amount: subscription.amount, amount: base, discount_amount: discountAmount },
    // Add-ons in another currency cannot be on this charge (adding one is refused); they stay pending.
    ...addOns.filter((addOn) => addOn.currency.trim() === currency).map((addOn): ChargeLineItem => ({
      type: 'onetime',
      product_id: addOn.product_id,
      onetime_id: addOn.id,
      quantity: addOn.quantity,
      unit_amount: addOn.unit_amount,
      amount: addOn.unit_amount * addOn.quantity,
      discount_amount: 0,
    })),
  ]
  const subtotal = lineItems.reduce((sum, line) => sum + line.amount, 0)
  const goods = Math.max(0, subtotal - discountAmount)
  const shipping = pricing ? renewalShipping(subscription, pricing) : { amount: 0, method: null }
  // Shipping is not taxed and discounts do not reduce it (docs/contract.md, Renewal pricing).
  const taxAmount = pricing && pricing.gateway === 'test' ? testTax(goods, pricing.test_tax_rate_bps) : 0
  return {
    subtotal,
    discountAmount,
    shippingAmount: shipping.amount,
    shippingMethod: shipping.method,
    taxAmount,
    amount: goods + shipping.amount + taxAmount,
    discountId: discount ? discount.id : null,
    lineItems,
  }
}

const MAX_CATCH_UP_PERIODS = 10_000

function cadenceOf(subscription: SubscriptionRow) {
  return { interval: subscription.interval, count: subscription.interval_count }
}

function boundary(subscription: SubscriptionRow, index: number, timeZone: string): Date {
  const anchor = subscription.billing_anchor_at ?? subscription.start_at
  const { interval, count } = cadenceOf(subscription)
  return periodBoundary(anchor, interval, count, index, timeZone)
}

/** Periods a charge pays for at once: a prepaid plan's block, otherwise one. */
export function cyclesPerCharge(subscription: Pick<SubscriptionRow, 'prepaid_cycles_total'>): number {
  return subscription.prepaid_cycles_total ?? 1
}

/**
 * The index (from the billing anchor) of the period that starts at `start`: the next charge pays the
 * period beginning at `next_charge_at`, or, in dunning, the unpaid period the first attempt was for.
 */
export function periodIndexStartingAt(subscription: SubscriptionRow, start: Date, timeZone: string): number {
  let index = Math.max(0, subscription.period_index + 1)
  for (let guard = 0; guard < MAX_CATCH_UP_PERIODS && boundary(subscription, index, timeZone) < start; guard++) index++
  return index
}

/**
 * The price a renewal for the period starting at `periodStart` charges: a price change announced
 * with notice from the renewal whose period starts at or after its date, the subscription's own price
 * before (docs/contract.md, Price changes with notice). The preview and the forecast price through
 * `planRenewal`, so they say the same.
 */
export function unitAmountAt(subscription: Pick<SubscriptionRow, 'amount' | 'scheduled_amount' | 'scheduled_amount_from'>, periodStart: Date): number {
  const from = subscription.scheduled_amount_from
  return subscription.scheduled_amount !== null && from !== null && periodStart.getTime() >= from.getTime() ? subscription.scheduled_amount : subscription.amount
}

/** Whether the next attempt retries an unpaid period (dunning, or a renewal waiting for stock). */
export function retriesUnpaidPeriod(subscription: Pick<SubscriptionRow, 'dunning_attempts' | 'unpaid_period_start' | 'stock_attempts'>): boolean {
  return subscription.unpaid_period_start !== null && (subscription.dunning_attempts > 0 || subscription.stock_attempts > 0)
}

/** What the renewal due at `next_charge_at` does. */
export function planRenewal(subscription: SubscriptionRow, store: Pick<StoreRow, 'timezone'> & RenewalPricing, addOns: readonly RenewalAddOn[] = []): Renewal {
  const timeZone = store.timezone
  // An unpaid period is retried (dunning, or a renewal waiting for stock) before anything else.
  const inDunning = retriesUnpaidPeriod(subscription)
  const start = inDunning ? subscription.unpaid_period_start! : subscription.next_charge_at!
  const index = periodIndexStartingAt(subscription, start, timeZone)

  // A skip asked for while the renewal waits for stock skips the period that waits (no card failed).
  const waitsForStock = inDunning && subscription.dunning_attempts === 0
  if (subscription.skip_next && (!inDunning || waitsForStock)) {
    const period = { start: boundary(subscription, index, timeZone), end: boundary(subscription, index + 1, timeZone) }
    return {
      kind: 'skip',
      set: {
        skip_next: false,
        period_index: index,
        current_period_start: period.start,
        current_period_end: period.end,
        next_charge_at: period.end,
        reminded_for: null,
        ...(waitsForStock ? { unpaid_period_start: null, stock_attempts: 0, out_of_stock_since: null } : {}),
      },
      events: ['subscription.updated'],
    }
  }
  if (!inDunning && subscription.gift !== null && subscription.prepaid_cycles_total !== null && subscription.period_index >= 0) {
    return {
      kind: 'expire',
      set: { status: transition(subscription.status, 'expire'), next_charge_at: null, prepaid_cycles_remaining: 0 },
      events: ['subscription.expired'],
    }
  }
  const cycles = cyclesPerCharge(subscription)
  const periodStart = boundary(subscription, index, timeZone)
  const amounts = renewalAmounts({ ...subscription, amount: unitAmountAt(subscription, periodStart) }, addOns, store)
  // Writes refuse this since the limit exists; an older row past it is set aside, never charged.
  if (amounts.subtotal > MAX_RENEWAL_AMOUNT) throw new RangeError(`price x quantity with add-ons (${amounts.subtotal}) is over the most one renewal may charge (${MAX_RENEWAL_AMOUNT})`)
  if (amounts.amount > MAX_CHARGE_AMOUNT) throw new RangeError(`the renewal with shipping and tax (${amounts.amount}) is over the most one charge may be (${MAX_CHARGE_AMOUNT})`)
  return {
    kind: 'charge',
    // Every attempt at the period has its own idempotency key, whether a card or the stock failed it.
    attempt: subscription.dunning_attempts + subscription.stock_attempts + 1,
    ...amounts,
    currency: subscription.currency.trim(),
    period: { start: periodStart, end: boundary(subscription, index + cycles, timeZone) },
    periodIndex: index,
  }
}

export interface Settlement {
  set: SubscriptionChanges
  events: EventType[]
}

/** A subscription that owes nothing: no dunning, no wait for stock, no reminder sent for the next renewal yet. */
const NOTHING_OWED = {
  dunning_attempts: 0,
  dunning_started_at: null,
  unpaid_period_start: null,
  stock_attempts: 0,
  out_of_stock_since: null,
  past_due_at: null,
  reminded_for: null,
} as const satisfies SubscriptionChanges

/**
 * A charge for the period at `periodIndex` succeeded at `at`. The paid period (or the first cycle of
 * a prepaid block) becomes current. A period that ended while it was unpaid is not billed again: after
 * a late recovery the next charge is the first boundary after `at`.
 */
export function afterSuccess(subscription: SubscriptionRow, store: Pick<StoreRow, 'timezone'>, periodIndex: number, at: Date): Settlement {
  const timeZone = store.timezone
  const cycles = cyclesPerCharge(subscription)
  let next = periodIndex + cycles
  for (let guard = 0; guard < MAX_CATCH_UP_PERIODS && boundary(subscription, next, timeZone) <= at; guard++) next++
  const events: EventType[] = []
  let status = subscription.status
  if (subscription.status === 'past_due') {
    status = transition(subscription.status, 'recover')
    events.push('subscription.activated')
  }
  if (subscription.prepaid_cycles_total !== null) events.push('prepaid.order_created')
  const periodStart = boundary(subscription, periodIndex, timeZone)
  // The renewal that charged a scheduled price makes it the subscription's price (planRenewal priced it so).
  const priceChanged = subscription.scheduled_amount !== null && subscription.scheduled_amount_from !== null && periodStart >= subscription.scheduled_amount_from
  if (priceChanged) events.push('subscription.price_changed')
  return {
    set: {
      status,
      pending_charge_id: null,
      ...(priceChanged ? { amount: subscription.scheduled_amount!, scheduled_amount: null, scheduled_amount_from: null } : {}),
      period_index: periodIndex,
      current_period_start: periodStart,
      current_period_end: boundary(subscription, periodIndex + 1, timeZone),
      next_charge_at: boundary(subscription, next, timeZone),
      prepaid_cycles_remaining: subscription.prepaid_cycles_total === null ? null : cycles - 1,
      ...NOTHING_OWED,
    },
    events,
  }
}

export interface FailureDecision extends Settlement {
  /** When the next attempt runs; null when dunning is exhausted. */
  nextRetryAt: Date | null
}

/**
 * Attempt `attempt` for the period starting `periodStart` failed at `at`. Retries follow the store's
 * schedule, counted in days from the first failure; after the last one the subscription is past_due
 * and waits for a new payment instrument (which retries at once) or for its automatic cancellation.
 */
export function afterFailure(
  subscription: SubscriptionRow,
  store: Pick<StoreRow, 'timezone' | 'dunning_retry_days'>,
  attempt: number,
  periodStart: Date,
  at: Date,
): FailureDecision {
  const firstFailure = subscription.dunning_started_at ?? at
  const retryDays = store.dunning_retry_days
  // Attempts the stock failed are not the card's: dunning counts only the payment's failures.
  const failures = attempt - subscription.stock_attempts
  // The period is no longer waiting for stock: this attempt found it in stock.
  const dunning = { pending_charge_id: null, dunning_attempts: failures, dunning_started_at: firstFailure, unpaid_period_start: periodStart, ...(subscription.out_of_stock_since ? { out_of_stock_since: null } : {}) }
  if (failures <= retryDays.length && subscription.status === 'active') {
    let nextRetryAt = addDays(firstFailure, retryDays[failures - 1]!, store.timezone)
    // An attempt brought forward by a new instrument can make the schedule's next date already past.
    if (nextRetryAt <= at) nextRetryAt = addDays(at, 1, store.timezone)
    return { set: { ...dunning, next_charge_at: nextRetryAt }, events: [], nextRetryAt }
  }
  if (subscription.status === 'active') {
    return {
      set: { ...dunning, status: transition(subscription.status, 'dunning_exhausted'), past_due_at: at, next_charge_at: null },
      events: ['subscription.past_due'],
      nextRetryAt: null,
    }
  }
  // Already past_due (a retry with a new instrument failed too): it stays so, waiting as before.
  return { set: { ...dunning, next_charge_at: null }, events: [], nextRetryAt: null }
}

/**
 * The platform said an item of the renewal for the period at `periodIndex` (starting `periodStart`) is
 * out of stock at `at`; nothing was charged. The store's `out_of_stock` policy decides: `retry` tries
 * again a day later, until `out_of_stock_retry_days` have passed since the first time; otherwise (and
 * then) the period is skipped as a subscriber's skip would: it becomes current unpaid, the next renewal
 * is the one after (never one already past), and any dunning of the period ends.
 */
export function afterOutOfStock(
  subscription: SubscriptionRow,
  store: Pick<StoreRow, 'timezone' | 'out_of_stock' | 'out_of_stock_retry_days'>,
  periodIndex: number,
  periodStart: Date,
  at: Date,
  dueAt: Date = at,
): FailureDecision {
  const timeZone = store.timezone
  // Counted from when each try was due, not when it settled: the platform's answers take time, and a
  // day later than the settlement would push every try later until the window lost its last one.
  const since = subscription.out_of_stock_since ?? dueAt
  const nextTry = addDays(dueAt, 1, timeZone)
  if (store.out_of_stock === 'retry' && subscription.status === 'active' && nextTry <= addDays(since, store.out_of_stock_retry_days, timeZone)) {
    return {
      set: { pending_charge_id: null, stock_attempts: subscription.stock_attempts + 1, out_of_stock_since: since, unpaid_period_start: periodStart, next_charge_at: nextTry },
      events: [],
      nextRetryAt: nextTry,
    }
  }
  let next = periodIndex + 1
  for (let guard = 0; guard < MAX_CATCH_UP_PERIODS && boundary(subscription, next, timeZone) <= at; guard++) next++
  // Late (after a long wait, or a worker that was down), every period up to the next renewal is
  // skipped: the current period ends when the next renewal is due, so no prepaid cycle is walked
  // through as if it had been paid.
  const current = next - 1
  const events: EventType[] = ['subscription.skipped']
  let status = subscription.status
  // A past_due subscription whose unpaid period could not have been shipped owes nothing any more.
  if (subscription.status === 'past_due') {
    status = transition(subscription.status, 'recover')
    events.push('subscription.activated')
  }
  return {
    set: {
      status,
      pending_charge_id: null,
      skip_reason: 'out_of_stock',
      period_index: current,
      current_period_start: boundary(subscription, current, timeZone),
      current_period_end: boundary(subscription, next, timeZone),
      next_charge_at: boundary(subscription, next, timeZone),
      // A prepaid block that could not be sent is not paid: its cycles are not counted down.
      ...NOTHING_OWED,
    },
    events,
    nextRetryAt: null,
  }
}

/**
 * A succeeded charge that applied the subscription's discount uses one of its cycles: exactly once
 * per paid period, because only the charge the subscription waits for settles it, once. Failed
 * attempts and dunning retries use none; a `forever` discount (no count) stays; the last cycle ends
 * the discount. A charge made under another discount (replaced meanwhile) uses nothing of the new one.
 */
export function discountCycleUsed(subscription: Pick<SubscriptionRow, 'discount_id' | 'discount_cycles_remaining'>, chargeDiscountId: string | null): SubscriptionChanges {
  if (chargeDiscountId === null || subscription.discount_id !== chargeDiscountId || subscription.discount_cycles_remaining === null) return {}
  const remaining = subscription.discount_cycles_remaining - 1
  if (remaining > 0) return { discount_cycles_remaining: remaining }
  return { discount_id: null, discount: null, discount_cycles_remaining: null }
}

/** The failure text a subscriber sees when the gateway gave none. */
export const FAILURE_TEXT: Record<FailureCode, string> = {
  card_declined: 'The card was declined.',
  insufficient_funds: 'The card has insufficient funds.',
  expired_card: 'The card has expired.',
  instrument_invalid: 'The stored payment method can no longer be used.',
  processing_error: 'The payment could not be processed.',
  gateway_configuration: 'The store cannot take payments right now.',
  out_of_stock: 'An item of the renewal is out of stock; nothing was charged.',
  billing_disabled: "The store's billing was switched off before this charge was sent; nothing was charged.",
}

/** A definite answer about a charge: from the gateway, or from an admin resolving a charge under review. */
export type DefiniteOutcome =
  | { status: 'succeeded'; gatewayChargeId: string | null }
  | { status: 'failed'; failureCode: FailureCode; failureMessage: string }

export interface ChargeSettlement {
  charge: {
    status: 'succeeded' | 'failed'
    gateway_charge_id: string | null
    failure_code: string | null
    failure_message: string | null
    next_retry_at: Date | null
  }
  /** What happens to the subscription; `set` is empty when the charge no longer concerns it. */
  subscription: Settlement
  /** Money moved but paid no period (the subscription left billing meanwhile): give it back. */
  refund: boolean
}

/**
 * What a definite outcome does to the charge and its subscription. Only the charge the subscription
 * is waiting for moves it on: a success pays the period, a failure enters or continues dunning.
 */
export function settleCharge(
  subscription: SubscriptionRow,
  store: Pick<StoreRow, 'timezone' | 'dunning_retry_days' | 'out_of_stock' | 'out_of_stock_retry_days'>,
  charge: { id: string; attempt: number; period_start: Date; discount_id?: string | null; created_at?: Date },
  outcome: DefiniteOutcome,
  periodIndex: number,
  at: Date,
): ChargeSettlement {
  const succeeded = outcome.status === 'succeeded'
  let change: Settlement = { set: {}, events: [] }
  let nextRetryAt: Date | null = null
  if (subscription.pending_charge_id === charge.id) {
    change = { set: { pending_charge_id: null }, events: [] }
    if (succeeded && ['active', 'past_due', 'paused'].includes(subscription.status)) {
      change = afterSuccess(subscription, store, periodIndex, at)
      change = { set: { ...change.set, ...discountCycleUsed(subscription, charge.discount_id ?? null) }, events: [...change.events] }
      if (change.set.discount_id === null) change.events.push('subscription.discount_removed')
    } else if (outcome.status === 'failed' && outcome.failureCode === 'out_of_stock' && ['active', 'past_due'].includes(subscription.status)) {
      const held = afterOutOfStock(subscription, store, periodIndex, charge.period_start, at, charge.created_at)
      change = { set: held.set, events: held.events }
      nextRetryAt = held.nextRetryAt
    } else if (outcome.status === 'failed' && outcome.failureCode === 'billing_disabled') {
      // Nothing was sent: the renewal stays due as it was (next_charge_at, dunning state), for when billing is on again.
    } else if (!succeeded && ['active', 'past_due'].includes(subscription.status)) {
      const failure = afterFailure(subscription, store, charge.attempt, charge.period_start, at)
      change = { set: failure.set, events: failure.events }
      nextRetryAt = failure.nextRetryAt
    }
    // The charge a review was about is settled: the subscription bills again.
    if (subscription.billing_issue?.code === 'charge_requires_review') change = { ...change, set: { ...change.set, billing_issue: null } }
  }
  return {
    charge: {
      status: succeeded ? 'succeeded' : 'failed',
      gateway_charge_id: outcome.status === 'succeeded' ? outcome.gatewayChargeId : null,
      failure_code: outcome.status === 'failed' ? outcome.failureCode : null,
      failure_message: outcome.status === 'failed' ? outcome.failureMessage || FAILURE_TEXT[outcome.failureCode] : null,
      next_retry_at: nextRetryAt,
    },
    subscription: change,
    refund: succeeded && !('period_index' in change.set),
  }
}
