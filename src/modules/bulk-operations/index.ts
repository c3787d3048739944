import type { Db } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Module } from '../module.ts'
import type { SubscriptionService } from '../subscriptions/index.ts'
import { BulkItem, BulkOperation, BulkPreview } from './bulk-operation.schemas.ts'
import { runBulkOperationJob } from './bulk-operations.jobs.ts'
import { bulkOperationAdminRoutes } from './bulk-operations.routes.ts'
import { createBulkOperationsService, type BulkActionRunners, type BulkOperationsService } from './bulk-operations.service.ts'

export interface BulkOperationsModuleDeps {
  db: Db
  clock: Clock
  subscriptions: Pick<SubscriptionService, 'listRows'>
  /** The single actions, given by the composition root (modules subscriptions, discounts, price-changes). */
  actions: BulkActionRunners
}

/** One action over many subscriptions: a dry run, then the worker's pages with progress and per-subscription results. */
export function createBulkOperationsModule({ db, clock, subscriptions, actions }: BulkOperationsModuleDeps): Module<BulkOperationsService> {
  const service = createBulkOperationsService({ db, clock, subscriptions, actions })
  return {
    name: 'bulk-operations',
    service,
    routes: { admin: (app) => bulkOperationAdminRoutes(app, service) },
    jobs: [runBulkOperationJob((id) => service.runStep(id))],
    schemas: [BulkOperation, BulkPreview, BulkItem],
  }
}

export type { BulkActionRunners, BulkOperationsService } from './bulk-operations.service.ts'
export { RunBulkOperation } from './bulk-operations.jobs.ts'
