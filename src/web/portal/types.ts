/**
 * The API's shapes the portal reads, by the names of openapi.json (generated into
 * src/web/shared/api-types.ts by `npm run openapi`; type-only, so nothing reaches the bundle).
 */
import type { Answer, Schema } from '../shared/api-schema.ts'

export type { Page } from '../shared/api-schema.ts'
export type Subscription = Schema<'Subscription'>
export type Charge = Schema<'Charge'>
export type Plan = Schema<'Plan'>
export type Product = Schema<'Product'>
export type ChangeRequest = Schema<'ChangeRequest'>
export type Subscriber = Schema<'Subscriber'>
export type Onetime = Schema<'Onetime'>
export type UpcomingRenewal = Schema<'UpcomingRenewal'>
export type RetentionOffer = Answer<'listPortalRetentionOffers'>['data'][number]
export type PaymentInstrumentList = Answer<'listPortalPaymentInstruments'>
export type PaymentInstrument = PaymentInstrumentList['data'][number]
export type PortalStore = Answer<'getPortalStore'>
export type SubscriptionVariantList = Answer<'listPortalSubscriptionVariants'>
export type SubscriptionVariant = Schema<'SubscriptionVariant'>
export type StorefrontStore = Schema<'StorefrontStore'>
export type SessionAnswer = Schema<'PortalSession'>
export type Interval = Subscription['interval']
export type SubscriptionStatus = Subscription['status']
export type Address = NonNullable<Subscription['shipping_address']>
