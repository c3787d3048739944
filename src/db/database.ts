import type { Insertable, Kysely, Selectable, Transaction, Updateable } from 'kysely'
import type { StoresTable, AdminApiKeysTable } from '../modules/stores/stores.tables.ts'
import type { ProductsTable, PlansTable } from '../modules/catalog/catalog.tables.ts'
import type { IdempotencyKeysTable } from '../http/idempotency.tables.ts'
import type { SubscribersTable, SubscriptionsTable, CheckoutsTable, ChangeRequestsTable } from '../modules/subscriptions/subscriptions.tables.ts'
import type { EventsTable } from '../modules/events/events.tables.ts'
import type { JobsTable } from '../jobs/jobs.tables.ts'
import type { MagicLinkTokensTable, RevokedSessionsTable } from '../modules/portal-auth/portal-auth.tables.ts'
import type { ServiceSecretsTable } from './service-secrets.tables.ts'
import type { ChargesTable, RefundsTable, TestGatewayRefundsTable, TestGatewayChargesTable } from '../modules/billing/billing.tables.ts'
import type { WebhookSubscriptionsTable, WebhookDeliveriesTable, WebhookAttemptsTable } from '../modules/webhooks/webhooks.tables.ts'
import type { PlatformBudgetsTable, PlatformConnectionsTable } from '../modules/platform/platform.tables.ts'
import type { PlatformWebhookReceiptsTable } from '../modules/storefront-orders/storefront-orders.tables.ts'
import type { RetentionSavesTable } from '../modules/retention/retention.tables.ts'
import type { NotificationsTable } from '../modules/notifications/notifications.tables.ts'
import type { DiscountsTable } from '../modules/discounts/discounts.tables.ts'
import type { OnetimesTable } from '../modules/onetimes/onetimes.tables.ts'
import type { ConsoleSessionsTable } from '../modules/console-auth/console-auth.tables.ts'
import type { ImportsTable } from '../modules/imports/imports.tables.ts'
import type { BulkOperationItemsTable, BulkOperationsTable } from '../modules/bulk-operations/bulk-operations.tables.ts'
import type { PriceChangesTable } from '../modules/price-changes/price-changes.tables.ts'

export type { StoreGateway, StoreMode, StoresTable, AdminApiKeysTable } from '../modules/stores/stores.tables.ts'
export type { PlanInterval, ProductsTable, PlansTable } from '../modules/catalog/catalog.tables.ts'
export type { IdempotencyKeysTable } from '../http/idempotency.tables.ts'
export type { ShippingAddressValue, GiftValue, SubscribersTable, SubscriptionStatus, SubscriptionsTable, BillingIssueCode, BillingIssue, CheckoutsTable, ChangeSet, ChangeRequestsTable } from '../modules/subscriptions/subscriptions.tables.ts'
export type { EventsTable } from '../modules/events/events.tables.ts'
export type { JobsTable } from '../jobs/jobs.tables.ts'
export type { MagicLinkTokensTable, RevokedSessionsTable } from '../modules/portal-auth/portal-auth.tables.ts'
export type { ServiceSecretsTable } from './service-secrets.tables.ts'
export type { ChargeStatus, ChargesTable, RefundStatus, RefundsTable, TestGatewayRefundsTable, TestGatewayChargesTable } from '../modules/billing/billing.tables.ts'
export type { WebhookStatus, DeliveryStatus, WebhookSubscriptionsTable, WebhookDeliveriesTable, WebhookAttemptsTable } from '../modules/webhooks/webhooks.tables.ts'
export type { PlatformConnectionSource, PlatformConnectionsTable } from '../modules/platform/platform.tables.ts'
export type { PlatformWebhookReceiptsTable } from '../modules/storefront-orders/storefront-orders.tables.ts'

/** Every table, each defined by the module that owns it. */
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
  platform_budgets: PlatformBudgetsTable
  platform_connections: PlatformConnectionsTable
  platform_webhook_receipts: PlatformWebhookReceiptsTable
  retention_saves: RetentionSavesTable
  notifications: NotificationsTable
  discounts: DiscountsTable
  onetimes: OnetimesTable
  console_sessions: ConsoleSessionsTable
  imports: ImportsTable
  bulk_operations: BulkOperationsTable
  bulk_operation_items: BulkOperationItemsTable
  price_changes: PriceChangesTable
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
export type DiscountRow = Selectable<DiscountsTable>
export type OnetimeRow = Selectable<OnetimesTable>
export type RefundRow = Selectable<RefundsTable>
export type WebhookSubscriptionRow = Selectable<WebhookSubscriptionsTable>
export type WebhookDeliveryRow = Selectable<WebhookDeliveriesTable>
export type WebhookAttemptRow = Selectable<WebhookAttemptsTable>
