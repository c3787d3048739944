import { formatMoney as sharedFormatMoney } from '../shared/money.ts'
import { planPriceText } from '../shared/plan-format.ts'
import type { ChangeRequest, Charge, Interval, Plan, Subscription, SubscriptionStatus, UpcomingRenewal } from './types.ts'

/** Minor units to a price in the shopper's locale: 1500 USD is $15.00, 1500 JPY is ¥1,500. */
export function formatMoney(minor: number, currency: string): string {
  return sharedFormatMoney(minor, currency)
}

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' })

export function formatDate(iso: string | null | undefined): string {
  if (!iso) return '—'
  return dateFormat.format(new Date(iso))
}

export function formatDateTime(iso: string | null | undefined): string {
  if (!iso) return '—'
  return dateTimeFormat.format(new Date(iso))
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

/** Like the storefront widget: "$18.00 every month"; a prepaid plan "$20.40 every month, $61.20 per charge". */
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
