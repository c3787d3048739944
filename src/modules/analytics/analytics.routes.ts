import { adminStore } from '../../http/admin-auth.ts'
import { problemResponses } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { AnalyticsSummary, AnalyticsSummaryQuery, AnalyticsTimeseries, AnalyticsTimeseriesQuery, DEFAULT_FORECAST_DAYS, DEFAULT_SERIES_DAYS, ExpectedRevenue, ExpectedRevenueQuery } from './analytics.schemas.ts'
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

  app.get('/analytics/expected-revenue', {
    schema: {
      operationId: 'getExpectedRevenue',
      summary: 'What the renewals due in the next `days` (default 30) will charge, per currency',
      description:
        "The window is `[from, to)`: from the store's current time (a test-mode store's test clock) to the same time `days` calendar days later in the store's time zone; `days` is 1-366 (400 otherwise). " +
        'Every renewal due in the window counts, each priced as the renewal engine prices it and as `GET .../subscriptions/{id}/upcoming` shows the next one: price x quantity, the discount as it will stand at that renewal ' +
        '(a `once` or `repeating` discount used up by the renewals before it), the pending one-time add-ons on the first renewal only, shipping by the store\'s policy and tax (a platform store\'s estimated from the latest paid renewal). ' +
        'Each renewal is taken to succeed when due: a weekly subscription counts four or five times in 30 days, a prepaid block only at its renewal, a skipped renewal drops only itself, a trial counts at its end and a paused subscription from its resume date. ' +
        'Nothing counts for a subscription cancelled, expired, set to cancel at its period end (after that end), paused without a resume date, past due (it waits for a new payment instrument), held for an admin (a billing issue), or in a store whose billing is stopped; ' +
        'a subscription in dunning counts its open renewal at its next retry; a renewal already due and not yet made counts at `from`; one whose charge is in progress is a charge already and does not.',
      tags: ['Analytics'],
      querystring: ExpectedRevenueQuery,
      response: { 200: ExpectedRevenue, ...problemResponses(400) },
    },
  }, async (request) => analytics.expectedRevenue(adminStore(request), request.query.days ?? DEFAULT_FORECAST_DAYS))
}
