// Import throughput and memory: a `native` CSV file of N subscriptions imported by the imports
// service exactly as the CLI runs it (a file read as a stream, batches of 500, each batch's subscribers,
// subscriptions, subscription.imported events and progress in one transaction), timed, with the heap
// sampled; at N and N/4 to show memory does not grow with the file; against plain SQL writing the same
// subscribers and subscriptions rows in batches of 500 in the same run (the floor an import can approach).
// Usage: npm run bench:import [-- --rows N --small-rows N --recharge-rows N --warmup-rows N --sample-ms N --pool N --profile]
//        DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:import
import { createReadStream } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'
import { sql, type Insertable } from 'kysely'
import { DateTime } from 'luxon'
import type { Engine } from '../src/db/connect.ts'
import type { Db, PlanRow, StoreRow, SubscribersTable, SubscriptionsTable } from '../src/db/database.ts'
import { COMMAND_LINE } from '../src/http/actors.ts'
import { systemClock } from '../src/lib/clock.ts'
import { newId } from '../src/lib/ids.ts'
import { createImportsModule, type ImportView } from '../src/modules/imports/index.ts'
import { createStore } from '../src/modules/stores/index.ts'
import { deferCleanup } from './lib/cleanup.ts'
import { cpuSecondsOf, cpuTimes } from './lib/cpu.ts'
import { runDatabaseBench, type DatabaseBench } from './lib/database-bench.ts'
import { runBench } from './lib/harness.ts'
import { writeNativeFile, writeRechargeFile } from './lib/import-files.ts'
import { machineSummary, markdownTable, type Align } from './lib/report.ts'
import { readBenchOptions } from './lib/settings.ts'
import { StatementProfiler, type CompileStatement } from './lib/statement-profiler.ts'
import { cpuTables, profileCpu, type CpuBreakdown } from './lib/webhook-cpu-profile.ts'
import { testModules } from '../test/helpers/modules.ts'

const TARGETS = {
  /** The JS heap's peak while 100,000 rows import: bounded, whatever the file's size. */
  maxHeapPeakMb: 256,
  /** Heap peak at N over heap peak at N/4: roughly flat (a heap that grew with the file would be ~4). */
  maxHeapPeakGrowth: 1.5,
  /** 100,000 rows in under 100 s: a store's whole base moves within its cutover window. */
  minRowsPerSecond: 1_000,
}
const DEFAULTS = { rows: 100_000, rechargeRows: 20_000, warmupRows: 2_000, sampleMs: 20, pool: 10 }
/** The import's own batch (imports.service.ts IMPORT_BATCH_ROWS); the baseline writes the same. */
const BATCH = 500
const PROFILE_ROWS = 20_000
const MB = 1024 * 1024

const USAGE = `npm run bench:import [-- options]
  --rows N           rows of the large native file, and of the plain-SQL baseline (default ${DEFAULTS.rows})
  --small-rows N     rows of the small native file the large one's memory is compared with (default rows / 4)
  --recharge-rows N  rows of a recharge file imported on a test-gateway store afterwards; 0 skips it (default ${DEFAULTS.rechargeRows})
  --warmup-rows N    rows imported and written by the baseline, unmeasured, first (default ${DEFAULTS.warmupRows})
  --sample-ms N      how often a timer samples the heap, besides after each batch (default ${DEFAULTS.sampleMs})
  --pool N           PostgreSQL pool size (default ${DEFAULTS.pool}; PGlite has one connection; an import uses one at a time)
  --profile          afterwards, import ${PROFILE_ROWS} more rows with the V8 CPU profiler and every statement timed
Set DATABASE_URL to a PostgreSQL server to bench on a scratch database there; PGlite otherwise.
Run with node --expose-gc (the npm script does) so that each run starts from a collected heap.
`

interface Settings {
  rows: number
  smallRows: number
  rechargeRows: number
  warmupRows: number
  sampleMs: number
  pool: number
  profile: boolean
}

interface Memory {
  /** Live heap after a full GC just before the run. */
  heapBeforeMb: number
  /** Largest heapUsed seen by the timer or after a batch. */
  heapPeakMb: number
  /** The same, in each quarter of the rows. */
  heapPeakByQuarterMb: number[]
  /** Wall time of each quarter of the rows (0: not told apart, a run of one batch). */
  secondsByQuarter: number[]
  /** Live heap after a full GC at the last batch (undefined without --expose-gc, or for the baseline). */
  liveAtEndMb: number | undefined
  /** Largest RSS seen by the same samples. */
  rssPeakMb: number
  /** process.resourceUsage().maxRSS after the run: the process's peak so far, not this run's alone. */
  maxRssMb: number
  samples: number
}

interface Measured extends Memory {
  name: string
  rows: number
  bytes: number | undefined
  seconds: number
  cpuMs: number
  databaseCpuMs: number | undefined
  machineBusy: number
}

function readSettings(_engine: Engine): Settings | undefined {
  const options = readBenchOptions(['rows', 'small-rows', 'recharge-rows', 'warmup-rows', 'sample-ms', 'pool'], USAGE)
  if (!options) return undefined
  const { whole } = options
  const rows = whole('rows', DEFAULTS.rows, BATCH)
  return {
    rows,
    smallRows: whole('small-rows', Math.round(rows / 4)),
    rechargeRows: whole('recharge-rows', DEFAULTS.rechargeRows, 0),
    warmupRows: whole('warmup-rows', DEFAULTS.warmupRows, 0),
    sampleMs: whole('sample-ms', DEFAULTS.sampleMs),
    pool: whole('pool', DEFAULTS.pool),
    profile: options.profile,
  }
}

const gc = (globalThis as { gc?: () => void }).gc

function progress(message: string): void {
  process.stderr.write(`${message}\n`)
}

/**
 * heapUsed and RSS sampled by a timer and on demand (after each batch): a peak, not an average; the
 * heap's peak also by quarter of the file (the caller says which quarter it is in), so a heap that
 * grows with the rows read shows within one run.
 */
function memorySampler(intervalMs: number) {
  let heapPeak = 0
  let rssPeak = 0
  let samples = 0
  let quarter = 0
  const quarters = [0, 0, 0, 0]
  const quarterStarted = [performance.now(), 0, 0, 0]
  const sample = () => {
    const { heapUsed, rss } = process.memoryUsage()
    if (heapUsed > heapPeak) heapPeak = heapUsed
    if (heapUsed > quarters[quarter]!) quarters[quarter] = heapUsed
    if (rss > rssPeak) rssPeak = rss
    samples++
  }
  sample()
  const timer = setInterval(sample, intervalMs)
  return {
    sample,
    /** From now on samples count for this quarter (0-3) of the file. */
    quarter: (index: number) => {
      const next = Math.min(3, Math.max(0, index))
      for (let q = quarter + 1; q <= next; q++) quarterStarted[q] = performance.now()
      quarter = Math.max(quarter, next)
    },
    stop: () => {
      clearInterval(timer)
      sample()
      const ended = performance.now()
      const secondsByQuarter = quarterStarted.map((started, q) => (started === 0 || (q < 3 && quarterStarted[q + 1] === 0) ? 0 : ((q < 3 ? quarterStarted[q + 1]! : ended) - started) / 1000))
      return { heapPeakMb: heapPeak / MB, heapPeakByQuarterMb: quarters.map((bytes) => bytes / MB), secondsByQuarter, rssPeakMb: rssPeak / MB, samples }
    },
  }
}

function liveHeapMb(): number | undefined {
  if (!gc) return undefined
  gc()
  return process.memoryUsage().heapUsed / MB
}

/** CPU seconds of each PostgreSQL backend serving this database (when the server runs on this machine); undefined on PGlite. */
async function backendCpu(db: Db, engine: Engine): Promise<Map<number, number> | undefined> {
  if (engine !== 'postgres') return undefined
  const { rows } = await sql<{ pid: number }>`SELECT pid FROM pg_stat_activity WHERE datname = current_database()`.execute(db)
  const cpu = new Map<number, number>()
  for (const { pid } of rows) {
    const seconds = cpuSecondsOf(pid)
    if (seconds === undefined) return undefined
    cpu.set(pid, seconds)
  }
  return cpu
}

/** Runs `work` with its wall time, this process's and the database backends' CPU, the machine's load and memory sampled. */
async function measured(db: Db, engine: Engine, sampleMs: number, work: (sampler: { sample: () => void; quarter: (index: number) => void }) => Promise<{ liveAtEndMb?: number | undefined }>): Promise<Omit<Measured, 'name' | 'rows' | 'bytes'>> {
  const heapBeforeMb = liveHeapMb() ?? process.memoryUsage().heapUsed / MB
  const backendsBefore = await backendCpu(db, engine)
  const machine = cpuTimes()
  const cpu = process.cpuUsage()
  const sampler = memorySampler(sampleMs)
  const started = performance.now()
  const { liveAtEndMb } = await work(sampler)
  const seconds = (performance.now() - started) / 1000
  const memory = sampler.stop()
  const used = process.cpuUsage(cpu)
  const after = cpuTimes()
  const backendsAfter = await backendCpu(db, engine)
  let databaseCpuMs: number | undefined
  if (backendsBefore && backendsAfter) {
    databaseCpuMs = 0
    for (const [pid, seconds] of backendsAfter) databaseCpuMs += (seconds - (backendsBefore.get(pid) ?? 0)) * 1000
  }
  return {
    seconds,
    cpuMs: (used.user + used.system) / 1000,
    databaseCpuMs,
    machineBusy: after.total > machine.total ? (after.busy - machine.busy) / (after.total - machine.total) : 0,
    heapBeforeMb,
    ...memory,
    liveAtEndMb,
    maxRssMb: process.resourceUsage().maxRSS / 1024,
  }
}

interface Shop {
  store: StoreRow
  plan: PlanRow
  platformProductId: string
}

/** A test-mode store (test gateway) with one product and its monthly USD plan. */
async function shop(db: Db, label: string): Promise<Shop> {
  const store = await createStore(db, { storeHash: `bench-import-${label}-${Math.random().toString(36).slice(2, 8)}`, mode: 'test' })
  const catalog = testModules(db, { clock: systemClock }).catalog
  const platformProductId = '101'
  const product = await catalog.createProduct(store, { platform_product_id: platformProductId, name: 'Coffee beans' })
  const view = await catalog.createPlan(store, { product_id: product.id, name: 'Monthly', amount: 1250, currency: 'USD', interval: 'month' })
  const plan = await db.selectFrom('plans').selectAll().where('id', '=', view.id).executeTakeFirstOrThrow()
  return { store, plan, platformProductId }
}

/**
 * The imports service as the composition root builds it for a store on the test gateway: the event log
 * with the notifications module's reaction (src/services.ts); a test-mode store never calls the platform.
 */
function importsService(db: Db) {
  const { events } = testModules(db, { clock: systemClock })
  return createImportsModule({ db, clock: systemClock, events }).service
}

/** How a case's measured part runs: as it is, or inside a profiler (--profile). */
type Around = <T>(run: () => Promise<T>) => Promise<T>

interface CaseOptions {
  /** The database the service (or the baseline's writes) uses: a profiled one for --profile. */
  db?: Db
  sampleMs?: number
  around?: Around
}

async function importCase(bench: DatabaseBench<Settings>, dir: string, name: string, format: 'native' | 'recharge', rows: number, options: CaseOptions = {}): Promise<Measured> {
  const { db, engine, settings } = bench
  const label = `${format}-${rows}`
  const target = await shop(db, label)
  const file = join(dir, `${label}.csv`)
  const bytes =
    format === 'native'
      ? await writeNativeFile(file, { count: rows, planId: target.plan.id, nextChargeAt: DateTime.utc().plus({ days: 3 }).startOf('hour').toJSDate(), prefix: `n${rows}` })
      : await writeRechargeFile(file, { count: rows, platformProductId: target.platformProductId, today: DateTime.utc().startOf('day'), prefix: `r${rows}-` })
  const service = importsService(options.db ?? db)
  let report: ImportView | undefined
  const around: Around = options.around ?? ((run) => run())
  const result = await around(() => measured(db, engine, options.sampleMs ?? settings.sampleMs, async ({ sample, quarter }) => {
    let liveAtEndMb: number | undefined
    report = await service.run(target.store, createReadStream(file), {
      format,
      dryRun: false,
      actor: COMMAND_LINE,
      bytesTotal: bytes,
      onProgress: (view) => {
        sample()
        quarter(Math.floor((4 * view.rows) / rows))
        // After the last batch, before the import returns: what it still holds (the ids it has seen, its caches).
        if (view.rows >= rows) liveAtEndMb = liveHeapMb()
      },
    })
    return { liveAtEndMb }
  }))
  await rm(file)
  const counts = [report!.status, report!.rows, report!.created, report!.skipped, report!.failed]
  if (JSON.stringify(counts) !== JSON.stringify(['completed', rows, rows, 0, 0])) throw new Error(`${name}: the import reported ${JSON.stringify(report)}, expected ${rows} rows created`)
  await verifyStore(db, name, target.store, rows, true)
  return { name, rows, bytes, ...result }
}

/** Every row is a subscription of the store with its subscriber, and (for an import) its subscription.imported event. */
async function verifyStore(db: Db, name: string, store: StoreRow, rows: number, imported: boolean): Promise<void> {
  const count = async (table: 'subscriptions' | 'subscribers') => Number((await db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).where('store_id', '=', store.id).executeTakeFirstOrThrow()).n)
  const subscriptions = await count('subscriptions')
  const subscribers = await count('subscribers')
  const events = imported
    ? Number((await db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('store_id', '=', store.id).where('event_type', '=', 'subscription.imported').executeTakeFirstOrThrow()).n)
    : rows
  if (subscriptions !== rows || subscribers !== rows || events !== rows) throw new Error(`${name}: ${subscriptions} subscriptions, ${subscribers} subscribers, ${events} events; expected ${rows} of each`)
}

/**
 * The floor: the subscribers and subscriptions an import of the native file writes, as plain INSERTs
 * built in JavaScript (no CSV, no checks, no matching, no events, no progress row), one transaction of
 * two statements per batch of 500.
 */
async function baselineCase(bench: DatabaseBench<Settings>, name: string, rows: number, options: CaseOptions = {}): Promise<Measured> {
  const { db, engine, settings } = bench
  const writer = options.db ?? db
  const { store, plan } = await shop(db, `plain-${rows}`)
  const firstCharge = DateTime.utc().plus({ days: 3 }).startOf('hour').toMillis()
  const result = await measured(db, engine, options.sampleMs ?? settings.sampleMs, async ({ sample, quarter }) => {
    for (let from = 0; from < rows; from += BATCH) {
      quarter(Math.floor((4 * from) / rows))
      const at = new Date()
      const subscribers: Insertable<SubscribersTable>[] = []
      const subscriptions: Insertable<SubscriptionsTable>[] = []
      for (let i = from; i < Math.min(rows, from + BATCH); i++) {
        const subscriberId = newId('cus')
        const next = new Date(firstCharge + i * 60_000)
        subscribers.push({ id: subscriberId, store_id: store.id, email: `plain-${i}@example.com`, name: `Subscriber ${i}`, shipping_address: null, platform_customer_id: null, created_at: at, updated_at: at })
        subscriptions.push({
          id: newId('sub'),
          store_id: store.id,
          subscriber_id: subscriberId,
          external_id: `plain-${i}`,
          plan_id: plan.id,
          product_id: plan.product_id,
          platform_order_id: '',
          status: 'active',
          quantity: 1,
          amount: 1000 + (i % 500),
          currency: 'USD',
          interval: 'month',
          interval_count: 1,
          payment_instrument_id: `tok_${i}`,
          platform_variant_id: null,
          start_at: at,
          billing_anchor_at: next,
          period_index: -1,
          current_period_start: null,
          current_period_end: null,
          next_charge_at: next,
          prepaid_cycles_total: null,
          prepaid_cycles_remaining: null,
          created_at: at,
          updated_at: at,
        })
      }
      await writer.transaction().execute(async (trx) => {
        await trx.insertInto('subscribers').values(subscribers).execute()
        await trx.insertInto('subscriptions').values(subscriptions).execute()
      })
      sample()
    }
    return {}
  })
  await verifyStore(db, name, store, rows, false)
  return { name, rows, bytes: undefined, ...result }
}

async function main(bench: DatabaseBench<Settings>): Promise<void> {
  const { settings } = bench
  if (!gc) progress('note: run with node --expose-gc (npm run bench:import does) for the heap before each run and the live heap at its end')
  // Opening PGlite (and migrating) has its own RSS peak, before any import: the baseline of the maxRSS column.
  const maxRssAtStartMb = process.resourceUsage().maxRSS / 1024
  const dir = await mkdtemp(join(tmpdir(), 'bench-import-'))
  deferCleanup(() => rm(dir, { recursive: true, force: true }))

  if (settings.warmupRows > 0) {
    progress(`warm-up: ${settings.warmupRows} rows through each path (unmeasured)`)
    await importCase(bench, dir, 'warm-up import', 'native', settings.warmupRows)
    await baselineCase(bench, 'warm-up baseline', settings.warmupRows)
  }
  // The small file first: the process's maxRSS only ever grows, so after it, it is the small run's (and the warm-up's).
  const cases: Measured[] = []
  progress(`import: native file of ${settings.smallRows} rows`)
  cases.push(await importCase(bench, dir, 'import, native', 'native', settings.smallRows))
  progress(`baseline: plain SQL writing ${settings.rows} subscribers and subscriptions`)
  cases.push(await baselineCase(bench, 'plain SQL (baseline)', settings.rows))
  progress(`import: native file of ${settings.rows} rows`)
  cases.push(await importCase(bench, dir, 'import, native', 'native', settings.rows))
  if (settings.rechargeRows > 0) {
    progress(`import: recharge file of ${settings.rechargeRows} rows (test-gateway store)`)
    cases.push(await importCase(bench, dir, 'import, recharge', 'recharge', settings.rechargeRows))
  }
  let profile = ''
  if (settings.profile) {
    progress(`profile: native file of ${PROFILE_ROWS} rows with the CPU profiler and statement timing`)
    profile = await profileImport(bench, dir)
  }
  process.stdout.write(report(bench, cases, maxRssAtStartMb) + profile)
}

/**
 * Where an import's time goes: this process's CPU by area and function, and every statement it sends,
 * timed; beside the statements of the baseline writing as many rows, to show what the import adds.
 */
async function profileImport(bench: DatabaseBench<Settings>, dir: string): Promise<string> {
  const { db } = bench
  const compile: CompileStatement = (node, queryId) => db.getExecutor().compileQuery(node, queryId).sql
  const profiler = new StatementProfiler(compile, { keyLength: 100 })
  let breakdown: CpuBreakdown | undefined
  const around: Around = async (run) => {
    const profiled = await profileCpu(run, 'import')
    breakdown = profiled.breakdown
    return profiled.value
  }
  const run = await importCase(bench, dir, 'profile', 'native', PROFILE_ROWS, { db: db.withPlugin(profiler), sampleMs: 1_000, around })
  const baselineProfiler = new StatementProfiler(compile, { keyLength: 100 })
  const baseline = await baselineCase(bench, 'profile baseline', PROFILE_ROWS, { db: db.withPlugin(baselineProfiler), sampleMs: 1_000 })
  const cpu = breakdown!
  const n = run.rows
  const perRow = (ms: number) => ((1000 * ms) / n).toFixed(1)
  const statements = (profiler: StatementProfiler, seconds: number, label: string) => {
    const rows = [...profiler.statements].sort((a, b) => b[1].ms - a[1].ms)
    const total = rows.reduce((sum, [, entry]) => sum + entry.ms, 0)
    return [
      `${label}: ${Math.round(n / seconds).toLocaleString('en-US')} rows/s; statements (compile, round trip, decode; BEGIN/COMMIT not seen) ${perRow(total)} µs per row of the wall's ${((1_000_000 * seconds) / n).toFixed(0)}.`,
      '',
      markdownTable(
        ['per 1,000 rows', 'µs per row', 'ms per statement', 'share', 'statement'],
        rows.map(([statement, entry]) => [((1000 * entry.count) / n).toFixed(1), perRow(entry.ms), (entry.ms / entry.count).toFixed(2), `${((100 * entry.ms) / total).toFixed(0)}%`, `\`${statement.replace(/\|/g, '\\|')}\``]),
        ['right', 'right', 'right', 'right', 'left'],
      ),
      '',
    ]
  }
  return [
    '',
    `Profile: ${n} native rows imported with the V8 profiler and statement timing on, then the baseline writing ${n} rows with statement timing on.${bench.engine === 'pglite' ? " On PGlite a statement's time includes the database executing it, in this process." : ''}`,
    '',
    ...statements(profiler, run.seconds, 'Import'),
    ...statements(baselineProfiler, baseline.seconds, 'Baseline'),
    `The import's CPU in this process (V8 sampling profiler, ${cpu.totalMs.toFixed(0)} ms of samples, ${perRow(cpu.totalMs)} µs per row${bench.engine === 'pglite' ? ', PGlite included' : ''}; profile in ${cpu.file}), self time by area:`,
    '',
    ...cpuTables(cpu, n, 'row'),
    '',
  ].join('\n')
}

function report(bench: DatabaseBench<Settings>, cases: Measured[], maxRssAtStartMb: number): string {
  const { settings, engine } = bench
  const onPglite = engine === 'pglite'
  const rate = (m: Measured) => m.rows / m.seconds
  const baseline = cases.find((c) => c.name.startsWith('plain'))!
  const small = cases.find((c) => c.name === 'import, native' && c.rows === settings.smallRows)!
  const large = cases.find((c) => c.name === 'import, native' && c.rows === settings.rows)!
  const mb = (value: number | undefined) => (value === undefined ? '-' : value.toFixed(0))
  const headers = ['path', 'rows', 'file MB', 'seconds', 'rows/s', 'ratio to baseline', 'Node CPU µs/row', ...(onPglite ? [] : ['database CPU µs/row']), 'heap before MB', 'heap peak MB', 'live heap at end MB', 'RSS peak MB', 'process maxRSS MB', 'machine busy']
  const rows = cases.map((m) => [
    m.name,
    m.rows.toLocaleString('en-US'),
    m.bytes === undefined ? '-' : (m.bytes / MB).toFixed(1),
    m.seconds.toFixed(1),
    Math.round(rate(m)).toLocaleString('en-US'),
    m === baseline ? '1.00' : (rate(m) / rate(baseline)).toFixed(2),
    ((1000 * m.cpuMs) / m.rows).toFixed(0),
    ...(onPglite ? [] : [m.databaseCpuMs === undefined ? '-' : ((1000 * m.databaseCpuMs) / m.rows).toFixed(0)]),
    mb(m.heapBeforeMb),
    mb(m.heapPeakMb),
    mb(m.liveAtEndMb),
    mb(m.rssPeakMb),
    mb(m.maxRssMb),
    `${Math.round(100 * m.machineBusy)}%`,
  ])
  const growth = large.heapPeakMb / small.heapPeakMb
  const checks = markdownTable(
    ['check', 'value', 'target', 'result'],
    [
      [`heap peak, ${settings.rows.toLocaleString('en-US')} rows`, `${large.heapPeakMb.toFixed(0)} MB`, `<= ${TARGETS.maxHeapPeakMb} MB`, large.heapPeakMb <= TARGETS.maxHeapPeakMb ? 'PASS' : 'MISS'],
      [`heap peak, ${settings.rows.toLocaleString('en-US')} over ${settings.smallRows.toLocaleString('en-US')} rows`, growth.toFixed(2), `<= ${TARGETS.maxHeapPeakGrowth} (roughly flat)`, growth <= TARGETS.maxHeapPeakGrowth ? 'PASS' : 'MISS'],
      [`rows/s, native, ${settings.rows.toLocaleString('en-US')} rows`, Math.round(rate(large)).toLocaleString('en-US'), `>= ${TARGETS.minRowsPerSecond.toLocaleString('en-US')}`, rate(large) >= TARGETS.minRowsPerSecond ? 'PASS' : 'MISS'],
      ['import / plain SQL (rows/s)', (rate(large) / rate(baseline)).toFixed(2), '(informational)', '-'],
    ],
    ['left', 'right', 'left', 'left'],
  )
  return [
    `Import, ${bench.startedAt.toISOString()}`,
    `- database: ${bench.description}`,
    `- machine: ${machineSummary()}; CPUs ${bench.background} busy with other work just before the run${parseInt(bench.background, 10) >= 25 ? ' (WARNING: other work competes for the CPUs; every figure below is lower than on a quiet machine)' : ''}`,
    `- import: the imports service as the CLI runs it (format native, not a dry run, the file read with createReadStream from a temp file written beforehand, unmeasured), batches of ${BATCH}; each run on a store of its own (test gateway), one product, one monthly plan; every row a new subscriber, active, with a card token`,
    `- baseline: the same subscribers and subscriptions rows as plain INSERTs built in JavaScript, one transaction of 2 statements per ${BATCH} rows (no CSV, checks, matching, events or progress)`,
    `- memory: heapUsed and RSS sampled every ${settings.sampleMs} ms and after each batch; "heap before" and "live heap at end" after a full GC (${gc ? 'node --expose-gc' : 'not measured: run without --expose-gc'}), the latter at the last batch, before the import returns; process maxRSS = process.resourceUsage().maxRSS after the run, the peak of the whole process so far (${maxRssAtStartMb.toFixed(0)} MB already once the database was open and migrated, before any run)${onPglite ? '; on PGlite RSS includes the embedded database (its WebAssembly memory only grows), so it says little about the import itself' : ''}`,
    `- order: ${settings.warmupRows.toLocaleString('en-US')} rows through the import and the baseline (unmeasured), then the runs in the order below; verified after each: the report's counts, and as many subscriptions, subscribers and subscription.imported events as rows`,
    `- CPU: Node CPU is this process's (user + system)${onPglite ? ', PGlite included' : '; database CPU is the backends of the scratch database, from /proc'}`,
    '',
    markdownTable(headers, rows, ['left', ...headers.slice(1).map((): Align => 'right')]),
    '',
    `By quarter of the rows, heap peak (MB) and rows/s: ${cases
      .map((m) => `${m.name} ${m.rows.toLocaleString('en-US')}: ${m.heapPeakByQuarterMb.map((mb) => (mb > 0 ? mb.toFixed(0) : '-')).join(' / ')} MB, ${m.secondsByQuarter.map((seconds) => (seconds > 0 ? Math.round(m.rows / 4 / seconds).toLocaleString('en-US') : '-')).join(' / ')} rows/s`)
      .join('; ')}.`,
    '',
    checks,
    '',
  ].join('\n')
}

await runBench(() => runDatabaseBench(readSettings, main))
