import type { ProductRow, SubscriberRow, SubscriptionRow } from '../../db/database.ts'
import { toRfc3339OrNull } from '../../lib/time.ts'
import type { ShippingAddressValue } from './subscriptions.tables.ts'

/**
 * The `native` CSV format (docs/contract.md, Exports): what `GET /api/v1/admin/exports/subscriptions`
 * writes and what `POST /api/v1/admin/imports?format=native` reads, one subscription a row, these
 * columns in this order. Amounts are integer minor units, times RFC 3339 UTC as the API writes them,
 * booleans `true`/`false`, and a null is an empty cell. The importer is written against this list:
 * a column is only ever added at the end.
 */
export const NATIVE_COLUMNS = [
  'id',
  'external_id',
  'status',
  'email',
  'name',
  'platform_customer_id',
  'plan_id',
  'product_id',
  'platform_product_id',
  'product_name',
  'platform_variant_id',
  'quantity',
  'amount',
  'currency',
  'interval',
  'interval_count',
  'prepaid_cycles_total',
  'prepaid_cycles_remaining',
  'current_period_start',
  'current_period_end',
  'next_charge_at',
  'billing_anchor_at',
  'period_index',
  'paused_at',
  'resume_at',
  'skip_next',
  'cancel_at_period_end',
  'payment_instrument_id',
  'shipping_name',
  'shipping_line1',
  'shipping_line2',
  'shipping_city',
  'shipping_state',
  'shipping_postal_code',
  'shipping_country',
  'shipping_phone',
  'billing_name',
  'billing_line1',
  'billing_line2',
  'billing_city',
  'billing_state',
  'billing_postal_code',
  'billing_country',
  'billing_phone',
  'created_at',
] as const

export type NativeColumn = (typeof NATIVE_COLUMNS)[number]

/** One cell before it is written: null is an empty cell. */
export type NativeCell = string | number | boolean | null

export type NativeRecord = Record<NativeColumn, NativeCell>

/** What one row of the format is made from: the subscription as stored, its subscriber and its product. */
export interface NativeSource {
  subscription: SubscriptionRow
  subscriber: SubscriberRow
  /** Undefined only if the product row is gone (products are archived, not deleted): its cells are then empty. */
  product: Pick<ProductRow, 'name' | 'platform_product_id'> | undefined
}

const ADDRESS_PARTS = ['name', 'line1', 'line2', 'city', 'state', 'postal_code', 'country', 'phone'] as const

function addressCells<Prefix extends 'shipping' | 'billing'>(prefix: Prefix, address: ShippingAddressValue | null | undefined) {
  return Object.fromEntries(ADDRESS_PARTS.map((part) => [`${prefix}_${part}`, address?.[part] ?? null])) as Record<`${Prefix}_${(typeof ADDRESS_PARTS)[number]}`, string | null>
}

/**
 * One subscription as a `native` row. `platform_customer_id` is the platform customer who pays (the
 * subscription's own, which owns its stored instrument), else the subscriber's. `external_id` is the
 * id the subscription had in the system it was imported from (migration 0032), empty otherwise.
 */
export function nativeRecord({ subscription: s, subscriber, product }: NativeSource): NativeRecord {
  return {
    id: s.id,
    external_id: s.external_id ?? null,
    status: s.status,
    email: subscriber.email,
    name: subscriber.name,
    platform_customer_id: s.platform_customer_id ?? subscriber.platform_customer_id,
    plan_id: s.plan_id,
    product_id: s.product_id,
    platform_product_id: product?.platform_product_id ?? null,
    product_name: product?.name ?? null,
    platform_variant_id: s.platform_variant_id,
    quantity: s.quantity,
    amount: s.amount,
    currency: s.currency,
    interval: s.interval,
    interval_count: s.interval_count,
    prepaid_cycles_total: s.prepaid_cycles_total,
    prepaid_cycles_remaining: s.prepaid_cycles_remaining,
    current_period_start: toRfc3339OrNull(s.current_period_start),
    current_period_end: toRfc3339OrNull(s.current_period_end),
    next_charge_at: toRfc3339OrNull(s.next_charge_at),
    billing_anchor_at: toRfc3339OrNull(s.billing_anchor_at),
    period_index: s.period_index,
    paused_at: toRfc3339OrNull(s.paused_at),
    resume_at: toRfc3339OrNull(s.resume_at),
    skip_next: s.skip_next,
    cancel_at_period_end: s.cancel_at_period_end,
    payment_instrument_id: s.payment_instrument_id,
    ...addressCells('shipping', s.shipping_address),
    ...addressCells('billing', s.billing_address),
    created_at: toRfc3339OrNull(s.created_at),
  }
}
