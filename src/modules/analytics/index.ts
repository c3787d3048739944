export { AnalyticsSummary, AnalyticsSummaryQuery, CurrencyFigures, type AnalyticsSummaryView, type CurrencyFiguresView } from './analytics.schemas.ts'
export { analyticsFigures, DEFAULT_WINDOW_DAYS, MAX_WINDOW_DAYS, monthlyFromYearly, resolveWindow } from './analytics.service.ts'
export { analyticsRoutes } from './analytics.routes.ts'
