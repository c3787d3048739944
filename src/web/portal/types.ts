/**
 * The API's shapes, taken from the route schemas the server validates with (type-only imports:
 * esbuild drops them, so no server code reaches the browser).
 */
import type { ChargeView } from '../../modules/billing/charge.schemas.ts'
import type { PlanView, ProductView } from '../../modules/catalog/catalog.schemas.ts'
import type { PaymentInstrumentListView } from '../../modules/platform/platform.schemas.ts'
import type { ChangeRequestView, SubscriberView, SubscriptionView } from '../../modules/subscriptions/subscription.schemas.ts'

export type Subscription = SubscriptionView
export type Charge = ChargeView
export type Plan = PlanView
export type Product = ProductView
export type ChangeRequest = ChangeRequestView
export type Subscriber = SubscriberView
export type PaymentInstrumentList = PaymentInstrumentListView
export type PaymentInstrument = PaymentInstrumentList['data'][number]
export type Interval = Subscription['interval']
export type SubscriptionStatus = Subscription['status']
export type Address = NonNullable<Subscription['shipping_address']>

export interface Page<T> {
  data: T[]
  next_cursor: string | null
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
