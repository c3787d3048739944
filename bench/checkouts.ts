// Checkout ingestion throughput: subscriptions (with their events) created per second through the checkout
// service, against plain inserts of the same rows in the same run.
// Usage: npx node bench/checkouts.ts [--orders N] [--concurrency N] [--pool N] [--profile]
//        DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npx node bench/checkouts.ts
import { randomBytes } from 'node:crypto'
import { availableParallelism, cpus } from 'node:os'
import { performance } from 'node:perf_hooks'
import { setTimeout as sleep } from 'node:timers/promises'
import { parseArgs } from 'node:util'
import { Kysely, PostgresDialect, type LogEvent } from 'kysely'
import pg from 'pg'
import { connectDatabase, type DatabaseHandle } from '../src/db/connect.ts'
import type { Database, Db, PlanRow, StoreRow } from '../src/db/database.ts'
import { migrateToLatest } from '../src/db/migrate.ts'
import { systemClock } from '../src/lib/clock.ts'
import { newId } from '../src/lib/ids.ts'
import { createStore } from '../src/modules/stores/index.ts'
import { testModules } from '../test/helpers/modules.ts'
import { PLATFORM_ORDERS } from '../src/http/actors.ts'

const TARGETS = { minRatio: 0.3, minPostgresPerSecond: 500 }
const DEFAULTS = { pglite: { orders: 2_000, concurrency: 16 }, postgres: { orders: 5_000, concurrency: 16 } }
const WARMUP_ORDERS = 200
// Measured in alternating rounds so neither side always runs on the larger tables.
const ROUNDS = 2
const ADDRESS = { name: 'Ada Lovelace', line1: '1 Analytical Street', city: 'London', postal_code: 'N1 9GU', country: 'GB' }

interface BenchDb {
  handle: DatabaseHandle
  description: string
  /** A second Kysely over the same database that records the time of every statement, for --profile. */
  profiled?: { db: Db; statements: Map<string, { count: number; ms: number }> }
  drop(): Promise<void>
}

interface Measured {
  orders: number
  seconds: number
  latencies: number[]
  /** CPU this process spent (user + system), which on a small machine competes with the database's. */
  cpuMs: number
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { orders: { type: 'string' }, concurrency: { type: 'string' }, pool: { type: 'string', default: '10' }, profile: { type: 'boolean', default: false } },
  })
  const databaseUrl = process.env.DATABASE_URL
  const engine = databaseUrl ? 'postgres' : 'pglite'
  const orders = Number(values.orders ?? DEFAULTS[engine].orders)
  const concurrency = Number(values.concurrency ?? DEFAULTS[engine].concurrency)
  const poolSize = Number(values.pool)
  const startedAt = new Date()

  const bench = databaseUrl ? await scratchPostgres(databaseUrl, poolSize, values.profile) : await memoryPglite()
  const interrupted = () => void bench.drop().finally(() => process.exit(130))
  process.once('SIGINT', interrupted)
  try {
    const db = bench.handle.db
    const service = await setup(db, 'svc')
    const plain = await setup(db, 'plain')
    const checkouts = testModules(db, { clock: systemClock }).checkouts

    const viaService = (i: number) => checkouts.checkout(service.store, checkoutInput(service.plan, `svc-${i}`), PLATFORM_ORDERS).then(() => undefined)
    const viaInserts = (i: number) => plainInsert(db, plain.store, plain.plan, `plain-${i}`)

    await runOrders(WARMUP_ORDERS, concurrency, (i) => viaInserts(-1 - i))
    await runOrders(WARMUP_ORDERS, concurrency, (i) => viaService(-1 - i))

    const perRound = Math.ceil(orders / ROUNDS)
    const baseline: Measured[] = []
    const measured: Measured[] = []
    for (let round = 0; round < ROUNDS; round++) {
      const offset = round * perRound
      baseline.push(await runOrders(perRound, concurrency, (i) => viaInserts(offset + i)))
      measured.push(await runOrders(perRound, concurrency, (i) => viaService(offset + i)))
    }
    const base = combine(baseline)
    const svc = combine(measured)
    await verify(db, service.store, WARMUP_ORDERS + svc.orders)
    await verify(db, plain.store, WARMUP_ORDERS + base.orders)

    let profile = ''
    if (values.profile) profile = await profileService(bench, service, concurrency)

    process.stdout.write(report({ startedAt, engine, description: bench.description, orders: perRound * ROUNDS, concurrency, poolSize: databaseUrl ? poolSize : 1, base, svc }) + profile)
  } finally {
    process.removeListener('SIGINT', interrupted)
    await bench.drop()
  }
}

async function memoryPglite(): Promise<BenchDb> {
  const handle = await connectDatabase({ dataDir: 'memory://' })
  await migrateToLatest(handle.db)
  return { handle, description: 'PGlite, in memory (one connection)', drop: () => handle.close() }
}

async function scratchPostgres(serverUrl: string, poolSize: number, profile: boolean): Promise<BenchDb> {
  const name = `bench_${randomBytes(6).toString('hex')}`
  await onServer(serverUrl, (client) => client.query(`CREATE DATABASE ${name}`))
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  const handle = await connectDatabase({ databaseUrl: url.toString(), poolSize })
  await migrateToLatest(handle.db)
  const server = await onServer(serverUrl, (client) => client.query<{ server_version: string }>('show server_version'))
  const bench: BenchDb = {
    handle,
    description: `PostgreSQL ${server.rows[0]!.server_version} at ${url.host} (scratch database ${name}), pool of ${poolSize}`,
    drop: async () => {
      await handle.close()
      await bench.profiled?.db.destroy()
      await onServer(serverUrl, async (client) => {
        // pool.end() resolves before the sockets close, and a pool whose idle connection the server kills
        // emits an 'error' nobody handles: let them go before FORCE would kill them.
        for (let waited = 0; waited < 5_000; waited += 20) {
          const { rows } = await client.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1', [name])
          if (rows[0]!.n === 0) break
          await sleep(20)
        }
        await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      })
    },
  }
  if (profile) {
    const statements = new Map<string, { count: number; ms: number }>()
    const log = (event: LogEvent) => {
      const key = event.query.sql.replace(/\s+/g, ' ').slice(0, 90)
      const entry = statements.get(key) ?? { count: 0, ms: 0 }
      entry.count += 1
      entry.ms += event.queryDurationMillis
      statements.set(key, entry)
    }
    const pool = new pg.Pool({ connectionString: url.toString(), max: poolSize })
    bench.profiled = { db: new Kysely<Database>({ dialect: new PostgresDialect({ pool }), log }), statements }
  }
  return bench
}

async function onServer<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end()
  }
}

async function setup(db: Db, label: string): Promise<{ store: StoreRow; plan: PlanRow }> {
  const store = await createStore(db, { storeHash: `bench-${label}-${randomBytes(3).toString('hex')}`, mode: 'live' })
  const catalog = testModules(db, { clock: systemClock }).catalog
  const product = await catalog.createProduct(store, { platform_product_id: `p-${label}`, name: 'Coffee beans' })
  const view = await catalog.createPlan(store, { product_id: product.id, name: 'Monthly', amount: 1500, currency: 'USD', interval: 'month' })
  const plan = await db.selectFrom('plans').selectAll().where('id', '=', view.id).executeTakeFirstOrThrow()
  return { store, plan }
}

function checkoutInput(plan: PlanRow, order: string) {
  return {
    platform_order_id: order,
    email: `${order}@example.com`,
    name: 'Ada Lovelace',
    shipping_address: ADDRESS,
    payment_instrument_id: 'instr_9f8e7d',
    items: [{ plan_id: plan.id, quantity: 1 }],
  }
}

/** The rows one checkout of one item writes (subscriber, active subscription, created + activated events, checkout), as plain inserts. */
async function plainInsert(db: Db, store: StoreRow, plan: PlanRow, order: string): Promise<void> {
  const now = new Date()
  const periodEnd = new Date(now)
  periodEnd.setUTCMonth(periodEnd.getUTCMonth() + 1)
  const subscriberId = newId('cus')
  const subscriptionId = newId('sub')
  const subscription = {
    id: subscriptionId,
    store_id: store.id,
    subscriber_id: subscriberId,
    plan_id: plan.id,
    product_id: plan.product_id,
    platform_order_id: order,
    status: 'active' as const,
    quantity: 1,
    amount: plan.amount,
    currency: plan.currency,
    interval: plan.interval,
    interval_count: plan.interval_count,
    payment_instrument_id: 'instr_9f8e7d',
    shipping_address: JSON.stringify(ADDRESS),
    start_at: now,
    trial_days: 0,
    billing_anchor_at: now,
    period_index: 0,
    current_period_start: now,
    current_period_end: periodEnd,
    next_charge_at: periodEnd,
    created_at: now,
    updated_at: now,
  }
  // The event payload the service stores has the subscription's API shape; this one is the same size.
  const view = { ...subscription, object: 'subscription', store_hash: store.store_hash, shipping_address: ADDRESS, version: 1, gift: null, prepaid: null }
  await db.transaction().execute(async (trx) => {
    await trx.insertInto('subscribers').values({ id: subscriberId, store_id: store.id, email: `${order}@example.com`, name: 'Ada Lovelace', shipping_address: JSON.stringify(ADDRESS), created_at: now, updated_at: now }).execute()
    await trx.insertInto('subscriptions').values(subscription).execute()
    for (const [sequence, eventType] of ['subscription.created', 'subscription.activated'].entries()) {
      const id = newId('evt')
      const payload = JSON.stringify({ id, event_type: eventType, timestamp: now.toISOString(), api_version: 'v1', data: view, sequence: sequence + 1 })
      await trx
        .insertInto('events')
        .values({ id, store_id: store.id, entity_type: 'subscription', entity_id: subscriptionId, event_type: eventType, sequence: sequence + 1, occurred_at: now, payload })
        .execute()
    }
    await trx.insertInto('checkouts').values({ store_id: store.id, platform_order_id: order, request_hash: 'x'.repeat(64), subscription_ids: [subscriptionId] }).execute()
  })
}

async function runOrders(count: number, concurrency: number, one: (i: number) => Promise<void>): Promise<Measured> {
  const latencies = new Array<number>(count)
  let next = 0
  const cpu = process.cpuUsage()
  const started = performance.now()
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      for (let i = next++; i < count; i = next++) {
        const at = performance.now()
        await one(i)
        latencies[i] = performance.now() - at
      }
    }),
  )
  const used = process.cpuUsage(cpu)
  return { orders: count, seconds: (performance.now() - started) / 1000, latencies, cpuMs: (used.user + used.system) / 1000 }
}

function combine(rounds: Measured[]): Measured {
  return {
    orders: rounds.reduce((sum, round) => sum + round.orders, 0),
    seconds: rounds.reduce((sum, round) => sum + round.seconds, 0),
    latencies: rounds.flatMap((round) => round.latencies),
    cpuMs: rounds.reduce((sum, round) => sum + round.cpuMs, 0),
  }
}

/** Each order made its subscription, two events and its checkout row: a fast bench that lost rows would be worthless. */
async function verify(db: Db, store: StoreRow, expected: number): Promise<void> {
  const count = async (table: 'subscriptions' | 'events' | 'checkouts' | 'subscribers') =>
    Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('store_id', '=', store.id).executeTakeFirstOrThrow()).n)
  const found = { subscriptions: await count('subscriptions'), subscribers: await count('subscribers'), events: await count('events'), checkouts: await count('checkouts') }
  const wanted = { subscriptions: expected, subscribers: expected, events: 2 * expected, checkouts: expected }
  if (JSON.stringify(found) !== JSON.stringify(wanted)) throw new Error(`store ${store.store_hash}: expected ${JSON.stringify(wanted)}, found ${JSON.stringify(found)}`)
}

/** Where a checkout's time goes on PostgreSQL: every statement the service sends, timed by the driver. */
async function profileService(bench: BenchDb, target: { store: StoreRow; plan: PlanRow }, concurrency: number): Promise<string> {
  if (!bench.profiled) return '\n(--profile times statements on PostgreSQL only)\n'
  const { db, statements } = bench.profiled
  const checkouts = testModules(db, { clock: systemClock }).checkouts
  const orders = 1_000
  const run = await runOrders(orders, concurrency, (i) => checkouts.checkout(target.store, checkoutInput(target.plan, `profile-${i}`), PLATFORM_ORDERS).then(() => undefined))
  const rows = [...statements].sort((a, b) => b[1].ms - a[1].ms)
  const total = rows.reduce((sum, [, entry]) => sum + entry.ms, 0)
  const lines = rows.map(([statement, entry]) => `| ${(entry.count / orders).toFixed(1)} | ${(entry.ms / orders).toFixed(2)} | ${((100 * entry.ms) / total).toFixed(0)}% | \`${statement.replace(/\|/g, '\\|')}\` |`)
  return [
    '',
    `Profile: ${orders} service checkouts, ${concurrency} in flight, ${(orders / run.seconds).toFixed(0)} subscriptions/s with statement logging on.`,
    `Statement time summed over connections: ${(total / orders).toFixed(2)} ms per checkout; wall time per checkout ${(run.latencies.reduce((a, b) => a + b, 0) / orders).toFixed(2)} ms.`,
    '',
    '| per checkout | ms per checkout | share | statement |',
    '|---:|---:|---:|---|',
    ...lines,
    '',
  ].join('\n')
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

function report(r: { startedAt: Date; engine: 'pglite' | 'postgres'; description: string; orders: number; concurrency: number; poolSize: number; base: Measured; svc: Measured }): string {
  const rate = (m: Measured) => m.orders / m.seconds
  const ratio = rate(r.svc) / rate(r.base)
  const row = (name: string, m: Measured) =>
    `| ${name} | ${m.orders} | ${m.seconds.toFixed(2)} | ${rate(m).toFixed(0)} | ${percentile(m.latencies, 50).toFixed(1)} | ${percentile(m.latencies, 99).toFixed(1)} | ${(m.cpuMs / m.orders).toFixed(2)} |`
  const checks = [
    `- ratio to plain inserts: ${ratio.toFixed(2)} (target >= ${TARGETS.minRatio}): ${ratio >= TARGETS.minRatio ? 'met' : 'MISSED'}`,
    r.engine === 'postgres'
      ? `- service on PostgreSQL: ${rate(r.svc).toFixed(0)} subscriptions/s (target >= ${TARGETS.minPostgresPerSecond}): ${rate(r.svc) >= TARGETS.minPostgresPerSecond ? 'met' : 'MISSED'}`
      : `- absolute target (>= ${TARGETS.minPostgresPerSecond}/s) applies to PostgreSQL only`,
  ]
  const cpu = cpus()[0]?.model ?? 'unknown CPU'
  return [
    `Checkout ingestion, ${r.startedAt.toISOString()}`,
    `Database: ${r.description}`,
    `Machine: ${availableParallelism()} CPUs (${cpu}), Node ${process.version}, ${process.platform}/${process.arch}`,
    `Load: ${r.orders} orders x 1 item per side after ${WARMUP_ORDERS} warm-up orders each, ${r.concurrency} in flight, ${ROUNDS} alternating rounds`,
    '',
    '| path | subscriptions | seconds | subscriptions/s | p50 ms | p99 ms | Node CPU ms per order |',
    '|---|---:|---:|---:|---:|---:|---:|',
    row('plain inserts (baseline)', r.base),
    row('checkout service', r.svc),
    '',
    ...checks,
    '',
  ].join('\n')
}

await main()
