import type { ColumnType, Generated } from 'kysely'
import type { Timestamp, NullableTimestamp } from '../../db/column-types.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

export type StoreMode = 'live' | 'test'

export const RENEWAL_SHIPPING = ['checkout_rate', 'requote', 'flat', 'free'] as const
export type RenewalShipping = (typeof RENEWAL_SHIPPING)[number]
export const OUT_OF_STOCK_POLICIES = ['skip', 'retry', 'charge_anyway'] as const
export type OutOfStockPolicy = (typeof OUT_OF_STOCK_POLICIES)[number]

/** Which gateway charges the store's renewals: live stores always `platform`. */
export type StoreGateway = 'test' | 'platform'

export interface StoresTable {
  id: string
  store_hash: string
  name: string
  mode: StoreMode
  timezone: Generated<string>
  currency: Generated<string>
  dunning_retry_days: ColumnType<number[], number[] | undefined, number[]>
  renewal_reminder_days: Generated<number>
  past_due_cancel_days: Generated<number>
  test_clock_now: NullableTimestamp
  gateway: Generated<StoreGateway>
  /** Set while the store's billing is stopped (its app uninstalled): renewals and due work skip it. */
  billing_stopped_at: NullableTimestamp
  /** The cutover switch (docs/contract.md, Cutover switch): while false nothing bills, retries or reminds, as while stopped. */
  billing_enabled: Generated<boolean>
  /** How a renewal's shipping is chosen (docs/contract.md, Renewal pricing). */
  renewal_shipping: Generated<RenewalShipping>
  /** The `flat` policy's rate, in the store currency's minor units. */
  renewal_shipping_amount: ColumnType<number | null, number | null | undefined, number | null>
  /** Tax the `test` gateway's renewals carry, in basis points of the discounted subtotal. */
  test_tax_rate_bps: Generated<number>
  /** What a renewal does when the platform says an item is out of stock (docs/contract.md, Renewal pricing). */
  out_of_stock: Generated<OutOfStockPolicy>
  /** The `retry` policy's days of daily retries before the renewal is skipped. */
  out_of_stock_retry_days: Generated<number>
  /** Subscriber emails switched on or off, by template; one not named is on (src/modules/notifications). */
  notifications: ColumnType<Record<string, boolean>, Record<string, boolean> | string | undefined, Record<string, boolean> | string>
  /** Reasons a subscriber may give when cancelling, `[{code, label}]` (src/modules/retention). */
  cancellation_reasons: ColumnType<CancellationReasonValue[], CancellationReasonValue[] | string | undefined, CancellationReasonValue[] | string>
  /** What the portal offers before a cancellation is confirmed (src/modules/retention). */
  retention_offers: ColumnType<RetentionOfferValue[], RetentionOfferValue[] | string | undefined, RetentionOfferValue[] | string>
  /** Whether subscribers may reactivate a cancelled subscription in the portal (docs/contract.md, Reactivation). */
  portal_reactivation: Generated<boolean>
  /** The least notice, in days, a price change of existing subscriptions gives (docs/contract.md, Price changes with notice). */
  price_change_notice_days: Generated<number>
  created_at: Timestamp
  updated_at: Timestamp
}

export interface CancellationReasonValue {
  code: string
  label: string
}

export type RetentionOfferValue = { type: 'pause'; days: number } | { type: 'skip' } | { type: 'discount'; code: string }

export const ADMIN_KEY_SCOPES = ['full', 'read_only', 'support'] as const
export type AdminKeyScope = (typeof ADMIN_KEY_SCOPES)[number]

export interface AdminApiKeysTable {
  id: string
  store_id: string
  name: string
  key_hash: string
  /** The first characters of the key, shown in listings so a person can tell keys apart. */
  key_prefix: string
  /** What the key may do (src/http/admin-scopes.ts): `full`, `read_only` or `support`. */
  scope: Generated<AdminKeyScope>
  created_at: Timestamp
  last_used_at: NullableTimestamp
  revoked_at: NullableTimestamp
}
