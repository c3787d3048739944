// Platform renewals: due subscriptions of a BigCommerce store renewed per second by the renewal engine through
// the platform gateway (the store's own checkout: cart, billing address, consignment and its shipping option,
// order from the checkout, its tag, then the stored card's payment method, a payment access token and the
// payment), against the BigCommerce simulator answering every call after the same latency; beside it, in the
// same run, the same engine renewing the same kind of subscriptions through the `test` gateway with that
// latency (one simulated call per renewal), so the ratio shows what the platform's calls cost.
// Usage: npm run bench:renewals:platform [-- --subscriptions N --warmup N --latency-ms N --workers N --batch N --concurrency N --pool N --profile]
//        DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:renewals:platform
import { randomBytes } from 'node:crypto'
import { ADDRESS, BOUGHT_AT, CUSTOMER_ID, DUE_AT, PLAN_AMOUNT, PRODUCT_ID, TAX_RATE_BPS } from './lib/platform-store-fixture.ts'
import { performance } from 'node:perf_hooks'
import { sql } from 'kysely'
import type { Engine } from '../src/db/connect.ts'
import type { Db, StoreRow } from '../src/db/database.ts'
import { systemClock } from '../src/lib/clock.ts'
import { createGatewayResolver, type RenewalCounts } from '../src/modules/billing/index.ts'
import { createPlatformClient, createPlatformConnections, createTokenVault, type PlatformConnections } from '../src/modules/platform/index.ts'
import { createStore } from '../src/modules/stores/index.ts'
import { startSimulatorChild, type SimStoreSummary, type SimulatorChild } from './lib/bigcommerce-sim.ts'
import { deferCleanup } from './lib/cleanup.ts'
import { cpuTimes } from './lib/cpu.ts'
import { runDatabaseBench, type DatabaseBench } from './lib/database-bench.ts'
import { runBench } from './lib/harness.ts'
import { machineSummary, markdownTable, type Align } from './lib/report.ts'
import { tidyTables } from './lib/renewal-workload.ts'
import { readBenchOptions } from './lib/settings.ts'
import { StatementProfiler } from './lib/statement-profiler.ts'
import { testModules } from '../test/helpers/modules.ts'
import { PLATFORM_ORDERS } from '../src/http/actors.ts'

const DEFAULTS = {
  pglite: { subscriptions: 800 },
  postgres: { subscriptions: 1_600 },
  warmup: 100,
  // The service's own: 4 billing.renewals job instances, BILLING_BATCH_SIZE 200, BILLING_CONCURRENCY 64, a pool of 10.
  workers: 4,
  batch: 200,
  concurrency: 64,
  latencyMs: 100,
  pool: 10,
}
const PROFILE_SUBSCRIPTIONS = 200

/**
 * BigCommerce's documented quota on Standard and Plus plans: 150 requests per 30 s window per store
 * (docs/platform-api.md §0 "Rate limits"; the simulator's WINDOW_MS and QUOTA say the same).
 */
const RATE_LIMIT = { requests: 150, windowMs: 30_000 }
/**
 * A renewal before renewals went through the store's checkout (commit 45230bd): getOrders x2 (the order
 * for the charge's key, plain and Incomplete), createOrder (v2), getPaymentMethods,
 * createPaymentAccessToken, PaymentsPost.
 */
const CALLS_BEFORE_CHECKOUT = 6

// Each case's subscriptions (bench/lib/platform-store-fixture.ts) ship by the store's Ground rate.
const GROUND = { method: 'Ground', amount: 599 }
const TOKEN_KEY = randomBytes(32)

const USAGE = `npm run bench:renewals:platform [-- options]
  --subscriptions N  due subscriptions per measured case (default ${DEFAULTS.postgres.subscriptions} on PostgreSQL, ${DEFAULTS.pglite.subscriptions} on PGlite)
  --warmup N         unmeasured renewals through each gateway first (default ${DEFAULTS.warmup}; 0: none)
  --latency-ms N     every simulated platform operation, and the test gateway, answer after this long (default ${DEFAULTS.latencyMs})
  --workers N        renewal loops (job instances) running at once over the shared pool (default ${DEFAULTS.workers})
  --batch N          subscriptions claimed per runDue (default ${DEFAULTS.batch})
  --concurrency N    renewals in flight per batch (default ${DEFAULTS.concurrency})
  --pool N           PostgreSQL pool size (default ${DEFAULTS.pool}; PGlite has one connection)
  --profile          afterwards, renew ${PROFILE_SUBSCRIPTIONS} more through each gateway with every statement counted and timed
Set DATABASE_URL to a PostgreSQL server to bench on a scratch database there; PGlite otherwise.
`

interface Settings {
  subscriptions: number
  warmup: number
  latencyMs: number
  workers: number
  batch: number
  concurrency: number
  pool: number
  profile: boolean
}

type GatewayName = 'test' | 'platform'

interface Measured {
  renewals: number
  seconds: number
  /** CPU this process spent (user + system): the engine's, the platform client's and, on PGlite, the database's. */
  cpuMs: number
  /** CPU the simulator's process spent (the stand-in for BigCommerce; not the service's cost). */
  simulatorCpuMs: number | undefined
  /** How busy all CPUs of the machine were during the run. */
  machineBusy: number
  batches: number
  /** Platform requests by operation (none for the test gateway). */
  operations: Record<string, number>
  /** One renewal's charge: subtotal, shipping, tax, amount. */
  sample: { subtotal: number; shipping: number; tax: number; amount: number }
}

interface Case {
  name: string
  gateway: GatewayName
  measured: Measured
}

interface Seeded {
  store: StoreRow
  count: number
}

interface Rig {
  db: Db
  sim: SimulatorChild
  connections: PlatformConnections
  settings: Settings
}

function readSettings(engine: Engine): Settings | undefined {
  const options = readBenchOptions(['subscriptions', 'warmup', 'latency-ms', 'workers', 'batch', 'concurrency', 'pool'], USAGE)
  if (!options) return undefined
  const { whole } = options
  return {
    subscriptions: whole('subscriptions', DEFAULTS[engine].subscriptions),
    warmup: whole('warmup', DEFAULTS.warmup, 0),
    latencyMs: whole('latency-ms', DEFAULTS.latencyMs, 0),
    workers: whole('workers', DEFAULTS.workers),
    batch: whole('batch', DEFAULTS.batch),
    concurrency: whole('concurrency', DEFAULTS.concurrency),
    pool: whole('pool', DEFAULTS.pool),
    profile: options.profile,
  }
}

async function main({ db, engine, settings, startedAt, background, description }: DatabaseBench<Settings>): Promise<void> {
  progress('starting the BigCommerce simulator (a child process on 127.0.0.1)')
  const sim = await startSimulatorChild()
  deferCleanup(sim.close)
  await sim.setLatency(settings.latencyMs)
  const connections = createPlatformConnections({ db, vault: createTokenVault(async () => TOKEN_KEY), clock: systemClock })
  const rig: Rig = { db, sim, connections, settings }

  if (settings.warmup > 0) {
    progress(`warm-up: ${settings.warmup} renewals through each gateway (unmeasured)`)
    await renewalCase(rig, 'warmtest', 'test', settings.warmup)
    await renewalCase(rig, 'warmplatform', 'platform', settings.warmup)
  }
  const cases: Case[] = []
  progress(`test gateway: ${settings.subscriptions} renewals, ${settings.latencyMs} ms per call`)
  cases.push({ name: `engine, test gateway ${settings.latencyMs} ms (baseline)`, gateway: 'test', measured: await renewalCase(rig, 'test', 'test', settings.subscriptions) })
  progress(`platform gateway: ${settings.subscriptions} renewals through the simulator's checkout, ${settings.latencyMs} ms per call`)
  cases.push({ name: `engine, platform gateway ${settings.latencyMs} ms per call`, gateway: 'platform', measured: await renewalCase(rig, 'platform', 'platform', settings.subscriptions) })
  let profile = ''
  if (settings.profile) {
    progress(`profile: ${PROFILE_SUBSCRIPTIONS} renewals through each gateway with every statement counted`)
    profile = await profileStatements(rig)
  }
  process.stdout.write(report({ startedAt, engine, description, background, settings, cases }) + profile)
}

/** The statements a renewal sends through each gateway, counted and timed (the profiler's own cost makes these runs slower). */
async function profileStatements(rig: Rig): Promise<string> {
  const out: string[] = ['']
  for (const gateway of ['test', 'platform'] as const) {
    const profiler = new StatementProfiler((node, queryId) => rig.db.getExecutor().compileQuery(node, queryId).sql)
    const measured = await renewalCase(rig, `profile${gateway}`, gateway, PROFILE_SUBSCRIPTIONS, rig.db.withPlugin(profiler))
    const rows = [...profiler.statements].sort((a, b) => b[1].count - a[1].count || b[1].ms - a[1].ms)
    const n = measured.renewals
    const statements = rows.reduce((sum, [, entry]) => sum + entry.count, 0)
    out.push(
      `Statements, ${gateway} gateway: ${n} renewals with the profiler on, ${(statements / n).toFixed(2)} statements per renewal (BEGIN/COMMIT not seen); a statement's time runs from compiling to its decoded result, waiting for a connection included, and overlaps those of the other renewals in flight.`,
      '',
      markdownTable(
        ['per renewal', 'ms per renewal', 'statement'],
        rows.map(([statement, entry]) => [(entry.count / n).toFixed(3), (entry.ms / n).toFixed(3), `\`${statement.replace(/\|/g, '\\|')}\``]),
        ['right', 'right', 'left'],
      ),
      '',
    )
  }
  return out.join('\n')
}

function progress(message: string): void {
  process.stderr.write(`${message}\n`)
}

/**
 * A test-mode store of the simulator's with `count` monthly subscriptions to a physical product, each from
 * a checkout of its own (the platform customer who owns the stored card, billing and shipping addresses,
 * Ground at 5.99), made while the store still charges through the test gateway (no platform call); then
 * the store is connected and switched to `gateway`, and its clock moved past their first renewal.
 */
async function seed(rig: Rig, label: string, gateway: GatewayName, count: number): Promise<Seeded> {
  const { db, sim, connections } = rig
  const hash = `bench${label}${randomBytes(3).toString('hex')}`
  const accessToken = `bench-token-${randomBytes(8).toString('hex')}`
  const card = await sim.setUp({ hash, accessToken, productId: PRODUCT_ID, price: PLAN_AMOUNT / 100, customerId: CUSTOMER_ID, taxCountry: 'US', taxRateBps: TAX_RATE_BPS })
  let store = await createStore(db, { storeHash: hash, mode: 'test' })
  // The test gateway prices tax at the store's test rate, the platform at its own table: the same 8.25%.
  store = await db.updateTable('stores').set({ test_clock_now: BOUGHT_AT, test_tax_rate_bps: TAX_RATE_BPS }).where('id', '=', store.id).returningAll().executeTakeFirstOrThrow()
  const modules = testModules(db, { clock: systemClock })
  const product = await modules.catalog.createProduct(store, { platform_product_id: String(PRODUCT_ID), name: 'Coffee beans' })
  const plan = await modules.catalog.createPlan(store, { product_id: product.id, name: 'Monthly', amount: PLAN_AMOUNT, currency: 'USD', interval: 'month' })
  for (let i = 0; i < count; i++) {
    await modules.checkouts.checkout(store, {
      platform_order_id: `first-${label}-${i}`,
      email: `buyer-${i}@example.com`,
      name: 'Ada Lovelace',
      shipping_address: ADDRESS,
      billing_address: ADDRESS,
      platform_customer_id: CUSTOMER_ID,
      payment_instrument_id: card,
      shipping: GROUND,
      items: [{ plan_id: plan.id, quantity: 1 }],
    }, PLATFORM_ORDERS)
  }
  if (gateway === 'platform') await connections.connect(store.id, { accessToken, source: 'api_account' })
  store = await db.updateTable('stores').set({ gateway, test_clock_now: DUE_AT }).where('id', '=', store.id).returningAll().executeTakeFirstOrThrow()
  await tidyTables(db)
  return { store, count }
}

/** `count` due renewals through the engine: `workers` loops calling runDue until nothing is claimed, as the job instances do. */
async function renewalCase(rig: Rig, label: string, gateway: GatewayName, count: number, engineDb: Db = rig.db): Promise<Measured> {
  const { db, sim, settings } = rig
  const seeded = await seed(rig, label, gateway, count)
  const connections = engineDb === db ? rig.connections : createPlatformConnections({ db: engineDb, vault: createTokenVault(async () => TOKEN_KEY), clock: systemClock })
  const client = createPlatformClient({ apiUrl: sim.apiUrl, paymentsUrl: sim.paymentsUrl, timeoutMs: 15_000 })
  // The service's own wiring (src/modules/billing/index.ts): each store's `gateway` picks the gateway.
  const gateways = createGatewayResolver(engineDb, {
    platformApiUrl: sim.apiUrl,
    platformPaymentsUrl: sim.paymentsUrl,
    platformAccessOf: connections.accessOf,
    platformTimeoutMs: 15_000,
    platformClient: client,
    testGatewayLatencyMs: settings.latencyMs,
  })
  const renewals = testModules(engineDb).renewalEngine({ clock: systemClock, gateways, concurrency: settings.concurrency, batchSize: settings.batch })
  const before = await sim.summary(seeded.store.store_hash)
  if (Object.keys(before.operations).length > 0) throw new Error(`${label}: the platform was called before the renewals: ${JSON.stringify(before.operations)}`)
  const totals: RenewalCounts = { claimed: 0, renewals: 0, retries: 0, expirations: 0, unsettled: 0, setAside: 0 }
  const simCpu = sim.cpuSeconds()
  const machine = cpuTimes()
  const cpu = process.cpuUsage()
  const started = performance.now()
  let batches = 0
  await Promise.all(
    Array.from({ length: settings.workers }, async () => {
      for (;;) {
        const counts = await renewals.runDue({ limit: settings.batch })
        if (counts.claimed === 0) return
        batches++
        for (const key of Object.keys(totals) as (keyof RenewalCounts)[]) totals[key] += counts[key]
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  const after = cpuTimes()
  const simCpuAfter = sim.cpuSeconds()
  await gateways.close()
  await client.close()

  const expected = { claimed: count, renewals: count, retries: 0, expirations: 0, unsettled: 0, setAside: 0 }
  if (JSON.stringify(totals) !== JSON.stringify(expected)) throw new Error(`${label}: runDue counted ${JSON.stringify(totals)}, expected ${JSON.stringify(expected)}`)
  const summary = await sim.summary(seeded.store.store_hash)
  const sample = await verifyRenewed(db, seeded, gateway, summary)
  return {
    renewals: count,
    seconds,
    cpuMs: (used.user + used.system) / 1000,
    simulatorCpuMs: simCpu === undefined || simCpuAfter === undefined ? undefined : (simCpuAfter - simCpu) * 1000,
    machineBusy: after.total > machine.total ? (after.busy - machine.busy) / (after.total - machine.total) : 0,
    batches,
    operations: summary.operations,
    sample,
  }
}

/**
 * Every seeded subscription renewed exactly once: one charge, succeeded, the subscription on its next
 * period with nothing in flight. Through the test gateway: one ledger row, called once. Through the
 * platform: one order per charge, made from a checkout, tagged with the charge's key, for the charge's
 * amount, paid exactly once; no double charge, no request the reference refuses, no cart left, every
 * answer a 2xx. Answers one charge's breakdown.
 */
async function verifyRenewed(db: Db, seeded: Seeded, gateway: GatewayName, summary: SimStoreSummary): Promise<Measured['sample']> {
  const storeId = seeded.store.id
  const n = seeded.count
  const { rows } = await sql<Record<string, number>>`
    SELECT
      (SELECT count(*) FROM subscriptions WHERE store_id = ${storeId})::int AS subscriptions,
      (SELECT count(*) FROM subscriptions s WHERE s.store_id = ${storeId}
          AND (SELECT count(*) FROM charges c WHERE c.subscription_id = s.id) = 1
          AND (SELECT count(*) FROM charges c WHERE c.subscription_id = s.id AND c.status = 'succeeded') = 1)::int AS with_one_success,
      (SELECT count(*) FROM subscriptions WHERE store_id = ${storeId} AND period_index = 1 AND pending_charge_id IS NULL
          AND latest_charge_id IS NOT NULL AND next_charge_at > ${DUE_AT})::int AS moved_on,
      (SELECT count(*) FROM charges WHERE store_id = ${storeId})::int AS charges,
      (SELECT count(*) FROM charges WHERE store_id = ${storeId} AND gateway = ${gateway} AND tax_amount > 0 AND shipping_amount = ${GROUND.amount}
          AND amount = subtotal - discount_amount + shipping_amount + tax_amount)::int AS priced,
      (SELECT count(*) FROM test_gateway_charges WHERE store_id = ${storeId} AND status = 'succeeded' AND calls = 1)::int AS ledger`.execute(db)
  const found = rows[0]!
  const wanted: Record<string, number> = { subscriptions: n, with_one_success: n, moved_on: n, charges: n, priced: n, ledger: gateway === 'test' ? n : 0 }
  const wrong = Object.entries(wanted).filter(([key, value]) => Number(found[key]) !== value)
  if (wrong.length > 0) throw new Error(`store ${seeded.store.store_hash}: renewals not exactly once: ${wrong.map(([key, value]) => `${key} ${found[key]} (expected ${value})`).join(', ')}`)

  const charges = await db
    .selectFrom('charges')
    .select(['idempotency_key', 'platform_order_id', 'platform_cart_id', 'subtotal', 'shipping_amount', 'tax_amount', 'amount'])
    .where('store_id', '=', storeId)
    .execute()
  const problems: string[] = []
  if (summary.violations.length > 0) problems.push(`${summary.violations.length} requests the reference refuses, e.g. ${summary.violations.slice(0, 3).join('; ')}`)
  if (summary.doubleCharges > 0) problems.push(`${summary.doubleCharges} orders paid more than once`)
  if (gateway === 'test') {
    if (summary.orders.length > 0 || Object.keys(summary.operations).length > 0) problems.push('the test gateway reached the platform')
  } else {
    const notOk = Object.entries(summary.statuses).filter(([status]) => !/^2\d\d$/.test(status))
    if (notOk.length > 0) problems.push(`answers other than 2xx: ${JSON.stringify(Object.fromEntries(notOk))}`)
    if (summary.orders.length !== n) problems.push(`${summary.orders.length} orders for ${n} renewals`)
    if (summary.carts !== 0) problems.push(`${summary.carts} carts left (a paid order's cart is deleted)`)
    const orders = new Map(summary.orders.map((order) => [String(order.id), order]))
    for (const charge of charges) {
      const order = charge.platform_order_id === null ? undefined : orders.get(charge.platform_order_id)
      const fault = !order
        ? 'names no order of the store'
        : order.externalOrderId !== charge.idempotency_key
          ? `its order is tagged ${order.externalOrderId}`
          : order.cartId === null || order.cartId !== charge.platform_cart_id
            ? `its order was made from cart ${order.cartId}, the charge kept ${charge.platform_cart_id}`
            : order.successfulPayments !== 1 || order.paymentRequests !== 1
              ? `its order was paid ${order.successfulPayments} times in ${order.paymentRequests} requests`
              : order.totalIncTax !== Number(charge.amount) * 100
                ? `its order's total is ${order.totalIncTax / 10_000}, the charge ${Number(charge.amount) / 100}`
                : undefined
      if (fault) {
        problems.push(`charge ${charge.idempotency_key}: ${fault}`)
        if (problems.length >= 5) break
      }
    }
  }
  if (problems.length > 0) throw new Error(`store ${seeded.store.store_hash}: ${problems.join('; ')}`)
  const one = charges[0]!
  return { subtotal: Number(one.subtotal), shipping: Number(one.shipping_amount), tax: Number(one.tax_amount), amount: Number(one.amount) }
}

const callsOf = (m: Measured): number => Object.values(m.operations).reduce((sum, n) => sum + n, 0)
const rate = (m: Measured): number => m.renewals / m.seconds

/** Renewals one store can make in an hour when every renewal spends `calls` of its request quota. */
function perHourAtQuota(calls: number): number {
  return (RATE_LIMIT.requests * (3_600_000 / RATE_LIMIT.windowMs)) / calls
}

/**
 * With the calls the only cost, how fast `count` renewals can go: batches of `batch` claimed by the
 * loops in turn, each renewal `calls` sequential calls of `latencyMs`, `concurrency` renewals at once per batch.
 */
function callBoundCeiling(settings: Settings, count: number, calls: number): number {
  const perLoop = new Array<number>(settings.workers).fill(0)
  for (let from = 0, index = 0; from < count; from += settings.batch, index++) {
    const size = Math.min(settings.batch, count - from)
    perLoop[index % settings.workers]! += Math.ceil(size / settings.concurrency) * calls * (settings.latencyMs / 1000)
  }
  const longest = Math.max(...perLoop)
  return longest > 0 ? count / longest : Infinity
}

function report(r: { startedAt: Date; engine: Engine; description: string; background: string; settings: Settings; cases: Case[] }): string {
  const { settings } = r
  const baseline = r.cases[0]!.measured
  const platform = r.cases.find((c) => c.gateway === 'platform')!.measured
  const calls = callsOf(platform) / platform.renewals
  const micros = (ms: number | undefined, n: number) => (ms === undefined ? '-' : ((1000 * ms) / n).toFixed(0))
  const headers = ['path', 'renewals', 'seconds', 'renewals/s', 'ratio to baseline', 'platform calls per renewal', 'Node CPU µs per renewal', 'simulator CPU µs per renewal', 'machine CPU busy']
  const rows = r.cases.map(({ name, gateway, measured }) => [
    name,
    measured.renewals.toLocaleString('en-US'),
    measured.seconds.toFixed(2),
    Math.round(rate(measured)).toLocaleString('en-US'),
    measured === baseline ? '1.00' : (rate(measured) / rate(baseline)).toFixed(2),
    gateway === 'test' ? '0 (1 simulated call)' : (callsOf(measured) / measured.renewals).toFixed(2),
    micros(measured.cpuMs, measured.renewals),
    gateway === 'test' ? '-' : micros(measured.simulatorCpuMs, measured.renewals),
    `${Math.round(100 * measured.machineBusy)}%`,
  ])
  const operations = markdownTable(
    ['platform operation', 'requests', 'per renewal'],
    Object.entries(platform.operations)
      .sort((a, b) => b[1] - a[1])
      .map(([operation, n]) => [operation, n.toLocaleString('en-US'), (n / platform.renewals).toFixed(2)]),
    ['left', 'right', 'right'],
  )
  const quota = RATE_LIMIT.requests * (3_600_000 / RATE_LIMIT.windowMs)
  const ceiling = markdownTable(
    ['renewal path', 'platform calls per renewal', 'renewals per hour per store', 'renewals per second per store'],
    [
      [`v2 order (before, commit 45230bd; from its code)`, String(CALLS_BEFORE_CHECKOUT), Math.floor(perHourAtQuota(CALLS_BEFORE_CHECKOUT)).toLocaleString('en-US'), (perHourAtQuota(CALLS_BEFORE_CHECKOUT) / 3600).toFixed(2)],
      [`store's checkout (measured here)`, calls.toFixed(2), Math.floor(perHourAtQuota(calls)).toLocaleString('en-US'), (perHourAtQuota(calls) / 3600).toFixed(2)],
    ],
    ['left', 'right', 'right', 'right'],
  )
  const onPostgres = r.engine === 'postgres'
  const s = platform.sample
  return [
    `Platform renewals, ${r.startedAt.toISOString()}`,
    `- database: ${r.description}`,
    `- machine: ${machineSummary()}; CPUs ${r.background} busy with other work just before the run${parseInt(r.background, 10) >= 25 ? ' (WARNING: other work competes for the CPUs; every figure below is lower than on a quiet machine)' : ''}`,
    `- load: ${settings.workers} renewal loops (job instances) sharing the connection${onPostgres ? ' pool' : ''}, batch ${settings.batch}, ${settings.concurrency} renewals in flight per batch${onPostgres ? '' : ' (PGlite runs in this process: Node CPU includes the database)'}`,
    `- platform: the BigCommerce simulator (test/helpers/bigcommerce-simulator.ts) in a child process on 127.0.0.1, every operation answering after ${settings.latencyMs} ms; its rate limit is not enforced (it only reports the headers), so the runs are not throttled as a real store would be (below)`,
    `- subscriptions: ${settings.subscriptions.toLocaleString('en-US')} due per case, each from a checkout of its own on a test-mode store (a physical product at ${PLAN_AMOUNT / 100} USD, quantity 1, the platform customer's stored card, billing and shipping address in the US, Ground ${GROUND.amount / 100}); tax 8.25% (the simulator's tax table, the test gateway's test_tax_rate_bps); each case on a store of its own after ${settings.warmup} unmeasured warm-up renewals per gateway`,
    `- one renewal's charge, platform: subtotal ${s.subtotal}, shipping ${s.shipping}, tax ${s.tax}, amount ${s.amount} (minor units); test gateway: amount ${baseline.sample.amount}`,
    `- verified after each run: every subscription has exactly one charge, succeeded, and moved on to its next period; test gateway: one ledger row called once each; platform: one order per charge, made from the cart the charge kept, tagged with its key, for its amount, paid once; no double charge, no request the simulator refuses, every answer 2xx, no cart left`,
    `- call-bound ceilings at ${settings.latencyMs} ms for ${settings.subscriptions.toLocaleString('en-US')} renewals (calls only, no database): test gateway ${Math.round(callBoundCeiling(settings, settings.subscriptions, 1)).toLocaleString('en-US')}/s, platform ${Math.round(callBoundCeiling(settings, settings.subscriptions, calls)).toLocaleString('en-US')}/s`,
    '',
    markdownTable(headers, rows, ['left', ...headers.slice(1).map((): Align => 'right')]),
    '',
    operations,
    '',
    `At the platform's rate limit (${RATE_LIMIT.requests} requests per ${RATE_LIMIT.windowMs / 1000} s window per store, Standard/Plus: ${quota.toLocaleString('en-US')} requests an hour), with every request spent on renewals:`,
    '',
    ceiling,
    '',
  ].join('\n')
}

await runBench(() => runDatabaseBench(readSettings, main))
