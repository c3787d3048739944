import type { ChargeRow } from '../../db/database.ts'
import { toRfc3339, toRfc3339OrNull } from '../../lib/time.ts'
import type { ChargeView } from './charge.schemas.ts'

export function presentCharge(row: ChargeRow): ChargeView {
  return {
    id: row.id,
    object: 'charge',
    subscription_id: row.subscription_id,
    amount: row.amount,
    subtotal: row.subtotal,
    discount_amount: row.discount_amount,
    shipping_amount: row.shipping_amount,
    shipping_method: row.shipping_method,
    tax_amount: row.tax_amount,
    line_items: row.line_items ?? [],
    currency: row.currency,
    status: row.status,
    amount_refunded: row.amount_refunded,
    review: row.review ?? null,
    attempt: row.attempt,
    payment_instrument_id: row.payment_instrument_id,
    platform_order_id: row.platform_order_id,
    failure_code: row.failure_code,
    failure_message: row.failure_message,
    next_retry_at: toRfc3339OrNull(row.next_retry_at),
    period_start: toRfc3339(row.period_start),
    period_end: toRfc3339(row.period_end),
    created_at: toRfc3339(row.created_at),
    settled_at: toRfc3339OrNull(row.settled_at),
  }
}
