/** The admin API's shapes, as far as the console reads them (openapi.json has the full lists). */

export interface Page<T> {
  data: T[]
  next_cursor: string | null
}

export type SubscriptionStatus = 'pending' | 'active' | 'paused' | 'past_due' | 'cancelled' | 'expired'
export type Interval = 'day' | 'week' | 'month' | 'year'

export interface Store {
  id: string
  store_hash: string
  name: string
  mode: 'test' | 'live'
  timezone: string
  currency: string
  dunning_retry_days: number[]
  renewal_reminder_days: number
  past_due_cancel_days: number
  gateway: string
  billing_stopped_at: string | null
  notifications: Record<NotificationTemplate, boolean>
  cancellation_reasons: { code: string; label: string }[]
  retention_offers: RetentionOffer[]
}

export type NotificationTemplate = 'subscription_created' | 'renewal_upcoming' | 'payment_failed' | 'past_due' | 'cancelled' | 'payment_instrument_expiring'
export type RetentionOffer = { type: 'pause'; days: number } | { type: 'skip' } | { type: 'discount'; code: string }

export interface Discount {
  id: string
  code: string
  type: 'percentage' | 'fixed_amount'
  value: number
  currency: string | null
  duration: 'once' | 'repeating' | 'forever'
  duration_in_cycles: number | null
  applies_to_plan_ids: string[]
  max_redemptions: number | null
  times_redeemed: number
  starts_at: string | null
  ends_at: string | null
  active: boolean
  created_at: string
}

export interface Onetime {
  id: string
  subscription_id: string
  product_id: string
  quantity: number
  unit_amount: number
  currency: string
  status: 'pending' | 'charged' | 'removed'
  charge_id: string | null
  created_at: string
}

export interface Notification {
  id: string
  template: string
  recipient: string
  subscription_id: string | null
  status: string
  attempts: number
  error: string | null
  sent_at: string | null
  created_at: string
}

export interface ApiKey {
  id: string
  name: string
  prefix: string
  current: boolean
  created_at: string
  last_used_at: string | null
  revoked_at: string | null
}

export interface Address {
  name: string
  line1: string
  line2?: string | null
  city: string
  state?: string | null
  postal_code: string
  country: string
}

export interface Subscriber {
  id: string
  email: string
  name: string | null
}

export interface Subscription {
  id: string
  subscriber_id: string
  plan_id: string
  product_id: string
  platform_order_id: string
  status: SubscriptionStatus
  quantity: number
  amount: number
  currency: string
  interval: Interval
  interval_count: number
  payment_instrument_id: string
  payment_instrument: { brand: string | null; last_4: string | null } | null
  shipping_address: Address | null
  start_at: string
  current_period_start: string | null
  current_period_end: string | null
  next_charge_at: string | null
  skip_next: boolean
  paused_at: string | null
  resume_at: string | null
  cancel_at_period_end: boolean
  cancelled_at: string | null
  cancellation_reason: string | null
  latest_charge_id: string | null
  billing_issue: { code: string; message: string; since: string } | null
  created_at: string
  version: number
  subscriber?: Subscriber
  discount?: { id: string; code: string; type: 'percentage' | 'fixed_amount'; value: number; cycles_remaining: number | null } | null
  cancellation_reason_code?: string | null
}

export interface Charge {
  id: string
  subscription_id: string
  amount: number
  currency: string
  status: 'pending' | 'succeeded' | 'failed' | 'requires_review'
  amount_refunded: number
  review: { code: string; message: string; since: string } | null
  attempt: number
  failure_code: string | null
  failure_message: string | null
  next_retry_at: string | null
  period_start: string
  period_end: string
  created_at: string
  settled_at: string | null
}

export interface Event {
  id: string
  event_type: string
  timestamp: string
  data: { object?: string; id?: string; status?: string } & Record<string, unknown>
  sequence: number
}

export interface Product {
  id: string
  platform_product_id: string
  name: string
  description: string | null
  one_time_price: { amount: number; currency: string } | null
  active: boolean
}

export interface Plan {
  id: string
  product_id: string
  name: string
  amount: number
  currency: string
  interval: Interval
  interval_count: number
  trial_days: number
  prepaid_cycles: number | null
  b2b: boolean
  active: boolean
}

export interface WebhookEndpoint {
  id: string
  url: string
  event_types: string[]
  description: string | null
  status: 'enabled' | 'disabled'
  disabled_reason: string | null
  created_at: string
  secret?: string
}

export interface Delivery {
  id: string
  webhook_subscription_id: string
  event_id: string
  event_type: string
  status: string
  attempts: number
  next_attempt_at: string | null
  last_status_code: number | null
  last_error: string | null
  created_at: string
  delivered_at: string | null
}

export interface PlatformConnection {
  connected: boolean
  source?: string
  scopes?: string[]
  connected_at?: string
  uninstalled_at?: string | null
}
