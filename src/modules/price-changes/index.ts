import type { Db } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Module } from '../module.ts'
import type { SubscriptionWrites } from '../subscriptions/index.ts'
import { PriceChange } from './price-change.schemas.ts'
import { priceChangeAdminRoutes } from './price-changes.routes.ts'
import { schedulePriceChangeJob } from './price-changes.jobs.ts'
import { createPriceChangeService, type PriceChangeService } from './price-changes.service.ts'

export interface PriceChangesModuleDeps {
  db: Db
  clock: Clock
  writes: SubscriptionWrites
  /** Told once a plan's price changed (the catalogue's storefront cache, given by the composition root). */
  onPlanChanged: () => void
  log?: { error(object: object, message: string): void } | undefined
}

/** A plan's price changed with notice to its subscribers: the plan at once, its subscriptions from a renewal after the notice. */
export function createPriceChangesModule({ db, clock, writes, onPlanChanged, log }: PriceChangesModuleDeps): Module<PriceChangeService> {
  const service = createPriceChangeService({ db, clock, writes, onPlanChanged, log })
  return {
    name: 'price-changes',
    service,
    routes: { admin: (app) => priceChangeAdminRoutes(app, service) },
    jobs: [schedulePriceChangeJob((id) => service.runPages(id))],
    schemas: [PriceChange],
  }
}

export { PriceChange, type PriceChangeView } from './price-change.schemas.ts'
export { SchedulePriceChange } from './price-changes.jobs.ts'
export type { PriceChangeService } from './price-changes.service.ts'
