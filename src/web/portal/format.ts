import { formatMoney as sharedFormatMoney } from '../shared/money.ts'
import { planPriceText } from '../shared/plan-format.ts'
import type { ChangeRequest, Charge, Interval, Plan, Subscription, SubscriptionStatus, UpcomingRenewal } from './types.ts'

/** Minor units to a price in the shopper's locale: 1500 USD is $15.00, 1500 JPY is ¥1,500. */
export function formatMoney(minor: number, currency: string): string {
  return sharedFormatMoney(minor, currency)
}

/**
 * Dates and times on the store's clock face (its IANA time zone, GET /portal/store), as the store's
 * emails and the merchant's console give them: the renewal of "Mar 26" is the same day everywhere.
 * A time names its zone; when the subscriber's own zone reads it differently, their time follows in
 * brackets. Set once the store is read (useStoreZone); the browser's zone until then.
 */
const browserZone = Intl.DateTimeFormat().resolvedOptions().timeZone
let storeZone = browserZone
let dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })
let dateTimeFormat = zonedTimeFormat(browserZone)
const ownTimeFormat = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit', timeZoneName: 'short' })
const ownDateTimeFormat = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZoneName: 'short' })
const dayKey = (zone: string) => new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' })

function zonedTimeFormat(timeZone: string): Intl.DateTimeFormat {
  // dateStyle and timeStyle cannot be combined with timeZoneName: the parts are spelled out instead.
  return new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone, timeZoneName: 'short' })
}

/** Dates from now on in the store's zone (an unknown zone name keeps the browser's). */
export function useStoreZone(zone: string): void {
  try {
    dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: zone })
    dateTimeFormat = zonedTimeFormat(zone)
    storeZone = zone
  } catch {
    // Keep the browser's zone rather than fail the page.
  }
}

/** The store's time zone, as the page formats dates. */
export function currentStoreZone(): string {
  return storeZone
}

/** Says whose calendar the dates are on when it is not the subscriber's own: "The store's: America/New York". */
export function storeZoneNote(): string | null {
  return storeZone === browserZone ? null : `Dates and times are the store's (${storeZone.replaceAll('_', ' ')})`
}

/** A calendar day on the store's calendar: "Mar 26, 2027". */
export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—'
  return dateFormat.format(new Date(iso))
}

/** A time with the store's zone, and the subscriber's own time in brackets when it reads differently: "Mar 26, 2027, 9:00 AM EST (3:00 PM CET)". */
export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—'
  const at = new Date(iso)
  const shown = dateTimeFormat.format(at)
  if (storeZone === browserZone) return shown
  const theirs = (dayKey(storeZone).format(at) === dayKey(browserZone).format(at) ? ownTimeFormat : ownDateTimeFormat).format(at)
  // The same wall-clock time under another zone name is no different for the reader.
  return shown.endsWith(theirs) ? shown : `${shown} (${theirs} your time)`
}

/** A machine-readable <time> value. */
export function isoDate(iso: string): string {
  return new Date(iso).toISOString()
}

const UNIT: Record<Interval, [string, string]> = {
  day: ['day', 'days'],
  week: ['week', 'weeks'],
  month: ['month', 'months'],
  year: ['year', 'years'],
}

/** "every month", "every 2 weeks". */
export function formatInterval(interval: Interval, count: number): string {
  const [one, many] = UNIT[interval]
  return count === 1 ? `every ${one}` : `every ${count} ${many}`
}

/** A length of time: "one month", "3 months" ("follows one month after today", never "follows month after today"). */
export function formatLength(interval: Interval, count: number): string {
  const [one, many] = UNIT[interval]
  return count === 1 ? `one ${one}` : `${count} ${many}`
}

/** As the console says it: "$18.00 every month"; a prepaid plan "$20.40 a month, $61.20 every 3 months". */
export function formatPlanPrice(plan: Pick<Plan, 'amount' | 'currency' | 'interval' | 'interval_count' | 'prepaid_cycles'>): string {
  return planPriceText(plan)
}

/**
 * What one of the subscription's items costs, in the plan's words: "$18.00 every month", with
 * "× 2" for a quantity. Totals are the service's to work out (GET .../upcoming), never the page's.
 */
export function subscriptionPriceText(s: Subscription): string {
  const each = unitPriceText(s)
  // No-break spaces: "× 3" never wraps away from its price.
  return s.quantity > 1 ? `${each}\u00a0×\u00a0${s.quantity}` : each
}

/** What one item of the subscription costs: "$18.00 every month". */
export function unitPriceText(s: Subscription): string {
  return formatPlanPrice({ amount: s.amount, currency: s.currency, interval: s.interval, interval_count: s.interval_count, prepaid_cycles: s.prepaid?.cycles_total ?? null })
}

const STATUS_LABEL: Record<SubscriptionStatus, string> = {
  pending: 'Starting soon',
  active: 'Active',
  paused: 'Paused',
  past_due: 'Payment overdue',
  cancelled: 'Cancelled',
  expired: 'Ended',
}

/** The status in words, with what is scheduled to happen to it. */
export function statusText(subscription: Subscription): string {
  const label = STATUS_LABEL[subscription.status]
  if (subscription.cancel_at_period_end && subscription.status !== 'cancelled') {
    return `${label}, cancels ${subscription.current_period_end ? `on ${formatDate(subscription.current_period_end)}` : 'at the end of the period'}`
  }
  if (subscription.status === 'paused' && subscription.resume_at) return `${label} until ${formatDate(subscription.resume_at)}`
  return label
}

/**
 * The next charge in words: its amount and date as the service priced it ("$40.80 on Feb 5, 2027"),
 * or why there is none. `upcoming` is the service's preview, an Error when it has none to give.
 */
export function nextChargeText(subscription: Subscription, upcoming: UpcomingRenewal | Error | null): string {
  if (subscription.status === 'cancelled' || subscription.status === 'expired') return 'None: it has ended'
  if (subscription.cancel_at_period_end) return 'None: it cancels at the end of this period'
  if (subscription.out_of_stock_since && subscription.next_charge_at) return `Waiting for an item to come back in stock: tried again on ${formatDate(subscription.next_charge_at)}`
  if (upcoming && !(upcoming instanceof Error)) {
    const when = `${formatMoney(upcoming.amount, upcoming.currency)} on ${formatDate(upcoming.next_charge_at)}`
    // A skipped renewal is not a charge: the service's next one is the renewal after it.
    return subscription.skip_next && subscription.next_charge_at ? `${when} (the ${formatDate(subscription.next_charge_at)} renewal is skipped)` : when
  }
  if (subscription.status === 'paused') return 'None while paused'
  if (subscription.status === 'past_due') return 'Waiting for a new payment method'
  return subscription.next_charge_at ? formatDate(subscription.next_charge_at) : 'Not scheduled'
}

const FAILURE_WORDS: Record<string, string> = {
  card_declined: 'The card was declined by the bank.',
  insufficient_funds: 'The card did not have enough funds.',
  expired_card: 'The card has expired.',
  instrument_invalid: 'The saved payment method can no longer be used.',
  processing_error: 'The payment could not be processed because of a temporary problem.',
  gateway_configuration: 'The store could not take payments at the time.',
  out_of_stock: 'An item was out of stock, so nothing was charged.',
}

/** Why a charge failed, in words a subscriber understands. */
export function failureReason(charge: Pick<Charge, 'failure_code' | 'failure_message'>): string {
  if (charge.failure_code && FAILURE_WORDS[charge.failure_code]) return FAILURE_WORDS[charge.failure_code]!
  if (charge.failure_message) return charge.failure_message
  if (charge.failure_code) return `The payment failed (${charge.failure_code.replaceAll('_', ' ')}).`
  return 'The payment failed.'
}

export const CHARGE_STATUS_LABEL: Record<Charge['status'], string> = {
  pending: 'Processing',
  succeeded: 'Paid',
  failed: 'Failed',
  requires_review: 'Being checked',
}

/** A charge's status for its subscriber: a refunded payment no longer reads "Paid". */
export function chargeStatusLabel(charge: Pick<Charge, 'status' | 'refund_status' | 'amount_refunded' | 'currency'>): string {
  if (charge.status === 'succeeded' && charge.refund_status === 'full') return 'Refunded'
  if (charge.status === 'succeeded' && charge.refund_status === 'partial') return `Partly refunded (${formatMoney(charge.amount_refunded, charge.currency)})`
  return CHARGE_STATUS_LABEL[charge.status]
}

/** The badge's class: refunded charges are told apart from paid ones. */
export function chargeStatusClass(charge: Pick<Charge, 'status' | 'refund_status'>): string {
  return charge.status === 'succeeded' && (charge.refund_status === 'partial' || charge.refund_status === 'full') ? 'charge-status-refunded' : `charge-status-${charge.status}`
}

export const CHANGE_REQUEST_STATUS_LABEL: Record<ChangeRequest['status'], string> = {
  pending: 'Waiting for the store',
  approved: 'Approved',
  rejected: 'Declined',
}

export function formatAddress(address: Subscription['shipping_address']): string[] {
  if (!address) return ['No shipping address']
  return [
    address.name,
    address.line1,
    address.line2 ?? '',
    [address.city, address.state ?? '', address.postal_code].filter(Boolean).join(' '),
    address.country,
  ].filter(Boolean)
}

const BRAND_NAMES: Record<string, string> = {
  VISA: 'Visa',
  MASTERCARD: 'Mastercard',
  AMEX: 'American Express',
  AMERICAN_EXPRESS: 'American Express',
  DISCOVER: 'Discover',
  JCB: 'JCB',
  DINERS_CLUB: 'Diners Club',
  MAESTRO: 'Maestro',
}

/** "Visa", "Mastercard"; an unknown brand as the platform spells it; "Card" without one. */
export function brandName(brand: string | null): string {
  if (!brand) return 'Card'
  return BRAND_NAMES[brand.toUpperCase()] ?? brand
}

/** A stored card in words: "Visa ending in 4242, expires 04/2031 (default)". Never more of the card. */
export function instrumentLabel(card: { brand: string | null; last_4: string | null; expiry_month: number | null; expiry_year: number | null; is_default: boolean }): string {
  const ending = card.last_4 ? ` ending in ${card.last_4}` : ''
  const expiry = card.expiry_month && card.expiry_year ? `, expires ${String(card.expiry_month).padStart(2, '0')}/${card.expiry_year}` : ''
  return `${brandName(card.brand)}${ending}${expiry}${card.is_default ? ' (default)' : ''}`
}

/** What a subscription pays with: the card's brand and last 4 when the platform showed them, else the instrument id. */
export function paymentMethodText(s: { payment_instrument_id: string; payment_instrument: { brand: string | null; last_4: string | null } | null }): string {
  const card = s.payment_instrument
  if (!card) return s.payment_instrument_id
  return `${brandName(card.brand)}${card.last_4 ? ` ending in ${card.last_4}` : ''}`
}
