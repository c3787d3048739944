import { DateTime } from 'luxon'
import { Type } from 'typebox'
import type { Db } from '../../db/database.ts'
import { adminStore } from '../../http/admin-auth.ts'
import { problemResponses, Timestamp } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import type { Clock } from '../../lib/clock.ts'
import { storeNow } from '../stores/index.ts'
import type { MetricWindow } from '../subscriptions/index.ts'
import { CurrencyFigures } from './analytics.schemas.ts'
import { analyticsFigures, MAX_WINDOW_DAYS } from './analytics.service.ts'

/** How many days a series covers by default: the console's overview charts 90. */
export const DEFAULT_SERIES_DAYS = 90

export const AnalyticsTimeseriesQuery = Type.Object(
  {
    days: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_WINDOW_DAYS, default: DEFAULT_SERIES_DAYS, description: `How many days, today included (default ${DEFAULT_SERIES_DAYS})` })),
  },
  { additionalProperties: false },
)

export const AnalyticsTimeseries = Type.Object(
  {
    object: Type.Literal('analytics_timeseries'),
    timezone: Type.String({ description: "The store's time zone: each point is one calendar day there" }),
    points: Type.Array(
      Type.Object(
        {
          date: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: "The day, in the store's time zone" }),
          from: Timestamp,
          to: Timestamp,
          currencies: Type.Array(CurrencyFigures, { description: 'As in the summary, for this day: MRR and active at its end; new, churned, dunning and revenue during it' }),
        },
        { additionalProperties: false },
      ),
      { description: 'Oldest first; the last point is today, up to now' },
    ),
  },
  { additionalProperties: false, title: 'AnalyticsTimeseries' },
)

/**
 * The days of the series in the store's zone, oldest first: each `[start of day, start of next day)`,
 * today's ending now. Day lengths follow daylight-saving changes (23 or 25 hours).
 */
export function dailyWindows(now: Date, timezone: string, days: number): { date: string; window: MetricWindow }[] {
  let zone = DateTime.fromJSDate(now, { zone: timezone })
  if (!zone.isValid) zone = DateTime.fromJSDate(now, { zone: 'UTC' })
  const today = zone.startOf('day')
  const out: { date: string; window: MetricWindow }[] = []
  for (let back = days - 1; back >= 0; back--) {
    const start = today.minus({ days: back })
    const end = back === 0 ? now : start.plus({ days: 1 }).toJSDate()
    out.push({ date: start.toISODate()!, window: { from: start.toJSDate(), to: end.getTime() > start.toMillis() ? end : new Date(start.toMillis() + 1) } })
  }
  return out
}

/**
 * GET /api/v1/admin/analytics/timeseries: the summary's figures per day (docs/contract.md,
 * Analytics), for the merchant console's charts. One call of the summary's aggregate for all days.
 */
export async function analyticsTimeseriesRoutes(app: App, { db, clock }: { db: Db; clock: Clock }): Promise<void> {
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
  }, async (request) => {
    const store = adminStore(request)
    const days = dailyWindows(storeNow(store, clock), store.timezone, request.query.days ?? DEFAULT_SERIES_DAYS)
    const figures = await analyticsFigures(db, store.id, days.map((day) => day.window))
    return {
      object: 'analytics_timeseries' as const,
      timezone: store.timezone,
      points: days.map((day, index) => ({ date: day.date, from: day.window.from.toISOString(), to: day.window.to.toISOString(), currencies: figures[index]! })),
    }
  })
}
