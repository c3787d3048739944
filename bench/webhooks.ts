// Webhook delivery: events fanned out to 2 local receivers and delivered signed by the service's
// dispatcher (the fan-out + SKIP LOCKED claim + undici + record loop the worker runs), against a bare
// undici POST loop to the same receivers with the same bodies and concurrency in the same run; then
// the latency from each event's commit to its receipt while events arrive at a steady rate.
// Usage: npm run bench:webhooks [-- --events N --rate N --seconds N --lanes N --concurrency N --batch N --pool N --profile]
//        DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm run bench:webhooks
import { createHmac, randomBytes } from 'node:crypto'
import { resolve as resolvePath } from 'node:path'
import { pathToFileURL } from 'node:url'
import { performance } from 'node:perf_hooks'
import { sql } from 'kysely'
import { Agent, request } from 'undici'
import { Webhook } from 'standardwebhooks'
import type { Engine } from '../src/db/connect.ts'
import type { Db, StoreRow } from '../src/db/database.ts'
import { systemClock } from '../src/lib/clock.ts'
import { createStore } from '../src/modules/stores/index.ts'
import { createWebhookAgent, createWebhookDispatcher, DEFAULT_DISABLE_AFTER_MS, DEFAULT_RETRY_SCHEDULE_MS, startDispatchLoop, type WebhookDispatcher } from '../src/modules/webhooks/index.ts'
import { signatureHeader } from '../src/modules/webhooks/webhook-signing.ts'
import { deferCleanup } from './lib/cleanup.ts'
import { cpuSecondsOf, cpuTimes } from './lib/cpu.ts'
import { runDatabaseBench, type DatabaseBench } from './lib/database-bench.ts'
import { runBench } from './lib/harness.ts'
import { machineSummary, markdownTable } from './lib/report.ts'
import { readBenchOptions } from './lib/settings.ts'
import { StatementProfiler } from './lib/statement-profiler.ts'
import { cpuTables, profileCpu } from './lib/webhook-cpu-profile.ts'
import { now, startReceivers, type ReceiverLog, type Receivers } from './lib/webhook-receivers.ts'
import { insertBacklog, produceSteady, timedDispatcher, type CommitTimes, type PassStats } from './lib/webhook-workload.ts'
import { testModules } from '../test/helpers/modules.ts'
import { PLATFORM_ORDERS } from '../src/http/actors.ts'

// Issue 17 set the ratio target to 0.4 of the same-run bare undici loop (it was 0.5).
const TARGETS = { minPostgresPerSecond: 1_000, minRatio: 0.4, maxSteadyP99Ms: 250 }
const DEFAULTS = {
  pglite: { events: 10_000 },
  postgres: { events: 20_000 },
  rate: 500,
  seconds: 10,
  // The service's own: startDispatchLoop's 2 lanes, WEBHOOK_CONCURRENCY 64, WEBHOOK_BATCH_SIZE 200, a pool of 10.
  lanes: 2,
  concurrency: 64,
  batch: 200,
  pool: 10,
}
const RECEIVERS = 2
// To measure a changed dispatcher without touching src/: a module exporting createWebhookDispatcher (and optionally startDispatchLoop).
const ALTERNATIVE = process.env.BENCH_WEBHOOK_DISPATCHER
const engineModule: { createWebhookDispatcher: typeof createWebhookDispatcher; startDispatchLoop: typeof startDispatchLoop } = ALTERNATIVE
  ? { startDispatchLoop, ...((await import(pathToFileURL(resolvePath(ALTERNATIVE)).href)) as { createWebhookDispatcher: typeof createWebhookDispatcher; startDispatchLoop?: typeof startDispatchLoop }) }
  : { createWebhookDispatcher, startDispatchLoop }
const WARMUP_EVENTS = 1_000
const PROFILE_EVENTS = 5_000
const EVENT_TYPES = ['subscription.created', 'subscription.activated', 'subscription.updated', 'subscription.cancelled'] as const

const USAGE = `npm run bench:webhooks [-- options]
  --events N       events of the backlog drained for throughput, each to ${RECEIVERS} receivers (default ${DEFAULTS.postgres.events} on PostgreSQL, ${DEFAULTS.pglite.events} on PGlite)
  --rate N         events per second committed in the steady phase (default ${DEFAULTS.rate})
  --seconds N      length of the steady phase (default ${DEFAULTS.seconds})
  --lanes N        dispatch loop lanes (startDispatchLoop; default ${DEFAULTS.lanes})
  --concurrency N  HTTP calls in flight per lane, and the agent's connections per origin (WEBHOOK_CONCURRENCY; default ${DEFAULTS.concurrency})
  --batch N        deliveries claimed per pass (WEBHOOK_BATCH_SIZE; default ${DEFAULTS.batch})
  --pool N         PostgreSQL pool size (default ${DEFAULTS.pool}; PGlite has one connection)
  --profile        afterwards, drain ${PROFILE_EVENTS} more events with every statement timed, and time the signing
The bare undici loop keeps lanes x concurrency requests in flight, as the dispatcher can at most.
Set DATABASE_URL to a PostgreSQL server to bench on a scratch database there; PGlite otherwise.
BENCH_WEBHOOK_DISPATCHER=path/to/module.ts measures that module's createWebhookDispatcher (and startDispatchLoop, if it has one) instead of src/'s.
`

interface Settings {
  events: number
  rate: number
  seconds: number
  lanes: number
  concurrency: number
  batch: number
  pool: number
  profile: boolean
}

interface Measured {
  name: string
  deliveries: number
  seconds: number
  latencies: number[]
  latencyKind: 'POST -> response' | 'commit -> receipt'
  cpuMs: number
  receiverCpuMs: number | undefined
  databaseCpuMs: number | undefined
  machineBusy: number
  duplicates: number
}

function readSettings(engine: Engine): Settings | undefined {
  const options = readBenchOptions(['events', 'rate', 'seconds', 'lanes', 'concurrency', 'batch', 'pool'], USAGE)
  if (!options) return undefined
  const { whole } = options
  return {
    events: whole('events', DEFAULTS[engine].events),
    rate: whole('rate', DEFAULTS.rate),
    seconds: whole('seconds', DEFAULTS.seconds),
    lanes: whole('lanes', DEFAULTS.lanes),
    concurrency: whole('concurrency', DEFAULTS.concurrency),
    batch: whole('batch', DEFAULTS.batch),
    pool: whole('pool', DEFAULTS.pool),
    profile: options.profile,
  }
}

async function main({ db, engine, settings, startedAt, background, description }: DatabaseBench<Settings>): Promise<void> {
  backendCpu = backendCpuOf(db, engine)

  const receivers = await startReceivers(RECEIVERS)
  deferCleanup(receivers.close)
  const { store, template, secrets } = await setup(db, receivers.urls)
  await receivers.setSecrets(secrets)
  // The worker's own agent: keep-alive, connections per origin = WEBHOOK_CONCURRENCY, the SSRF connector.
  const agent = createWebhookAgent({ allowPrivateNetworks: true, connections: settings.concurrency })
  deferCleanup(() => agent.close())
  const dispatching = (over: Db = db) => dispatchLoop(over, agent, settings)

  progress(`warm-up: ${WARMUP_EVENTS} events through the dispatcher, ${2 * WARMUP_EVENTS} bare POSTs (unmeasured)`)
  const warmupCommits = await insertBacklog(db, store, template, WARMUP_EVENTS)
  await drain(dispatching(), receivers, (warmupCommits.size + 2) * RECEIVERS)
  await bareLoop(await payloadsOf(db, [...warmupCommits.keys()]), receivers, settings)
  await receivers.reset()

  progress(`backlog: committing ${settings.events} events`)
  const backlog = await insertBacklog(db, store, template, settings.events)
  const payloads = await payloadsOf(db, [...backlog.keys()])
  const cases: Measured[] = []
  progress(`bare undici: ${payloads.length * RECEIVERS} POSTs, ${settings.lanes * settings.concurrency} in flight`)
  cases.push(await bareLoop(payloads, receivers, settings, 'bare undici POST loop (before)'))
  await receivers.reset()

  progress(`dispatcher: draining ${settings.events} events to ${RECEIVERS} receivers (${settings.events * RECEIVERS} deliveries)`)
  const drained = await measureDrain(dispatching, receivers, backlog)
  cases.push(drained.measured)
  await receivers.reset()

  progress(`bare undici again: ${payloads.length * RECEIVERS} POSTs`)
  cases.push(await bareLoop(payloads, receivers, settings, 'bare undici POST loop (after)'))
  await receivers.reset()

  progress(`steady: ${settings.rate} events/s for ${settings.seconds} s while the dispatcher runs`)
  const steady = await measureSteady(db, store, template, dispatching, receivers, settings)
  cases.push(steady.measured)
  await receivers.reset()

  await verifyDelivered(db, store, RECEIVERS)

  let profile = ''
  if (settings.profile) {
    progress(`profile: ${PROFILE_EVENTS} events drained with every statement timed`)
    profile = await profileDispatcher(db, store, template, agent, receivers, settings, secrets[0]!)
    await verifyDelivered(db, store, RECEIVERS)
  }

  process.stdout.write(report({ startedAt, engine, description, background, settings, cases, drainStats: drained.stats, steadyLate: steady.lateTicks, steadyRate: steady.rate, verification: [drained.verification, steady.verification], bodyBytes: Math.round(payloads.reduce((sum, row) => sum + Buffer.byteLength(row.payload), 0) / payloads.length) }) + profile)
}

function progress(message: string): void {
  process.stderr.write(`${message}\n`)
}

/** A test-mode store (http endpoints allowed), its endpoints, and a real checkout's subscription as the payload template. */
async function setup(db: Db, urls: string[]): Promise<{ store: StoreRow; template: Record<string, unknown>; secrets: string[] }> {
  const store = await createStore(db, { storeHash: `bench-webhooks-${randomBytes(3).toString('hex')}`, mode: 'test' })
  const webhooks = testModules(db).webhooks
  const secrets: string[] = []
  for (const [index, url] of urls.entries()) {
    secrets.push((await webhooks.create(store, { url, event_types: [...EVENT_TYPES], description: `bench receiver ${index}` })).secret)
  }
  const catalog = testModules(db, { clock: systemClock }).catalog
  const product = await catalog.createProduct(store, { platform_product_id: 'bench-beans', name: 'Single-origin coffee, 1 lb' })
  const plan = await catalog.createPlan(store, { product_id: product.id, name: 'Monthly', amount: 1800, currency: 'USD', interval: 'month' })
  const outcome = await testModules(db, { clock: systemClock }).checkouts.checkout(store, {
    platform_order_id: 'bench-template',
    email: 'ada@example.com',
    name: 'Ada Lovelace',
    shipping_address: { name: 'Ada Lovelace', line1: '1 Analytical Street', city: 'London', postal_code: 'N1 9GU', country: 'GB' },
    payment_instrument_id: 'instr_9f8e7d',
    items: [{ plan_id: plan.id, quantity: 1 }],
  }, PLATFORM_ORDERS)
  return { store, template: outcome.data[0] as unknown as Record<string, unknown>, secrets }
}

interface Loop {
  stop(): Promise<void>
  stats: PassStats
}

/** The worker's dispatcher and loop (startWorker in src/worker.ts), over `db`. */
function dispatchLoop(db: Db, agent: Agent, settings: Settings, wrap: (dispatcher: WebhookDispatcher) => WebhookDispatcher = (d) => d): Loop {
  const log = {
    warn: (object: object, message: string) => progress(`dispatcher: ${message} ${JSON.stringify(object)}`),
    error: (object: object, message: string) => progress(`dispatcher: ${message} ${String((object as { err?: unknown }).err ?? '')}`),
  }
  const dispatcher = engineModule.createWebhookDispatcher({
    db,
    clock: systemClock,
    agent,
    retrySchedule: DEFAULT_RETRY_SCHEDULE_MS,
    disableAfterMs: DEFAULT_DISABLE_AFTER_MS,
    timeoutMs: 15_000,
    concurrency: settings.concurrency,
    batchSize: settings.batch,
    log,
  })
  const timed = timedDispatcher(wrap(dispatcher))
  const loop = engineModule.startDispatchLoop({ dispatcher: timed.dispatcher, log, lanes: settings.lanes })
  return { stop: () => loop.stop(), stats: timed.stats }
}

async function drain(loop: Loop, receivers: Receivers, deliveries: number): Promise<void> {
  try {
    await receivers.awaitUnique(deliveries, 300_000)
  } finally {
    await loop.stop()
  }
}

async function payloadsOf(db: Db, ids: string[]): Promise<{ id: string; payload: string }[]> {
  const rows: { id: string; payload: string }[] = []
  for (let start = 0; start < ids.length; start += 5_000) {
    rows.push(...(await db.selectFrom('events').select(['id', 'payload']).where('id', 'in', ids.slice(start, start + 5_000)).execute()))
  }
  return rows
}

/** CPU seconds of each PostgreSQL backend serving this database, when the server runs on this machine (/proc); undefined on PGlite or elsewhere. */
type BackendCpu = () => Promise<Map<number, number> | undefined>

function backendCpuOf(db: Db, engine: Engine): BackendCpu {
  return async () => {
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
}

let backendCpu: BackendCpu = async () => undefined

/** CPU of this process, of the receivers and of the database's backends, and how busy the whole machine was, over `work`. */
async function accounted<T>(receivers: Receivers, work: () => Promise<T>): Promise<{ value: T; cpuMs: number; receiverCpuMs: number | undefined; databaseCpuMs: number | undefined; machineBusy: number }> {
  const backendsBefore = await backendCpu()
  const machine = cpuTimes()
  const cpu = process.cpuUsage()
  const receiverCpu = receivers.cpuSeconds()
  const value = await work()
  const used = process.cpuUsage(cpu)
  const receiverAfter = receivers.cpuSeconds()
  const after = cpuTimes()
  const backendsAfter = await backendCpu()
  let databaseCpuMs: number | undefined
  if (backendsBefore && backendsAfter) {
    // A backend that started during the run counts whole; one that ended is missed (the pool keeps its connections).
    databaseCpuMs = 0
    for (const [pid, seconds] of backendsAfter) databaseCpuMs += (seconds - (backendsBefore.get(pid) ?? 0)) * 1000
  }
  return {
    value,
    cpuMs: (used.user + used.system) / 1000,
    receiverCpuMs: receiverCpu === undefined || receiverAfter === undefined ? undefined : (receiverAfter - receiverCpu) * 1000,
    databaseCpuMs,
    machineBusy: after.total > machine.total ? (after.busy - machine.busy) / (after.total - machine.total) : 0,
  }
}

/** The baseline: each body POSTed to every receiver with bare undici, lanes x concurrency in flight, no database, no signature. */
async function bareLoop(payloads: { id: string; payload: string }[], receivers: Receivers, settings: Settings, name = 'warm-up'): Promise<Measured> {
  const agent = new Agent({ connections: settings.concurrency, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 })
  const jobs = payloads.flatMap(({ id, payload }) => receivers.urls.map((url) => ({ id, url, payload })))
  const latencies = new Array<number>(jobs.length)
  let next = 0
  try {
    const started = now()
    const run = await accounted(receivers, async () => {
      await Promise.all(
        Array.from({ length: Math.min(settings.lanes * settings.concurrency, jobs.length) }, async () => {
          for (let i = next++; i < jobs.length; i = next++) {
            const job = jobs[i]!
            const at = performance.now()
            const response = await request(job.url, {
              method: 'POST',
              dispatcher: agent,
              headers: { 'content-type': 'application/json', 'webhook-id': job.id },
              body: job.payload,
            })
            await response.body.text()
            if (response.statusCode !== 200) throw new Error(`a receiver answered ${response.statusCode}`)
            latencies[i] = performance.now() - at
          }
        }),
      )
      return receivers.awaitUnique(jobs.length, 30_000)
    })
    const lastReceipt = run.value
    return { name, deliveries: jobs.length, seconds: (lastReceipt - started) / 1000, latencies, latencyKind: 'POST -> response', cpuMs: run.cpuMs, receiverCpuMs: run.receiverCpuMs, databaseCpuMs: run.databaseCpuMs, machineBusy: run.machineBusy, duplicates: 0 }
  } finally {
    await agent.close()
  }
}

interface Verification {
  signed: number
  verified: number
  failed: number
}

/** Commit -> first receipt for every (event, receiver), and the duplicates; throws if an event is missing. */
function analyse(logs: ReceiverLog[], commits: CommitTimes): { latencies: number[]; duplicates: number; verification: Verification } {
  const latencies: number[] = []
  let duplicates = 0
  for (const [index, log] of logs.entries()) {
    const first = new Map<string, number>()
    for (let i = 0; i < log.ids.length; i++) {
      if (first.has(log.ids[i]!)) duplicates++
      else first.set(log.ids[i]!, log.at[i]!)
    }
    for (const [id, committed] of commits) {
      const received = first.get(id)
      if (received === undefined) throw new Error(`receiver ${index} never got event ${id}`)
      latencies.push(received - committed)
    }
  }
  const verification = logs.reduce((sum, log) => ({ signed: sum.signed + log.signed, verified: sum.verified + log.verified, failed: sum.failed + log.failed }), { signed: 0, verified: 0, failed: 0 })
  if (verification.failed > 0) throw new Error(`${verification.failed} deliveries failed standardwebhooks verification`)
  if (verification.verified === 0) throw new Error('no delivery was verified')
  return { latencies, duplicates, verification }
}

async function measureDrain(dispatching: () => Loop, receivers: Receivers, backlog: CommitTimes): Promise<{ measured: Measured; stats: PassStats; verification: Verification }> {
  const deliveries = backlog.size * RECEIVERS
  let loop: Loop | undefined
  const started = now()
  const run = await accounted(receivers, async () => {
    loop = dispatching()
    try {
      return await receivers.awaitUnique(deliveries, 600_000)
    } finally {
      await loop.stop()
    }
  })
  const { latencies, duplicates, verification } = analyse(await receivers.collect(), backlog)
  return {
    measured: { name: 'dispatcher, backlog drained', deliveries, seconds: (run.value - started) / 1000, latencies, latencyKind: 'commit -> receipt', cpuMs: run.cpuMs, receiverCpuMs: run.receiverCpuMs, databaseCpuMs: run.databaseCpuMs, machineBusy: run.machineBusy, duplicates },
    stats: loop!.stats,
    verification,
  }
}

async function measureSteady(db: Db, store: StoreRow, template: Record<string, unknown>, dispatching: () => Loop, receivers: Receivers, settings: Settings) {
  const loop = dispatching()
  let lateTicks = 0
  let rate = 0
  let commits: CommitTimes = new Map()
  const started = now()
  const run = await accounted(receivers, async () => {
    try {
      const produced = await produceSteady(db, store, template, settings.rate, settings.seconds)
      commits = produced.commits
      lateTicks = produced.lateTicks
      rate = produced.commits.size / produced.seconds
      return await receivers.awaitUnique(commits.size * RECEIVERS, 120_000)
    } finally {
      await loop.stop()
    }
  })
  const { latencies, duplicates, verification } = analyse(await receivers.collect(), commits)
  const measured: Measured = {
    name: `dispatcher, steady ${settings.rate} events/s`,
    deliveries: commits.size * RECEIVERS,
    seconds: (run.value - started) / 1000,
    latencies,
    latencyKind: 'commit -> receipt',
    cpuMs: run.cpuMs,
    receiverCpuMs: run.receiverCpuMs,
    databaseCpuMs: run.databaseCpuMs,
    machineBusy: run.machineBusy,
    duplicates,
  }
  return { measured, lateTicks, rate, verification }
}

/** The database agrees with the receivers: one succeeded delivery per event of the store and endpoint. */
async function verifyDelivered(db: Db, store: StoreRow, endpoints: number): Promise<void> {
  const events = Number((await db.selectFrom('events').select((eb) => eb.fn.countAll<number>().as('n')).where('store_id', '=', store.id).executeTakeFirstOrThrow()).n)
  const rows = await db.selectFrom('webhook_deliveries').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).where('store_id', '=', store.id).groupBy('status').execute()
  const byStatus = Object.fromEntries(rows.map((row) => [row.status, Number(row.n)]))
  if (byStatus.succeeded !== events * endpoints || Object.keys(byStatus).length !== 1) {
    throw new Error(`expected ${events * endpoints} succeeded deliveries, found ${JSON.stringify(byStatus)}`)
  }
}

/** Where a drain's time goes: each statement the dispatcher sends, timed; its passes; and the cost of signing. */
async function profileDispatcher(db: Db, store: StoreRow, template: Record<string, unknown>, agent: Agent, receivers: Receivers, settings: Settings, secret: string): Promise<string> {
  const profiler = new StatementProfiler((node, queryId) => db.getExecutor().compileQuery(node, queryId).sql, { keyLength: 100 })
  const profiled = db.withPlugin(profiler)
  const backlog = await insertBacklog(db, store, template, PROFILE_EVENTS)
  const deliveries = backlog.size * RECEIVERS
  const started = now()
  let loop: Loop | undefined
  const { value: run, breakdown } = await profileCpu(() =>
    accounted(receivers, async () => {
      loop = dispatchLoop(profiled, agent, settings)
      try {
        return await receivers.awaitUnique(deliveries, 600_000)
      } finally {
        await loop.stop()
      }
    }),
  )
  await receivers.reset()
  const seconds = (run.value - started) / 1000
  const stats = loop!.stats
  const rows = [...profiler.statements].sort((a, b) => b[1].ms - a[1].ms)
  const total = rows.reduce((sum, [, entry]) => sum + entry.ms, 0)
  const table = markdownTable(
    ['statements per 1,000 deliveries', 'ms per 1,000 deliveries', 'ms per statement', 'share', 'statement'],
    rows.map(([statement, entry]) => [
      ((1000 * entry.count) / deliveries).toFixed(1),
      ((1000 * entry.ms) / deliveries).toFixed(0),
      (entry.ms / entry.count).toFixed(2),
      `${((100 * entry.ms) / total).toFixed(0)}%`,
      `\`${statement.replace(/\|/g, '\\|')}\``,
    ]),
    ['right', 'right', 'right', 'right', 'left'],
  )

  // Signing, per delivery, as the dispatcher does it (standardwebhooks, pure-JS SHA-256) and with node:crypto.
  const payload = JSON.stringify({ id: 'evt_01KBENCH', event_type: 'subscription.created', timestamp: new Date().toISOString(), api_version: 'v1', data: template, sequence: 1 })
  const at = new Date()
  const rounds = 5_000
  const timeIt = (sign: () => string) => {
    for (let i = 0; i < 500; i++) sign()
    const t0 = performance.now()
    for (let i = 0; i < rounds; i++) sign()
    return ((performance.now() - t0) * 1000) / rounds
  }
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64')
  const library = new Webhook(secret)
  const viaDispatcher = timeIt(() => signatureHeader([secret], 'evt_01KBENCH', at, payload))
  const viaLibrary = timeIt(() => library.sign('evt_01KBENCH', at, payload))
  const viaCrypto = timeIt(() => `v1,${createHmac('sha256', key).update(`evt_01KBENCH.${Math.floor(at.getTime() / 1000)}.${payload}`).digest('base64')}`)
  const same = signatureHeader([secret], 'evt_01KBENCH', at, payload) === library.sign('evt_01KBENCH', at, payload)
  new Webhook(secret).verify(payload, { 'webhook-id': 'evt_01KBENCH', 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': signatureHeader([secret], 'evt_01KBENCH', at, payload) })

  const perPass = (ms: number, passes: number) => (passes === 0 ? '-' : (ms / passes).toFixed(1))
  return [
    '',
    `### Profile: ${PROFILE_EVENTS} events (${deliveries} deliveries) drained with statement timing on`,
    '',
    `${(deliveries / seconds).toFixed(0)} deliveries/s in ${seconds.toFixed(2)} s; this process ${((1000 * run.cpuMs) / deliveries).toFixed(0)} µs CPU per delivery, receivers ${run.receiverCpuMs === undefined ? '-' : ((1000 * run.receiverCpuMs) / deliveries).toFixed(0)} µs, database backends ${run.databaseCpuMs === undefined ? '-' : ((1000 * run.databaseCpuMs) / deliveries).toFixed(0)} µs, machine ${(100 * run.machineBusy).toFixed(0)}% busy.`,
    `Passes with work: fanOut ${stats.fanOut.busy} (${perPass(stats.fanOut.ms, stats.fanOut.busy)} ms each, ${perPass(stats.fanOut.events, stats.fanOut.busy)} events), deliverDue ${stats.deliverDue.busy} (${perPass(stats.deliverDue.ms, stats.deliverDue.busy)} ms each, ${perPass(stats.deliverDue.deliveries, stats.deliverDue.busy)} deliveries); lane-time in deliverDue ${(stats.deliverDue.ms / 1000).toFixed(2)} s, in fanOut ${(stats.fanOut.ms / 1000).toFixed(2)} s over ${settings.lanes} lanes x ${seconds.toFixed(2)} s.`,
    `Statement time summed over connections: ${((1000 * total) / deliveries).toFixed(0)} ms per 1,000 deliveries (BEGIN/COMMIT not seen).`,
    '',
    table,
    '',
    `This process's CPU over the drain (V8 sampling profiler; ${breakdown.totalMs.toFixed(0)} ms of samples, ${((1000 * breakdown.totalMs) / deliveries).toFixed(0)} µs per delivery, besides ${breakdown.overheadMs.toFixed(0)} ms in the inspector itself; profile in ${breakdown.file}), self time by area:`,
    '',
    ...cpuTables(breakdown, deliveries, 'delivery'),
    '',
    `Signing one ${payload.length}-byte body: the dispatcher's signatureHeader (node:crypto, key imported once) ${viaDispatcher.toFixed(1)} µs; standardwebhooks (fast-sha256, pure JS) ${viaLibrary.toFixed(1)} µs; node:crypto createHmac with a raw key each time ${viaCrypto.toFixed(1)} µs; identical output: ${same}.`,
    '',
  ].join('\n')
}

function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN
  const sorted = Float64Array.from(values).sort()
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

function report(r: {
  startedAt: Date
  engine: Engine
  description: string
  background: string
  settings: Settings
  cases: Measured[]
  drainStats: PassStats
  steadyLate: number
  steadyRate: number
  verification: Verification[]
  bodyBytes: number
}): string {
  const rate = (m: Measured) => m.deliveries / m.seconds
  const [bareBefore, drained, bareAfter, steady] = r.cases as [Measured, Measured, Measured, Measured]
  const bareRate = (rate(bareBefore) + rate(bareAfter)) / 2
  const ratio = rate(drained) / bareRate
  const steadyP99 = percentile(steady.latencies, 99)
  const s = r.settings
  const verdict = (ok: boolean) => (ok ? 'PASS' : 'MISS')
  const rows = r.cases.map((m) => [
    m.name,
    m.deliveries.toLocaleString('en-US'),
    m.seconds.toFixed(2),
    rate(m).toFixed(0),
    m.latencyKind,
    percentile(m.latencies, 50).toFixed(1),
    percentile(m.latencies, 99).toFixed(1),
    Math.max(...m.latencies).toFixed(0),
    ((1000 * m.cpuMs) / m.deliveries).toFixed(0),
    m.receiverCpuMs === undefined ? '-' : ((1000 * m.receiverCpuMs) / m.deliveries).toFixed(0),
    m.databaseCpuMs === undefined ? '-' : ((1000 * m.databaseCpuMs) / m.deliveries).toFixed(0),
    `${(100 * m.machineBusy).toFixed(0)}%`,
    String(m.duplicates),
  ])
  const table = markdownTable(
    ['path', 'deliveries', 'seconds', 'deliveries/s', 'latency', 'p50 ms', 'p99 ms', 'max ms', 'bench CPU µs/delivery', 'receivers CPU µs/delivery', 'database CPU µs/delivery', 'machine busy', 'duplicates'],
    rows,
    ['left', 'right', 'right', 'right', 'left', 'right', 'right', 'right', 'right', 'right', 'right', 'right', 'right'],
  )
  const d = r.drainStats
  const onPg = r.engine === 'postgres'
  const targetNote = onPg ? '' : ' (the target is PostgreSQL\'s; shown for reference)'
  const checks = [
    `- signed deliveries/s draining the backlog: ${rate(drained).toFixed(0)} (target >= ${TARGETS.minPostgresPerSecond} on PostgreSQL): ${verdict(rate(drained) >= TARGETS.minPostgresPerSecond)}${targetNote}`,
    `- ratio to the bare undici loop (mean of before and after, ${bareRate.toFixed(0)}/s): ${ratio.toFixed(2)} (target >= ${TARGETS.minRatio}): ${verdict(ratio >= TARGETS.minRatio)}${targetNote}`,
    `- p99 commit -> receipt at a steady ${s.rate} events/s: ${steadyP99.toFixed(1)} ms (target < ${TARGETS.maxSteadyP99Ms} ms): ${verdict(steadyP99 < TARGETS.maxSteadyP99Ms)}${targetNote}`,
  ]
  const verified = r.verification.reduce((sum, v) => sum + v.verified, 0)
  const signed = r.verification.reduce((sum, v) => sum + v.signed, 0)
  return [
    `## Webhook delivery (${r.engine === 'postgres' ? 'PostgreSQL' : 'PGlite'})`,
    '',
    `- date: ${r.startedAt.toISOString()}`,
    `- machine: ${machineSummary()}; CPUs ${r.background} busy with other work just before the run`,
    `- database: ${r.description}`,
    `- dispatcher: ${ALTERNATIVE ? `ALTERNATIVE MODULE ${ALTERNATIVE}` : 'src/modules/webhooks'}, in this process, startDispatchLoop with ${s.lanes} lanes, concurrency ${s.concurrency}, batch ${s.batch}, the worker's agent (createWebhookAgent, ${s.concurrency} connections per origin), timeout 15 s`,
    `- receivers: ${RECEIVERS} node:http servers on 127.0.0.1 in one child process, answering 200 at once; 1 in 10 signed arrivals verified with standardwebhooks (${verified} of ${signed}, all valid)`,
    `- events: subscription.created + subscription.activated pairs (per-entity order applies), bodies the size of a real checkout's (${r.bodyBytes} bytes on average), written with recordEventsOfNewEntities; backlog of ${s.events} committed up front, 1,000 per transaction; steady phase ${s.rate}/s (${r.steadyRate.toFixed(0)}/s achieved, ${r.steadyLate} late ticks) in 20 ms ticks for ${s.seconds} s`,
    `- baseline: bare undici request() loop, ${s.lanes * s.concurrency} in flight over an Agent of ${s.concurrency} connections per origin, the same bodies to the same receivers; throughput counted to the last receipt, like the dispatcher's`,
    `- latency: commit -> receipt is from the event transaction's commit returning to the receiver having the whole body (receiver clock aligned by IPC round trips)`,
    '',
    table,
    '',
    `Drain passes with work: fanOut ${d.fanOut.busy} x ${(d.fanOut.ms / Math.max(1, d.fanOut.busy)).toFixed(1)} ms (${(d.fanOut.events / Math.max(1, d.fanOut.busy)).toFixed(0)} events each); deliverDue ${d.deliverDue.busy} x ${(d.deliverDue.ms / Math.max(1, d.deliverDue.busy)).toFixed(1)} ms (${(d.deliverDue.deliveries / Math.max(1, d.deliverDue.busy)).toFixed(0)} deliveries each).`,
    '',
    ...checks,
    '',
  ].join('\n')
}

await runBench(() => runDatabaseBench(readSettings, main))
