// Many stores on one deployment (issue 28, CONTRACT §19), measured on the service as it runs in production:
// worker processes (`src/server.ts` with ROLE=worker) on a scratch PostgreSQL database, renewing through the
// platform gateway against the BigCommerce simulator (a child process, every call answering after
// --latency-ms). The bench only seeds, moves the stores' test clocks to the due instant, watches the charges
// table and checks the outcome: whatever the renewal engine is, it is what the workers run.
//
//   spike  one big store with --renewals due at the same instant and --stores small stores with --per-store
//          each, every store under its own enforced quota (--quota per --window-ms, the simulator's
//          setRateLimit), for --duration seconds: the big store's renewals/s against what its quota allows,
//          the small stores' due -> charged latency, charges failed by 429, 429s as a share of the calls.
//   flat   --stores stores sharing --renewals due renewals, no quota enforced: renewals/s until all are
//          charged, platform calls and CPU seconds (workers, simulator) per renewal.
//   size   bench/lib/spike-size.ts (10 million subscriptions), when it exists.
//
// Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npm run bench:spike -- [--scenario spike,flat,size] [--small] [options]
import { randomBytes } from 'node:crypto'
import { ADDRESS, BOUGHT_AT, CUSTOMER_ID, DUE_AT, PLAN_AMOUNT, PRODUCT_ID, TAX_RATE_BPS } from './lib/platform-store-fixture.ts'
import { existsSync } from 'node:fs'
import { parseArgs } from 'node:util'
// wall clock: the bench watches worker processes that run on their own.
import { setTimeout as sleep } from 'node:timers/promises'
import pLimit from 'p-limit'
import { sql } from 'kysely'
import type { Db, StoreRow } from '../src/db/database.ts'
import { systemClock } from '../src/lib/clock.ts'
import { PLATFORM_ORDERS } from '../src/http/actors.ts'
import { createPlatformConnections, createTokenVault, type PlatformConnections } from '../src/modules/platform/index.ts'
import { createStore } from '../src/modules/stores/index.ts'
import { testModules } from '../test/helpers/modules.ts'
import { startServer, type RunningServer } from '../test/helpers/server-process.ts'
import { startSimulatorChild, type SimTallies, type SimulatorChild } from './lib/bigcommerce-sim.ts'
import { deferCleanup, runCleanup } from './lib/cleanup.ts'
import { cpuSecondsOf } from './lib/cpu.ts'
import { openBenchDatabase } from './lib/database-bench.ts'
import { runBench } from './lib/harness.ts'
import { backgroundCpuBusy, machineSummary, markdownTable } from './lib/report.ts'
import { tidyTables } from './lib/renewal-workload.ts'

const SCENARIOS = ['spike', 'flat', 'size'] as const
type Scenario = (typeof SCENARIOS)[number]

/** Full size (the issue's) and --small (CI: each scenario well under a minute). */
const DEFAULTS = {
  full: {
    // 300 per 3 s keeps BigCommerce's Standard rate (150 per 30 s) scaled up 20x, so that a 90 s run spans
    // 30 windows (the first window's burst is ~3% of the figure) and the big store still never drains.
    spike: { renewals: 20_000, stores: 200, perStore: 10, quota: 300, windowMs: 3_000, duration: 90, grace: 90 },
    flat: { renewals: 100_000, stores: 1_000, timeout: 1_800 },
    size: { total: 10_000_000, largest: 1_000_000, stores: 10_000, samples: 100 },
  },
  small: {
    spike: { renewals: 300, stores: 5, perStore: 10, quota: 60, windowMs: 2_000, duration: 12, grace: 0 },
    flat: { renewals: 400, stores: 20, timeout: 120 },
    size: { total: 20_000, largest: 2_000, stores: 50, samples: 20 },
  },
  latencyMs: 100,
  workers: 2,
}

// Each store's subscriptions: bought a month before the due instant; the stores' test clocks are moved
// from BOUGHT_AT to DUE_AT at once, which is the spike.
const TOKEN_KEY = randomBytes(32)
const WORKER_START_MS = 120_000

const USAGE = `npm run bench:spike -- [options]   (PostgreSQL only: set DATABASE_URL to a server; a scratch bench_ database is used and dropped)
  --scenario LIST    spike, flat, size, comma-separated (default all three)
  --small            every scenario at a CI size (well under a minute each)
  --renewals N       spike: the big store's due renewals (default ${DEFAULTS.full.spike.renewals}); flat: all due renewals (default ${DEFAULTS.full.flat.renewals})
  --stores N         spike: small stores (default ${DEFAULTS.full.spike.stores}); flat: stores (default ${DEFAULTS.full.flat.stores})
  --per-store N      spike: due renewals per small store (default ${DEFAULTS.full.spike.perStore})
  --quota N          spike: each store's enforced quota per window (default ${DEFAULTS.full.spike.quota})
  --window-ms N      spike: the quota's window (default ${DEFAULTS.full.spike.windowMs})
  --duration N       spike: measured seconds (default ${DEFAULTS.full.spike.duration}); the big store need not drain
  --grace N          spike: seconds more to wait for small stores not all charged by then (default ${DEFAULTS.full.spike.grace}; --small 0)
  --timeout N        flat: give up after N seconds (default ${DEFAULTS.full.flat.timeout})
  --latency-ms N     every simulated platform call answers after this long (default ${DEFAULTS.latencyMs})
  --workers N        worker processes (ROLE=worker, default ${DEFAULTS.workers})
`

interface Options {
  scenarios: Scenario[]
  small: boolean
  latencyMs: number
  workers: number
  spike: (typeof DEFAULTS)['full']['spike']
  flat: (typeof DEFAULTS)['full']['flat']
  size: (typeof DEFAULTS)['full']['size']
}

function readOptions(): Options | undefined {
  const names = ['renewals', 'stores', 'per-store', 'quota', 'window-ms', 'duration', 'grace', 'timeout', 'latency-ms', 'workers'] as const
  const { values } = parseArgs({
    options: {
      ...Object.fromEntries(names.map((name) => [name, { type: 'string' as const }])),
      scenario: { type: 'string', default: SCENARIOS.join(',') },
      small: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  })
  if (values.help) {
    process.stdout.write(USAGE)
    return undefined
  }
  const whole = (name: (typeof names)[number], fallback: number, minimum = 1): number => {
    const raw = (values as Record<string, unknown>)[name] as string | undefined
    if (raw === undefined) return fallback
    const value = Number(raw)
    if (!Number.isInteger(value) || value < minimum) throw new Error(`--${name} must be a whole number >= ${minimum}, got ${raw}\n${USAGE}`)
    return value
  }
  const scenarios = String(values.scenario).split(',').map((s) => s.trim()).filter(Boolean)
  const unknown = scenarios.filter((s) => !(SCENARIOS as readonly string[]).includes(s))
  if (unknown.length > 0 || scenarios.length === 0) throw new Error(`--scenario takes ${SCENARIOS.join(', ')}; got ${String(values.scenario)}\n${USAGE}`)
  const base = values.small ? DEFAULTS.small : DEFAULTS.full
  return {
    scenarios: scenarios as Scenario[],
    small: values.small === true,
    latencyMs: whole('latency-ms', DEFAULTS.latencyMs),
    workers: whole('workers', DEFAULTS.workers),
    spike: {
      renewals: whole('renewals', base.spike.renewals),
      stores: whole('stores', base.spike.stores),
      perStore: whole('per-store', base.spike.perStore),
      quota: whole('quota', base.spike.quota),
      windowMs: whole('window-ms', base.spike.windowMs),
      duration: whole('duration', base.spike.duration),
      grace: whole('grace', base.spike.grace, 0),
    },
    flat: { renewals: whole('renewals', base.flat.renewals), stores: whole('stores', base.flat.stores), timeout: whole('timeout', base.flat.timeout) },
    size: base.size,
  }
}

function progress(message: string): void {
  process.stderr.write(`${message}\n`)
}

// ---------------------------------------------------------------------------------------------
// The rig: a scratch database, the simulator, seeding by SQL, worker processes
// ---------------------------------------------------------------------------------------------

interface Rig {
  db: Db
  databaseUrl: string
  description: string
  sim: SimulatorChild
  connections: PlatformConnections
  /** The modules, built once: the seeding's catalogue and checkout (building them costs more than a store's seeding). */
  modules: ReturnType<typeof testModules>
  options: Options
}

interface SeededStore {
  store: StoreRow
  hash: string
  count: number
}

async function openRig(serverUrl: string, options: Options): Promise<Rig> {
  const opened = await openBenchDatabase(serverUrl, 10)
  const databaseUrl = (await sql<{ db: string }>`SELECT current_database() AS db`.execute(opened.db)).rows[0]!.db
  const url = new URL(serverUrl)
  url.pathname = `/${databaseUrl}`
  progress('starting the BigCommerce simulator (a child process on 127.0.0.1)')
  const sim = await startSimulatorChild()
  deferCleanup(sim.close)
  await sim.setLatency(options.latencyMs)
  const connections = createPlatformConnections({ db: opened.db, vault: createTokenVault(async () => TOKEN_KEY), clock: systemClock })
  const modules = testModules(opened.db, { clock: systemClock })
  return { db: opened.db, databaseUrl: url.toString(), description: opened.description, sim, connections, modules, options }
}

/**
 * A test-mode store of the simulator's (a physical product, the platform customer's stored card, 8.25% tax),
 * one subscription made through the real checkout (on the test gateway: no platform call), then `count - 1`
 * copies of that row by one INSERT ... SELECT generate_series (new id and order id, everything else the
 * template's); the store is connected to the platform and switched to the platform gateway, its clock
 * still before the renewals are due.
 */
async function seedStore(rig: Rig, label: string, count: number): Promise<SeededStore> {
  const { db, sim, connections, modules } = rig
  const hash = `${label}${randomBytes(3).toString('hex')}`
  const accessToken = `bench-token-${randomBytes(8).toString('hex')}`
  const card = await sim.setUp({ hash, accessToken, productId: PRODUCT_ID, price: PLAN_AMOUNT / 100, customerId: CUSTOMER_ID, taxCountry: 'US', taxRateBps: TAX_RATE_BPS })
  let store = await createStore(db, { storeHash: hash, mode: 'test' })
  store = await db.updateTable('stores').set({ test_clock_now: BOUGHT_AT, test_tax_rate_bps: TAX_RATE_BPS }).where('id', '=', store.id).returningAll().executeTakeFirstOrThrow()
  const product = await modules.catalog.createProduct(store, { platform_product_id: String(PRODUCT_ID), name: 'Coffee beans' })
  const plan = await modules.catalog.createPlan(store, { product_id: product.id, name: 'Monthly', amount: PLAN_AMOUNT, currency: 'USD', interval: 'month' })
  await modules.checkouts.checkout(store, {
    platform_order_id: `first-${label}-0`,
    email: `buyer-${label}@example.com`,
    name: 'Ada Lovelace',
    shipping_address: ADDRESS,
    billing_address: ADDRESS,
    platform_customer_id: CUSTOMER_ID,
    payment_instrument_id: card,
    shipping: { method: 'Ground', amount: 599 },
    items: [{ plan_id: plan.id, quantity: 1 }],
  }, PLATFORM_ORDERS)
  if (count > 1) {
    // Ids of the same length and alphabet as the template's (ULID: Crockford base32, upper case); hashed
    // with the template's whole id, since templates made in one millisecond share all but the last digits.
    await sql`
      INSERT INTO subscriptions
      SELECT (jsonb_populate_record(NULL::subscriptions, to_jsonb(t) || jsonb_build_object(
                'id', left(t.id, length(t.id) - 20) || upper(left(md5(t.id || ':' || n), 20)),
                'platform_order_id', 'first-' || ${label}::text || '-' || n))).*
        FROM subscriptions t, generate_series(1, ${count - 1}::int) AS n
       WHERE t.store_id = ${store.id}`.execute(db)
  }
  await connections.connect(store.id, { accessToken, source: 'api_account' })
  store = await db.updateTable('stores').set({ gateway: 'platform' }).where('id', '=', store.id).returningAll().executeTakeFirstOrThrow()
  return { store, hash, count }
}

async function seedStores(rig: Rig, stores: Array<{ label: string; count: number }>): Promise<SeededStore[]> {
  const limit = pLimit(8)
  let done = 0
  return Promise.all(
    stores.map(({ label, count }) =>
      limit(async () => {
        const seeded = await seedStore(rig, label, count)
        if (++done % 100 === 0) progress(`  ${done} of ${stores.length} stores seeded`)
        return seeded
      }),
    ),
  )
}

interface Workers {
  processes: RunningServer[]
  cpuSeconds(): number
  stop(): Promise<void>
}

/** `n` worker processes started as `ROLE=worker npm start` would be, pointed at the simulator. */
async function startWorkers(rig: Rig, n: number): Promise<Workers> {
  const env = {
    ROLE: 'worker' as const,
    DATABASE_URL: rig.databaseUrl,
    PLATFORM_API_URL: rig.sim.apiUrl,
    PLATFORM_PAYMENTS_URL: rig.sim.paymentsUrl,
    PLATFORM_TOKEN_KEY: TOKEN_KEY.toString('hex'),
    SEED_DEMO_DATA: 'false',
    LOG_LEVEL: 'warn',
  }
  // No --liftoff-only (the suites' flag for PGlite): these run exactly as `npm start` does.
  const processes = await Promise.all(Array.from({ length: n }, () => startServer(env, WORKER_START_MS, [])))
  let stopped = false
  const stop = async () => {
    if (stopped) return
    stopped = true
    await Promise.all(processes.map((p) => p.stop('SIGTERM')))
  }
  deferCleanup(stop)
  return { processes, cpuSeconds: () => processes.reduce((sum, p) => sum + (cpuSecondsOf(p.child.pid) ?? 0), 0), stop }
}

/** The spike: every store's clock moves to the due instant in one statement. Answers that instant (wall clock, ms). */
async function makeDue(db: Db, stores: SeededStore[]): Promise<number> {
  const t0 = Date.now()
  await db.updateTable('stores').set({ test_clock_now: DUE_AT }).where('id', 'in', stores.map((s) => s.store.id)).execute()
  return t0
}

/**
 * Charges by store: `charged` = the payment went out (submitted_at, set just before the payment request) and
 * did not fail; an engine may record `succeeded` later (when it settles a whole batch), but the subscriber
 * was charged then.
 */
async function chargeCounts(db: Db): Promise<Map<string, { charged: number; succeeded: number; failed: number }>> {
  const { rows } = await sql<{ store_id: string; charged: number; succeeded: number; failed: number }>`
    SELECT store_id,
           count(*) FILTER (WHERE submitted_at IS NOT NULL AND status <> 'failed')::int AS charged,
           count(*) FILTER (WHERE status = 'succeeded')::int AS succeeded,
           count(*) FILTER (WHERE status = 'failed')::int AS failed
      FROM charges GROUP BY store_id`.execute(db)
  return new Map(rows.map((r) => [r.store_id, r]))
}

interface Verified {
  /** Problems that fail the run: double charges, requests the simulator refuses, a renewal charged twice. */
  problems: string[]
  failedByReason: Record<string, number>
  failedBy429: number
  /** Charges sent (and not failed) against orders paid once at the simulator, store by store: the difference (a payment in flight when stopped). */
  unmatched: number
}

/** After the workers stopped: what the simulator and the database hold agree, and nothing was charged twice. */
async function verify(db: Db, tallies: SimTallies, stores: SeededStore[]): Promise<Verified> {
  const problems: string[] = []
  const all = Object.values(tallies.stores)
  const doubles = all.reduce((sum, t) => sum + t.doubleCharges, 0)
  const violations = all.reduce((sum, t) => sum + t.violations, 0)
  if (doubles > 0) problems.push(`${doubles} orders paid more than once at the simulator`)
  if (violations > 0 || tallies.violationSamples.length > 0) problems.push(`${violations} requests the simulator refuses, e.g. ${tallies.violationSamples.slice(0, 3).join('; ')}`)
  const twice = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM (SELECT subscription_id FROM charges WHERE status = 'succeeded' GROUP BY subscription_id HAVING count(*) > 1) x`.execute(db)
  if (twice.rows[0]!.n > 0) problems.push(`${twice.rows[0]!.n} subscriptions with more than one succeeded charge`)
  const failed = await sql<{ reason: string; rate_limited: boolean; n: number }>`
    SELECT coalesce(failure_code, '?') AS reason,
           (failure_message ILIKE '%429%' OR failure_message ILIKE '%rate limit%') AS rate_limited,
           count(*)::int AS n
      FROM charges WHERE status = 'failed' GROUP BY 1, 2`.execute(db)
  const failedByReason: Record<string, number> = {}
  let failedBy429 = 0
  for (const row of failed.rows) {
    failedByReason[row.reason] = (failedByReason[row.reason] ?? 0) + row.n
    if (row.rate_limited) failedBy429 += row.n
  }
  const counts = await chargeCounts(db)
  let unmatched = 0
  for (const { store, hash } of stores) unmatched += Math.abs((counts.get(store.id)?.charged ?? 0) - (tallies.stores[hash]?.paidOnce ?? 0))
  return { problems, failedByReason, failedBy429, unmatched }
}

const sumCalls = (t: SimTallies['stores'][string] | undefined): number => t?.calls ?? 0
/** Calls counted against the store's api quota: api-host requests not refused (the payment goes to the payments host). */
const apiCalls = (t: SimTallies['stores'][string] | undefined): number => (t ? t.calls - t.answered429 - (t.operations.PaymentsPost ?? 0) : 0)

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

const fixed = (n: number, digits = 2): string => (Number.isFinite(n) ? n.toFixed(digits) : '-')
const verdict = (ok: boolean): string => (ok ? 'met' : 'NOT met')

// ---------------------------------------------------------------------------------------------
// Spike
// ---------------------------------------------------------------------------------------------

async function spikeScenario(serverUrl: string, options: Options): Promise<string> {
  const o = options.spike
  const rig = await openRig(serverUrl, options)
  const limit = { quota: o.quota, windowMs: o.windowMs }
  progress(`spike: seeding the big store (${o.renewals} renewals) and ${o.stores} small stores (${o.perStore} each)`)
  const seedStarted = Date.now()
  const [big] = await seedStores(rig, [{ label: 'big', count: o.renewals }])
  const small = await seedStores(rig, Array.from({ length: o.stores }, (_, i) => ({ label: `small${i}`, count: o.perStore })))
  for (const s of [big!, ...small]) await rig.sim.setRateLimit(s.hash, limit)
  // The stores' budgets as a running deployment knows them: the quota their platform's headers said
  // (seeding's calls saw the simulator's unlimited default before the limits were set), a window fresh.
  // (a first contact assumes BigCommerce's smallest plan, 150 per 30 s, which this bench's scaled windows are not).
  await sql`INSERT INTO platform_budgets (store_id, quota, window_ms, requests_left, resets_at, updated_at)
            SELECT id, ${o.quota}, ${o.windowMs}, ${o.quota}, now(), now() FROM stores
            ON CONFLICT (store_id) DO UPDATE SET quota = EXCLUDED.quota, window_ms = EXCLUDED.window_ms, requests_left = EXCLUDED.requests_left,
              reserved_calls = 0, reserved_before = 0, resets_at = EXCLUDED.resets_at`.execute(rig.db)
  await tidyTables(rig.db)
  const seedSeconds = (Date.now() - seedStarted) / 1000
  const background = await backgroundCpuBusy()
  progress(`spike: seeded in ${seedSeconds.toFixed(1)} s; starting ${options.workers} worker processes`)
  const workers = await startWorkers(rig, options.workers)

  const t0 = await makeDue(rig.db, [big!, ...small])
  progress(`spike: due now; watching for ${o.duration} s`)
  const smallIds = new Set(small.map((s) => s.store.id))
  const smallTotal = o.stores * o.perStore
  const deadline = t0 + o.duration * 1000
  // Small stores not all charged by the deadline get --grace seconds more, to say how late they were.
  const hardDeadline = deadline + o.grace * 1000
  let bigAtDeadline: { at: number; succeeded: number; tallies: SimTallies } | undefined
  let bigDrainedAt: number | undefined
  let smallDone = 0
  for (;;) {
    await sleep(500)
    const now = Date.now()
    const counts = await chargeCounts(rig.db)
    const bigSucceeded = counts.get(big!.store.id)?.charged ?? 0
    smallDone = [...counts].filter(([id]) => smallIds.has(id)).reduce((sum, [, c]) => sum + c.charged, 0)
    if (bigDrainedAt === undefined && bigSucceeded >= o.renewals) bigDrainedAt = now
    if (!bigAtDeadline && (now >= deadline || bigDrainedAt !== undefined)) bigAtDeadline = { at: bigDrainedAt ?? now, succeeded: bigSucceeded, tallies: await rig.sim.tallies() }
    if (bigAtDeadline && (smallDone >= smallTotal || now >= hardDeadline)) break
  }
  progress('spike: stopping the workers, then checking what was charged')
  const stopping = Date.now()
  await workers.stop()
  progress(`spike: the workers stopped in ${((Date.now() - stopping) / 1000).toFixed(1)} s`)
  const after = await rig.sim.tallies()
  const verified = await verify(rig.db, after, [big!, ...small])

  const latencies = (
    await sql<{ ms: number }>`
      SELECT (extract(epoch FROM submitted_at) * 1000 - ${t0}::float8)::float8 AS ms
        FROM charges WHERE submitted_at IS NOT NULL AND status <> 'failed' AND store_id IN (${sql.join(small.map((s) => s.store.id))})`.execute(rig.db)
  ).rows
    .map((r) => r.ms)
    .sort((a, b) => a - b)
  const seconds = (bigAtDeadline!.at - t0) / 1000
  const bigRate = bigAtDeadline!.succeeded / seconds
  const bigTally = bigAtDeadline!.tallies.stores[big!.hash]
  const smallTallies = small.map((s) => after.stores[s.hash])
  const smallApiCalls = smallTallies.reduce((sum, t) => sum + apiCalls(t), 0)
  const smallSucceeded = latencies.length
  // The allowance in renewals: quota per window over the api calls a renewal spends. Measured on the small
  // stores when they were charged (each renewal whole); else on the big store after the workers stopped,
  // which counts the calls of renewals left unfinished too (a little high: a higher ratio).
  const bigCharged = (await chargeCounts(rig.db)).get(big!.store.id)?.charged ?? 0
  const bigCallsPerRenewal = bigCharged > 0 ? apiCalls(after.stores[big!.hash]) / bigCharged : Number.NaN
  const callsPerRenewal = smallSucceeded > 0 ? smallApiCalls / smallSucceeded : bigCallsPerRenewal
  const allowed = o.quota / (o.windowMs / 1000) / callsPerRenewal
  const ratio = bigRate / allowed
  const totalCalls = Object.values(after.stores).reduce((sum, t) => sum + sumCalls(t), 0)
  const total429 = Object.values(after.stores).reduce((sum, t) => sum + t.answered429, 0)
  // A small renewal not charged by the end counts as later than every charged one (Infinity).
  const padded = [...latencies, ...Array<number>(Math.max(0, smallTotal - latencies.length)).fill(Number.POSITIVE_INFINITY)]
  const watched = (Date.now() - t0) / 1000
  const p50 = percentile(padded, 50) / 1000
  const p99 = percentile(padded, 99) / 1000
  const seconds1 = (n: number): string => (Number.isFinite(n) ? n.toFixed(1) : `not charged (> ${watched.toFixed(0)})`)
  const lateOrMissing = smallTotal - latencies.filter((ms) => ms <= 60_000).length
  const share429 = totalCalls > 0 ? total429 / totalCalls : 0

  if (verified.problems.length > 0) throw new Error(`spike: ${verified.problems.join('; ')}`)
  // The big store on its own: from the moment the last small renewal was charged to the end of the span.
  const smallsDoneMs = latencies.length === smallTotal ? latencies.at(-1)! : Number.POSITIVE_INFINITY
  const aloneSeconds = seconds - smallsDoneMs / 1000
  const bigAlone = aloneSeconds > 5
    ? Number((await sql<{ n: number }>`
        SELECT count(*)::int AS n FROM charges WHERE store_id = ${big!.store.id} AND submitted_at IS NOT NULL AND status <> 'failed'
           AND submitted_at > to_timestamp(${(t0 + smallsDoneMs) / 1000}) AND submitted_at <= to_timestamp(${bigAtDeadline!.at / 1000})`.execute(rig.db)).rows[0]!.n) / aloneSeconds
    : Number.NaN
  const rows = [
    [`big store renewals/s (${bigAtDeadline!.succeeded} in ${seconds.toFixed(1)} s${bigDrainedAt ? ', drained' : ''})`, fixed(bigRate), ''],
    [`big store renewals/s once every small store was charged (the last ${Number.isFinite(aloneSeconds) ? aloneSeconds.toFixed(1) : '0'} s)`, Number.isFinite(bigAlone) ? `${fixed(bigAlone)} (${fixed(bigAlone / allowed)} of the allowance)` : 'n/a', ''],
    [`rate its quota allows (${o.quota} per ${o.windowMs / 1000} s ÷ ${fixed(callsPerRenewal)} api calls per renewal${smallSucceeded > 0 ? '' : ', the big store\'s'})`, fixed(allowed), ''],
    ['ratio', fixed(ratio), `>= 0.9: ${verdict(ratio >= 0.9)}`],
    [`small stores due -> charged p50 (s; ${smallSucceeded} of ${smallTotal} charged)`, seconds1(p50), ''],
    ['small stores due -> charged p99 (s)', seconds1(p99), `<= 60 s: ${verdict(p99 <= 60)}`],
    ['small renewals not charged within 60 s', String(lateOrMissing), ''],
    ['charges failed because of a 429', String(verified.failedBy429), `0: ${verdict(verified.failedBy429 === 0)}`],
    [`429s as % of calls (${total429} of ${totalCalls})`, fixed(100 * share429), `<= 1%: ${verdict(share429 <= 0.01)}`],
    ['platform calls per renewal (small stores, all hosts, 429s included)', fixed(smallTallies.reduce((sum, t) => sum + sumCalls(t), 0) / Math.max(1, smallSucceeded)), ''],
    ['api calls per renewal (small stores; big store, after the workers stopped)', `${smallSucceeded > 0 ? fixed(callsPerRenewal) : '-'}; ${fixed(bigCallsPerRenewal)}`, ''],
  ]
  const bigOps = Object.entries(bigTally?.operations ?? {}).sort((a, b) => b[1] - a[1]).map(([op, n]) => `${op} ${n}`).join(', ')
  return [
    `## spike (${new Date(t0).toISOString()})`,
    `- database: ${rig.description}; machine: ${machineSummary()}; CPUs ${background} busy before the workers started`,
    `- ${options.workers} worker processes (src/server.ts, ROLE=worker); the simulator in a child process, every call answering after ${options.latencyMs} ms`,
    `- one big store with ${o.renewals.toLocaleString('en-US')} renewals and ${o.stores} small stores with ${o.perStore} each, all due at the same instant (their test clocks moved at once); every store's api quota enforced: ${o.quota} requests per ${o.windowMs} ms fixed window; seeded by SQL in ${seedSeconds.toFixed(1)} s`,
    `- watched ${o.duration} s (up to ${o.grace} s more while small stores were still waiting); "charged" = the charge's payment sent (submitted_at), "due" = the instant the clocks moved`,
    `- verified after the workers stopped: no order paid twice at the simulator, no request it refuses, no subscription with two succeeded charges; failed charges: ${JSON.stringify(verified.failedByReason)}; charges sent against orders paid, store by store, differing by ${verified.unmatched}`,
    '',
    markdownTable(['figure', 'value', 'target'], rows, ['left', 'right', 'left']),
    '',
    `Big store's platform requests in the measured span: ${bigOps || 'none'} (429s: ${bigTally?.answered429 ?? 0})`,
    '',
  ].join('\n')
}

// ---------------------------------------------------------------------------------------------
// Flat out
// ---------------------------------------------------------------------------------------------

async function flatScenario(serverUrl: string, options: Options): Promise<string> {
  const o = options.flat
  const rig = await openRig(serverUrl, options)
  const perStore = Math.floor(o.renewals / o.stores)
  const extra = o.renewals - perStore * o.stores
  progress(`flat: seeding ${o.stores} stores with ${o.renewals} renewals`)
  const seedStarted = Date.now()
  const stores = await seedStores(rig, Array.from({ length: o.stores }, (_, i) => ({ label: `flat${i}`, count: perStore + (i < extra ? 1 : 0) })).filter((s) => s.count > 0))
  await tidyTables(rig.db)
  const seedSeconds = (Date.now() - seedStarted) / 1000
  const background = await backgroundCpuBusy()
  progress(`flat: seeded in ${seedSeconds.toFixed(1)} s; starting ${options.workers} worker processes`)
  const workers = await startWorkers(rig, options.workers)

  const workerCpu = workers.cpuSeconds()
  const simCpu = rig.sim.cpuSeconds() ?? 0
  const t0 = await makeDue(rig.db, stores)
  progress(`flat: due now; waiting until all ${o.renewals} are charged (at most ${o.timeout} s)`)
  let done = 0
  let doneAt = t0
  let lastReport = t0
  for (;;) {
    await sleep(250)
    const counts = await chargeCounts(rig.db)
    done = [...counts.values()].reduce((sum, c) => sum + c.charged, 0)
    doneAt = Date.now()
    if (doneAt - lastReport >= 10_000) {
      lastReport = doneAt
      progress(`  ${done} charged after ${((doneAt - t0) / 1000).toFixed(0)} s`)
    }
    if (done >= o.renewals || doneAt - t0 >= o.timeout * 1000) break
  }
  const workerCpuUsed = workers.cpuSeconds() - workerCpu
  const simCpuUsed = (rig.sim.cpuSeconds() ?? 0) - simCpu
  const seconds = (doneAt - t0) / 1000
  await workers.stop()
  const tallies = await rig.sim.tallies()
  const verified = await verify(rig.db, tallies, stores)
  if (verified.problems.length > 0) throw new Error(`flat: ${verified.problems.join('; ')}`)
  const calls = Object.values(tallies.stores).reduce((sum, t) => sum + sumCalls(t), 0)
  const rate = done / seconds
  const rows = [
    [`renewals/s (${done.toLocaleString('en-US')} of ${o.renewals.toLocaleString('en-US')} in ${seconds.toFixed(1)} s)`, fixed(rate, 1), `>= 500/s: ${verdict(rate >= 500 && done === o.renewals)}`],
    ['platform calls per renewal (all hosts)', fixed(calls / Math.max(1, done)), ''],
    ['worker CPU seconds per renewal (both processes)', fixed(workerCpuUsed / Math.max(1, done), 4), ''],
    ['simulator CPU seconds per renewal', fixed(simCpuUsed / Math.max(1, done), 4), ''],
  ]
  return [
    `## flat (${new Date(t0).toISOString()})`,
    `- database: ${rig.description}; machine: ${machineSummary()}; CPUs ${background} busy before the workers started`,
    `- ${options.workers} worker processes (src/server.ts, ROLE=worker); the simulator in a child process, every call answering after ${options.latencyMs} ms, no quota enforced (the default headers: ${'1,000,000'} per 30 s)`,
    `- ${stores.length} stores, ${o.renewals.toLocaleString('en-US')} renewals due at the same instant; seeded by SQL in ${seedSeconds.toFixed(1)} s`,
    `- verified after the workers stopped: no order paid twice, no request the simulator refuses, no subscription with two succeeded charges; failed charges: ${JSON.stringify(verified.failedByReason)}; charges sent against orders paid, store by store, differing by ${verified.unmatched}`,
    '',
    markdownTable(['figure', 'value', 'target'], rows, ['left', 'right', 'left']),
    '',
  ].join('\n')
}

// ---------------------------------------------------------------------------------------------
// Size (another part of the bench: bench/lib/spike-size.ts)
// ---------------------------------------------------------------------------------------------

async function sizeScenario(serverUrl: string, options: Options): Promise<string> {
  const file = new URL('./lib/spike-size.ts', import.meta.url)
  if (!existsSync(file)) return 'size: not built yet\n'
  const module = (await import(file.href)) as { runSizeScenario?: (o: { databaseUrl: string; total: number; largest: number; stores: number; samples: number }) => Promise<unknown> }
  if (typeof module.runSizeScenario !== 'function') return 'size: not built yet (bench/lib/spike-size.ts exports no runSizeScenario)\n'
  const result = await module.runSizeScenario({ databaseUrl: serverUrl, ...options.size })
  // Its report's markdown (SizeReport), or text.
  const markdown = typeof result === 'string' ? result : (result as { markdown?: unknown } | undefined)?.markdown
  return typeof markdown === 'string' ? `## size\n${markdown}\n` : ''
}

async function main(): Promise<void> {
  const options = readOptions()
  if (!options) return
  const serverUrl = process.env.DATABASE_URL
  if (!serverUrl) throw new Error(`bench:spike runs on PostgreSQL only: set DATABASE_URL\n${USAGE}`)
  process.stdout.write(`# bench:spike${options.small ? ' --small' : ''} (issue 28)\n\n`)
  for (const scenario of options.scenarios) {
    const text = scenario === 'spike' ? await spikeScenario(serverUrl, options) : scenario === 'flat' ? await flatScenario(serverUrl, options) : await sizeScenario(serverUrl, options)
    // Each scenario's figures as soon as it ends, so a later failure keeps them; its workers, simulator and database go now.
    process.stdout.write(`${text}\n`)
    await runCleanup()
  }
}

await runBench(main)
