/**
 * The API's shapes, taken from the route schemas the server validates with (type-only imports:
 * esbuild drops them, so no server code reaches the browser).
 */
import type { ChargeView } from '../../modules/billing/charge.schemas.ts'
import type { PlanView, ProductView } from '../../modules/catalog/catalog.schemas.ts'
import type { OnetimeView } from '../../modules/onetimes/onetime.schemas.ts'
import type { PaymentInstrumentListView } from '../../modules/platform/platform.schemas.ts'
import type { RetentionOfferInput } from '../../modules/stores/retention-settings.ts'
import type { ChangeRequestView, SubscriberView, SubscriptionView } from '../../modules/subscriptions/subscription.schemas.ts'

export type Subscription = SubscriptionView
export type Charge = ChargeView
export type Plan = PlanView
export type Product = ProductView
export type ChangeRequest = ChangeRequestView
export type Subscriber = SubscriberView
export type Onetime = OnetimeView
export type RetentionOffer = RetentionOfferInput
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

/** GET /portal/store (the `getPortalStore` answer of openapi.json). */
export interface PortalStore {
  object: 'portal_store'
  store_hash: string
  name: string
  timezone: string
  now: string
  past_due_cancel_days: number
  cancellation_reasons: { code: string; label: string }[]
}
