// Analytics summary latency: GET /api/v1/admin/analytics/summary's computation (the SQL aggregates of
// the subscriptions and billing modules, as the route runs them) over one store with many
// subscriptions and charges, against a plain count(*) of the same store's subscriptions in the same run.
// Usage: npm run bench:analytics [-- --subscriptions N --charges N --runs N --pool N]
//        DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:analytics
import { performance } from 'node:perf_hooks'
import { sql } from 'kysely'
import type { Engine } from '../src/db/connect.ts'
import type { Db, StoreRow } from '../src/db/database.ts'
import { systemClock } from '../src/lib/clock.ts'
import { createAnalyticsModule, resolveWindow } from '../src/modules/analytics/index.ts'
import { createStore } from '../src/modules/stores/index.ts'
import { runDatabaseBench, type DatabaseBench } from './lib/database-bench.ts'
import { runBench } from './lib/harness.ts'
import { machineSummary, markdownTable } from './lib/report.ts'
import { readBenchOptions } from './lib/settings.ts'
import { testModules } from '../test/helpers/modules.ts'

const TARGET_P95_MS = 200
const DEFAULTS = {
  pglite: { subscriptions: 10_000, charges: 100_000 },
  postgres: { subscriptions: 100_000, charges: 1_000_000 },
  runs: 50,
  warmup: 5,
  pool: 10,
}

const USAGE = `npm run bench:analytics [-- options]
  --subscriptions N  subscriptions of the store (default ${DEFAULTS.postgres.subscriptions} on PostgreSQL, ${DEFAULTS.pglite.subscriptions} on PGlite)
  --charges N        charge attempts of those subscriptions (default ${DEFAULTS.postgres.charges} on PostgreSQL, ${DEFAULTS.pglite.charges} on PGlite)
  --runs N           measured runs of each query, alternating, after ${DEFAULTS.warmup} unmeasured ones (default ${DEFAULTS.runs})
  --pool N           PostgreSQL pool size (default ${DEFAULTS.pool}; PGlite has one connection)
Set DATABASE_URL to a PostgreSQL server to bench on a scratch database there (created and dropped); PGlite otherwise.
`

interface Settings {
  subscriptions: number
  charges: number
  runs: number
  pool: number
}

function readSettings(engine: Engine): Settings | undefined {
  const options = readBenchOptions(['subscriptions', 'charges', 'runs', 'pool'], USAGE)
  if (!options) return undefined
  return {
    subscriptions: options.whole('subscriptions', DEFAULTS[engine].subscriptions),
    charges: options.whole('charges', DEFAULTS[engine].charges),
    runs: options.whole('runs', DEFAULTS.runs),
    pool: options.whole('pool', DEFAULTS.pool),
  }
}

/**
 * One store, `subscriptions` subscriptions created over the two years before `now` in two currencies
 * and every interval (day, week, month, year; interval_count 1-3; quantity 1-3); 10% cancelled and 5%
 * paused some time after creation (through UPDATEs, so the history trigger records them as the service's
 * writes would); `charges` charge attempts over the last year, 1 in 20 a failed first attempt, half of
 * those paid by a second attempt; one refund per 100 succeeded charges. Bulk SQL with generate_series.
 */
async function seed(db: Db, settings: Settings, now: Date): Promise<{ store: StoreRow; counts: Record<string, number> }> {
  const store = await createStore(db, { storeHash: `bench-analytics-${Date.now().toString(36)}`, mode: 'test' })
  const catalog = testModules(db, { clock: systemClock }).catalog
  const product = await catalog.createProduct(store, { platform_product_id: 'p-analytics', name: 'Coffee beans' })
  const plan = await catalog.createPlan(store, { product_id: product.id, name: 'Monthly', amount: 1500, currency: 'USD', interval: 'month' })
  const n = settings.subscriptions
  const nowIso = now.toISOString()
  await sql`INSERT INTO subscribers (id, store_id, email, created_at, updated_at) VALUES ('cus_bench_analytics', ${store.id}, 'bench@example.com', ${nowIso}, ${nowIso})`.execute(db)
  await sql`
    INSERT INTO subscriptions (id, store_id, subscriber_id, plan_id, product_id, platform_order_id, status, quantity, amount, currency,
      interval, interval_count, payment_instrument_id, start_at, created_at, updated_at)
    SELECT 'sub_bench_' || g, ${store.id}, 'cus_bench_analytics', ${plan.id}, ${product.id}, 'order-' || g, 'active', 1 + g % 3, 500 + (g % 50) * 100,
      CASE WHEN g % 10 = 0 THEN 'EUR' ELSE 'USD' END,
      (ARRAY['day', 'week', 'month', 'year'])[1 + g % 4], 1 + g % 3, 'pi_visa_ok',
      ${nowIso}::timestamptz - (g % 730) * interval '1 day', ${nowIso}::timestamptz - (g % 730) * interval '1 day', ${nowIso}::timestamptz - (g % 730) * interval '1 day'
    FROM generate_series(1, ${n}) AS g`.execute(db)
  // Cancelled (1 in 10) and paused (1 in 20) some days after creation, never in the future.
  await sql`
    UPDATE subscriptions SET status = 'cancelled', cancelled_at = least(created_at + (substr(id, 11)::int % 300) * interval '1 day', ${nowIso}::timestamptz),
      updated_at = least(created_at + (substr(id, 11)::int % 300) * interval '1 day', ${nowIso}::timestamptz)
    WHERE store_id = ${store.id} AND substr(id, 11)::int % 10 = 3`.execute(db)
  await sql`
    UPDATE subscriptions SET status = 'paused', paused_at = least(created_at + interval '20 days', ${nowIso}::timestamptz), updated_at = least(created_at + interval '20 days', ${nowIso}::timestamptz)
    WHERE store_id = ${store.id} AND substr(id, 11)::int % 20 = 7`.execute(db)
  // Charge g belongs to subscription g mod n, for its period floor(g / n); settled over the last year.
  await sql`
    INSERT INTO charges (id, store_id, subscription_id, amount, currency, status, attempt, payment_instrument_id, idempotency_key,
      period_start, period_end, created_at, settled_at)
    SELECT 'ch_bench_' || g, ${store.id}, 'sub_bench_' || (1 + g % ${n}), 500 + ((1 + g % ${n}) % 50) * 100,
      CASE WHEN (1 + g % ${n}) % 10 = 0 THEN 'EUR' ELSE 'USD' END,
      CASE WHEN g % 20 = 5 THEN 'failed' ELSE 'succeeded' END, 1, 'pi_visa_ok', 'bench:' || g,
      ${nowIso}::timestamptz - interval '400 days' + (g / ${n}) * interval '30 days', ${nowIso}::timestamptz - interval '370 days' + (g / ${n}) * interval '30 days',
      ${nowIso}::timestamptz - (g % 365) * interval '1 day' - (g % 86400) * interval '1 second',
      ${nowIso}::timestamptz - (g % 365) * interval '1 day' - (g % 86400) * interval '1 second'
    FROM generate_series(0, ${settings.charges - 1}) AS g`.execute(db)
  // Half the failed first attempts are paid by a second attempt two days later.
  await sql`
    INSERT INTO charges (id, store_id, subscription_id, amount, currency, status, attempt, payment_instrument_id, idempotency_key,
      period_start, period_end, created_at, settled_at)
    SELECT id || '_2', store_id, subscription_id, amount, currency, 'succeeded', 2, payment_instrument_id, idempotency_key || ':2',
      period_start, period_end, least(settled_at + interval '2 days', ${nowIso}::timestamptz), least(settled_at + interval '2 days', ${nowIso}::timestamptz)
    FROM charges WHERE store_id = ${store.id} AND status = 'failed' AND substr(id, 10)::bigint % 40 = 5`.execute(db)
  await sql`
    INSERT INTO refunds (id, store_id, charge_id, amount, currency, status, idempotency_key, created_at, settled_at)
    SELECT 're_' || id, store_id, id, amount / 2, currency, 'succeeded', 'refund:' || id, settled_at + interval '1 hour', least(settled_at + interval '1 hour', ${nowIso}::timestamptz)
    FROM charges WHERE store_id = ${store.id} AND status = 'succeeded' AND attempt = 1 AND substr(id, 10)::bigint % 100 = 1`.execute(db)
  for (const table of ['subscriptions', 'subscription_history', 'charges', 'refunds']) await sql`VACUUM (ANALYZE) ${sql.table(table)}`.execute(db)
  const counts: Record<string, number> = {}
  for (const table of ['subscriptions', 'subscription_history', 'charges', 'refunds']) {
    const { rows } = await sql<{ n: string }>`SELECT count(*) AS n FROM ${sql.table(table)} WHERE store_id = ${store.id}`.execute(db)
    counts[table] = Number(rows[0]!.n)
  }
  return { store, counts }
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

async function main({ db, engine, settings, startedAt, background, description }: DatabaseBench<Settings>): Promise<void> {
  const now = new Date()
  const seedStart = performance.now()
  process.stderr.write(`seeding ${settings.subscriptions} subscriptions and ${settings.charges} charges...\n`)
  const { store, counts } = await seed(db, settings, now)
  const seedSeconds = (performance.now() - seedStart) / 1000
  const window = resolveWindow({}, now)

  const analytics = createAnalyticsModule({ db, clock: systemClock }).service
  const summary = () => analytics.summary(store, { from: window.from.toISOString(), to: window.to.toISOString() })
  const countAll = () => sql`SELECT count(*) FROM subscriptions WHERE store_id = ${store.id}`.execute(db)
  for (let i = 0; i < DEFAULTS.warmup; i++) {
    await summary()
    await countAll()
  }
  const times = { summary: [] as number[], count: [] as number[] }
  for (let i = 0; i < settings.runs; i++) {
    let start = performance.now()
    await summary()
    times.summary.push(performance.now() - start)
    start = performance.now()
    await countAll()
    times.count.push(performance.now() - start)
  }
  const { currencies: figures } = await summary()
  const stats = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b)
    return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), max: sorted[sorted.length - 1]! }
  }
  const s = stats(times.summary)
  const c = stats(times.count)
  const ratio = s.p95 / c.p95
  const rows = [
    ['analytics summary (30-day window)', s.p50.toFixed(1), s.p95.toFixed(1), s.max.toFixed(1), ratio.toFixed(1)],
    ['baseline: count(*) of the store\'s subscriptions', c.p50.toFixed(1), c.p95.toFixed(1), c.max.toFixed(1), '1.0'],
  ]
  const onPostgres = engine === 'postgres'
  const verdict = s.p95 < TARGET_P95_MS ? 'PASS' : 'MISS'
  process.stdout.write([
    `Analytics summary, ${startedAt.toISOString()}`,
    `- database: ${description}`,
    `- machine: ${machineSummary()}; CPUs ${background} busy with other work just before the run`,
    `- data: one store, ${counts.subscriptions!.toLocaleString('en-US')} subscriptions (${counts.subscription_history!.toLocaleString('en-US')} history rows), ${counts.charges!.toLocaleString('en-US')} charges, ${counts.refunds!.toLocaleString('en-US')} refunds; seeded in ${seedSeconds.toFixed(1)} s (not measured)`,
    `- runs: ${settings.runs} of each, alternating, after ${DEFAULTS.warmup} unmeasured; the summary is the analytics service's summary, as the route calls it (two statements in parallel${onPostgres ? ' over the pool' : ''}), window ${window.from.toISOString()} .. ${window.to.toISOString()}`,
    `- answer: ${JSON.stringify(figures)}`,
    '',
    markdownTable(['query', 'p50 ms', 'p95 ms', 'max ms', 'p95 ratio to count(*)'], rows, ['left', 'right', 'right', 'right', 'right']),
    '',
    markdownTable(['check', 'value', 'target', 'result'], [['summary p95', `${s.p95.toFixed(1)} ms`, `< ${TARGET_P95_MS} ms${onPostgres ? '' : ' (PostgreSQL target; informational here)'}`, verdict]], ['left', 'right', 'left', 'left']),
    '',
  ].join('\n'))
}

await runBench(() => runDatabaseBench(readSettings, main))
