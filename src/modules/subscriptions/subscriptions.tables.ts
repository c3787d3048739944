import type { ColumnType, Generated } from 'kysely'
import type { Timestamp, NullableTimestamp, Json } from '../../db/column-types.ts'
import type { PlanInterval } from '../catalog/catalog.tables.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

export interface ShippingAddressValue {
  name: string
  line1: string
  line2?: string | null
  city: string
  state?: string | null
  postal_code: string
  country: string
  phone?: string | null
}

export interface GiftValue {
  gifter_email: string
  recipient_email: string
  message: string | null
}

export interface SubscribersTable {
  id: string
  store_id: string
  email: string
  name: string | null
  shipping_address: Json<ShippingAddressValue | null>
  /** The subscriber's own customer on the commerce platform, when known. */
  platform_customer_id: string | null
  created_at: Timestamp
  updated_at: Timestamp
}

export type SubscriptionStatus = 'pending' | 'active' | 'paused' | 'past_due' | 'cancelled' | 'expired'

export type SkipReason = 'requested' | 'out_of_stock'

export interface SubscriptionsTable {
  id: string
  store_id: string
  subscriber_id: string
  plan_id: string
  product_id: string
  platform_order_id: string
  status: SubscriptionStatus
  quantity: number
  amount: number
  currency: string
  interval: PlanInterval
  interval_count: number
  payment_instrument_id: string
  shipping_address: Json<ShippingAddressValue | null>
  start_at: Timestamp
  trial_days: Generated<number>
  billing_anchor_at: NullableTimestamp
  period_index: Generated<number>
  current_period_start: NullableTimestamp
  current_period_end: NullableTimestamp
  next_charge_at: NullableTimestamp
  skip_next: Generated<boolean>
  paused_at: NullableTimestamp
  resume_at: NullableTimestamp
  cancel_at_period_end: Generated<boolean>
  cancelled_at: NullableTimestamp
  cancellation_reason: string | null
  /** One of the store's `cancellation_reasons` codes, when the cancellation named one. */
  cancellation_reason_code: string | null
  gift: Json<GiftValue | null>
  prepaid_cycles_total: number | null
  prepaid_cycles_remaining: number | null
  latest_charge_id: string | null
  created_at: Timestamp
  updated_at: Timestamp
  version: Generated<number>
  pending_charge_id: string | null
  dunning_attempts: Generated<number>
  dunning_started_at: NullableTimestamp
  /** The period being retried: by dunning, or while its renewal waits for stock. */
  unpaid_period_start: NullableTimestamp
  /** Attempts of the unpaid period the platform found out of stock (store policy `retry`). */
  stock_attempts: Generated<number>
  /** When the unpaid period's renewal first found an item out of stock; null when it is not waiting for stock. */
  out_of_stock_since: NullableTimestamp
  /** Why the latest skip was made: asked for (`skip_next`) or an item out of stock. */
  skip_reason: ColumnType<SkipReason | null, SkipReason | null | undefined, SkipReason | null>
  past_due_at: NullableTimestamp
  reminded_for: NullableTimestamp
  /** Set when a renewal failed on this subscription's own data: it is not claimed again until cleared. */
  billing_issue: Json<BillingIssue | null>
  /** The platform customer who pays: owns the stored instrument (platform gateway). */
  platform_customer_id: string | null
  /** The billing address of the renewal orders (required by the platform's orders). */
  billing_address: Json<ShippingAddressValue | null>
  /** The catalog variant the renewal orders carry, when the product has variants. */
  platform_variant_id: string | null
  /** The shipping method and rate its checkout paid: what a `checkout_rate` store's renewals ship by. */
  shipping_method: ColumnType<string | null, string | null | undefined, string | null>
  shipping_amount: ColumnType<number | null, number | null | undefined, number | null>
  /** What the subscriber may see of the instrument, as the platform listed it; never more. */
  payment_instrument_brand: string | null
  payment_instrument_last4: string | null
  /** The card's expiry as the platform listed it (null on the test gateway): warns before a renewal it cannot pay. */
  payment_instrument_expiry_month: number | null
  payment_instrument_expiry_year: number | null
  /** The discount it carries (module discounts), its terms as they were when applied, and the charges it still covers (null: forever). */
  discount_id: string | null
  discount: Json<AppliedDiscount | null>
  discount_cycles_remaining: number | null
  /**
   * A price change with notice (docs/contract.md, Price changes with notice): the price it moves to,
   * and the renewal that first charges it (the first whose period starts at or after it). Both or neither.
   */
  scheduled_amount: ColumnType<number | null, number | null | undefined, number | null>
  scheduled_amount_from: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
  /** The id another system gave it, when it was imported (unique per store: an import run again never duplicates it). */
  external_id: ColumnType<string | null, string | null | undefined, string | null>
}

/** A discount's terms as a subscription carries them: fixed when applied, whatever the code becomes. */
export interface AppliedDiscount {
  id: string
  code: string
  type: 'percentage' | 'fixed_amount'
  value: number
  currency: string | null
  duration: 'once' | 'repeating' | 'forever'
}

/** Why a renewal or a charge was set aside for a person to look at. */
export type BillingIssueCode = 'renewal_failed' | 'charge_requires_review' | 'outcome_unknown' | 'settlement_failed' | 'payment_method_required'

export interface BillingIssue {
  code: BillingIssueCode
  message: string
  /** RFC 3339 */
  since: string
}

export interface CheckoutsTable {
  store_id: string
  platform_order_id: string
  request_hash: string
  subscription_ids: ColumnType<string[], string[], string[]>
  created_at: Timestamp
}

export interface ChangeSet {
  quantity?: number
  plan_id?: string
  interval?: PlanInterval
  interval_count?: number
}

export interface ChangeRequestsTable {
  id: string
  store_id: string
  subscription_id: string
  status: 'pending' | 'approved' | 'rejected'
  changes: Json<ChangeSet>
  note: string | null
  decision_reason: string | null
  decided_at: NullableTimestamp
  effective_at: NullableTimestamp
  created_at: Timestamp
  updated_at: Timestamp
}
