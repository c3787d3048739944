import type { CsvCell } from '../../lib/csv.ts'
import type { ChargeView } from '../billing/index.ts'
import type { SubscriberWithCount } from '../subscriptions/index.ts'
import { toRfc3339 } from '../../lib/time.ts'

/**
 * The charges and subscribers exports' columns, in order (docs/contract.md, Exports): each the API's
 * field of the same name, amounts in integer minor units, times RFC 3339 UTC, null an empty cell.
 * The subscriptions export is the `native` import format (subscriptions/subscription-columns.ts).
 * A column is only ever added at the end.
 */
export const CHARGE_COLUMNS = [
  'id',
  'subscription_id',
  'attempt',
  'status',
  'amount',
  'subtotal',
  'discount_amount',
  'shipping_amount',
  'tax_amount',
  'amount_refunded',
  'refund_status',
  'currency',
  'payment_instrument_id',
  'platform_order_id',
  'failure_code',
  'failure_message',
  'next_retry_at',
  'period_start',
  'period_end',
  'created_at',
  'settled_at',
] as const

export function chargeRecord(charge: ChargeView): Record<(typeof CHARGE_COLUMNS)[number], CsvCell> {
  return {
    id: charge.id,
    subscription_id: charge.subscription_id,
    attempt: charge.attempt,
    status: charge.status,
    amount: charge.amount,
    subtotal: charge.subtotal,
    discount_amount: charge.discount_amount,
    shipping_amount: charge.shipping_amount,
    tax_amount: charge.tax_amount,
    amount_refunded: charge.amount_refunded,
    refund_status: charge.refund_status ?? null,
    currency: charge.currency,
    payment_instrument_id: charge.payment_instrument_id,
    platform_order_id: charge.platform_order_id,
    failure_code: charge.failure_code,
    failure_message: charge.failure_message,
    next_retry_at: charge.next_retry_at,
    period_start: charge.period_start,
    period_end: charge.period_end,
    created_at: charge.created_at,
    settled_at: charge.settled_at,
  }
}

export const SUBSCRIBER_COLUMNS = ['id', 'email', 'name', 'platform_customer_id', 'subscription_count', 'created_at'] as const

export function subscriberRecord(subscriber: SubscriberWithCount): Record<(typeof SUBSCRIBER_COLUMNS)[number], CsvCell> {
  return {
    id: subscriber.id,
    email: subscriber.email,
    name: subscriber.name,
    platform_customer_id: subscriber.platform_customer_id,
    subscription_count: subscriber.subscription_count,
    created_at: toRfc3339(subscriber.created_at),
  }
}
