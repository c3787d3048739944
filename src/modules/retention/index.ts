import type { Module } from '../module.ts'
import type { SubscriptionService } from '../subscriptions/index.ts'
import { retentionPortalRoutes } from './retention.routes.ts'
import { createRetentionService, type ApplyDiscount, type RetentionService } from './retention.service.ts'

/** Cancellation reasons and retention offers: what the portal shows before a cancellation is confirmed, and taking one. */
export function createRetentionModule({ subscriptions, applyDiscount }: { subscriptions: SubscriptionService; applyDiscount?: ApplyDiscount | undefined }): Module<RetentionService> {
  const service = createRetentionService({ subscriptions, applyDiscount })
  return {
    name: 'retention',
    service,
    routes: { portal: (app) => retentionPortalRoutes(app, service) },
  }
}

export { ApplicableRetentionOffers } from './retention.schemas.ts'
export type { ApplyDiscount, RetentionService } from './retention.service.ts'
