import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
// wall clock: the database server is stopped and started under running processes (below).
import { setTimeout as sleep } from 'node:timers/promises'
import { promisify } from 'node:util'
import { after, before, describe, test } from 'node:test'
import pg from 'pg'
import { connectDatabase, type DatabaseHandle } from '../../src/db/connect.ts'
import type { Db, StoreRow } from '../../src/db/database.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { fixedClock } from '../../src/lib/clock.ts'
import { SendNotification } from '../../src/modules/notifications/index.ts'
import { ensureBootstrapStore } from '../../src/modules/stores/index.ts'
import { onPostgres } from '../helpers/database.ts'
import { testModules } from '../helpers/modules.ts'
import { startServer, type RunningServer } from '../helpers/server-process.ts'
import { SHIPPING_ADDRESS } from '../helpers/subscriptions.ts'
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts'
import { TEST_ADMIN } from '../helpers/actors.ts'

/**
 * The service survives its PostgreSQL restarting mid-billing (docs/contract.md, section 18): an API
 * process and two worker processes run on a PostgreSQL cluster of this test's own while a few hundred
 * renewals are charged and their `charge.succeeded` events delivered. The cluster is restarted twice
 * under them (`pg_ctl stop -m fast`, then `-m immediate`, a crash as far as the sessions can tell).
 * While it is down the API answers 503 problem+json at once, /readyz says not ready and /healthz
 * still answers; once it is back, without any process being restarted, every period is paid exactly
 * once (the test gateway's ledger agrees), every charge's event reaches the receiver at least once,
 * and no process has exited.
 *
 * The cluster is a throwaway one (initdb into a temporary directory, a port of its own): the shared
 * server the PostgreSQL pass runs on is never stopped. The file runs in that pass, where PostgreSQL's
 * server binaries are expected; without them it is skipped, saying so.
 */

const STORE_HASH = 'postgres-restart'
const ADMIN_KEY = 'sk_test_postgres_restart_0123456789abcdef'
const T0 = new Date('2026-03-02T15:00:00Z')
// One month and an hour later: every (monthly) subscription renews once.
const T1 = new Date('2026-04-02T16:00:00Z')
const SUBSCRIPTIONS = 300
const ITEMS_PER_ORDER = 25
/** How long a request may take to be refused while the database is down. */
const FAIL_FAST_MS = 5_000
/** How long the database stays down at least, beyond the checks made meanwhile. */
const DOWN_MS = 600

// Renewals slow enough (gateway latency, few in flight) that the restarts land mid-billing; short leases,
// so charges and jobs whose outcome could not be written while the database was down are taken over
// within seconds; a short webhook retry schedule, so a delivery that failed then is not parked for long.
const WORKER_ENV = {
  ROLE: 'worker',
  SEED_DEMO_DATA: 'false',
  LOG_LEVEL: 'error',
  JOB_LEASE_MS: '1500',
  BILLING_CHARGE_LEASE_MS: '2000',
  PLATFORM_API_TIMEOUT_MS: '250',
  TEST_GATEWAY_LATENCY_MS: '100',
  BILLING_CONCURRENCY: '4',
  BILLING_BATCH_SIZE: '20',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_RETRY_SCHEDULE: '500ms,1s,1s,2s,2s,5s,5s,10s,10s',
}
const API_ENV = { ROLE: 'api', SEED_DEMO_DATA: 'false', LOG_LEVEL: 'error' }

// ---------------------------------------------------------------------------------------------------
// A throwaway PostgreSQL cluster.

const run = promisify(execFile)

/** The newest PostgreSQL server binaries on this machine (Debian's layout, else pg_config's), or undefined. */
function serverBinaries(): string | undefined {
  const has = (dir: string) => ['initdb', 'pg_ctl', 'postgres'].every((name) => existsSync(join(dir, name)))
  const debian = '/usr/lib/postgresql'
  if (existsSync(debian)) {
    const versions = readdirSync(debian).filter((version) => has(join(debian, version, 'bin'))).sort((a, b) => Number(b) - Number(a))
    if (versions[0]) return join(debian, versions[0], 'bin')
  }
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    if (has(dir)) return dir
  } catch {
    // no pg_config on the PATH
  }
  return undefined
}

/** The uid and gid of the `postgres` user, which runs the cluster when this test runs as root (initdb refuses root). */
function postgresUser(): { uid: number; gid: number } | undefined {
  try {
    const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim())
    const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim())
    return Number.isInteger(uid) && Number.isInteger(gid) ? { uid, gid } : undefined
  } catch {
    return undefined
  }
}

const BIN = serverBinaries()
const AS_ROOT = process.getuid?.() === 0
const POSTGRES_USER = AS_ROOT ? postgresUser() : undefined

/** Why this machine cannot run the test, or false. */
function missing(): string | false {
  if (!BIN) return 'needs the PostgreSQL server binaries (initdb, pg_ctl, postgres): none under /usr/lib/postgresql/*/bin or pg_config --bindir'
  if (AS_ROOT && !POSTGRES_USER) return 'runs as root, and initdb refuses root: needs a `postgres` user to run the throwaway cluster as'
  return false
}

/**
 * A port outside the kernel's ephemeral range, free now: while the cluster is down, no outgoing
 * connection of another process can be given it, so the restarted server finds it free again.
 */
async function freePort(): Promise<number> {
  const range = '/proc/sys/net/ipv4/ip_local_port_range'
  // Linux's default range where the kernel does not say.
  const [low, high] = existsSync(range) ? (readFileSync(range, 'utf8').trim().split(/\s+/).map(Number) as [number, number]) : [32_768, 60_999]
  for (let tries = 0; tries < 50; tries++) {
    const port = 20_000 + Math.floor(Math.random() * 12_000)
    if (port >= low && port <= high) continue
    const free = await new Promise<boolean>((resolve) => {
      const probe = createServer()
      probe.once('error', () => resolve(false))
      probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)))
    })
    if (free) return port
  }
  throw new Error('no free port outside the ephemeral range')
}

interface Cluster {
  url: string
  start(): Promise<void>
  stop(mode: 'fast' | 'immediate'): Promise<void>
  log(): string
  destroy(): Promise<void>
}

async function startCluster(): Promise<Cluster> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-pg-restart-'))
  const data = join(dir, 'data')
  const logFile = join(dir, 'server.log')
  if (POSTGRES_USER) chownSync(dir, POSTGRES_USER.uid, POSTGRES_USER.gid)
  const as = (tool: string, args: string[]) =>
    AS_ROOT ? run('runuser', ['-u', 'postgres', '--', join(BIN!, tool), ...args], { timeout: 60_000 }) : run(join(BIN!, tool), args, { timeout: 60_000 })
  const port = await freePort()
  // fsync off: the cluster is thrown away, and an immediate stop is a crash of the server, not of the machine.
  const serverOptions = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`
  let running = false
  const cluster: Cluster = {
    url: `postgres://postgres@127.0.0.1:${port}/billing`,
    async start() {
      await as('pg_ctl', ['-D', data, '-l', logFile, '-w', '-t', '30', '-o', serverOptions, 'start'])
      running = true
    },
    async stop(mode) {
      await as('pg_ctl', ['-D', data, '-w', '-t', '30', '-m', mode, 'stop'])
      running = false
    },
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').split('\n').slice(-30).join('\n') : ''),
    async destroy() {
      try {
        if (running || existsSync(join(data, 'postmaster.pid'))) await cluster.stop('immediate')
      } finally {
        rmSync(dir, { recursive: true, force: true })
      }
    },
  }
  try {
    mkdirSync(data, { mode: 0o700 })
    if (POSTGRES_USER) chownSync(data, POSTGRES_USER.uid, POSTGRES_USER.gid)
    await as('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8', '--locale=C', '-N'])
    await cluster.start()
    const admin = new pg.Client({ connectionString: cluster.url.replace(/\/billing$/, '/postgres') })
    await admin.connect()
    try {
      await admin.query('CREATE DATABASE billing')
    } finally {
      await admin.end()
    }
  } catch (error) {
    await cluster.destroy().catch(() => {})
    throw error
  }
  return cluster
}

// ---------------------------------------------------------------------------------------------------

interface Seeded {
  store: StoreRow
  subscriptionIds: string[]
  secret: string
}

/** 300 monthly subscriptions on a test-mode store at T0, a webhook endpoint for charge.succeeded. */
async function seed(db: Db, receiverUrl: string): Promise<Seeded> {
  const clock = fixedClock(T0)
  let store = await ensureBootstrapStore(db, { storeHash: STORE_HASH, adminApiKey: ADMIN_KEY, mode: 'test' })
  store = await db.updateTable('stores').set({ test_clock_now: T0 }).where('id', '=', store.id).returningAll().executeTakeFirstOrThrow()
  const modules = testModules(db, { clock })
  const product = await modules.catalog.createProduct(store, { platform_product_id: 'beans', name: 'Beans' })
  const plan = await modules.catalog.createPlan(store, { product_id: product.id, name: 'Monthly', amount: 1500, currency: 'USD', interval: 'month' })
  const subscriptionIds: string[] = []
  for (let order = 0; subscriptionIds.length < SUBSCRIPTIONS; order++) {
    const outcome = await modules.checkouts.checkout(store, {
      platform_order_id: `order-${order}`,
      email: `buyer${order}@example.com`,
      name: 'Buyer',
      shipping_address: SHIPPING_ADDRESS,
      payment_instrument_id: 'pi_visa_ok',
      items: Array.from({ length: ITEMS_PER_ORDER }, (_, item) => ({ plan_id: plan.id, quantity: 1 + (item % 3) })),
    }, TEST_ADMIN)
    subscriptionIds.push(...outcome.data.map((subscription) => subscription.id))
  }
  // The checkouts queued a welcome email each; emails are not what this run proves.
  await db.deleteFrom('jobs').where('kind', '=', SendNotification.kind).execute()
  const endpoint = await modules.webhooks.create(store, { url: receiverUrl, event_types: ['charge.succeeded'], description: 'restart receiver' })
  return { store, subscriptionIds, secret: endpoint.secret }
}

interface Progress {
  succeeded: number
  pending: number
  other: number
}

/** The store's charges by status, from the test's own pool; undefined while the database cannot be asked. */
async function progressOf(db: Db, storeId: string): Promise<Progress | undefined> {
  try {
    const rows = await db.selectFrom('charges').select(['status', (eb) => eb.fn.countAll<number>().as('n')]).where('store_id', '=', storeId).groupBy('status').execute()
    const count = (status: string) => Number(rows.find((row) => row.status === status)?.n ?? 0)
    const total = rows.reduce((sum, row) => sum + Number(row.n), 0)
    return { succeeded: count('succeeded'), pending: count('pending'), other: total - count('succeeded') - count('pending') }
  } catch {
    return undefined
  }
}

interface Answer {
  status: number
  contentType: string
  body: string
  ms: number
}

/** One request, bounded: a hang shows as status 0 after FAIL_FAST_MS, not as a stuck test. */
async function ask(origin: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const started = performance.now()
  try {
    const response = await fetch(`${origin}${path}`, { headers, signal: AbortSignal.timeout(FAIL_FAST_MS) })
    const body = await response.text()
    return { status: response.status, contentType: response.headers.get('content-type') ?? '', body, ms: performance.now() - started }
  } catch (error) {
    return { status: 0, contentType: '', body: String(error), ms: performance.now() - started }
  }
}

const ADMIN = { authorization: `Bearer ${ADMIN_KEY}` }

describe('PostgreSQL restarting mid-billing (docs/contract.md, section 18)', { skip: !onPostgres ? 'runs in the PostgreSQL pass (npm run test:db), on a throwaway cluster of its own' : missing(), timeout: 180_000 }, () => {
  let cluster: Cluster | undefined
  let handle: DatabaseHandle | undefined
  let receiver: WebhookReceiver | undefined
  const processes: RunningServer[] = []

  before(async () => {
    cluster = await startCluster()
    // The test's own pool sees the restarts too: a dropped idle connection is replaced, not a crash.
    handle = await connectDatabase({ databaseUrl: cluster.url, poolSize: 3, onIdleConnectionError: () => {} })
    await migrateToLatest(handle.db)
    receiver = await startWebhookReceiver()
  })
  after(async () => {
    await Promise.all(processes.map((server) => server.stop('SIGKILL').catch(() => {})))
    await handle?.close().catch(() => {})
    await receiver?.close()
    await cluster?.destroy()
  })

  test(`${SUBSCRIPTIONS} renewals, the database stopped fast and then immediately under an API and two workers: 503 while down, then every period paid exactly once and every event delivered`, async (t) => {
    const db = handle!.db
    const seeded = await seed(db, receiver!.url)
    const storeId = seeded.store.id
    const env = (own: Record<string, string>) => ({ ...own, DATABASE_URL: cluster!.url })
    const starts = await Promise.allSettled([startServer(env(API_ENV)), startServer(env(WORKER_ENV)), startServer(env(WORKER_ENV))])
    // Those that started are stopped after the test (after()), even when another did not start.
    for (const start of starts) if (start.status === 'fulfilled') processes.push(start.value)
    for (const start of starts) if (start.status === 'rejected') throw start.reason
    const [api, ...workers] = processes
    const exits: string[] = []
    for (const [index, server] of processes.entries()) {
      server.child.once('exit', (code, signal) => exits.push(`${index === 0 ? 'the API' : `worker ${index}`} exited (${code ?? signal})`))
    }
    const tail = (server: RunningServer) => server.output().split('\n').slice(-15).join('\n')
    const state = () =>
      `${exits.join('; ') || 'every process running'}\n--- API:\n${tail(api!)}\n--- worker 1:\n${tail(workers[0]!)}\n--- worker 2:\n${tail(workers[1]!)}\n--- server log:\n${cluster!.log()}`
    const assertAlive = () => assert.deepEqual(exits, [], `no process exits\n${state()}`)

    /** Polls `check` until it holds, failing at once if a process exits, and after `timeoutMs` with `what` and the processes' state. */
    const until = async (what: () => string, timeoutMs: number, check: () => Promise<boolean> | boolean) => {
      const deadline = Date.now() + timeoutMs
      while (!(await check())) {
        assertAlive()
        assert.ok(Date.now() < deadline, `${what()}\n${state()}`)
        // wall clock: worker processes charging and delivering on their own; polled, with a deadline.
        await sleep(100)
      }
    }

    // Everything falls due at once, with every process up.
    await db.updateTable('stores').set({ test_clock_now: T1 }).where('id', '=', storeId).execute()
    const started = performance.now()
    const timeline: string[] = []
    const mark = (what: string) => timeline.push(`${((performance.now() - started) / 1000).toFixed(1)} s ${what}`)

    const downChecks: string[] = []
    /** Stops the cluster in `mode` mid-billing, checks what the processes answer meanwhile, and starts it again. */
    const restart = async (mode: 'fast' | 'immediate') => {
      const before = await progressOf(db, storeId)
      assert.ok(before && before.succeeded < SUBSCRIPTIONS, `the restart lands mid-billing: ${JSON.stringify(before)}`)
      const stoppedAt = performance.now()
      await cluster!.stop(mode)
      mark(`stopped (${mode}) at ${before.succeeded} paid, ${before.pending} pending, ${receiver!.requests.length} deliveries`)

      const [list, ready, live, workerReady] = await Promise.all([
        ask(api!.origin, '/api/v1/admin/subscriptions?limit=5', ADMIN),
        ask(api!.origin, '/readyz'),
        ask(api!.origin, '/healthz'),
        ask(workers[0]!.origin, '/readyz'),
      ])
      downChecks.push(`${mode}: list ${list.status} in ${Math.round(list.ms)} ms, readyz ${ready.status} in ${Math.round(ready.ms)} ms`)
      assert.equal(list.status, 503, `an API request while the database is down: 503, not a hang (0) or a 500: ${list.status} ${list.body}\n${state()}`)
      assert.match(list.contentType, /^application\/problem\+json/, list.body)
      const problem = JSON.parse(list.body) as { code: string; status: number; type: string }
      assert.deepEqual([problem.code, problem.status, problem.type], ['service_unavailable', 503, 'urn:problem-type:service_unavailable'])
      assert.ok(list.ms < FAIL_FAST_MS, `refused fast: ${list.ms} ms`)
      assert.equal(ready.status, 503, `/readyz while the database is down: ${ready.status} ${ready.body}\n${state()}`)
      assert.equal(workerReady.status, 503, `a worker's /readyz while the database is down: ${workerReady.status} ${workerReady.body}\n${state()}`)
      assert.equal(live.status, 200, `/healthz (liveness) still answers: ${live.status} ${live.body}`)

      // The database stays down a while longer: the workers' polls and deliveries keep failing meanwhile.
      const downFor = DOWN_MS - (performance.now() - stoppedAt)
      // wall clock: the database server is down for a moment, as in a real restart; nothing to poll for.
      if (downFor > 0) await sleep(downFor)
      assertAlive()
      await cluster!.start()
      mark(`started again after ${Math.round(performance.now() - stoppedAt)} ms down`)

      // Ready again by itself, and requests are answered again, without restarting any process.
      await until(() => 'the API never became ready again', 15_000, async () => (await ask(api!.origin, '/readyz')).status === 200)
      const again = await ask(api!.origin, '/api/v1/admin/subscriptions?limit=5', ADMIN)
      assert.equal(again.status, 200, `an API request once the database is back: ${again.status} ${again.body}`)
      mark('the API is ready again')
    }

    /**
     * Waits until billing and delivery have both gone on since `since` (charges paid and deliveries made),
     * at a moment when charges are in flight, so that the restart that follows lands on them.
     */
    const resumed = async (since: { paid: number; delivered: number }, what: string) => {
      let now: Progress | undefined
      const why = () =>
        now && now.succeeded >= SUBSCRIPTIONS
          ? `${what}: billing finished before the next restart could land on it (slow the gateway down)`
          : `${what}: billing or delivery did not resume (${JSON.stringify(now)}, ${receiver!.requests.length} deliveries; at the restart ${JSON.stringify(since)})`
      await until(why, 30_000, async () => {
        now = await progressOf(db, storeId)
        return now !== undefined && now.succeeded >= since.paid + 20 && now.pending > 0 && receiver!.requests.length > since.delivered
      })
      mark(`${what}: ${now!.succeeded} paid, ${receiver!.requests.length} deliveries`)
    }

    try {
      await resumed({ paid: 0, delivered: 0 }, 'billing started')
      await restart('fast')
      const afterFast = await progressOf(db, storeId)
      await resumed({ paid: afterFast!.succeeded, delivered: receiver!.requests.length }, 'resumed after the fast stop')
      await restart('immediate')

      // Left to finish, with no process restarted: every period paid and every charge's event delivered.
      let last: Progress | undefined
      let eventIds: string[] = []
      await until(() => `the run did not finish: ${JSON.stringify(last)}, ${eventIds.length} charge.succeeded events, ${eventIds.filter((id) => receiver!.withId(id).length === 0).length} not delivered`, 60_000, async () => {
        last = await progressOf(db, storeId)
        if (!last || last.succeeded < SUBSCRIPTIONS || last.pending > 0) return false
        eventIds = (await db.selectFrom('events').select('id').where('store_id', '=', storeId).where('event_type', '=', 'charge.succeeded').execute()).map((row) => row.id)
        const arrived = new Set(receiver!.requests.filter((request) => request.answered >= 200 && request.answered < 300).map((request) => request.headers['webhook-id']))
        return eventIds.length >= SUBSCRIPTIONS && eventIds.every((id) => arrived.has(id))
      })
      mark('every period paid and every event delivered')
      assertAlive()
    } finally {
      t.diagnostic(timeline.join('; '))
      t.diagnostic(downChecks.join('; '))
    }

    // Exactly one succeeded charge per subscription and period, and nothing else.
    const charges = await db.selectFrom('charges').selectAll().where('store_id', '=', storeId).execute()
    const subscriptions = await db.selectFrom('subscriptions').selectAll().where('store_id', '=', storeId).execute()
    assert.equal(subscriptions.length, SUBSCRIPTIONS)
    assert.deepEqual(charges.filter((charge) => charge.status !== 'succeeded').map((charge) => [charge.id, charge.status, charge.failure_code]), [], 'every charge succeeded')
    const perPeriod = new Map<string, number>()
    for (const charge of charges) {
      const key = `${charge.subscription_id} ${charge.period_start.toISOString()}`
      perPeriod.set(key, (perPeriod.get(key) ?? 0) + 1)
    }
    assert.deepEqual([...perPeriod].filter(([, count]) => count !== 1), [], 'each period paid once')
    for (const row of subscriptions) {
      assert.equal(charges.filter((charge) => charge.subscription_id === row.id).length, 1, `${row.id}: one charge`)
      assert.equal(row.period_index, 1, `${row.id}: the period advanced once`)
      assert.equal(row.pending_charge_id, null, `${row.id}: no charge left in flight`)
      assert.equal(row.status, 'active')
    }

    // The gateway's own ledger: each key charged once, money moved exactly for the succeeded charges.
    const ledger = await db.selectFrom('test_gateway_charges').selectAll().where('store_id', '=', storeId).execute()
    const chargedKeys = charges.map((charge) => charge.idempotency_key).sort()
    assert.deepEqual(ledger.filter((row) => row.status === 'succeeded').map((row) => row.idempotency_key).sort(), chargedKeys, 'the ledger holds exactly the succeeded charges')
    const ledgerPeriods = new Map<string, number>()
    for (const row of ledger) {
      const period = row.idempotency_key.slice(0, row.idempotency_key.lastIndexOf(':'))
      ledgerPeriods.set(period, (ledgerPeriods.get(period) ?? 0) + 1)
    }
    assert.deepEqual([...ledgerPeriods].filter(([, count]) => count !== 1), [], 'the gateway charged each period once')

    // Each charge has its one charge.succeeded event, and each event reached the receiver (duplicates allowed).
    const events = await db.selectFrom('events').select(['id', 'entity_id']).where('store_id', '=', storeId).where('event_type', '=', 'charge.succeeded').execute()
    assert.deepEqual(events.map((event) => event.entity_id).sort(), charges.map((charge) => charge.id).sort(), 'one charge.succeeded event per charge')
    const payloads = receiver!.verifyAll(seeded.secret) as Array<{ id: string; event_type: string }>
    assert.deepEqual(payloads.filter((payload, index) => payload.event_type !== 'charge.succeeded' || payload.id !== receiver!.requests[index]!.headers['webhook-id']), [], 'signed charge.succeeded payloads, webhook-id the event id')
    const arrivals = new Map<string, number>()
    for (const request of receiver!.requests) arrivals.set(request.headers['webhook-id']!, (arrivals.get(request.headers['webhook-id']!) ?? 0) + 1)
    assert.deepEqual(events.filter((event) => !arrivals.has(event.id)).map((event) => event.id), [], 'every event delivered at least once')
    assert.deepEqual([...arrivals.keys()].filter((id) => !events.some((event) => event.id === id)), [], 'nothing else delivered')

    // Nothing was set aside, and every process is still running.
    const failedJobs = await db.selectFrom('jobs').select(['kind', 'last_error']).where('failed_at', 'is not', null).execute()
    assert.deepEqual(failedJobs, [], 'no job set aside')
    assertAlive()
    t.diagnostic(
      `${charges.length} charges, ${ledger.filter((row) => row.calls > 1).length} gateway keys sent again (replayed, not charged again); ` +
        `${receiver!.requests.length} deliveries for ${events.length} events (${receiver!.requests.length - arrivals.size} duplicates)`,
    )
    // A graceful stop still works after the restarts.
    const codes = await Promise.all(processes.splice(0).map((server) => server.stop('SIGTERM')))
    assert.deepEqual(codes, [0, 0, 0], `every process stops cleanly\n${state()}`)
  })
})
