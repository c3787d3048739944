import type { ColumnType, Generated, Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely'

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>

export type StoreMode = 'live' | 'test'
export type PlanInterval = 'day' | 'week' | 'month' | 'year'

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
  created_at: Timestamp
  updated_at: Timestamp
}

export interface AdminApiKeysTable {
  id: string
  store_id: string
  name: string
  key_hash: string
  /** The first characters of the key, shown in listings so a person can tell keys apart. */
  key_prefix: string
  created_at: Timestamp
  last_used_at: NullableTimestamp
  revoked_at: NullableTimestamp
}

export interface ProductsTable {
  id: string
  store_id: string
  platform_product_id: string
  name: string
  description: string | null
  one_time_amount: number | null
  one_time_currency: string | null
  active: boolean
  created_at: Timestamp
  updated_at: Timestamp
}

export interface PlansTable {
  id: string
  store_id: string
  product_id: string
  name: string
  amount: number
  currency: string
  interval: PlanInterval
  interval_count: number
  trial_days: number
  prepaid_cycles: number | null
  b2b: boolean
  active: boolean
  created_at: Timestamp
  updated_at: Timestamp
}

export interface IdempotencyKeysTable {
  scope: string
  key: string
  request_hash: string
  /** While null the first request is still running; `locked_until` bounds how long a crash can hold the key. */
  response_status: number | null
  response_body: string | null
  response_content_type: string | null
  locked_until: Timestamp
  created_at: Timestamp
}

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

type Json<T> = ColumnType<T, T | string, T | string>

export interface SubscribersTable {
  id: string
  store_id: string
  email: string
  name: string | null
  shipping_address: Json<ShippingAddressValue | null>
  created_at: Timestamp
  updated_at: Timestamp
}

export type SubscriptionStatus = 'pending' | 'active' | 'paused' | 'past_due' | 'cancelled' | 'expired'

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
  unpaid_period_start: NullableTimestamp
  past_due_at: NullableTimestamp
  reminded_for: NullableTimestamp
  /** Set when a renewal failed on this subscription's own data: it is not claimed again until cleared. */
  billing_issue: Json<BillingIssue | null>
}

/** Why a renewal or a charge was set aside for a person to look at. */
export type BillingIssueCode = 'renewal_failed' | 'charge_requires_review' | 'outcome_unknown' | 'settlement_failed'

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

export interface EventsTable {
  id: string
  position: Generated<number>
  store_id: string
  entity_type: string
  entity_id: string
  event_type: string
  sequence: number
  occurred_at: Timestamp
  /** The event exactly as delivered: kept as text so every delivery sends the same bytes. */
  payload: string
  created_at: Timestamp
  fanned_out: Generated<boolean>
}

export interface JobsTable {
  id: Generated<number>
  kind: string
  payload: Json<Record<string, unknown>>
  dedupe_key: string | null
  run_at: Timestamp
  attempts: Generated<number>
  max_attempts: Generated<number>
  locked_until: NullableTimestamp
  locked_by: string | null
  last_error: string | null
  failed_at: NullableTimestamp
  created_at: Timestamp
}

export interface MagicLinkTokensTable {
  token_hash: string
  store_id: string
  subscriber_id: string
  expires_at: Timestamp
  used_at: NullableTimestamp
  created_at: Generated<Date>
}

export interface RevokedSessionsTable {
  jti: string
  expires_at: Timestamp
}

export interface ServiceSecretsTable {
  name: string
  value: string
  created_at: Generated<Date>
}

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

export interface Database {
  stores: StoresTable
  admin_api_keys: AdminApiKeysTable
  products: ProductsTable
  plans: PlansTable
  idempotency_keys: IdempotencyKeysTable
  subscribers: SubscribersTable
  subscriptions: SubscriptionsTable
  checkouts: CheckoutsTable
  change_requests: ChangeRequestsTable
  events: EventsTable
  jobs: JobsTable
  magic_link_tokens: MagicLinkTokensTable
  revoked_sessions: RevokedSessionsTable
  service_secrets: ServiceSecretsTable
  charges: ChargesTable
  test_gateway_charges: TestGatewayChargesTable
  refunds: RefundsTable
  test_gateway_refunds: TestGatewayRefundsTable
  webhook_subscriptions: WebhookSubscriptionsTable
  webhook_deliveries: WebhookDeliveriesTable
  webhook_attempts: WebhookAttemptsTable
}

export type WebhookStatus = 'enabled' | 'disabled'
export type DeliveryStatus = 'pending' | 'succeeded' | 'failed'

export interface WebhookSubscriptionsTable {
  id: string
  store_id: string
  url: string
  event_types: ColumnType<string[], string[], string[]>
  description: string | null
  status: WebhookStatus
  disabled_reason: string | null
  secret: string
  previous_secret: string | null
  previous_secret_expires_at: NullableTimestamp
  failing_since: NullableTimestamp
  created_at: Timestamp
  updated_at: Timestamp
}

export interface WebhookDeliveriesTable {
  id: string
  store_id: string
  webhook_subscription_id: string
  event_id: string
  event_type: string
  entity_id: string
  event_position: ColumnType<number, number | string, number | string>
  status: DeliveryStatus
  attempts: Generated<number>
  next_attempt_at: NullableTimestamp
  locked_until: NullableTimestamp
  lease_token: string | null
  last_status_code: number | null
  last_error: string | null
  created_at: Timestamp
  updated_at: Timestamp
  delivered_at: NullableTimestamp
}

export interface WebhookAttemptsTable {
  id: Generated<number>
  delivery_id: string
  attempted_at: Timestamp
  status_code: number | null
  latency_ms: number
  error: string | null
  response_body: string | null
}

export type Db = Kysely<Database>
/** A database handle or an open transaction: repositories accept either, services choose. */
export type Executor = Kysely<Database> | Transaction<Database>

export type StoreRow = Selectable<StoresTable>
export type NewStore = Insertable<StoresTable>
export type StoreUpdate = Updateable<StoresTable>
export type ProductRow = Selectable<ProductsTable>
export type PlanRow = Selectable<PlansTable>
export type AdminApiKeyRow = Selectable<AdminApiKeysTable>
export type SubscriberRow = Selectable<SubscribersTable>
export type SubscriptionRow = Selectable<SubscriptionsTable>
export type ChangeRequestRow = Selectable<ChangeRequestsTable>
export type EventRow = Selectable<EventsTable>
export type JobRow = Selectable<JobsTable>

export type ChargeRow = Selectable<ChargesTable>
export type RefundRow = Selectable<RefundsTable>
export type WebhookSubscriptionRow = Selectable<WebhookSubscriptionsTable>
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>
