import { sql, type RawBuilder } from 'kysely'
import type { Executor } from '../../db/database.ts'

/**
 * The platform_budgets table: each store's share of its platform API quota (CONTRACT section 19).
 * A row is a forecast, never a gate anything waits on: a row that is missing, from a window long
 * past, or absurd (a reset hours ahead, a quota of zero) counts as a fresh window, so a lost or
 * corrupted row never stops billing, and the platform's next answer writes it again.
 */

/** §0 "Rate limits": until a store's own headers say otherwise, a Standard plan's 150 requests per 30 s. */
export const DEFAULT_QUOTA = 150
export const DEFAULT_WINDOW_MS = 30_000
/** No platform window is longer than this: a reset further ahead is a corrupted row, not a wait. */
const LONGEST_WINDOW = sql`interval '10 minutes'`

export interface RateHeaders {
  quota: number
  windowMs: number
  left: number
  resetMs: number
}

/** Whether the row `b` no longer describes a window in progress (over, or not believable). */
function freshWindow(now: Date, b = 'b'): RawBuilder<boolean> {
  const row = sql.ref(b)
  return sql<boolean>`(${row}.resets_at <= ${now} OR ${row}.resets_at > ${now}::timestamptz + ${LONGEST_WINDOW}
                       OR ${row}.quota <= 0 OR ${row}.window_ms <= 0 OR ${row}.window_ms > 600000)`
}

/**
 * How many renewals the store whose id is `storeIdColumn` may start now: what is left of its window
 * over the calls a renewal costs, at most `cap`. A store that has never answered is allowed the
 * default quota's worth; a store on another gateway (`gatewayColumn` is not `platform`) just `cap`.
 */
export function renewalAllowance(storeIdColumn: string, gatewayColumn: string, now: Date, callsPerRenewal: number, cap: number): RawBuilder<number> {
  const k = Math.max(1, Math.ceil(callsPerRenewal))
  return sql<number>`CASE WHEN ${sql.ref(gatewayColumn)} <> 'platform' THEN ${cap}::int ELSE COALESCE(
    (SELECT LEAST(${cap}::int, GREATEST(0, CASE WHEN ${freshWindow(now)} THEN (CASE WHEN b.quota > 0 THEN b.quota ELSE ${DEFAULT_QUOTA}::int END) ELSE LEAST(b.requests_left, b.quota) END) / ${k}::int)
       FROM platform_budgets b WHERE b.store_id = ${sql.ref(storeIdColumn)}),
    LEAST(${cap}::int, ${DEFAULT_QUOTA}::int / ${k}::int)) END`
}

/**
 * Spends, in the claim's transaction, what renewals just locked will cost their stores' windows, and
 * answers how many of each store's renewals the window allows (`wanted` counts them; each costs
 * `callsPerRenewal`). Stores on another gateway are granted all. The budget rows are locked in store
 * order, so a second claimer reads what the first spent, never the figure before it.
 */
export async function grantPlatformCalls(trx: Executor, wanted: ReadonlyMap<string, number>, callsPerRenewal: number, now: Date): Promise<Map<string, number>> {
  const granted = new Map(wanted)
  const ids = [...wanted.keys()].sort()
  if (ids.length === 0) return granted
  const k = Math.max(1, Math.ceil(callsPerRenewal))
  await sql`
    INSERT INTO platform_budgets (store_id, quota, window_ms, requests_left, resets_at, updated_at)
    SELECT id, ${DEFAULT_QUOTA}, ${DEFAULT_WINDOW_MS}, ${DEFAULT_QUOTA}, ${new Date(now.getTime() + DEFAULT_WINDOW_MS)}, ${now}
      FROM stores WHERE id = ANY(${ids}::text[]) AND gateway = 'platform'
    ON CONFLICT (store_id) DO NOTHING`.execute(trx)
  const rows = await sql<{ store_id: string; quota: number; window_ms: number; requests_left: number; resets_at: Date }>`
    SELECT b.store_id, b.quota, b.window_ms, b.requests_left, b.resets_at FROM platform_budgets b JOIN stores st ON st.id = b.store_id
     WHERE b.store_id = ANY(${ids}::text[]) AND st.gateway = 'platform' ORDER BY b.store_id FOR UPDATE OF b`.execute(trx)
  const spent: RawBuilder<unknown>[] = []
  for (const row of rows.rows) {
    const quota = row.quota > 0 && row.quota <= 1_000_000 ? row.quota : DEFAULT_QUOTA
    const windowMs = row.window_ms > 0 && row.window_ms <= 600_000 ? row.window_ms : DEFAULT_WINDOW_MS
    const resetsAt = new Date(row.resets_at)
    // A window over, or a row past believing (a reset beyond any window), starts afresh.
    const fresh = resetsAt <= now || resetsAt.getTime() > now.getTime() + 600_000 || row.quota !== quota || row.window_ms !== windowMs
    const left = fresh ? quota : Math.min(row.requests_left, quota)
    const allowed = Math.min(wanted.get(row.store_id)!, Math.max(0, Math.floor(left / k)))
    granted.set(row.store_id, allowed)
    if (allowed === 0 && !fresh) continue
    spent.push(sql`(${row.store_id}, ${quota}::int, ${windowMs}::int, ${left - allowed * k}::int, ${fresh ? new Date(now.getTime() + windowMs) : resetsAt}::timestamptz)`)
  }
  if (spent.length > 0) {
    await sql`
      UPDATE platform_budgets AS b SET quota = v.quota, window_ms = v.window_ms, requests_left = v.requests_left, resets_at = v.resets_at, updated_at = ${now}
        FROM (VALUES ${sql.join(spent)}) AS v(store_id, quota, window_ms, requests_left, resets_at)
       WHERE b.store_id = v.store_id`.execute(trx)
  }
  return granted
}

/**
 * What the platform said in an answer's rate-limit headers. Within the window the row already
 * describes, the lower figure wins (claims may have reserved calls not made yet), moved by any change
 * of quota; a later window, or a row past believing, takes the platform's figure as it is.
 */
export async function recordRateHeaders(db: Executor, storeHash: string, headers: RateHeaders, now: Date): Promise<void> {
  const resets = new Date(now.getTime() + headers.resetMs)
  await sql`
    INSERT INTO platform_budgets AS b (store_id, quota, window_ms, requests_left, resets_at, updated_at)
    SELECT id, ${headers.quota}, ${headers.windowMs}, ${headers.left}, ${resets}, ${now} FROM stores WHERE store_hash = ${storeHash}
    ON CONFLICT (store_id) DO UPDATE SET
      quota = EXCLUDED.quota,
      window_ms = EXCLUDED.window_ms,
      requests_left = CASE WHEN ${freshWindow(now)} OR EXCLUDED.resets_at > b.resets_at + interval '2 seconds' THEN EXCLUDED.requests_left
                           ELSE LEAST(b.requests_left + (EXCLUDED.quota - b.quota), EXCLUDED.requests_left) END,
      resets_at = EXCLUDED.resets_at,
      updated_at = ${now}`.execute(db)
}

/** A 429 without headers (the platform under load, §0): nothing more for this store for `pauseMs`. */
export async function recordBareRateLimit(db: Executor, storeHash: string, pauseMs: number, now: Date): Promise<void> {
  const resets = new Date(now.getTime() + pauseMs)
  await sql`
    INSERT INTO platform_budgets AS b (store_id, quota, window_ms, requests_left, resets_at, updated_at)
    SELECT id, ${DEFAULT_QUOTA}, ${DEFAULT_WINDOW_MS}, 0, ${resets}, ${now} FROM stores WHERE store_hash = ${storeHash}
    ON CONFLICT (store_id) DO UPDATE SET requests_left = 0, resets_at = EXCLUDED.resets_at, updated_at = ${now}`.execute(db)
}

/** Windows that refill soonest, for a claimer waiting on a store's budget to know when to look again. */
export async function nextBudgetReset(db: Executor, now: Date): Promise<Date | undefined> {
  const row = await sql<{ at: Date | null }>`
    SELECT min(resets_at) AS at FROM platform_budgets
     WHERE resets_at > ${now} AND resets_at <= ${now}::timestamptz + ${LONGEST_WINDOW} AND requests_left < quota`.execute(db)
  const at = row.rows[0]?.at
  return at ? new Date(at) : undefined
}
