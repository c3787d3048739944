/**
 * The admin API's shapes the console reads, by the names of openapi.json (generated into
 * src/web/shared/api-types.ts by `npm run openapi`; type-only, so nothing reaches the bundle).
 */
import type { Answer, Body, Schema } from '../shared/api-schema.ts'

export type { Page } from '../shared/api-schema.ts'
export type Store = Schema<'Store'>
export type NotificationTemplate = keyof Store['notifications']
export type RetentionOffer = Store['retention_offers'][number]
export type Discount = Schema<'Discount'>
export type Onetime = Schema<'Onetime'>
export type Notification = Schema<'Notification'>
export type ApiKey = Answer<'listApiKeys'>['data'][number]
export type CreatedApiKey = Answer<'createApiKey'>
export type Subscription = Schema<'Subscription'>
export type SubscriptionWithSubscriber = Schema<'SubscriptionWithSubscriber'>
export type SubscriberDetail = Schema<'SubscriberDetail'>
export type SubscriptionStatus = Subscription['status']
export type Interval = Subscription['interval']
export type UpcomingRenewal = Schema<'UpcomingRenewal'>
export type Charge = Schema<'Charge'>
export type Event = Schema<'Event'>
export type Product = Schema<'Product'>
export type Import = Schema<'Import'>
export type ImportFormat = Import['format']
export type Plan = Schema<'Plan'>
export type WebhookEndpoint = Schema<'WebhookSubscription'>
export type WebhookEndpointWithSecret = Schema<'WebhookSubscriptionWithSecret'>
export type Delivery = Schema<'WebhookDelivery'>
export type DeliveryDetail = Schema<'WebhookDeliveryDetail'>
export type WebhookHealth = Schema<'WebhookHealth'>
export type Refund = Schema<'Refund'>
export type PlatformConnection = Schema<'PlatformConnection'>
export type AttentionItem = Schema<'AttentionItem'>
export type AttentionList = Answer<'listAttention'>
export type PaymentInstrumentList = Answer<'listSubscriptionPaymentInstruments'>
export type AnalyticsSummary = Answer<'getAnalyticsSummary'>
export type AnalyticsTimeseries = Answer<'getAnalyticsTimeseries'>
export type ExpectedRevenue = Answer<'getExpectedRevenue'>
export type CurrencyFigures = AnalyticsSummary['currencies'][number]
export type BulkOperation = Schema<'BulkOperation'>
export type BulkAction = BulkOperation['action']
export type BulkPreview = Schema<'BulkPreview'>
export type BulkItem = Schema<'BulkItem'>
export type BulkBody = Body<'createBulkOperation'>
