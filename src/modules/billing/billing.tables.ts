import type { ColumnType, Generated } from 'kysely'
import type { Timestamp, NullableTimestamp, Json } from '../../db/column-types.ts'
import type { Actor } from '../../http/actor-kinds.ts'
import type { BillingIssue } from '../subscriptions/subscriptions.tables.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

export type ChargeStatus = 'pending' | 'succeeded' | 'failed' | 'requires_review'

export interface ChargesTable {
  id: string
  store_id: string
  subscription_id: string
  amount: number
  currency: string
  status: ChargeStatus
  attempt: number
  payment_instrument_id: string
  idempotency_key: string
  failure_code: string | null
  failure_message: string | null
  next_retry_at: NullableTimestamp
  period_start: Timestamp
  period_end: Timestamp
  created_at: Timestamp
  settled_at: NullableTimestamp
  gateway: Generated<string>
  gateway_charge_id: string | null
  platform_order_id: string | null
  /** The platform cart (and checkout: the same id) the renewal order is made from; kept before it is priced. */
  platform_cart_id: ColumnType<string | null, string | null | undefined, string | null>
  /** When the platform order was asked for (while the lease held); another worker waits out that request before raising one. */
  order_requested_at: NullableTimestamp
  lease_until: NullableTimestamp
  /** Fencing token of the lease holder; settling requires it. */
  lease_token: string | null
  /** When the request that can move money left, for gateways without idempotency keys. */
  submitted_at: NullableTimestamp
  /** When the outcome first came back unknown. */
  unknown_since: NullableTimestamp
  /** Why the charge needs review, while its status is requires_review. */
  review: Json<BillingIssue | null>
  amount_refunded: Generated<number>
  /**
   * Price x quantity plus the add-ons, before the discount; `amount` = subtotal - discount_amount +
   * shipping_amount + tax_amount (a CHECK holds it). Filled by a trigger when a writer leaves it out.
   */
  subtotal: ColumnType<number, number | undefined, number>
  discount_amount: Generated<number>
  /** The renewal's shipping, by the store's `renewal_shipping` policy (docs/contract.md, Renewal pricing). */
  shipping_amount: Generated<number>
  /** The shipping method the renewal ships by, when it ships. */
  shipping_method: string | null
  tax_amount: Generated<number>
  /** The discount this charge applied (its cycle is used when it succeeds); null when none. */
  discount_id: string | null
  line_items: ColumnType<ChargeLineItem[], ChargeLineItem[] | string | undefined, ChargeLineItem[] | string>
}

/** One line of a charge: the subscription's own, or a one-time add-on. */
export interface ChargeLineItem {
  type: 'subscription' | 'onetime'
  product_id: string
  /** The add-on the line charges (type onetime); null for the subscription's line. */
  onetime_id: string | null
  quantity: number
  unit_amount: number
  /** unit_amount x quantity, before the discount. */
  amount: number
  /** The part of the charge's discount on this line (only the subscription's line is discounted). */
  discount_amount: number
}

export type RefundStatus = 'pending' | 'succeeded' | 'failed'

export interface RefundsTable {
  id: string
  store_id: string
  charge_id: string
  amount: number
  currency: string
  reason: string | null
  automatic: Generated<boolean>
  /** Who asked for it (an admin key or the console); null for an automatic refund and for refunds made before it was kept. */
  requested_by: ColumnType<Actor | null, string | null | undefined, string | null>
  status: RefundStatus
  idempotency_key: string
  gateway_refund_id: string | null
  failure_message: string | null
  lease_until: NullableTimestamp
  lease_token: string | null
  submitted_at: NullableTimestamp
  review: Json<BillingIssue | null>
  created_at: Timestamp
  settled_at: NullableTimestamp
}

/** The `test` gateway's refunds: one row per refund idempotency key. */
export interface TestGatewayRefundsTable {
  idempotency_key: string
  /** The idempotency key of the charge refunded. */
  charge_key: string
  amount: number
  status: 'succeeded' | 'failed'
  gateway_refund_id: string | null
  failure_message: string | null
  calls: Generated<number>
  created_at: Timestamp
}

/** The `test` gateway's ledger: one row per idempotency key it was asked to charge. */
export interface TestGatewayChargesTable {
  idempotency_key: string
  store_id: string
  subscription_id: string
  amount: number
  currency: string
  payment_instrument_id: string
  status: 'succeeded' | 'failed'
  failure_code: string | null
  gateway_charge_id: string | null
  calls: Generated<number>
  created_at: Timestamp
}
