import { setImmediate as nextTurn } from 'node:timers/promises'
import { DateTime } from 'luxon'
import type { Db, Executor, StoreRow } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { storeNow } from '../stores/index.ts'
import { AppError } from '../../lib/errors.ts'
import { addDays } from '../../lib/calendar.ts'
import { chargeMetrics, latestTaxBases, loadRenewalInputs } from '../billing/index.ts'
import { subscriptionMetrics, subscriptionsRenewingBefore, type MetricWindow } from '../subscriptions/index.ts'
import type { CurrencyFiguresView, ExpectedRevenueView } from './analytics.schemas.ts'
import { expectedRenewals, totalsByCurrency } from './expected-revenue.ts'
export { DEFAULT_WINDOW_DAYS, MAX_WINDOW_DAYS }

import { DEFAULT_WINDOW_DAYS, MAX_WINDOW_DAYS } from './analytics.schemas.ts'
const DAY_MS = 86_400_000
/** Subscriptions read at once by the expected-revenue forecast. */
const FORECAST_PAGE = 500

/** The window a request names, with the defaults filled in from the store's time; 400 when it is not one. */
export function resolveWindow(query: { from?: string; to?: string }, storeNow: Date): MetricWindow {
  const to = query.to ? new Date(query.to) : storeNow
  const from = query.from ? new Date(query.from) : new Date(to.getTime() - DEFAULT_WINDOW_DAYS * DAY_MS)
  if (from.getTime() >= to.getTime()) {
    throw new AppError('validation_failed', '/from must be before /to', { errors: [{ path: '/from', message: 'must be before to' }] })
  }
  if (to.getTime() - from.getTime() > MAX_WINDOW_DAYS * DAY_MS) {
    throw new AppError('validation_failed', `the window is at most ${MAX_WINDOW_DAYS} days`, { errors: [{ path: '/from', message: `must be at most ${MAX_WINDOW_DAYS} days before to` }] })
  }
  return { from, to }
}

/** Exact sum of `sum / (12 x interval_count)` over the parts, rounded half up to an integer. */
export function monthlyFromYearly(parts: readonly { intervalCount: number; sum: string }[]): number {
  if (parts.length === 0) return 0
  const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? a : gcd(b, a % b))
  let denominator = 1n
  for (const part of parts) {
    const d = 12n * BigInt(part.intervalCount)
    denominator = (denominator * d) / gcd(denominator, d)
  }
  let numerator = 0n
  for (const part of parts) numerator += BigInt(part.sum) * (denominator / (12n * BigInt(part.intervalCount)))
  return Number((2n * numerator + denominator) / (2n * denominator))
}

function rate(part: number, whole: number): number | null {
  return whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000
}

/**
 * The figures of each window, per currency (docs/contract.md, Analytics). Each module aggregates its
 * own tables in one statement for all windows; only the per-window, per-currency rows come back. A
 * daily series passes one window per day.
 */
export async function analyticsFigures(db: Executor, storeId: string, windows: readonly MetricWindow[]): Promise<CurrencyFiguresView[][]> {
  const [subscriptions, charges] = await Promise.all([subscriptionMetrics(db, storeId, windows), chargeMetrics(db, storeId, windows)])
  const byWindow = windows.map(() => new Map<string, CurrencyFiguresView>())
  const entry = (window: number, currency: string): CurrencyFiguresView => {
    const map = byWindow[window - 1]!
    let found = map.get(currency)
    if (!found) {
      found = {
        currency,
        mrr: 0,
        active_subscriptions: 0,
        new_subscriptions: 0,
        churned_subscriptions: 0,
        churn_rate: null,
        dunning: { failed_charges: 0, recovered: 0, recovery_rate: null },
        revenue: 0,
      }
      map.set(currency, found)
    }
    return found
  }
  const activeAtStart = new Map<string, number>()
  for (const s of subscriptions) {
    const figures = entry(s.window, s.currency)
    figures.mrr = monthlyFromYearly(s.mrrYearly)
    figures.active_subscriptions = s.activeAtEnd
    figures.new_subscriptions = s.created
    figures.churned_subscriptions = s.churned
    figures.churn_rate = rate(s.churned, s.activeAtStart)
    activeAtStart.set(`${s.window}:${s.currency}`, s.activeAtStart)
  }
  for (const c of charges) {
    const figures = entry(c.window, c.currency)
    figures.revenue = Number(c.charged - c.refunded)
    figures.dunning = { failed_charges: c.failedRenewals, recovered: c.recovered, recovery_rate: rate(c.recovered, c.failedRenewals) }
  }
  return byWindow.map((map) => [...map.values()].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0)))
}

/**
 * The days of a series in the store's zone, oldest first: each `[start of day, start of next day)`,
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

export type AnalyticsService = ReturnType<typeof createAnalyticsService>

/** The merchant's figures (docs/contract.md, Analytics), on the store's clock. */
export function createAnalyticsService({ db, clock }: { db: Db; clock: Clock }) {
  return {
    /** The figures of one window (defaults filled in from the store's time). */
    async summary(store: StoreRow, query: { from?: string; to?: string }) {
      const window = resolveWindow(query, storeNow(store, clock))
      const [currencies] = await analyticsFigures(db, store.id, [window])
      return { object: 'analytics_summary' as const, from: window.from.toISOString(), to: window.to.toISOString(), currencies: currencies! }
    },

    /** The figures of each of the last `days` calendar days in the store's zone, today last. */
    async timeseries(store: StoreRow, days: number) {
      const series = dailyWindows(storeNow(store, clock), store.timezone, days)
      const figures = await analyticsFigures(db, store.id, series.map((day) => day.window))
      return {
        object: 'analytics_timeseries' as const,
        timezone: store.timezone,
        points: series.map((day, index) => ({ date: day.date, from: day.window.from.toISOString(), to: day.window.to.toISOString(), currencies: figures[index]! })),
      }
    },

    /**
     * What the renewals due in the next `days` will charge, per currency (expected-revenue.ts): from
     * now on the store's clock to the same time `days` calendar days later in its zone. The store's
     * subscriptions that may renew by then are read a page at a time, with what prices their renewals.
     */
    async expectedRevenue(store: StoreRow, days: number): Promise<ExpectedRevenueView> {
      const from = storeNow(store, clock)
      const to = addDays(from, days, store.timezone)
      // Summed as it goes (one subscription may renew hundreds of times in the window), and each
      // subscription's forecast lets other requests run before the next: a big store's forecast
      // takes long but never holds the process.
      const totals = new Map<string, { currency: string; amount: number; renewals: number }>()
      let afterId: string | undefined
      for (;;) {
        const page = await subscriptionsRenewingBefore(db, store.id, to, { afterId, limit: FORECAST_PAGE })
        if (page.length === 0) break
        const inputs = await loadRenewalInputs(db, page)
        const taxes = store.gateway === 'platform' ? await latestTaxBases(db, page.map((row) => row.id)) : new Map<string, { base: number; tax: number }>()
        for (const row of page) {
          const renewals = expectedRenewals(row, inputs.stores.get(row.store_id) ?? store, inputs.addOns.get(row.id) ?? [], { from, to }, taxes.get(row.id))
          for (const sum of totalsByCurrency(renewals)) {
            const entry = totals.get(sum.currency) ?? { currency: sum.currency, amount: 0, renewals: 0 }
            totals.set(sum.currency, { currency: sum.currency, amount: entry.amount + sum.amount, renewals: entry.renewals + sum.renewals })
          }
          await nextTurn()
        }
        if (page.length < FORECAST_PAGE) break
        afterId = page.at(-1)!.id
      }
      return { object: 'expected_revenue', from: from.toISOString(), to: to.toISOString(), days, currencies: [...totals.values()].sort((a, b) => (a.currency < b.currency ? -1 : a.currency > b.currency ? 1 : 0)) }
    },
  }
}
