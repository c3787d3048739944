// Renewal throughput: due subscriptions renewed per second by the renewal engine (claim, pending charge,
// test gateway call, settlement), with the gateway answering at once and after a simulated delay,
// against plain SQL writing the same rows in the same run.
// Usage: npm run bench:renewals [-- --subscriptions N --latency-subscriptions N --workers N --batch N --concurrency N --latency-ms N --pool N --profile]
//        DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:renewals
import { performance } from 'node:perf_hooks'
import type { Engine } from '../src/db/connect.ts'
import type { Db } from '../src/db/database.ts'
import { systemClock } from '../src/lib/clock.ts'
import { createTestGateway, type GatewayResolver, type RenewalCounts } from '../src/modules/billing/index.ts'
import { cpuTimes } from './lib/cpu.ts'
import { runDatabaseBench, type DatabaseBench } from './lib/database-bench.ts'
import { runBench } from './lib/harness.ts'
import { machineSummary, markdownTable, type Align } from './lib/report.ts'
import { dueSubscriptions, plainRenewalBatch, seedDueSubscriptions, tidyTables, verifyRenewed, type SeededStore } from './lib/renewal-workload.ts'
import { readBenchOptions } from './lib/settings.ts'
import { StatementProfiler } from './lib/statement-profiler.ts'
import { testModules } from '../test/helpers/modules.ts'

const TARGETS = { minRatio: 0.3, minPostgresPerSecond: 1_000, minPostgresPerSecondWithLatency: 300 }
const DEFAULTS = {
  pglite: { subscriptions: 10_000, latencySubscriptions: 3_000 },
  postgres: { subscriptions: 50_000, latencySubscriptions: 10_000 },
  // The service's own: 4 billing.renewals job instances, BILLING_BATCH_SIZE 200, BILLING_CONCURRENCY 64, a pool of 10.
  workers: 4,
  batch: 200,
  concurrency: 64,
  latencyMs: 100,
  pool: 10,
}
const PROFILE_SUBSCRIPTIONS = 2_000

const USAGE = `npm run bench:renewals [-- options]
  --subscriptions N          due subscriptions for the baseline and the 0 ms gateway run (default ${DEFAULTS.postgres.subscriptions} on PostgreSQL, ${DEFAULTS.pglite.subscriptions} on PGlite)
  --latency-subscriptions N  due subscriptions for the run with gateway latency (default ${DEFAULTS.postgres.latencySubscriptions} on PostgreSQL, ${DEFAULTS.pglite.latencySubscriptions} on PGlite)
  --latency-ms N             the test gateway's simulated latency in that run (default ${DEFAULTS.latencyMs})
  --workers N                renewal loops (job instances) running at once over the shared pool (default ${DEFAULTS.workers})
  --batch N                  subscriptions claimed per runDue, and rows per baseline transaction (default ${DEFAULTS.batch})
  --concurrency N            gateway calls in flight per batch (default ${DEFAULTS.concurrency})
  --pool N                   PostgreSQL pool size (default ${DEFAULTS.pool}; PGlite has one connection)
  --profile                  afterwards, renew ${PROFILE_SUBSCRIPTIONS} more one at a time with every statement counted and timed
Set DATABASE_URL to a PostgreSQL server to bench on a scratch database there; PGlite otherwise.
`

interface Settings {
  subscriptions: number
  latencySubscriptions: number
  latencyMs: number
  workers: number
  batch: number
  concurrency: number
  pool: number
  profile: boolean
}

interface Measured {
  renewals: number
  seconds: number
  /** CPU this process spent (user + system): the engine's share; the rest of the machine's is mostly the database's. */
  cpuMs: number
  /** How busy all CPUs of the machine were during the run. */
  machineBusy: number
  batches: number
}

/** In order: the baseline, the engine at 0 ms, the engine with gateway latency. */
interface Case {
  name: string
  measured: Measured
}

function readSettings(engine: Engine): Settings | undefined {
  const options = readBenchOptions(['subscriptions', 'latency-subscriptions', 'latency-ms', 'workers', 'batch', 'concurrency', 'pool'], USAGE)
  if (!options) return undefined
  const { whole } = options
  return {
    subscriptions: whole('subscriptions', DEFAULTS[engine].subscriptions),
    latencySubscriptions: whole('latency-subscriptions', DEFAULTS[engine].latencySubscriptions),
    latencyMs: whole('latency-ms', DEFAULTS.latencyMs, 0),
    workers: whole('workers', DEFAULTS.workers),
    batch: whole('batch', DEFAULTS.batch),
    concurrency: whole('concurrency', DEFAULTS.concurrency),
    pool: whole('pool', DEFAULTS.pool),
    profile: options.profile,
  }
}

async function main({ db, engine, settings, startedAt, background, description }: DatabaseBench<Settings>): Promise<void> {

  const warmup = Math.min(settings.subscriptions, settings.workers * settings.batch * 2)
  progress(`warm-up: ${warmup} renewals through each path (unmeasured)`)
  await baselineCase(db, 'warmup-plain', warmup, settings)
  await engineCase(db, 'warmup-engine', warmup, 0, settings)

  const cases: Case[] = []
  progress(`baseline: plain SQL writing the rows of ${settings.subscriptions} renewals`)
  cases.push({ name: 'plain SQL (baseline)', measured: await baselineCase(db, 'plain', settings.subscriptions, settings) })
  progress(`engine: ${settings.subscriptions} renewals, gateway latency 0 ms`)
  cases.push({ name: 'renewal engine, gateway 0 ms', measured: await engineCase(db, 'engine0', settings.subscriptions, 0, settings) })
  progress(`engine: ${settings.latencySubscriptions} renewals, gateway latency ${settings.latencyMs} ms`)
  cases.push({ name: `renewal engine, gateway ${settings.latencyMs} ms`, measured: await engineCase(db, 'engine-latency', settings.latencySubscriptions, settings.latencyMs, settings) })

  let profile = ''
  if (settings.profile) {
    progress(`profile: ${PROFILE_SUBSCRIPTIONS} renewals with every statement timed`)
    profile = await profileEngine(db, settings)
  }
  process.stdout.write(report({ startedAt, engine, description, background, settings, warmup, cases }) + profile)
}

function progress(message: string): void {
  process.stderr.write(`${message}\n`)
}

async function seed(db: Db, label: string, count: number): Promise<SeededStore> {
  const seeded = await seedDueSubscriptions(db, label, count, new Date())
  await tidyTables(db)
  return seeded
}

/** Runs `work` and what it cost: wall time, this process's CPU, and how busy the machine's CPUs were. */
async function timed(renewals: number, work: () => Promise<number>): Promise<Measured> {
  const machine = cpuTimes()
  const cpu = process.cpuUsage()
  const started = performance.now()
  const batches = await work()
  const seconds = (performance.now() - started) / 1000
  const used = process.cpuUsage(cpu)
  const after = cpuTimes()
  const machineBusy = after.total > machine.total ? (after.busy - machine.busy) / (after.total - machine.total) : 0
  return { renewals, seconds, cpuMs: (used.user + used.system) / 1000, machineBusy, batches }
}

/** The rows of `count` renewals written by plain SQL: `workers` loops taking batches of `batch` from one list. */
async function baselineCase(db: Db, label: string, count: number, settings: Settings): Promise<Measured> {
  const seeded = await seed(db, label, count)
  const due = await dueSubscriptions(db, seeded.store)
  let next = 0
  const measured = await timed(count, async () => {
    let batches = 0
    await Promise.all(
      Array.from({ length: settings.workers }, async () => {
        for (let from = next; from < due.length; from = next) {
          next += settings.batch
          batches++
          await plainRenewalBatch(db, seeded.store, due.slice(from, from + settings.batch))
        }
      }),
    )
    return batches
  })
  await verifyRenewed(db, seeded, new Date())
  return measured
}

/** `count` due renewals through the engine: `workers` loops calling runDue until nothing is claimed, as the job instances do. */
async function engineCase(db: Db, label: string, count: number, latencyMs: number, settings: Settings, engineDb: Db = db): Promise<Measured> {
  const seeded = await seed(db, label, count)
  const gateway = createTestGateway(engineDb, { latencyMs })
  const gateways: GatewayResolver = { forStore: () => gateway, byName: () => gateway }
  const renewals = testModules(engineDb).renewalEngine({ clock: systemClock, gateways, concurrency: settings.concurrency, batchSize: settings.batch })
  const totals: RenewalCounts = { claimed: 0, renewals: 0, retries: 0, expirations: 0, unsettled: 0, setAside: 0 }
  const measured = await timed(count, async () => {
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
    return batches
  })
  const expected = { claimed: count, renewals: count, retries: 0, expirations: 0, unsettled: 0, setAside: 0 }
  if (JSON.stringify(totals) !== JSON.stringify(expected)) throw new Error(`${label}: runDue counted ${JSON.stringify(totals)}, expected ${JSON.stringify(expected)}`)
  await verifyRenewed(db, seeded, new Date())
  return measured
}

/** Where a renewal's time goes: every statement the engine and the test gateway send, counted and timed. */
async function profileEngine(db: Db, settings: Settings): Promise<string> {
  const profiler = new StatementProfiler((node, queryId) => db.getExecutor().compileQuery(node, queryId).sql)
  // One loop and one call in flight: no statement waits for another, so the times add up to the wall time.
  const sequential = { ...settings, workers: 1, concurrency: 1 }
  const measured = await engineCase(db, 'profile', PROFILE_SUBSCRIPTIONS, 0, sequential, db.withPlugin(profiler))
  const rows = [...profiler.statements].sort((a, b) => b[1].ms - a[1].ms)
  const total = rows.reduce((sum, [, entry]) => sum + entry.ms, 0)
  const n = measured.renewals
  const statements = rows.reduce((sum, [, entry]) => sum + entry.count, 0)
  const table = markdownTable(
    ['per renewal', 'ms per renewal', 'share', 'statement'],
    rows.map(([statement, entry]) => [(entry.count / n).toFixed(3), (entry.ms / n).toFixed(3), `${((100 * entry.ms) / total).toFixed(0)}%`, `\`${statement.replace(/\|/g, '\\|')}\``]),
    ['right', 'right', 'right', 'left'],
  )
  return [
    '',
    `Profile: ${n} renewals, gateway 0 ms, run sequentially (1 loop, 1 gateway call in flight, batch ${settings.batch}) so that statement times add up: ${(n / measured.seconds).toFixed(0)} renewals/s with the profiler on; ${measured.batches} batches.`,
    `${(statements / n).toFixed(2)} statements per renewal, ${(total / n).toFixed(3)} ms per renewal in statements (compile, round trip, decode) out of ${((1000 * measured.seconds) / n).toFixed(3)} ms wall; the rest is engine JavaScript and BEGIN/COMMIT (2 transactions per batch, not seen by the profiler). Node CPU ${((1000 * measured.cpuMs) / n).toFixed(0)} µs per renewal.`,
    '',
    table,
    '',
  ].join('\n')
}

function report(r: { startedAt: Date; engine: Engine; description: string; background: string; settings: Settings; warmup: number; cases: Case[] }): string {
  const { settings } = r
  const rate = (m: Measured) => m.renewals / m.seconds
  const baseline = r.cases[0]!.measured
  const rows = r.cases.map(({ name, measured }) => [
    name,
    measured.renewals.toLocaleString('en-US'),
    measured.seconds.toFixed(2),
    Math.round(rate(measured)).toLocaleString('en-US'),
    measured === baseline ? '1.00' : (rate(measured) / rate(baseline)).toFixed(2),
    ((1000 * measured.cpuMs) / measured.renewals).toFixed(0),
    `${Math.round(100 * measured.machineBusy)}%`,
  ])
  const headers = ['path', 'renewals', 'seconds', 'renewals/s', 'ratio to baseline', 'Node CPU µs per renewal', 'machine CPU busy']
  const [, zero, latency] = r.cases
  const ratio = rate(zero!.measured) / rate(baseline)
  const onPostgres = r.engine === 'postgres'
  const absolute = (value: number, minimum: number) => (onPostgres ? (value >= minimum ? 'PASS' : 'MISS') : `${value >= minimum ? 'PASS' : 'MISS'} (PostgreSQL target; informational here)`)
  const checks = markdownTable(
    ['check', 'value', 'target', 'result'],
    [
      ['engine at 0 ms / plain SQL', ratio.toFixed(2), `>= ${TARGETS.minRatio}`, ratio >= TARGETS.minRatio ? 'PASS' : 'MISS'],
      ['renewals/s, gateway 0 ms', Math.round(rate(zero!.measured)).toLocaleString('en-US'), `>= ${TARGETS.minPostgresPerSecond.toLocaleString('en-US')}`, absolute(rate(zero!.measured), TARGETS.minPostgresPerSecond)],
      [`renewals/s, gateway ${settings.latencyMs} ms`, Math.round(rate(latency!.measured)).toLocaleString('en-US'), `>= ${TARGETS.minPostgresPerSecondWithLatency}`, absolute(rate(latency!.measured), TARGETS.minPostgresPerSecondWithLatency)],
    ],
    ['left', 'right', 'left', 'left'],
  )
  // With the gateway the only cost, each batch takes ceil(batch / concurrency) latencies.
  const ceiling = settings.latencyMs > 0 ? (settings.workers * settings.batch) / (Math.ceil(settings.batch / settings.concurrency) * (settings.latencyMs / 1000)) : Infinity
  return [
    `Renewals, ${r.startedAt.toISOString()}`,
    `- database: ${r.description}`,
    `- machine: ${machineSummary()}; CPUs ${r.background} busy with other work just before the run${parseInt(r.background, 10) >= 25 ? ' (WARNING: other work competes for the CPUs; every figure below is lower than on a quiet machine)' : ''}`,
    `- load: ${settings.workers} renewal loops (job instances) sharing the connection${onPostgres ? ' pool' : ''}, batch ${settings.batch}, ${settings.concurrency} gateway calls in flight per batch; test gateway, every charge succeeds${onPostgres ? '' : ' (PGlite runs in this process: Node CPU includes the database)'}`,
    `- subscriptions: ${settings.subscriptions.toLocaleString('en-US')} due for the baseline and the 0 ms run, ${settings.latencySubscriptions.toLocaleString('en-US')} for the ${settings.latencyMs} ms run (fewer, to keep the run short); each case on a fresh seed (a store of its own) after ${r.warmup} unmeasured warm-up renewals per path`,
    `- baseline: the same rows (succeeded charge, gateway ledger row, subscription.charged and charge.succeeded events, period advance) written by plain SQL, one transaction of 4 statements per batch of ${settings.batch}, same loops and pool`,
    `- verified after each run: every subscription has exactly one succeeded charge, one gateway ledger row, both events, and moved on to its next period`,
    ...(settings.latencyMs > 0 ? [`- gateway-bound ceiling at ${settings.latencyMs} ms: ${Math.round(ceiling).toLocaleString('en-US')} renewals/s (${settings.workers} loops x ${settings.batch} per ${Math.ceil(settings.batch / settings.concurrency)} latencies)`] : []),
    '',
    markdownTable(headers, rows, ['left', ...headers.slice(1).map((): Align => 'right')]),
    '',
    checks,
    '',
  ].join('\n')
}

await runBench(() => runDatabaseBench(readSettings, main))
