// bench:spike --scenario size (issue 28): many subscriptions across many stores, seeded by set-based SQL, then
// the largest store's admin list (first and a deep page), admin search, a subscriber's portal list and the
// analytics summary through the real app (app.inject), the renewal claim against a small same-store-count
// baseline, and EXPLAIN (ANALYZE, BUFFERS) of every hot statement. PostgreSQL only.
// Standalone: node bench/lib/spike-size.ts --total 10000000 [--largest N --stores N --samples N --baseline N --keep]
//   with DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres (a scratch bench_<random> database is made there).
// When migration 0036-scale-indexes exists, the figures are taken with it undone (its down) and again with it
// applied (its up), on the same data and with every other migration in place.
import { statfsSync } from 'node:fs'
import { performance } from 'node:perf_hooks'
import { parseArgs } from 'node:util'
import { sql, type KyselyPlugin, type PluginTransformQueryArgs, type PluginTransformResultArgs, type QueryResult, type RootOperationNode, type UnknownRow } from 'kysely'
import { Migrator } from 'kysely/migration'
import { pino } from 'pino'
import { buildApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config.ts'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.ts'
import type { Db, Executor, StoreRow } from '../../src/db/database.ts'
import { migrations } from '../../src/db/migrations/index.ts'
import { createJobRunner } from '../../src/jobs/runner.ts'
import { randomToken, sha256Hex } from '../../src/lib/secrets.ts'
import { createServices } from '../../src/services.ts'
import { jobHandlersOf } from '../../src/worker.ts'
import { createAdminKey } from '../../src/modules/stores/index.ts'
import { lockDueForRenewal } from '../../src/modules/subscriptions/index.ts'
import { createWebhookDispatcher } from '../../src/modules/webhooks/dispatcher.ts'
import { onServer, prepareBenchDatabase, type BenchDatabase } from './bench-database.ts'
import { machineSummary, markdownTable } from './report.ts'

export interface SizeOptions {
  databaseUrl: string
  total: number
  largest: number
  stores: number
  samples: number
  /** Subscriptions of the claim's baseline database (same stores); default min(100,000, total / 10). */
  baseline?: number
  /** Keep the scratch databases (their names are printed). */
  keep?: boolean
  /** Claim batch size (the engine's BILLING_BATCH_SIZE default). */
  claimLimit?: number
}

export interface SizeReport {
  markdown: string
  /** p95 ms of each measured request, per phase ("before"/"after" 0036, or "latest"). */
  p95: Record<string, Record<string, number>>
  claim: { at: number; baseline: number; p50: number; baselineP50: number; ratio: number }
}

const SCALE_MIGRATION = '0036-scale-indexes'
const TARGET_MS = 200
const CLAIM_RATIO_TARGET = 2
/** Bytes on disk per subscription with everything seeded around it (measured at 1M: see BENCHMARKS.md). */
const BYTES_PER_SUBSCRIPTION = 2_600

/**
 * The one call of the claim the bench times, kept small so it is adapted here when the claim's signature
 * changes (issue 28 turns it into a round-robin over stores).
 */
export function claimDueRenewals(trx: Executor, now: Date, limit: number) {
  return lockDueForRenewal(trx, now, limit)
}

const log = (message: string) => void process.stderr.write(`[size] ${message}\n`)

export async function runSizeScenario(options: SizeOptions): Promise<SizeReport> {
  const { total, stores, samples } = options
  const largest = Math.min(options.largest, total)
  if (stores < 2) throw new Error('--stores must be at least 2 (the largest store and the others)')
  if (total - largest < stores - 1) throw new Error('every store but the largest needs at least one subscription: lower --stores or --largest')
  const baselineTotal = options.baseline ?? Math.min(100_000, Math.floor(total / 10))
  const claimLimit = options.claimLimit ?? 200
  await checkSpace(options.databaseUrl, total + baselineTotal)

  const now = new Date()
  const main = await openScratch(options.databaseUrl, options.keep)
  const sections: string[] = []
  const p95: SizeReport['p95'] = {}
  try {
    const scale = migrations[SCALE_MIGRATION]
    // Every migration, so the code measured finds the schema it expects (later migrations add columns the
    // claims read); "before" is the same schema with the scale migration's down applied on the seeded data.
    await migrateUpTo(main.handle.db, undefined)
    const seeded = await seed(main.url, { total, largest, stores, now })
    const phases: Array<{ label: string; apply?: () => Promise<number> }> = scale
      ? [
          { label: `before ${SCALE_MIGRATION}`, apply: () => applyScale(main.handle.db, main.url, 'down') },
          { label: `after ${SCALE_MIGRATION}`, apply: () => applyScale(main.handle.db, main.url, 'up') },
        ]
      : [{ label: 'latest migrations' }]
    let claimAt: number[] = []
    for (const phase of phases) {
      let applied = ''
      if (phase.apply) {
        const seconds = await phase.apply()
        applied = `\n${SCALE_MIGRATION} ${phase.label.startsWith('before') ? 'undone (down' : 'applied (up'}, then ANALYZE) in ${seconds.toFixed(1)} s.\n`
      }
      log(`measuring (${phase.label})`)
      const measured = await measure(main.handle, main.url, seeded, { samples, claimLimit, now })
      p95[phase.label] = Object.fromEntries(measured.rows.map((row) => [row.name, row.p95]))
      claimAt = measured.claim
      sections.push(`#### ${phase.label}\n${applied}\n${measured.table}\n\n<details><summary>EXPLAIN (ANALYZE, BUFFERS), ${phase.label}</summary>\n\n${measured.explains}\n</details>\n`)
    }

    log(`claim baseline: ${baselineTotal} subscriptions over the same ${stores} stores`)
    const base = await openScratch(options.databaseUrl, options.keep)
    let baselineClaim: number[]
    try {
      await migrateUpTo(base.handle.db, undefined)
      const baseLargest = Math.max(1, Math.round((largest * baselineTotal) / total))
      const baseStores = Math.min(stores, baselineTotal - baseLargest + 1)
      await seed(base.url, { total: baselineTotal, largest: baseLargest, stores: baseStores, now })
      baselineClaim = await timeClaim(base.handle.db, now, claimLimit, samples)
    } finally {
      await base.dispose()
    }
    const at = stats(claimAt)
    const baseline = stats(baselineClaim)
    const ratio = at.p50 / baseline.p50
    const claim = { at: total, baseline: baselineTotal, p50: at.p50, baselineP50: baseline.p50, ratio }
    const claimTable = markdownTable(
      ['claim (lockDueForRenewal, limit ' + claimLimit + ', rolled back)', 'subscriptions', 'p50 ms', 'p95 ms'],
      [
        ['at size', total.toLocaleString('en-US'), at.p50.toFixed(1), at.p95.toFixed(1)],
        ['baseline', baselineTotal.toLocaleString('en-US'), baseline.p50.toFixed(1), baseline.p95.toFixed(1)],
      ],
      ['left', 'right', 'right', 'right'],
    )
    const markdown = [
      `### bench:spike --scenario size (${total.toLocaleString('en-US')} subscriptions, largest store ${largest.toLocaleString('en-US')}, ${stores.toLocaleString('en-US')} stores)`,
      '',
      `Machine: ${machineSummary()}; ${main.description}. Run ${now.toISOString()}, ${samples} samples per figure (after 3 unmeasured).`,
      `Seeded in ${seeded.seconds.toFixed(0)} s (set-based SQL; ${seeded.summary}); database size ${seeded.size}.`,
      '',
      ...sections,
      claimTable,
      '',
      `Claim at ${total.toLocaleString('en-US')} / at ${baselineTotal.toLocaleString('en-US')} (same store count, 1% due in both): **${ratio.toFixed(2)}x** (target <= ${CLAIM_RATIO_TARGET}x): ${ratio <= CLAIM_RATIO_TARGET ? 'met' : 'NOT met'}.`,
    ].join('\n')
    return { markdown, p95, claim }
  } finally {
    await main.dispose()
  }
}

// ---------------------------------------------------------------------------------------------- databases

interface Scratch {
  handle: DatabaseHandle
  url: string
  description: string
  dispose(): Promise<void>
}

async function openScratch(serverUrl: string, keep = false): Promise<Scratch> {
  const database: BenchDatabase = await prepareBenchDatabase(serverUrl)
  const url = database.env.DATABASE_URL!
  const handle = await connectDatabase({ databaseUrl: url, poolSize: 10 })
  const version = (await sql<{ v: string }>`SELECT current_setting('server_version') AS v`.execute(handle.db)).rows[0]!.v
  return {
    handle,
    url,
    description: `PostgreSQL ${version} at ${new URL(url).host} (shared_buffers ${(await sql<{ v: string }>`SELECT current_setting('shared_buffers') AS v`.execute(handle.db)).rows[0]!.v})`,
    dispose: async () => {
      await handle.close()
      if (keep) log(`kept ${new URL(url).pathname.slice(1)}`)
      else await database.dispose()
    },
  }
}

/** Migrates to `target` (inclusive), or to the latest when undefined. */
async function migrateUpTo(db: Db, target: string | undefined): Promise<void> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
  const result = target ? await migrator.migrateTo(target) : await migrator.migrateToLatest()
  if (result.error) throw result.error
}

/** Runs the scale migration's `up` or `down` on the seeded data, then ANALYZE: seconds taken. */
async function applyScale(db: Db, url: string, direction: 'up' | 'down'): Promise<number> {
  const started = performance.now()
  await migrations[SCALE_MIGRATION]![direction]!(db as never)
  await onServer(url, (client) => client.query('ANALYZE'))
  return (performance.now() - started) / 1000
}


/** Stops before seeding when the seed would take more than half the free space of the server's disk (when it is this machine's). */
async function checkSpace(serverUrl: string, subscriptions: number): Promise<void> {
  const wanted = subscriptions * BYTES_PER_SUBSCRIPTION
  let directory: string | undefined
  try {
    directory = await onServer(serverUrl, async (client) => (await client.query<{ d: string }>('SHOW data_directory')).rows[0]!.d)
  } catch {
    // Not a superuser: nothing to check against.
  }
  let stat
  try {
    stat = directory ? statfsSync(directory) : statfsSync('/')
  } catch {
    stat = statfsSync('/')
  }
  const free = stat.bavail * stat.bsize
  const size = stat.blocks * stat.bsize
  // Comfortably: at most half of what is free, whatever else the disk holds.
  const gb = (bytes: number) => `${(bytes / 1e9).toFixed(1)} GB`
  log(`about ${gb(wanted)} wanted, ${gb(free)} free on the database's disk`)
  if (wanted > free / 2) throw new Error(`the seed needs about ${gb(wanted)} and only ${gb(free)} is free (of ${gb(size)}): it would not fit comfortably`)
}

// ---------------------------------------------------------------------------------------------- seed

interface SeedShape {
  total: number
  largest: number
  stores: number
  now: Date
}

interface Seeded {
  seconds: number
  summary: string
  size: string
  largestStoreId: string
  /** A subscriber of the largest store with two subscriptions: the portal's list. */
  portalSubscriberId: string
  /** The id the deep page starts after: the middle of the largest store. */
  deepAfterId: string
  /** A fragment of one subscriber's email (matches one) and a surname about 1% of every store's subscribers have. */
  rareSearch: string
  commonSearch: string
}

const FIRST = ['Ada', 'Alan', 'Grace', 'Edsger', 'Barbara', 'Donald', 'Frances', 'John', 'Margaret', 'Ken', 'Dennis', 'Radia', 'Tim', 'Linus', 'Guido', 'Bjarne', 'Katherine', 'Hedy', 'Claude', 'Niklaus', 'Leslie', 'Shafi', 'Tony', 'Robin', 'Judea', 'Sophie', 'Yukihiro', 'Anders', 'James', 'Brian', 'Rasmus', 'Larry', 'Adele', 'Jean', 'Evelyn', 'Marlyn', 'Ruth', 'Betty', 'Kathleen', 'Mary', 'Joan', 'Lynn', 'Carol', 'Susan', 'Elena', 'Priya', 'Wei', 'Aiko', 'Omar', 'Ines']
const LAST = ['Lovelace', 'Turing', 'Hopper', 'Dijkstra', 'Liskov', 'Knuth', 'Allen', 'McCarthy', 'Hamilton', 'Thompson', 'Ritchie', 'Perlman', 'Berners', 'Torvalds', 'Rossum', 'Stroustrup', 'Johnson', 'Lamarr', 'Shannon', 'Wirth', 'Lamport', 'Goldwasser', 'Hoare', 'Milner', 'Pearl', 'Wilson', 'Matsumoto', 'Hejlsberg', 'Gosling', 'Kernighan', 'Lerdorf', 'Wall', 'Goldberg', 'Sammet', 'Boyd', 'Wescoff', 'Teitelbaum', 'Holberton', 'Booth', 'Keller', 'Clarke', 'Conway', 'Shaw', 'Kare', 'Garcia', 'Patel', 'Chen', 'Tanaka', 'Haddad', 'Moreau', 'Smith', 'Nguyen', 'Kowalski', 'Silva', 'Okafor', 'Novak', 'Larsen', 'Rossi', 'Schmidt', 'Dubois', 'Murphy', 'Kim', 'Singh', 'Ivanova', 'Costa', 'Fischer', 'Jansen', 'Mendes', 'Yilmaz', 'Nowak', 'Horvat', 'Popescu', 'Nielsen', 'Berg', 'Lindqvist', 'Petrov', 'Kaya', 'Hansen', 'Weber', 'Meyer', 'Wagner', 'Becker', 'Hoffmann', 'Koch', 'Richter', 'Klein', 'Wolf', 'Neumann', 'Schwarz', 'Zimmermann', 'Braun', 'Hofmann', 'Hartmann', 'Lange', 'Werner', 'Krause', 'Lehmann', 'Kaiser', 'Fuchs', 'Vogel']
const DOMAINS = ['example.com', 'example.org', 'example.net', 'mail.example', 'post.example']
const textArray = (values: string[]) => `ARRAY[${values.map((value) => `'${value}'`).join(',')}]`

/** A ULID-shaped id (26 characters of Crockford base 32: digits here) that sorts as `n` does. */
const idSql = (prefix: string, n: string) => `'${prefix}_01' || lpad((${n})::text, 24, '0')`

/**
 * Set-based seed, one statement per table, on its own connection (triggers and foreign-key checks off with
 * session_replication_role = replica; the history trigger's rows are written by one INSERT instead). The
 * big tables' secondary indexes are dropped first and rebuilt after, as a bulk load does.
 *
 * Subscription g (1..total) belongs to the largest store (store 1) for `largest` evenly spread values of
 * g, to the other stores round-robin otherwise, so every store's rows are spread through the heap as
 * time-ordered writes would spread them. Ids and created_at grow with g (newest last). Of 100: 80 active
 * (1 of them due now), 10 cancelled, 5 paused, 3 past due, 1 expired, 1 active. Four of five subscriptions
 * have a subscriber of their own, one in five shares the previous subscription's.
 */
async function seed(url: string, shape: SeedShape): Promise<Seeded> {
  const { total: N, largest: L, stores: S } = shape
  const nowIso = shape.now.toISOString()
  const started = performance.now()
  log(`seeding ${N} subscriptions (${L} in the largest store) over ${S} stores`)
  return onServer(url, async (client) => {
    const run = async (label: string, text: string) => {
      const at = performance.now()
      const result = await client.query(text)
      log(`  ${label}: ${result.rowCount ?? ''} rows, ${((performance.now() - at) / 1000).toFixed(1)} s`)
    }
    await client.query(`SET session_replication_role = replica; SET maintenance_work_mem = '512MB'; SET synchronous_commit = off; SET work_mem = '256MB'`)
    const bigTables = ['subscriptions', 'subscribers', 'subscription_history', 'charges', 'refunds', 'events', 'webhook_deliveries', 'jobs']
    // Secondary indexes that no constraint owns: dropped now, rebuilt after the load.
    const { rows: indexes } = await client.query<{ name: string; def: string }>(
      `SELECT i.indexname AS name, i.indexdef AS def FROM pg_indexes i
        WHERE i.schemaname = 'public' AND i.tablename = ANY($1)
          AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conindid = (quote_ident(i.indexname))::regclass)`,
      [bigTables],
    )
    for (const index of indexes) await client.query(`DROP INDEX ${index.name}`)

    const now = `'${nowIso}'::timestamptz`
    // Which store g is in (1 = largest), and its place among that store's subscriptions (0-based).
    const big = `(floor(g::numeric * ${L} / ${N}) > floor((g - 1)::numeric * ${L} / ${N}))`
    const r = `(g - floor(g::numeric * ${L} / ${N})::bigint)`
    const storeNo = `CASE WHEN ${big} THEN 1 ELSE 2 + (${r} - 1) % ${S - 1} END`
    const local = `CASE WHEN ${big} THEN floor(g::numeric * ${L} / ${N})::bigint - 1 ELSE (${r} - 1) / ${S - 1} END`
    const storeId = (no: string) => idSql('store', no)

    await run('stores', `INSERT INTO stores (id, store_hash, name, mode, created_at, updated_at)
      SELECT ${storeId('s')}, 'size-' || s, 'Size store ' || s, 'test', ${now} - interval '4 years', ${now} FROM generate_series(1, ${S}) s`)
    // How many subscriptions each store has, for the per-store tables.
    await client.query(`CREATE TEMP TABLE size_counts AS
      SELECT s, CASE WHEN s = 1 THEN ${L}::bigint ELSE ((${N - L} - (s - 2) - 1) / ${S - 1}) + 1 END AS n FROM generate_series(1, ${S}) s`)
    await run('products', `INSERT INTO products (id, store_id, platform_product_id, name, created_at, updated_at)
      SELECT ${idSql('prod', 's * 10 + p')}, ${storeId('s')}, 'product-' || p, 'Coffee ' || p, ${now} - interval '4 years', ${now}
      FROM generate_series(1, ${S}) s, generate_series(0, 2) p`)
    await run('plans', `INSERT INTO plans (id, store_id, product_id, name, amount, currency, interval, interval_count, created_at, updated_at)
      SELECT ${idSql('plan', 's * 10 + k')}, ${storeId('s')}, ${idSql('prod', 's * 10 + k / 2')}, 'Plan ' || k, 1000 + k * 500, 'USD',
        CASE WHEN k % 2 = 0 THEN 'month' ELSE 'week' END, 1 + k % 2, ${now} - interval '4 years', ${now}
      FROM generate_series(1, ${S}) s, generate_series(0, 5) k`)
    await run('subscribers', `INSERT INTO subscribers (id, store_id, email, name, created_at, updated_at)
      SELECT ${idSql('cus', 'c.s::bigint * 1000000000 + j')}, ${storeId('c.s')},
        lower((${textArray(FIRST)})[1 + (j + c.s) % ${FIRST.length}]) || '.' || lower((${textArray(LAST)})[1 + (j / ${FIRST.length} + c.s) % ${LAST.length}]) || '.' || j || '@' || (${textArray(DOMAINS)})[1 + j % ${DOMAINS.length}],
        (${textArray(FIRST)})[1 + (j + c.s) % ${FIRST.length}] || ' ' || (${textArray(LAST)})[1 + (j / ${FIRST.length} + c.s) % ${LAST.length}],
        ${now} - interval '3 years' + j * interval '1 second', ${now}
      FROM size_counts c, generate_series(0, (c.n - 1) * 4 / 5) j`)
    // Subscriptions: every column the service reads on a list or a claim, with one shared address.
    const address = `'{"name":"Ada Lovelace","line1":"1 Analytical Street","city":"London","postal_code":"N1 9GU","country":"GB"}'::jsonb`
    const created = `${now} - interval '3 years' + (g::numeric / ${N}) * interval '3 years' - interval '1 day'`
    await run('subscriptions', `INSERT INTO subscriptions (id, store_id, subscriber_id, plan_id, product_id, platform_order_id, status, quantity, amount, currency,
        interval, interval_count, payment_instrument_id, shipping_address, billing_address, start_at, billing_anchor_at, period_index, current_period_start,
        current_period_end, next_charge_at, paused_at, cancelled_at, cancellation_reason, past_due_at, dunning_attempts, dunning_started_at, unpaid_period_start,
        payment_instrument_brand, payment_instrument_last4, created_at, updated_at)
      SELECT ${idSql('sub', 'g')}, ${storeId('x.store_no')}, ${idSql('cus', 'x.store_no::bigint * 1000000000 + x.local * 4 / 5')},
        ${idSql('plan', 'x.store_no * 10 + x.local % 6')}, ${idSql('prod', 'x.store_no * 10 + (x.local % 6) / 2')}, 'order-' || g,
        x.status, 1 + g % 3, (1000 + (x.local % 6) * 500) * (1 + g % 3), 'USD', CASE WHEN x.local % 2 = 0 THEN 'month' ELSE 'week' END, 1 + x.local % 2,
        'instr_' || g, ${address}, ${address}, x.created, x.created, (g % 24)::int,
        x.next - interval '30 days', x.next, x.next,
        CASE WHEN x.status = 'paused' THEN x.created + interval '40 days' END,
        CASE WHEN x.status IN ('cancelled', 'expired') THEN x.created + interval '60 days' END,
        CASE WHEN x.status = 'cancelled' THEN 'too much coffee' END,
        CASE WHEN x.status = 'past_due' THEN ${now} - interval '3 days' END,
        CASE WHEN x.status = 'past_due' THEN 2 ELSE 0 END,
        CASE WHEN x.status = 'past_due' THEN ${now} - interval '6 days' END,
        CASE WHEN x.status = 'past_due' THEN x.next - interval '30 days' END,
        'visa', lpad((g % 10000)::text, 4, '0'), x.created, greatest(x.created, ${now} - ((g * 7919) % 2592000) * interval '1 second')
      FROM (SELECT g, ${storeNo} AS store_no, ${local} AS local, ${created} AS created,
                   CASE WHEN g % 100 < 80 OR g % 100 = 99 THEN 'active' WHEN g % 100 < 90 THEN 'cancelled' WHEN g % 100 < 95 THEN 'paused'
                        WHEN g % 100 < 98 THEN 'past_due' ELSE 'expired' END AS status,
                   CASE WHEN g % 100 = 7 THEN ${now} - ((g / 100) % 3600) * interval '1 second'
                        WHEN g % 100 BETWEEN 95 AND 97 THEN ${now} + interval '1 day' + (g % 86400) * interval '1 second'
                        ELSE ${now} + interval '1 hour' + ((g * 7919) % 2592000) * interval '1 second' END AS next
              FROM generate_series(1, ${N}::bigint) g) x`)
    // What the history trigger would have written: the current state, and for a cancelled one the active span before it.
    await run('subscription_history', `INSERT INTO subscription_history (subscription_id, store_id, status, amount, quantity, interval, interval_count, currency, valid_from, valid_to)
      SELECT id, store_id, CASE WHEN status IN ('cancelled', 'expired', 'paused') THEN 'active' ELSE status END, amount, quantity, interval, interval_count, currency, created_at,
             CASE WHEN status IN ('cancelled', 'expired') THEN cancelled_at WHEN status = 'paused' THEN paused_at END
      FROM subscriptions
      UNION ALL
      SELECT id, store_id, status, amount, quantity, interval, interval_count, currency, coalesce(cancelled_at, paused_at), NULL
      FROM subscriptions WHERE status IN ('cancelled', 'expired', 'paused')`)
    // One charge for each subscription's latest period (1 in 20 failed), and an earlier one for one in five; a tenth carry a renewal order.
    await run('charges', `INSERT INTO charges (id, store_id, subscription_id, amount, subtotal, currency, status, attempt, payment_instrument_id, idempotency_key,
        failure_code, period_start, period_end, created_at, settled_at, platform_order_id)
      SELECT ${idSql('ch', 'c.g * 2 + c.k')}, s.store_id, s.id, s.amount, s.amount, s.currency, CASE WHEN c.g % 20 = 3 AND c.k = 0 THEN 'failed' ELSE 'succeeded' END, 1,
        s.payment_instrument_id, 'seed:' || c.g || ':' || c.k, CASE WHEN c.g % 20 = 3 AND c.k = 0 THEN 'card_declined' END,
        least(${now}, s.created_at + ((c.g * 104729) % 31536000) * interval '1 second') - c.k * interval '30 days',
        least(${now}, s.created_at + ((c.g * 104729) % 31536000) * interval '1 second') - c.k * interval '30 days' + interval '30 days',
        least(${now}, s.created_at + ((c.g * 104729) % 31536000) * interval '1 second') - c.k * interval '30 days',
        least(${now}, s.created_at + ((c.g * 104729) % 31536000) * interval '1 second') - c.k * interval '30 days',
        CASE WHEN c.g % 10 = 1 THEN 'renewal-' || c.g || '-' || c.k END
      FROM (SELECT g, k FROM generate_series(1, ${N}::bigint) g, generate_series(0, 1) k WHERE k = 0 OR g % 5 = 0) c
      JOIN subscriptions s ON s.id = ${idSql('sub', 'c.g')}`)
    await run('refunds', `INSERT INTO refunds (id, store_id, charge_id, amount, currency, status, idempotency_key, created_at, settled_at)
      SELECT 're_' || substr(id, 4), store_id, id, amount / 2 + 1, currency, 'succeeded', 'refund:' || id, settled_at + interval '1 hour', settled_at + interval '1 hour'
      FROM charges WHERE status = 'succeeded' AND right(id, 2) = '00'`)
    // One event in ten subscriptions, each delivered to its store's endpoint; a few pending deliveries retrying later.
    await run('webhook_subscriptions', `INSERT INTO webhook_subscriptions (id, store_id, url, event_types, status, secret, created_at, updated_at)
      SELECT ${idSql('wh', 's')}, ${storeId('s')}, 'http://127.0.0.1:9/hooks', ARRAY['subscription.created'], 'enabled', 'whsec_seed', ${now} - interval '4 years', ${now}
      FROM generate_series(1, ${S}) s`)
    await run('events', `INSERT INTO events (id, store_id, entity_type, entity_id, event_type, sequence, occurred_at, payload, created_at)
      SELECT ${idSql('evt', 'e.g')}, s.store_id, 'subscription', s.id, 'subscription.created', 1, s.created_at,
        '{"type":"subscription.created","data":{"id":"' || s.id || '","status":"active"}}', s.created_at
      FROM (SELECT g, ${idSql('sub', 'g')} AS sid FROM generate_series(10, ${N}::bigint, 10) g) e JOIN subscriptions s ON s.id = e.sid`)
    await run('webhook_deliveries', `INSERT INTO webhook_deliveries (id, store_id, webhook_subscription_id, event_id, event_type, entity_id, event_position, status, attempts,
        next_attempt_at, created_at, updated_at, delivered_at, last_status_code)
      SELECT 'msg_' || substr(e.id, 5), e.store_id, 'wh_' || substr(e.store_id, 7), e.id, e.event_type, e.entity_id, e.position,
        CASE WHEN e.position % 100 = 0 THEN 'pending' ELSE 'succeeded' END, 1,
        CASE WHEN e.position % 100 = 0 THEN ${now} + interval '10 minutes' + (e.position % 3600) * interval '1 second' END,
        e.created_at, e.created_at, CASE WHEN e.position % 100 <> 0 THEN e.created_at END, CASE WHEN e.position % 100 = 0 THEN 500 ELSE 200 END
      FROM events e`)
    await run('jobs', `INSERT INTO jobs (kind, payload, run_at, created_at)
      SELECT 'notifications.send', jsonb_build_object('notificationId', 'ntf_' || j), ${now} + (j % 86400) * interval '1 second', ${now}
      FROM generate_series(1, greatest(100, ${N} / 1000)) j`)

    for (const index of indexes) {
      const at = performance.now()
      await client.query(index.def)
      log(`  index ${index.name}: ${((performance.now() - at) / 1000).toFixed(1)} s`)
    }
    for (const table of bigTables) await client.query(`VACUUM (ANALYZE) ${table}`)
    await client.query('ANALYZE')
    const seconds = (performance.now() - started) / 1000
    const counts: string[] = []
    for (const table of ['subscriptions', 'subscribers', 'subscription_history', 'charges', 'refunds', 'events', 'webhook_deliveries', 'jobs']) {
      const { rows } = await client.query<{ n: string }>(`SELECT reltuples::bigint AS n FROM pg_class WHERE relname = $1`, [table])
      counts.push(`${table} ${Number(rows[0]!.n).toLocaleString('en-US')}`)
    }
    const size = (await client.query<{ s: string }>('SELECT pg_size_pretty(pg_database_size(current_database())) AS s')).rows[0]!.s
    log(`seeded in ${seconds.toFixed(0)} s, ${size}`)
    const largestStoreId = `store_01${'1'.padStart(24, '0')}`
    // Subscriber j = 4m of a store owns its subscriptions 5m and 5m + 1 (local * 4 / 5 above).
    const portalId = `cus_01${String(1_000_000_000 + 4 * Math.floor(L / 10)).padStart(24, '0')}`
    const portalSubscriber = (await client.query<{ id: string; email: string }>('SELECT id, email FROM subscribers WHERE id = $1', [portalId])).rows[0]!
    const deep = await client.query<{ id: string }>(`SELECT id FROM subscriptions WHERE store_id = $1 ORDER BY id DESC OFFSET ${Math.floor(L / 2)} LIMIT 1`, [largestStoreId])
    return {
      seconds,
      summary: counts.join(', '),
      size,
      largestStoreId,
      portalSubscriberId: portalSubscriber.id,
      deepAfterId: deep.rows[0]!.id,
      // The part of the email before "@": one subscriber's.
      rareSearch: portalSubscriber.email.split('@')[0]!,
      commonSearch: LAST[1]!.toLowerCase(),
    }
  })
}

// ---------------------------------------------------------------------------------------------- measure

interface Captured {
  sql: string
  parameters: readonly unknown[]
}

/**
 * Records every statement sent through the Kysely it is plugged into while `on`; with `abortAt` set, the
 * first statement matching it is recorded and not sent (its transaction rolls back), so a claim is planned
 * without claiming.
 */
class Capture implements KyselyPlugin {
  on = false
  abortAt: RegExp | undefined
  statements: Captured[] = []
  readonly compile: (node: RootOperationNode) => Captured
  constructor(compile: (node: RootOperationNode) => Captured) {
    this.compile = compile
  }
  transformQuery({ node }: PluginTransformQueryArgs): RootOperationNode {
    if (!this.on) return node
    const compiled = this.compile(node)
    this.statements.push(compiled)
    if (this.abortAt?.test(compiled.sql)) throw new CapturedAbort()
    return node
  }
  async transformResult({ result }: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return result
  }
}
class CapturedAbort extends Error {}

interface Row {
  name: string
  p50: number
  p95: number
  max: number
}

async function measure(handle: DatabaseHandle, url: string, seeded: Seeded, settings: { samples: number; claimLimit: number; now: Date }) {
  const capture = new Capture((node) => handle.db.getExecutor().compileQuery(node, { queryId: '' } as never) as Captured)
  const db = handle.db.withPlugin(capture)
  const captured: DatabaseHandle = { ...handle, db, close: async () => {} }
  const config = loadConfig({
    NODE_ENV: 'production',
    DATABASE_URL: 'postgres://unused',
    SMTP_URL: 'smtp://127.0.0.1:9',
    LOG_LEVEL: 'warn',
    RESPONSE_VALIDATION: 'false',
    RATE_LIMIT_MAX: '1000000000',
    SEED_DEMO_DATA: 'false',
  })
  const services = createServices({ database: captured, config, log: pino({ level: 'warn' }) })
  const app = await buildApp({ database: captured, config, services })
  await app.ready()
  try {
    const store = (await handle.db.selectFrom('stores').selectAll().where('id', '=', seeded.largestStoreId).executeTakeFirstOrThrow()) as StoreRow
    const { key } = await createAdminKey(handle.db, store, 'size bench')
    const admin = { authorization: `Bearer ${key}` }
    const oneTime = randomToken(32)
    await handle.db
      .insertInto('magic_link_tokens')
      .values({ token_hash: sha256Hex(oneTime), store_id: store.id, subscriber_id: seeded.portalSubscriberId, expires_at: new Date(Date.now() + 15 * 60_000) })
      .execute()
    const verified = await app.inject({ method: 'POST', url: '/api/v1/portal/auth/verify', payload: { token: oneTime } })
    if (verified.statusCode !== 200) throw new Error(`portal verify answered ${verified.statusCode}: ${verified.body}`)
    const portal = { authorization: `Bearer ${(verified.json() as { access_token: string }).access_token}` }
    const cursor = Buffer.from(`v1:${seeded.deepAfterId}`).toString('base64url')
    const requests: Array<{ name: string; url: string; headers: Record<string, string>; expect?: (body: any) => void }> = [
      { name: 'admin list, first page', url: '/api/v1/admin/subscriptions?limit=20', headers: admin, expect: (b) => expectRows(b, 20) },
      { name: 'admin list, deep page (cursor at the middle)', url: `/api/v1/admin/subscriptions?limit=20&cursor=${cursor}`, headers: admin, expect: (b) => expectRows(b, 20) },
      { name: `admin search, common ("${seeded.commonSearch}")`, url: `/api/v1/admin/subscriptions?limit=20&q=${seeded.commonSearch}`, headers: admin, expect: (b) => expectRows(b, 1) },
      { name: 'admin search, one subscriber (part of the email)', url: `/api/v1/admin/subscriptions?limit=20&q=${encodeURIComponent(seeded.rareSearch)}`, headers: admin, expect: (b) => expectRows(b, 1) },
      { name: 'admin search, no match', url: '/api/v1/admin/subscriptions?limit=20&q=zzqxj', headers: admin },
      { name: 'portal list (one subscriber)', url: '/api/v1/portal/subscriptions', headers: portal, expect: (b) => expectRows(b, 1) },
      { name: 'analytics summary (30 days)', url: '/api/v1/admin/analytics/summary', headers: admin },
    ]
    const rows: Row[] = []
    const explains: string[] = []
    for (const request of requests) {
      const call = async () => {
        const response = await app.inject({ method: 'GET', url: request.url, headers: request.headers })
        if (response.statusCode !== 200) throw new Error(`${request.url} answered ${response.statusCode}: ${response.body}`)
        return response.json()
      }
      request.expect?.(await call())
      for (let i = 0; i < 2; i++) await call()
      const times: number[] = []
      for (let i = 0; i < settings.samples; i++) {
        const at = performance.now()
        await call()
        times.push(performance.now() - at)
      }
      rows.push({ name: request.name, ...stats(times) })
      capture.statements = []
      capture.on = true
      try {
        await call()
      } finally {
        capture.on = false
      }
      explains.push(await explainAll(url, request.name, capture.statements.filter((s) => !/admin_api_keys|revoked_sessions|^(begin|commit|rollback)/i.test(s.sql))))
    }

    // The renewal claim, timed (rolled back each time), and planned.
    const claim = await timeClaim(handle.db, settings.now, settings.claimLimit, settings.samples)
    rows.push({ name: `renewal claim (limit ${settings.claimLimit}, rolled back)`, ...stats(claim) })
    capture.statements = []
    capture.on = true
    try {
      await handle.db.transaction().execute(async (trx) => {
        await claimDueRenewals(trx.withPlugin(capture), settings.now, settings.claimLimit)
        throw new CapturedAbort()
      })
    } catch (error) {
      if (!(error instanceof CapturedAbort)) throw error
    } finally {
      capture.on = false
    }
    explains.push(await explainAll(url, 'renewal claim (lockDueForRenewal)', capture.statements))

    // The webhook delivery claim and the job claim: each planned up to its claiming statement, never run.
    const dispatcher = createWebhookDispatcher({ db, clock: { now: () => new Date() }, agent: undefined as never, retrySchedule: [1000], disableAfterMs: 86_400_000 })
    const runner = createJobRunner({ db, handlers: jobHandlersOf(services), log: app.log })
    for (const [name, run] of [['webhook delivery claim (dispatcher)', () => dispatcher.deliverDue()], ['job claim (runner)', () => runner.runOnce()]] as const) {
      capture.statements = []
      capture.on = true
      capture.abortAt = /SKIP LOCKED/
      try {
        await run()
      } catch (error) {
        if (!(error instanceof CapturedAbort)) throw error
      } finally {
        capture.on = false
        capture.abortAt = undefined
      }
      explains.push(await explainAll(url, name, capture.statements, { transactional: true }))
    }

    const table = markdownTable(
      ['largest store, through the app', 'p50 ms', 'p95 ms', 'max ms', `p95 < ${TARGET_MS} ms`],
      rows.map((row) => [row.name, row.p50.toFixed(1), row.p95.toFixed(1), row.max.toFixed(1), row.name.startsWith('renewal claim') ? '' : row.p95 < TARGET_MS ? 'yes' : 'NO']),
      ['left', 'right', 'right', 'right', 'left'],
    )
    return { rows, table, explains: explains.join('\n'), claim }
  } finally {
    await app.close()
    await services.close()
  }
}

function expectRows(body: { data?: unknown[] }, atLeast: number): void {
  if (!Array.isArray(body.data) || body.data.length < atLeast) throw new Error(`expected at least ${atLeast} rows, got ${JSON.stringify(body).slice(0, 200)}`)
}

async function timeClaim(db: Db, now: Date, limit: number, samples: number): Promise<number[]> {
  const times: number[] = []
  for (let i = 0; i < samples + 3; i++) {
    const at = performance.now()
    let claimed = 0
    try {
      await db.transaction().execute(async (trx) => {
        claimed = (await claimDueRenewals(trx, now, limit)).length
        throw new CapturedAbort()
      })
    } catch (error) {
      if (!(error instanceof CapturedAbort)) throw error
    }
    if (claimed === 0) throw new Error('the claim found nothing due: the seed is wrong')
    if (i >= 3) times.push(performance.now() - at)
  }
  return times
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of each captured statement, with its parameters, in a transaction rolled back
 * (claims lock and update). With `transactional`, the statements before the last (SET LOCAL) run first
 * in that transaction, and only the last is explained.
 */
async function explainAll(url: string, title: string, statements: Captured[], options: { transactional?: boolean } = {}): Promise<string> {
  const out: string[] = [`**${title}**`, '']
  const explained = options.transactional ? statements.slice(-1) : statements.filter((s) => /^\s*(select|with|update)/i.test(s.sql))
  const before = options.transactional ? statements.slice(0, -1) : []
  await onServer(url, async (client) => {
    for (const statement of explained) {
      await client.query('BEGIN')
      try {
        for (const prior of before) await client.query(prior.sql, [...prior.parameters])
        const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, BUFFERS) ${statement.sql}`, [...statement.parameters])
        out.push('```', oneLine(statement.sql).slice(0, 400), '', ...rows.map((row) => row['QUERY PLAN']), '```', '')
      } finally {
        await client.query('ROLLBACK')
      }
    }
  })
  return out.join('\n')
}

const oneLine = (text: string) => text.replace(/\s+/g, ' ').trim()

function stats(values: number[]): { p50: number; p95: number; max: number } {
  const sorted = [...values].sort((a, b) => a - b)
  const at = (p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
  return { p50: at(50), p95: at(95), max: sorted.at(-1)! }
}

// ---------------------------------------------------------------------------------------------- standalone

const USAGE = `node bench/lib/spike-size.ts [options]   (DATABASE_URL: a PostgreSQL server; a scratch bench_<random> database is made there)
  --total N     subscriptions (default 10000000)
  --largest N   of them in the largest store (default total / 10)
  --stores N    stores (default 10000)
  --samples N   measured requests per figure (default 50)
  --baseline N  subscriptions of the claim's baseline database, same stores (default min(100000, total / 10))
  --keep        keep the scratch databases
CI size: --total 20000 --stores 50`

if (import.meta.main) {
  const { values } = parseArgs({
    options: {
      total: { type: 'string' },
      largest: { type: 'string' },
      stores: { type: 'string' },
      samples: { type: 'string' },
      baseline: { type: 'string' },
      keep: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  })
  if (values.help) {
    process.stdout.write(`${USAGE}\n`)
  } else {
    const databaseUrl = process.env.DATABASE_URL
    if (!databaseUrl) throw new Error(`DATABASE_URL must name a PostgreSQL server: the size scenario is PostgreSQL only\n${USAGE}`)
    const whole = (raw: string | undefined, fallback: number) => {
      const value = raw === undefined ? fallback : Number(raw)
      if (!Number.isInteger(value) || value < 1) throw new Error(`not a whole number: ${raw}`)
      return value
    }
    const total = whole(values.total, 10_000_000)
    const report = await runSizeScenario({
      databaseUrl,
      total,
      largest: whole(values.largest, Math.floor(total / 10)),
      stores: whole(values.stores, 10_000),
      samples: whole(values.samples, 50),
      ...(values.baseline ? { baseline: whole(values.baseline, 100_000) } : {}),
      keep: values.keep ?? false,
    })
    process.stdout.write(`${report.markdown}\n`)
  }
}
