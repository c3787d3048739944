import { sql, type RawBuilder } from 'kysely'
import type { Executor } from '../../db/database.ts'

/**
 * The subscription figures of the analytics (docs/contract.md, Analytics), aggregated by the database
 * over this module's tables: `subscriptions` and `subscription_history`, the successive states each
 * subscription held, written by a trigger on every change of status, price, quantity, interval or
 * currency (migration 0013). Nothing here loads subscription rows into Node: each answer is a few rows
 * per window and currency.
 *
 * Windows are half-open, `[from, to)`, on the store's clock; a query takes any number of them, so the
 * summary (one window) and a daily series (one window per day) share the same SQL.
 */
export interface MetricWindow {
  from: Date
  to: Date
}

/**
 * How many of a period's price make twelve months: MRR of one subscription is
 * `amount x quantity x TWELFTHS[interval] / (12 x interval_count x cycles)` (a day is 365/12 of a
 * month, a week 52/12, a year 1/12; `cycles` the periods one charge pays for, a prepaid block's, else
 * 1). Kept as integers so the sum is exact; the caller divides once.
 */
export const PERIODS_PER_YEAR = { day: 365, week: 52, month: 12, year: 1 } as const

export interface SubscriptionWindowFigures {
  window: number
  currency: string
  /**
   * MRR at the window's end as exact fractions: for each interval_count x cycles, the sum of
   * `amount x quantity x PERIODS_PER_YEAR[interval]` (decimal string); MRR = sum of value / (12 x interval_count x cycles).
   */
  mrrYearly: { intervalCount: number; sum: string }[]
  activeAtEnd: number
  activeAtStart: number
  created: number
  churned: number
}

/** The windows as a table `w(start_at, end_at, i)`, i counting from 1 in the order given. */
export function metricWindows(windows: readonly MetricWindow[]): RawBuilder<unknown> {
  const starts = windows.map((w) => w.from.toISOString())
  const ends = windows.map((w) => w.to.toISOString())
  return sql`unnest(${starts}::timestamptz[], ${ends}::timestamptz[]) WITH ORDINALITY AS w(start_at, end_at, i)`
}

// After a recurring discount, as the renewal computes it (billing/renewal-plan.ts discountOn): a
// percentage of price x quantity rounded half up, a fixed amount capped at it.
const discountedAmount = sql`(h.amount * h.quantity - CASE h.discount_type
    WHEN 'percentage' THEN (h.amount * h.quantity * h.discount_value + 50) / 100
    WHEN 'fixed_amount' THEN least(h.discount_value, h.amount * h.quantity)
    ELSE 0 END)`
const yearlyAmount = sql`${discountedAmount} * (CASE h.interval WHEN 'day' THEN 365 WHEN 'week' THEN 52 WHEN 'month' THEN 12 ELSE 1 END)`

interface Row {
  kind: 'state' | 'created' | 'churned'
  i: string | number
  currency: string
  interval_count: number | null
  yearly: string | null
  at_end: string | number
  at_start: string | number
}

/**
 * Per window and currency: MRR and the active count just before the window's end (a state that
 * began before `to` and had not ended before it), the active count just before its start (the churn
 * rate's base), subscriptions created in the window, and subscriptions that entered `cancelled` or
 * `expired` in it.
 */
export async function subscriptionMetrics(db: Executor, storeId: string, windows: readonly MetricWindow[]): Promise<SubscriptionWindowFigures[]> {
  // The states a window sees, without reading the store's whole history (migration 0036): the open
  // spans, aggregated once whatever the windows, less those that began at or after a window's start
  // (not active at its start) or end (not seen at all); plus the spans that closed at or after the
  // window's start. Each part is an index-only range; only the aggregate of the open spans grows with
  // the store, by its current subscriptions. Every part reads `h`, the alias yearlyAmount names;
  // OFFSET 0 keeps a LATERAL part a range bounded by its window's times instead of being flattened.
  // A (window, currency, interval) group exists only where a span overlaps the window (`seen`), and
  // its MRR only where one is active at the end, as when every span was read. Created and churned are
  // LATERAL ranges too: at 10 million rows a plain join was planned as a scan of the whole history.
  const { rows } = await sql<Row>`
    WITH open_spans AS MATERIALIZED (
      SELECT h.currency, h.interval_count * h.cycles AS interval_count, sum(${yearlyAmount}) AS yearly, count(*) AS n
      FROM subscription_history h
      WHERE h.store_id = ${storeId} AND h.valid_to IS NULL AND h.status IN ('active', 'past_due')
      GROUP BY 1, 2
    )
    SELECT 'state' AS kind, p.i, p.currency, p.interval_count,
      CASE WHEN sum(p.at_end) > 0 THEN sum(p.yearly) END::text AS yearly, sum(p.at_end) AS at_end, sum(p.at_start) AS at_start
    FROM (
      SELECT w.i, a.currency, a.interval_count, a.yearly, a.n AS at_end, a.n AS at_start, a.n AS seen
      FROM ${metricWindows(windows)} CROSS JOIN open_spans a
      UNION ALL
      SELECT w.i, h.currency, h.interval_count * h.cycles,
        -sum(${yearlyAmount}) FILTER (WHERE h.valid_from >= w.end_at), -count(*) FILTER (WHERE h.valid_from >= w.end_at),
        -count(*), -count(*) FILTER (WHERE h.valid_from >= w.end_at)
      FROM ${metricWindows(windows)}
      CROSS JOIN LATERAL (
        SELECT * FROM subscription_history r
        WHERE r.store_id = ${storeId} AND r.valid_to IS NULL AND r.valid_from >= w.start_at AND r.status IN ('active', 'past_due') OFFSET 0
      ) h
      GROUP BY 1, 2, 3
      UNION ALL
      SELECT w.i, h.currency, h.interval_count * h.cycles,
        sum(${yearlyAmount}) FILTER (WHERE h.valid_to >= w.end_at), count(*) FILTER (WHERE h.valid_to >= w.end_at),
        count(*) FILTER (WHERE h.valid_from < w.start_at), count(*)
      FROM ${metricWindows(windows)}
      CROSS JOIN LATERAL (
        SELECT * FROM subscription_history c
        WHERE c.store_id = ${storeId} AND c.valid_to >= w.start_at AND c.valid_from < w.end_at AND c.status IN ('active', 'past_due') OFFSET 0
      ) h
      GROUP BY 1, 2, 3
    ) p
    GROUP BY p.i, p.currency, p.interval_count
    HAVING sum(p.seen) > 0
    UNION ALL
    SELECT 'created', w.i, s.currency, NULL, NULL, count(*), 0
    FROM ${metricWindows(windows)}
    CROSS JOIN LATERAL (
      SELECT * FROM subscriptions s WHERE s.store_id = ${storeId} AND s.created_at >= w.start_at AND s.created_at < w.end_at OFFSET 0
    ) s
    GROUP BY w.i, s.currency
    UNION ALL
    SELECT 'churned', w.i, h.currency, NULL, NULL, count(DISTINCT h.subscription_id), 0
    FROM ${metricWindows(windows)}
    CROSS JOIN LATERAL (
      SELECT * FROM subscription_history h
      WHERE h.store_id = ${storeId} AND h.valid_from >= w.start_at AND h.valid_from < w.end_at AND h.status IN ('cancelled', 'expired') OFFSET 0
    ) h
    GROUP BY w.i, h.currency`.execute(db)

  const figures = new Map<string, SubscriptionWindowFigures>()
  const entry = (window: number, currency: string) => {
    const key = `${window}:${currency}`
    let found = figures.get(key)
    if (!found) {
      found = { window, currency, mrrYearly: [], activeAtEnd: 0, activeAtStart: 0, created: 0, churned: 0 }
      figures.set(key, found)
    }
    return found
  }
  for (const row of rows) {
    const figure = entry(Number(row.i), row.currency)
    if (row.kind === 'state') {
      if (row.yearly !== null) figure.mrrYearly.push({ intervalCount: Number(row.interval_count), sum: row.yearly })
      figure.activeAtEnd += Number(row.at_end)
      figure.activeAtStart += Number(row.at_start)
    } else if (row.kind === 'created') {
      figure.created += Number(row.at_end)
    } else {
      figure.churned += Number(row.at_end)
    }
  }
  return [...figures.values()]
}
