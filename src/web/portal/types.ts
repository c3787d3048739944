/** The API's shapes, as far as the portal reads them (openapi.json is the contract). */

export type Interval = 'day' | 'week' | 'month' | 'year'
export type SubscriptionStatus = 'pending' | 'active' | 'paused' | 'past_due' | 'cancelled' | 'expired'

export interface Page<T> {
  data: T[]
  next_cursor: string | null
}

export interface Address {
  name: string
  line1: string
  line2?: string | null
  city: string
  state?: string | null
  postal_code: string
  country: string
  phone?: string | null
}

export interface Subscription {
  id: string
  store_hash: string
  plan_id: string
  product_id: string
  status: SubscriptionStatus
  quantity: number
  amount: number
  currency: string
  interval: Interval
  interval_count: number
  payment_instrument_id: string
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
  gift: { gifter_email: string; recipient_email: string; message: string | null } | null
  prepaid: { cycles_total: number; cycles_remaining: number } | null
  created_at: string
  updated_at: string
}

export interface Charge {
  id: string
  amount: number
  currency: string
  status: 'pending' | 'succeeded' | 'failed'
  attempt: number
  payment_instrument_id: string
  failure_code: string | null
  failure_message: string | null
  next_retry_at: string | null
  period_start: string | null
  period_end: string | null
  created_at: string
  settled_at: string | null
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
  b2b: boolean
  active: boolean
}

export interface Product {
  id: string
  name: string
  description?: string | null
}

export interface ChangeRequest {
  id: string
  subscription_id: string
  status: 'pending' | 'approved' | 'rejected'
  changes: { quantity?: number; plan_id?: string; interval?: Interval; interval_count?: number }
  note: string | null
  decision_reason: string | null
  decided_at: string | null
  effective_at: string | null
  created_at: string
}

export interface Subscriber {
  id: string
  store_hash: string
  email: string
  name: string | null
}

export interface SessionAnswer {
  access_token: string
  token_type: 'Bearer'
  expires_in: number
}

export interface StorefrontStore {
  store_hash: string
  name: string
}
