import { adminStore } from '../../http/admin-auth.ts'
import { problemResponses } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { AnalyticsSummary, AnalyticsSummaryQuery, AnalyticsTimeseries, AnalyticsTimeseriesQuery, DEFAULT_SERIES_DAYS } from './analytics.schemas.ts'
import { DEFAULT_WINDOW_DAYS, MAX_WINDOW_DAYS, type AnalyticsService } from './analytics.service.ts'

/** The merchant's figures (docs/contract.md, Analytics): a summary over a window, and the same figures per day for the console's charts. */
export async function analyticsRoutes(app: App, analytics: AnalyticsService): Promise<void> {
  app.get('/analytics/summary', {
    schema: {
      operationId: 'getAnalyticsSummary',
      summary: 'MRR, active, new and churned subscriptions, dunning recovery and revenue, per currency, over a window',
      description:
        `The window is \`[from, to)\` on the store's clock (a test-mode store's test clock). Defaults: \`to\` now, \`from\` ${DEFAULT_WINDOW_DAYS} days before \`to\`. ` +
        `\`from\` must be before \`to\` and at most ${MAX_WINDOW_DAYS} days before it (400 otherwise). MRR and active subscriptions are as they stood at \`to\`; ` +
        'new, churned, dunning and revenue count what happened in the window. Paused subscriptions count in neither MRR nor active.',
      tags: ['Analytics'],
      querystring: AnalyticsSummaryQuery,
      response: { 200: AnalyticsSummary, ...problemResponses(400) },
    },
  }, async (request) => analytics.summary(adminStore(request), request.query))

  app.get('/analytics/timeseries', {
    schema: {
      operationId: 'getAnalyticsTimeseries',
      summary: "The summary's figures for each day of the last `days` (default 90) in the store's time zone",
      description:
        "One point per calendar day in the store's time zone (a test-mode store's test clock sets today), oldest first, today last and ending now. " +
        "Each point has the summary's figures for that day: MRR and active subscriptions as they stood at the day's end; new, churned, dunning and revenue for the day.",
      tags: ['Analytics'],
      querystring: AnalyticsTimeseriesQuery,
      response: { 200: AnalyticsTimeseries, ...problemResponses(400) },
    },
  }, async (request) => analytics.timeseries(adminStore(request), request.query.days ?? DEFAULT_SERIES_DAYS))
}

