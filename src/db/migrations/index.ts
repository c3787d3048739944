import type { Migration } from 'kysely/migration'
import * as foundation from './0001-foundation.ts'
import * as subscriptions from './0002-subscriptions.ts'
import * as portal from './0003-portal.ts'
import * as testGateway from './0004-test-gateway.ts'
import * as billing from './0005-billing.ts'
import * as webhooks from './0006-webhooks.ts'
import * as moneyPath from './0007-money-path.ts'
import * as platformConnections from './0008-platform-connections.ts'
import * as platformOrders from './0009-platform-orders.ts'
import * as discountsOnetimes from './0010-discounts-onetimes.ts'
import * as retention from './0011-retention.ts'
import * as notifications from './0012-notifications.ts'
import * as analytics from './0013-analytics.ts'
import * as analyticsDiscounts from './0014-analytics-discounts.ts'
import * as cacheInvalidation from './0015-cache-invalidation.ts'
import * as webhookDeliverySpeed from './0016-webhook-delivery-speed.ts'
import * as eventFanoutQueue from './0017-event-fanout-queue.ts'
import * as dropCacheInvalidationTriggers from './0018-drop-cache-invalidation-triggers.ts'
import * as orderRequested from './0019-order-requested.ts'
import * as renewalPricing from './0020-renewal-pricing.ts'
import * as planVariants from './0021-plan-variants.ts'
import * as outOfStock from './0022-out-of-stock.ts'
import * as consoleSessions from './0023-console-sessions.ts'
import * as adminKeyScopes from './0024-admin-key-scopes.ts'
import * as mrrPrepaidCycles from './0025-mrr-prepaid-cycles.ts'
import * as attentionIndexes from './0026-attention-indexes.ts'
import * as subscriberSearch from './0028-subscriber-search.ts'
import * as webhookInspector from './0029-webhook-inspector.ts'
import * as reactivationAndActors from './0030-reactivation-and-actors.ts'
import * as billingSwitch from './0031-billing-switch.ts'
import * as imports from './0032-imports.ts'
import * as bulkOperations from './0034-bulk-operations.ts'
import * as platformBudgets from './0035-platform-budgets.ts'
import * as scaleIndexes from './0036-scale-indexes.ts'
import * as storeIdAndFairDeliveries from './0037-store-id-and-fair-deliveries.ts'
import * as fairJobs from './0038-fair-jobs.ts'
import * as priceChanges from './0033-price-changes.ts'

/** Every migration, in order; names never change once released. */
export const migrations: Record<string, Migration> = {
  '0001-foundation': foundation,
  '0002-subscriptions': subscriptions,
  '0003-portal': portal,
  '0004-test-gateway': testGateway,
  '0005-billing': billing,
  '0006-webhooks': webhooks,
  '0007-money-path': moneyPath,
  '0008-platform-connections': platformConnections,
  '0009-platform-orders': platformOrders,
  '0010-discounts-onetimes': discountsOnetimes,
  '0011-retention': retention,
  '0012-notifications': notifications,
  '0013-analytics': analytics,
  '0014-analytics-discounts': analyticsDiscounts,
  '0015-cache-invalidation': cacheInvalidation,
  '0016-webhook-delivery-speed': webhookDeliverySpeed,
  '0017-event-fanout-queue': eventFanoutQueue,
  '0018-drop-cache-invalidation-triggers': dropCacheInvalidationTriggers,
  '0019-order-requested': orderRequested,
  '0020-renewal-pricing': renewalPricing,
  '0021-plan-variants': planVariants,
  '0022-out-of-stock': outOfStock,
  '0023-console-sessions': consoleSessions,
  '0024-admin-key-scopes': adminKeyScopes,
  '0025-mrr-prepaid-cycles': mrrPrepaidCycles,
  '0026-attention-indexes': attentionIndexes,
  '0028-subscriber-search': subscriberSearch,
  '0029-webhook-inspector': webhookInspector,
  '0030-reactivation-and-actors': reactivationAndActors,
  '0031-billing-switch': billingSwitch,
  '0032-imports': imports,
  '0033-price-changes': priceChanges,
  '0034-bulk-operations': bulkOperations,
  '0035-platform-budgets': platformBudgets,
  '0036-scale-indexes': scaleIndexes,
  '0037-store-id-and-fair-deliveries': storeIdAndFairDeliveries,
  '0038-fair-jobs': fairJobs,
}
