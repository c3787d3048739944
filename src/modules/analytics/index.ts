import type { Db } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import type { Module } from '../module.ts'
import { analyticsRoutes } from './analytics.routes.ts'
import { createAnalyticsService, type AnalyticsService } from './analytics.service.ts'

/** The merchant's figures: MRR, active, new and churned subscriptions, dunning recovery and revenue, per currency. */
export function createAnalyticsModule({ db, clock }: { db: Db; clock: Clock }): Module<AnalyticsService> {
  const service = createAnalyticsService({ db, clock })
  return { name: 'analytics', service, routes: { admin: (app) => analyticsRoutes(app, service) } }
}

export { AnalyticsSummary, CurrencyFigures, type AnalyticsSummaryView, type CurrencyFiguresView } from './analytics.schemas.ts'
export { DEFAULT_WINDOW_DAYS, MAX_WINDOW_DAYS, monthlyFromYearly, resolveWindow, dailyWindows } from './analytics.service.ts'
