import type { ChangeRequestRow, SubscriberRow, SubscriptionRow } from '../../db/database.ts'
import { toRfc3339, toRfc3339OrNull } from '../../lib/time.ts'
import type { ChangeRequestView, SubscriberView, SubscriptionView } from './subscription.schemas.ts'

export function presentSubscription(row: SubscriptionRow, storeHash: string): SubscriptionView {
  return {
    id: row.id,
    object: 'subscription',
    store_hash: storeHash,
    subscriber_id: row.subscriber_id,
    plan_id: row.plan_id,
    product_id: row.product_id,
    platform_order_id: row.platform_order_id,
    external_id: row.external_id ?? null,
    status: row.status,
    quantity: row.quantity,
    amount: row.amount,
    currency: row.currency,
    interval: row.interval,
    interval_count: row.interval_count,
    payment_instrument_id: row.payment_instrument_id,
    shipping_address: row.shipping_address ?? null,
    billing_address: row.billing_address ?? null,
    platform_customer_id: row.platform_customer_id,
    platform_variant_id: row.platform_variant_id,
    shipping: row.shipping_method !== null && row.shipping_amount !== null ? { method: row.shipping_method, amount: row.shipping_amount } : null,
    payment_instrument:
      row.payment_instrument_brand !== null || row.payment_instrument_last4 !== null
        ? { brand: row.payment_instrument_brand, last_4: row.payment_instrument_last4 }
        : null,
    start_at: toRfc3339(row.start_at),
    current_period_start: toRfc3339OrNull(row.current_period_start),
    current_period_end: toRfc3339OrNull(row.current_period_end),
    next_charge_at: toRfc3339OrNull(row.next_charge_at),
    skip_next: row.skip_next,
    skip_reason: row.skip_reason ?? null,
    out_of_stock_since: toRfc3339OrNull(row.out_of_stock_since ?? null),
    paused_at: toRfc3339OrNull(row.paused_at),
    past_due_at: row.status === 'past_due' ? toRfc3339OrNull(row.past_due_at) : null,
    resume_at: toRfc3339OrNull(row.resume_at),
    cancel_at_period_end: row.cancel_at_period_end,
    cancelled_at: toRfc3339OrNull(row.cancelled_at),
    cancellation_reason: row.cancellation_reason,
    cancellation_reason_code: row.cancellation_reason_code,
    gift: row.gift ?? null,
    prepaid:
      row.prepaid_cycles_total !== null
        ? { cycles_total: row.prepaid_cycles_total, cycles_remaining: row.prepaid_cycles_remaining ?? 0 }
        : null,
    latest_charge_id: row.latest_charge_id,
    billing_issue: row.billing_issue ?? null,
    discount: row.discount_id !== null && row.discount
      ? { id: row.discount.id, code: row.discount.code, type: row.discount.type, value: row.discount.value, cycles_remaining: row.discount_cycles_remaining }
      : null,
    scheduled_price: row.scheduled_amount !== null && row.scheduled_amount_from !== null
      ? { amount: row.scheduled_amount, currency: row.currency, effective_at: toRfc3339(row.scheduled_amount_from) }
      : null,
    created_at: toRfc3339(row.created_at),
    updated_at: toRfc3339(row.updated_at),
    version: row.version,
  }
}

export function presentSubscriber(row: SubscriberRow, storeHash: string): SubscriberView {
  return {
    id: row.id,
    object: 'subscriber',
    store_hash: storeHash,
    email: row.email,
    name: row.name,
    shipping_address: row.shipping_address ?? null,
    platform_customer_id: row.platform_customer_id,
    created_at: toRfc3339(row.created_at),
    updated_at: toRfc3339(row.updated_at),
  }
}

export function presentChangeRequest(row: ChangeRequestRow): ChangeRequestView {
  return {
    id: row.id,
    object: 'change_request',
    subscription_id: row.subscription_id,
    status: row.status,
    changes: row.changes,
    note: row.note,
    decision_reason: row.decision_reason,
    decided_at: toRfc3339OrNull(row.decided_at),
    effective_at: toRfc3339OrNull(row.effective_at),
    created_at: toRfc3339(row.created_at),
    updated_at: toRfc3339(row.updated_at),
  }
}
