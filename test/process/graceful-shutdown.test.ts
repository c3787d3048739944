// Stopping (docs/contract.md, Running it): SIGTERM stops accepting work, lets every request already
// running finish (its database work included, even when its client has gone away) and only then closes
// the database; a request that arrives meanwhile is refused cleanly (503 problem+json, or the
// connection is refused), never answered with a 500 from a closed database.
import assert from 'node:assert/strict'
import { once } from 'node:events'
import { rmSync } from 'node:fs'
import { connect } from 'node:net'
import { after, afterEach, before, describe, test } from 'node:test'
// wall clock: a real server process is signalled while real requests are in flight (below).
import { setTimeout as sleep } from 'node:timers/promises'
import { Agent, request } from 'undici'
import { createTestDatabase, onPostgres, scratchUrl } from '../helpers/database.ts'
import { startServer, type RunningServer } from '../helpers/server-process.ts'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import { newDataDir } from '../helpers/data-dir.ts'

// Each renewal's gateway call takes this long: the test-clock advance below is a request that is
// still running, and still has database work ahead of it, when the signal arrives.
const GATEWAY_LATENCY_MS = 1500
const SUBSCRIPTIONS = 5
const DAY_MS = 86_400_000
// What the service logs when a request outlived the database, or the stop outlived its deadline.
const BAD_SHUTDOWN = /already been destroyed|request failed|shutdown timed out|shutdown failed/

interface Outcome {
  status?: number
  contentType?: string
  body?: string
  error?: string
}

/** Connection-level refusals: the port is closed, or the service closed an idle keep-alive connection as the request was sent. */
const REFUSALS = new Set(['ECONNREFUSED', 'ECONNRESET', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED'])

function assertCleanOutcome(outcome: Outcome, what: string): void {
  if (outcome.error !== undefined) {
    assert.ok(REFUSALS.has(outcome.error), `${what}: failed with ${outcome.error}, not a clean refusal`)
    return
  }
  if (outcome.status! >= 200 && outcome.status! < 300) return
  assert.equal(outcome.status, 503, `${what}: answered ${outcome.status} ${outcome.body}`)
  assert.match(outcome.contentType ?? '', /^application\/problem\+json/, `${what}: a 503 is problem+json: ${outcome.body}`)
  assert.equal(JSON.parse(outcome.body!).code, 'service_unavailable', `${what}: ${outcome.body}`)
}

// Each test bootstraps a store of its own, with a key of its own.
let key = ''

async function send(agent: Agent, origin: string, path: string, options: { method?: 'GET' | 'POST'; body?: unknown; signal?: AbortSignal } = {}): Promise<Outcome> {
  try {
    const response = await request(`${origin}${path}`, {
      dispatcher: agent,
      method: options.method ?? 'GET',
      headers: { authorization: `Bearer ${key}`, ...(options.body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      ...(options.signal ? { signal: options.signal } : {}),
    })
    return { status: response.statusCode, contentType: String(response.headers['content-type'] ?? ''), body: await response.body.text() }
  } catch (error) {
    const { code, name } = error as { code?: unknown; name?: string }
    return { error: typeof code === 'string' ? code : (name ?? String(error)) }
  }
}

async function post(agent: Agent, origin: string, path: string, body: unknown): Promise<any> {
  const outcome = await send(agent, origin, path, { method: 'POST', body })
  assert.ok(outcome.status === 200 || outcome.status === 201, `POST ${path}: ${outcome.status ?? outcome.error} ${outcome.body ?? ''}`)
  return JSON.parse(outcome.body!)
}

/** A product, a monthly plan and SUBSCRIPTIONS active subscriptions; answers a time by which each has one renewal due. */
async function seed(agent: Agent, origin: string): Promise<string> {
  const product = await post(agent, origin, '/api/v1/admin/products', { platform_product_id: 'drain-1', name: 'Beans' })
  const plan = await post(agent, origin, '/api/v1/admin/plans', { product_id: product.id, name: 'Monthly', amount: 1500, currency: 'USD', interval: 'month' })
  await post(agent, origin, '/api/v1/admin/checkouts', {
    platform_order_id: 'drain-order-1',
    email: 'drain@example.com',
    name: 'Ada Lovelace',
    shipping_address: { name: 'Ada Lovelace', line1: '1 Analytical Street', city: 'London', postal_code: 'N1 9GU', country: 'GB' },
    payment_instrument_id: 'instr_drain',
    items: Array.from({ length: SUBSCRIPTIONS }, () => ({ plan_id: plan.id, quantity: 1 })),
  })
  const clock = JSON.parse((await send(agent, origin, '/api/v1/admin/test-clock')).body!)
  return new Date(new Date(clock.now).getTime() + 35 * DAY_MS).toISOString()
}

/** The exit code once the process ends. */
async function exitCode(server: RunningServer): Promise<number | null> {
  if (server.child.exitCode !== null) return server.child.exitCode
  const [code] = await once(server.child, 'exit')
  return code as number | null
}

describe('graceful shutdown of the service process', () => {
  let dataDir: string
  let scratch: DatabaseHandle | undefined
  let env: Record<string, string>
  let server: RunningServer | undefined
  let agent: Agent

  before(async () => {
    if (onPostgres) scratch = await createTestDatabase()
  })
  after(async () => {
    await scratch?.close()
  })

  // Each test on a fresh DATA_DIR (embedded) or its own store in the scratch database (PostgreSQL).
  const setUp = async () => {
    dataDir = await newDataDir('billing-drain-')
    const suffix = Math.random().toString(36).slice(2, 10)
    key = `sk_test_graceful_shutdown_${suffix}_0123456789`
    env = {
      DATA_DIR: dataDir,
      SEED_DEMO_DATA: 'false',
      BOOTSTRAP_STORE_HASH: `drain-${suffix}`,
      BOOTSTRAP_ADMIN_API_KEY: key,
      TEST_GATEWAY_LATENCY_MS: String(GATEWAY_LATENCY_MS),
      ...(scratch ? { DATABASE_URL: scratchUrl(scratch)! } : {}),
    }
    agent = new Agent({ keepAliveTimeout: 60_000, connections: 16 })
  }
  afterEach(async () => {
    await server?.stop('SIGKILL')
    server = undefined
    await agent.close()
    rmSync(dataDir, { recursive: true, force: true })
  })

  test('SIGTERM (twice) under load: the running request finishes, every other one is answered or refused cleanly, and the exit code is 0', async () => {
    await setUp()
    server = await startServer(env)
    const { origin } = server
    const to = await seed(agent, origin)

    // Clients keep calling on keep-alive connections throughout the stop.
    let loading = true
    const outcomes: Outcome[] = []
    const load = Array.from({ length: 6 }, async () => {
      while (loading) {
        outcomes.push(await send(agent, origin, '/api/v1/admin/store'))
        // wall clock: clients pacing their requests to the server process.
        await sleep(5)
      }
    })
    // wall clock: load runs against the server process for a while before the slow request and the signals.
    await sleep(200)
    const slow = send(agent, origin, '/api/v1/admin/test-clock/advance', { method: 'POST', body: { to } })
    // A connection opened ahead of a request that never comes (browsers and proxies do this) must not hold the stop up.
    const { hostname, port } = new URL(origin)
    const silent = connect(Number(port), hostname)
    silent.on('error', () => {})
    await once(silent, 'connect')
    // wall clock: the slow request is inside the server process's gateway call (its latency is 3x this) when the test acts.
    await sleep(GATEWAY_LATENCY_MS / 3)
    const signalledAt = outcomes.length
    server.child.kill('SIGTERM')
    const exited = exitCode(server)
    // A second signal while stopping (a process manager's, or npm passing one on) changes nothing.
    // wall clock: the server process is stopping (draining its requests) when the second signal comes.
    await sleep(200)
    server.child.kill('SIGTERM')
    const code = await exited
    loading = false
    await Promise.all(load)
    silent.destroy()

    const advanced = await slow
    assert.equal(advanced.status, 200, `the request running at SIGTERM finished: ${advanced.status ?? advanced.error} ${advanced.body ?? ''}`)
    assert.equal(JSON.parse(advanced.body!).processed.renewals, SUBSCRIPTIONS)
    assert.ok(outcomes.length > signalledAt, 'requests were sent while the service stopped')
    outcomes.forEach((outcome, n) => assertCleanOutcome(outcome, `request ${n + 1} of ${outcomes.length}${n >= signalledAt ? ' (after SIGTERM)' : ''}`))
    assert.ok(outcomes.slice(0, signalledAt).every((outcome) => outcome.status === 200), 'before the signal every request succeeded')
    assert.equal(code, 0, `exit code 0; output:\n${server.output()}`)
    assert.doesNotMatch(server.output(), BAD_SHUTDOWN)
  })

  test('a request whose client hung up still finishes its work before the database closes', async () => {
    await setUp()
    // HTTP only: nothing but the request itself renews, before or after the restart.
    server = await startServer({ ...env, ROLE: 'api' })
    const to = await seed(agent, server.origin)

    const hangUp = new AbortController()
    const abandoned = send(agent, server.origin, '/api/v1/admin/test-clock/advance', { method: 'POST', body: { to }, signal: hangUp.signal })
    // wall clock: the slow request is inside the server process's gateway call (its latency is 3x this) when the test acts.
    await sleep(GATEWAY_LATENCY_MS / 3)
    hangUp.abort()
    assert.equal((await abandoned).error, 'AbortError')
    server.child.kill('SIGTERM')
    const code = await exitCode(server)
    const output = server.output()
    assert.equal(code, 0, `exit code 0; output:\n${output}`)
    assert.doesNotMatch(output, BAD_SHUTDOWN)

    // Its renewals were settled, not cut off mid-way (a cut-off charge would still be pending).
    server = await startServer({ ...env, ROLE: 'api' })
    const charges = JSON.parse((await send(agent, server.origin, '/api/v1/admin/charges')).body!)
    assert.deepEqual(charges.data.map((charge: { status: string }) => charge.status), Array(SUBSCRIPTIONS).fill('succeeded'))
    const clock = JSON.parse((await send(agent, server.origin, '/api/v1/admin/test-clock')).body!)
    assert.equal(clock.now, to)
  })
})
