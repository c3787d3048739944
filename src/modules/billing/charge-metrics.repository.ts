import { sql } from 'kysely'
import type { Executor } from '../../db/database.ts'
import { metricWindows, type MetricWindow } from '../subscriptions/index.ts'

/**
 * The money figures of the analytics (docs/contract.md, Analytics), aggregated by the database over
 * this module's tables, per window (half-open `[from, to)`, on the store's clock) and currency:
 *
 * - `charged`: succeeded charges settled in the window (minor units);
 * - `refunded`: succeeded refunds settled in the window, whichever charge they refund;
 * - `failedRenewals`: renewals (one subscription's one period) whose first failed attempt settled in
 *   the window; the period's later failed retries do not count again, and an attempt the platform
 *   found out of stock is no payment failure (nothing was asked of the card);
 * - `recovered`: of those, the ones whose period was paid by a succeeded charge settled before the
 *   window's end.
 */
export interface ChargeWindowFigures {
  window: number
  currency: string
  charged: bigint
  refunded: bigint
  failedRenewals: number
  recovered: number
}

interface Row {
  kind: 'charged' | 'refunded' | 'dunning'
  i: string | number
  currency: string
  total: string
  recovered: string | number
}

export async function chargeMetrics(db: Executor, storeId: string, windows: readonly MetricWindow[]): Promise<ChargeWindowFigures[]> {
  const { rows } = await sql<Row>`
    SELECT 'charged' AS kind, w.i, c.currency, sum(c.amount)::text AS total, 0 AS recovered
    FROM ${metricWindows(windows)}
    JOIN charges c ON c.store_id = ${storeId} AND c.status = 'succeeded' AND c.settled_at >= w.start_at AND c.settled_at < w.end_at
    GROUP BY w.i, c.currency
    UNION ALL
    SELECT 'refunded', w.i, r.currency, sum(r.amount)::text, 0
    FROM ${metricWindows(windows)}
    JOIN refunds r ON r.store_id = ${storeId} AND r.status = 'succeeded' AND r.settled_at >= w.start_at AND r.settled_at < w.end_at
    GROUP BY w.i, r.currency
    UNION ALL
    SELECT 'dunning', w.i, f.currency, count(*)::text,
      count(*) FILTER (WHERE EXISTS (
        SELECT 1 FROM charges p
        WHERE p.subscription_id = f.subscription_id AND p.period_start = f.period_start AND p.status = 'succeeded' AND p.settled_at < w.end_at))
    FROM ${metricWindows(windows)}
    JOIN charges f ON f.store_id = ${storeId} AND f.status = 'failed' AND f.failure_code IS DISTINCT FROM 'out_of_stock' AND f.failure_code IS DISTINCT FROM 'billing_disabled' AND f.settled_at >= w.start_at AND f.settled_at < w.end_at
    WHERE NOT EXISTS (
      SELECT 1 FROM charges e
      WHERE e.subscription_id = f.subscription_id AND e.period_start = f.period_start AND e.status = 'failed' AND e.failure_code IS DISTINCT FROM 'out_of_stock' AND e.failure_code IS DISTINCT FROM 'billing_disabled'
        AND (e.settled_at < f.settled_at OR (e.settled_at = f.settled_at AND e.id < f.id)))
    GROUP BY w.i, f.currency`.execute(db)

  const figures = new Map<string, ChargeWindowFigures>()
  for (const row of rows) {
    const key = `${row.i}:${row.currency}`
    let figure = figures.get(key)
    if (!figure) {
      figure = { window: Number(row.i), currency: row.currency, charged: 0n, refunded: 0n, failedRenewals: 0, recovered: 0 }
      figures.set(key, figure)
    }
    if (row.kind === 'charged') figure.charged += BigInt(row.total)
    else if (row.kind === 'refunded') figure.refunded += BigInt(row.total)
    else {
      figure.failedRenewals += Number(row.total)
      figure.recovered += Number(row.recovered)
    }
  }
  return [...figures.values()]
}
