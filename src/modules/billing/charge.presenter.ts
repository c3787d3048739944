import type { ChargeRow, RefundRow } from '../../db/database.ts'
import { toRfc3339, toRfc3339OrNull } from '../../lib/time.ts'
import type { ChargeView, RefundView } from './charge.schemas.ts'

/** none, partial or full: what the succeeded refunds (`amount_refunded`) gave back of `amount`. */
export function refundStatus(row: Pick<ChargeRow, 'amount' | 'amount_refunded'>): ChargeView['refund_status'] {
  const refunded = Number(row.amount_refunded)
  if (refunded <= 0) return 'none'
  return refunded >= Number(row.amount) ? 'full' : 'partial'
}

export function presentRefund(row: RefundRow): RefundView {
  return {
    id: row.id,
    object: 'refund',
    amount: Number(row.amount),
    currency: row.currency.trim(),
    reason: row.reason,
    automatic: row.automatic,
    status: row.status,
    failure_message: row.failure_message,
    created_at: toRfc3339(row.created_at),
    settled_at: toRfc3339OrNull(row.settled_at),
  }
}

/**
 * The charge as the API shows it. `refunds` (the charge's refund rows, any order) is given for the
 * merchant's reads and charge events; without it the list is left out (the portal).
 */
export function presentCharge(row: ChargeRow, refunds?: readonly RefundRow[]): ChargeView {
  const view: ChargeView = {
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
    refund_status: refundStatus(row),
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
  if (refunds) view.refunds = [...refunds].sort((a, b) => a.created_at.getTime() - b.created_at.getTime() || (a.id < b.id ? -1 : 1)).map(presentRefund)
  return view
}
