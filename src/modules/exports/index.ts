import type { Clock } from '../../lib/clock.ts'
import type { ChargesService } from '../billing/index.ts'
import type { Module } from '../module.ts'
import type { SubscriptionService } from '../subscriptions/index.ts'
import { exportAdminRoutes } from './exports.routes.ts'
import { createExportsService, type ExportsService } from './exports.service.ts'

export interface ExportsModuleDeps {
  clock: Clock
  subscriptions: SubscriptionService
  charges: ChargesService
}

/**
 * CSV exports of subscriptions (the `native` import format), charges and subscribers, streamed a
 * page at a time. It owns no table: it reads each list through the service of the module that owns it.
 */
export function createExportsModule({ clock, subscriptions, charges }: ExportsModuleDeps): Module<ExportsService> {
  const service = createExportsService({ clock, subscriptions, charges })
  return { name: 'exports', service, routes: { admin: (app) => exportAdminRoutes(app, service) } }
}

export { EXPORT_PAGE_SIZE, type ExportFile, type ExportsService } from './exports.service.ts'
export { CHARGE_COLUMNS, SUBSCRIBER_COLUMNS } from './export-columns.ts'
