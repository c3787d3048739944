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
/**
 * Every time in these rows is the database's: processes whose clocks disagree still agree on when a
 * store's window refills (a process a minute fast would otherwise see every window over and spend
 * quotas twice).
 */
const DB_NOW = sql`statement_timestamp()`
const ms = (value: number | RawBuilder<unknown>) => sql`make_interval(secs => ${value}::double precision / 1000.0)`

export interface RateHeaders {
  quota: number
  windowMs: number
  left: number
  resetMs: number
}

/** Whether the row `b` no longer describes a window in progress (over, or not believable). */
function freshWindow(b = 'b'): RawBuilder<boolean> {
  const row = sql.ref(b)
  return sql<boolean>`(${row}.resets_at <= ${DB_NOW} OR ${row}.resets_at > ${DB_NOW} + ${LONGEST_WINDOW}
                       OR ${row}.resets_at > ${DB_NOW} + ${ms(sql`${row}.window_ms`)} + interval '2 seconds'
                       OR ${row}.quota <= 0 OR ${row}.window_ms <= 0 OR ${row}.window_ms > 600000)`
}

/**
 * How many renewals the store whose id is `storeIdColumn` may start now: what is left of its window,
 * less the calls claimed renewals may still make, over the calls a renewal costs, at most `cap`. A
 * store that has never answered is allowed the default quota's worth; a store on another gateway
 * (`gatewayColumn` is not `platform`) just `cap`. An estimate for the claim's walk; the grant below,
 * under the row's lock, is what counts.
 */
export function renewalAllowance(storeIdColumn: string, gatewayColumn: string, callsPerRenewal: number, cap: number): RawBuilder<number> {
  const k = Math.max(1, Math.round(callsPerRenewal))
  return sql<number>`CASE WHEN ${sql.ref(gatewayColumn)} <> 'platform' THEN ${cap}::int ELSE COALESCE(
    (SELECT LEAST(${cap}::int, GREATEST(0, CASE WHEN ${freshWindow()} THEN (CASE WHEN b.quota > 0 THEN b.quota ELSE ${DEFAULT_QUOTA}::int END) - b.reserved_calls
                                                ELSE LEAST(b.requests_left, b.quota) - b.reserved_calls - b.reserved_before END) / ${k}::int)
       FROM platform_budgets b WHERE b.store_id = ${sql.ref(storeIdColumn)}),
    LEAST(${cap}::int, ${DEFAULT_QUOTA}::int / ${k}::int)) END`
}

/** A store's budget row as the grant reads it. */
interface BudgetRow {
  store_id: string
  quota: number
  window_ms: number
  requests_left: number
  reserved_calls: number
  reserved_before: number
  resets_at: Date
}

/**
 * Spends, in the claim's transaction, what renewals just locked may cost their stores' windows, and
 * answers how many of each store's renewals the window allows (`wanted` counts them; each reserves
 * `callsPerRenewal`). Stores on another gateway are granted all and are not in `budgeted`. The rows
 * are locked in store order, so a second claimer reads what the first spent, never the figure before.
 * A window past its reset starts afresh: its quota, the last window's reservations carried as
 * `reserved_before` (their calls land in this one), anything older dropped.
 */
export async function grantPlatformCalls(trx: Executor, wanted: ReadonlyMap<string, number>, callsPerRenewal: number): Promise<{ granted: Map<string, number>; budgeted: Set<string> }> {
  const granted = new Map(wanted)
  const budgeted = new Set<string>()
  const ids = [...wanted.keys()].sort()
  if (ids.length === 0) return { granted, budgeted }
  const k = Math.max(1, Math.round(callsPerRenewal))
  await sql`
    INSERT INTO platform_budgets (store_id, quota, window_ms, requests_left, resets_at, updated_at)
    SELECT id, ${DEFAULT_QUOTA}, ${DEFAULT_WINDOW_MS}, ${DEFAULT_QUOTA}, ${DB_NOW} + ${ms(DEFAULT_WINDOW_MS)}, ${DB_NOW}
      FROM stores WHERE id = ANY(${ids}::text[]) AND gateway = 'platform'
    ON CONFLICT (store_id) DO NOTHING`.execute(trx)
  const rows = await sql<BudgetRow & { db_now: Date }>`
    SELECT b.store_id, b.quota, b.window_ms, b.requests_left, b.reserved_calls, b.reserved_before, b.resets_at, ${DB_NOW} AS db_now
      FROM platform_budgets b JOIN stores st ON st.id = b.store_id
     WHERE b.store_id = ANY(${ids}::text[]) AND st.gateway = 'platform' ORDER BY b.store_id FOR UPDATE OF b`.execute(trx)
  const spent: RawBuilder<unknown>[] = []
  for (const row of rows.rows) {
    const now = new Date(row.db_now)
    budgeted.add(row.store_id)
    const quota = row.quota > 0 && row.quota <= 1_000_000 ? row.quota : DEFAULT_QUOTA
    const windowMs = row.window_ms > 0 && row.window_ms <= 600_000 ? row.window_ms : DEFAULT_WINDOW_MS
    const resetsAt = new Date(row.resets_at)
    // A window over, or a row past believing (a reset beyond any window, figures out of range), starts afresh.
    const fresh = resetsAt <= now || resetsAt.getTime() > now.getTime() + windowMs + 2_000 || row.quota !== quota || row.window_ms !== windowMs
    const sane = (n: number) => Math.min(Math.max(n, 0), quota * 4)
    const left = fresh ? quota : Math.min(row.requests_left, quota)
    const reservedBefore = fresh ? sane(row.reserved_calls) : sane(row.reserved_before)
    const reserved = fresh ? 0 : sane(row.reserved_calls)
    const allowed = Math.min(wanted.get(row.store_id)!, Math.max(0, Math.floor((left - reserved - reservedBefore) / k)))
    granted.set(row.store_id, allowed)
    if (allowed === 0 && !fresh) continue
    spent.push(sql`(${row.store_id}, ${quota}::int, ${windowMs}::int, ${left}::int, ${reserved + allowed * k}::int, ${reservedBefore}::int, ${fresh ? new Date(now.getTime() + windowMs) : resetsAt}::timestamptz)`)
  }
  if (spent.length > 0) {
    await sql`
      UPDATE platform_budgets AS b SET quota = v.quota, window_ms = v.window_ms, requests_left = v.requests_left, reserved_calls = v.reserved_calls,
             reserved_before = v.reserved_before, resets_at = v.resets_at, updated_at = ${DB_NOW}
        FROM (VALUES ${sql.join(spent)}) AS v(store_id, quota, window_ms, requests_left, reserved_calls, reserved_before, resets_at)
       WHERE b.store_id = v.store_id`.execute(trx)
  }
  return { granted, budgeted }
}

/**
 * Renewals that ended give back what they reserved (`reserved`, the older reservations first) and
 * count the calls they made (`made`) as gone from the window, until the platform's next figure.
 */
export async function returnPlatformCalls(db: Executor, storeId: string, reserved: number, made: number): Promise<void> {
  await sql`
    UPDATE platform_budgets SET
      reserved_calls = GREATEST(0, reserved_calls - GREATEST(0, ${reserved}::int - reserved_before)),
      reserved_before = GREATEST(0, reserved_before - ${reserved}::int),
      requests_left = CASE WHEN resets_at > ${DB_NOW} THEN requests_left - ${made}::int ELSE requests_left END,
      updated_at = ${DB_NOW}
     WHERE store_id = ${storeId}`.execute(db)
}

/**
 * What the platform said in an answer's rate-limit headers: its figures replace the row's (they count
 * every app's calls, ours included). A row whose window our clock saw end moves its reservations on,
 * as the grant does.
 */
export async function recordRateHeaders(db: Executor, storeHash: string, headers: RateHeaders, heardAgoMs: number): Promise<void> {
  await sql`
    INSERT INTO platform_budgets AS b (store_id, quota, window_ms, requests_left, resets_at, updated_at)
    SELECT id, ${headers.quota}, ${headers.windowMs}, ${headers.left}, ${DB_NOW} + ${ms(headers.resetMs - heardAgoMs)}, ${DB_NOW} FROM stores WHERE store_hash = ${storeHash}
    ON CONFLICT (store_id) DO UPDATE SET
      quota = EXCLUDED.quota,
      window_ms = EXCLUDED.window_ms,
      requests_left = EXCLUDED.requests_left,
      reserved_before = CASE WHEN ${freshWindow()} THEN LEAST(GREATEST(b.reserved_calls, 0), EXCLUDED.quota * 4) ELSE b.reserved_before END,
      reserved_calls = CASE WHEN ${freshWindow()} THEN 0 ELSE b.reserved_calls END,
      resets_at = EXCLUDED.resets_at,
      updated_at = ${DB_NOW}`.execute(db)
}

/** A 429 without headers (the platform under load, §0): nothing more for this store for `pauseMs`. */
export async function recordBareRateLimit(db: Executor, storeHash: string, pauseMs: number): Promise<void> {
  await sql`
    INSERT INTO platform_budgets AS b (store_id, quota, window_ms, requests_left, resets_at, updated_at)
    SELECT id, ${DEFAULT_QUOTA}, ${DEFAULT_WINDOW_MS}, 0, ${DB_NOW} + ${ms(pauseMs)}, ${DB_NOW} FROM stores WHERE store_hash = ${storeHash}
    ON CONFLICT (store_id) DO UPDATE SET requests_left = 0, resets_at = EXCLUDED.resets_at, updated_at = ${DB_NOW}`.execute(db)
}

/**
 * In how many ms the soonest window of a store that is out of budget (fewer than `below` calls left) refills, for
 * a claimer waiting on it to know when to look again. Stores with calls to spare are no reason to wake.
 */
export async function nextBudgetReset(db: Executor, below = 50): Promise<number | undefined> {
  const row = await sql<{ in_ms: number | null }>`
    SELECT (extract(epoch FROM min(resets_at) - ${DB_NOW}) * 1000)::int AS in_ms FROM platform_budgets
     WHERE resets_at > ${DB_NOW} AND resets_at <= ${DB_NOW} + ${LONGEST_WINDOW} AND requests_left - reserved_calls - reserved_before < ${below}`.execute(db)
  const inMs = row.rows[0]?.in_ms
  return inMs === null || inMs === undefined ? undefined : Number(inMs)
}
