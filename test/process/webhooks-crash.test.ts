import assert from 'node:assert/strict'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
// wall clock: worker processes are killed at moments of their run (below).
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, test } from 'node:test'
import { Webhook } from 'standardwebhooks'
import type { Db, StoreRow } from '../../src/db/database.ts'
import { systemClock } from '../../src/lib/clock.ts'
import type { NewEvent } from '../../src/modules/events/index.ts'
import { SendNotification } from '../../src/modules/notifications/index.ts'
import { createAdminKey, createStore } from '../../src/modules/stores/index.ts'
import { killRepeatedly, runToCompletion, workerDatabase } from '../helpers/crash-loop.ts'
import { onPostgres } from '../helpers/database.ts'
import type { RunningServer } from '../helpers/server-process.ts'
import { SHIPPING_ADDRESS } from '../helpers/subscriptions.ts'
import { testModules } from '../helpers/modules.ts'
import { TEST_ADMIN } from '../helpers/actors.ts'

/**
 * At-least-once delivery, proved against real processes (docs/contract.md, Webhook delivery): the service's
 * worker (`ROLE=worker`, whose dispatch loop delivers) is killed with SIGKILL at random moments while
 * it sends >= 5,000 events (2,500 on PGlite) to two real receivers, restarted, and finally left to finish. Then every
 * event reached every subscribed endpoint at least once, every duplicate carries the first arrival's
 * `webhook-id` and byte-identical body, and every arrival verifies with `standardwebhooks`.
 */

// A short timeout makes the claim lease (timeout x (ceil(batch / concurrency) + 1)) short, so the
// deliveries a killed worker had claimed are taken again within seconds; a short retry schedule keeps
// a slow answer under load from parking a delivery for minutes.
const WORKER_ENV = {
  ROLE: 'worker',
  SEED_DEMO_DATA: 'false',
  LOG_LEVEL: 'error',
  JOB_LEASE_MS: '1500',
  WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
  WEBHOOK_TIMEOUT_MS: '1000',
  WEBHOOK_RETRY_SCHEDULE: '500ms,1s,1s,2s,2s,5s,5s,10s,10s',
}
const EVENT_TYPES = ['subscription.created', 'subscription.activated', 'subscription.updated'] as const
const ITEMS_PER_ORDER = 25
// The PostgreSQL pass (CI) sends >= 5,000 events; npm test on PGlite half as many, under the same kills:
// what the embedded database adds (its directory surviving SIGKILL) shows as well, at half the CPU.
const CHECKOUT_SUBSCRIPTIONS = onPostgres ? 2_000 : 1_000 // two events each: created, activated
const UPDATED_EVENTS = CHECKOUT_SUBSCRIPTIONS / 2 // one more on half of them, recorded in bulk transactions
const MIN_EVENTS = CHECKOUT_SUBSCRIPTIONS * 2 + UPDATED_EVENTS

interface Arrival {
  webhookId: string
  body: Buffer
  verified: boolean
  verifyError?: string
  /** The payload's own id and sequence, read from the verified body. */
  eventId?: string
  entityId?: string
  sequence?: number
}

interface Receiver {
  url: string
  secret: string
  arrivals: Arrival[]
  /** event id -> first arrival */
  first: Map<string, Arrival>
  close(): Promise<void>
}

/** A real HTTP receiver on 127.0.0.1 that verifies each delivery as a Standard Webhooks receiver would. */
async function startReceiver(onArrival: () => void): Promise<Omit<Receiver, 'secret'> & { setSecret(secret: string): void }> {
  let verifier: Webhook | undefined
  const arrivals: Arrival[] = []
  const first = new Map<string, Arrival>()
  const server: Server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = []
    req.on('data', (chunk: Buffer) => chunks.push(chunk))
    req.on('end', () => {
      const body = Buffer.concat(chunks)
      const headers = {
        'webhook-id': String(req.headers['webhook-id'] ?? ''),
        'webhook-timestamp': String(req.headers['webhook-timestamp'] ?? ''),
        'webhook-signature': String(req.headers['webhook-signature'] ?? ''),
      }
      const arrival: Arrival = { webhookId: headers['webhook-id'], body, verified: false }
      try {
        const payload = verifier!.verify(body.toString('utf8'), headers) as { id: string; sequence: number; data: { id: string } }
        arrival.verified = true
        arrival.eventId = payload.id
        arrival.entityId = payload.data.id
        arrival.sequence = payload.sequence
      } catch (error) {
        arrival.verifyError = (error as Error).message
      }
      arrivals.push(arrival)
      if (!first.has(arrival.webhookId)) first.set(arrival.webhookId, arrival)
      // May SIGKILL the worker now: this delivery has arrived, but its attempt is not recorded yet.
      onArrival()
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok')
    })
  })
  server.keepAliveTimeout = 30_000
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/hooks`,
    arrivals,
    first,
    setSecret: (secret) => (verifier = new Webhook(secret)),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

interface Seeded {
  store: StoreRow
  /** An admin key of the store and its endpoints' ids: on PGlite the worker is asked what is still pending. */
  adminKey: string
  endpointIds: string[]
  /** event id -> its entity and sequence */
  events: Map<string, { entityId: string; sequence: number; eventType: string }>
  secrets: string[]
}

/** Two endpoints, then >= MIN_EVENTS events over CHECKOUT_SUBSCRIPTIONS subscriptions: checkouts, and updates in bulk transactions. */
async function seed(db: Db, urls: string[]): Promise<Seeded> {
  const store = await createStore(db, { storeHash: 'webhooks-crash', mode: 'test' })
  const webhooks = testModules(db).webhooks
  const secrets: string[] = []
  const endpointIds: string[] = []
  for (const [index, url] of urls.entries()) {
    const created = await webhooks.create(store, { url, event_types: [...EVENT_TYPES], description: `receiver ${index}` })
    secrets.push(created.secret)
    endpointIds.push(created.id)
  }
  const { key: adminKey } = await createAdminKey(db, store)
  const catalog = testModules(db, { clock: systemClock }).catalog
  const product = await catalog.createProduct(store, { platform_product_id: 'beans', name: 'Beans' })
  const plan = await catalog.createPlan(store, { product_id: product.id, name: 'Monthly', amount: 1500, currency: 'USD', interval: 'month' })
  const checkouts = testModules(db, { clock: systemClock }).checkouts
  const subscriptions: { id: string; object: 'subscription' }[] = []
  for (let order = 0; subscriptions.length < CHECKOUT_SUBSCRIPTIONS; order++) {
    const outcome = await checkouts.checkout(store, {
      platform_order_id: `order-${order}`,
      email: `buyer${order}@example.com`,
      name: 'Buyer',
      shipping_address: SHIPPING_ADDRESS,
      payment_instrument_id: 'pi_visa_ok',
      items: Array.from({ length: ITEMS_PER_ORDER }, (_, item) => ({ plan_id: plan.id, quantity: 1 + (item % 3) })),
    }, TEST_ADMIN)
    subscriptions.push(...(outcome.data as unknown as { id: string; object: 'subscription' }[]))
  }
  // The checkouts queued a welcome email each: the worker's job runner would send 2,000 emails beside the
  // dispatch loop. Emails are not what this run proves; webhook delivery is.
  await db.deleteFrom('jobs').where('kind', '=', SendNotification.kind).execute()
  const updated = subscriptions.filter((_, index) => index % 2 === 0).slice(0, UPDATED_EVENTS)
  for (let start = 0; start < updated.length; start += 250) {
    await db.transaction().execute(async (trx) => {
      const now = new Date()
      const events: NewEvent[] = updated.slice(start, start + 250).map((subscription) => ({
        storeId: store.id,
        eventType: 'subscription.updated',
        occurredAt: now,
        data: { ...subscription, quantity: 7 },
        actor: TEST_ADMIN,
      }))
      await testModules(db).events.recordMany(trx, events)
    })
  }
  const rows = await db.selectFrom('events').select(['id', 'entity_id', 'sequence', 'event_type']).where('store_id', '=', store.id).execute()
  const events = new Map(rows.map((row) => [row.id, { entityId: row.entity_id, sequence: row.sequence, eventType: row.event_type }]))
  return { store, adminKey, endpointIds, events, secrets }
}

/** Deliveries still pending, as the worker answers for its endpoints (GET .../health). */
async function pendingViaApi(origin: string, adminKey: string, endpointIds: string[]): Promise<number> {
  let pending = 0
  for (const id of endpointIds) {
    const response = await fetch(`${origin}/api/v1/admin/webhook-subscriptions/${id}/health`, { headers: { authorization: `Bearer ${adminKey}` } })
    assert.equal(response.status, 200, await response.clone().text())
    pending += ((await response.json()) as { pending: number }).pending
  }
  return pending
}

/** What the database says once the worker has stopped: every delivery row succeeded, one per event and endpoint. */
async function deliveryRows(db: Db, storeId: string): Promise<{ total: number; succeeded: number; attempts: number; failures: string[] }> {
  const rows = await db
    .selectFrom('webhook_deliveries')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n'), (eb) => eb.fn.sum<number>('attempts').as('attempts')])
    .where('store_id', '=', storeId)
    .groupBy('status')
    .execute()
  const total = rows.reduce((sum, row) => sum + Number(row.n), 0)
  const succeeded = Number(rows.find((row) => row.status === 'succeeded')?.n ?? 0)
  const attempts = rows.reduce((sum, row) => sum + Number(row.attempts ?? 0), 0)
  // Failed attempts (a slow answer under the short timeout, say) are retried; say which, for the diagnostic.
  const failed = await db
    .selectFrom('webhook_attempts as a')
    .innerJoin('webhook_deliveries as d', 'd.id', 'a.delivery_id')
    .select(['a.error', 'a.status_code', (eb) => eb.fn.countAll<number>().as('n')])
    .where('d.store_id', '=', storeId)
    .where((eb) => eb.or([eb('a.status_code', 'is', null), eb('a.status_code', '>=', 300)]))
    .groupBy(['a.error', 'a.status_code'])
    .execute()
  return { total, succeeded, attempts, failures: failed.map((row) => `${Number(row.n)} x ${row.error ?? row.status_code}`) }
}

describe('at-least-once webhook delivery under SIGKILL (docs/contract.md, Webhook delivery)', { timeout: 300_000 }, () => {
  const KILLS = onPostgres ? 10 : 5

  const database = workerDatabase(WORKER_ENV, 'sb-webhooks-crash-')

  test(`a dispatcher killed ${KILLS} times over >= ${MIN_EVENTS} events delivers every event to every endpoint at least once`, async (t) => {
    // The running worker and when the receivers should kill it (total arrivals across both), if they should.
    let worker: RunningServer | undefined
    let killAtArrival = Infinity
    let totalArrivals = 0
    const killed: string[] = []
    const onArrival = () => {
      totalArrivals++
      if (worker && totalArrivals >= killAtArrival) {
        killAtArrival = Infinity
        worker.child.kill('SIGKILL')
        killed.push(`at arrival ${totalArrivals}`)
      }
    }
    const receivers = [await startReceiver(onArrival), await startReceiver(onArrival)]
    const phases: string[] = []
    let phaseStart = performance.now()
    const phase = (name: string) => {
      phases.push(`${name} ${((performance.now() - phaseStart) / 1000).toFixed(1)} s`)
      phaseStart = performance.now()
    }
    try {
      const seeded = await database.use((db) => seed(db, receivers.map((receiver) => receiver.url)), { migrate: true })
      phase('seeding')
      seeded.secrets.forEach((secret, index) => receivers[index]!.setSecret(secret))
      const eventCount = seeded.events.size
      assert.ok(eventCount >= MIN_EVENTS, `seeded ${eventCount} events`)
      assert.ok([...seeded.events.values()].every((event) => (EVENT_TYPES as readonly string[]).includes(event.eventType)), 'every event is of a subscribed type')
      const expectedDeliveries = eventCount * receivers.length
      const unique = () => receivers.reduce((sum, receiver) => sum + receiver.first.size, 0)

      await killRepeatedly(
        database.env,
        KILLS,
        async (started, kill) => {
          worker = started
          if (kill % 2 === 0) {
            // From inside a receiver, at a random arrival well into this run: deliveries are in flight.
            killAtArrival = totalArrivals + 100 + Math.floor(Math.random() * (expectedDeliveries / (2 * KILLS)))
            const deadline = Date.now() + 20_000
            // wall clock: waiting for a receiver to kill the worker process at its chosen arrival, with a deadline.
            while (started.child.exitCode === null && started.child.signalCode === null && Date.now() < deadline) await sleep(20)
            if (started.child.signalCode === null) {
              killAtArrival = Infinity
              started.child.kill('SIGKILL')
              killed.push('at the deadline')
            }
          } else {
            // At a random moment after the start: fan-out, a claim, sends or the record may be under way.
            // wall clock: a SIGKILL at a random moment of a real process's run.
            await sleep(50 + Math.floor(Math.random() * 600))
            started.child.kill('SIGKILL')
            killed.push(`${totalArrivals} arrivals in`)
          }
        },
        () => {
          worker = undefined
        },
      )
      assert.ok(unique() < expectedDeliveries, 'the kills happened while there was work left')
      phase(`${KILLS} kills`)
      const before = unique()

      // The last restart is left to finish.
      await runToCompletion(database.env, {
        timeoutMs: 90_000,
        pollMs: 100,
        // Done when every pair arrived and every arrival is recorded too: the last arrivals' records may
        // still be on their way when they land. PostgreSQL is read directly; PGlite (one process at a time)
        // through the worker's own API, its endpoints' health saying nothing is pending. Stopped on arrivals
        // alone, a loaded worker could still be recording at the stop and leave deliveries pending.
        check: async (running) => {
          const arrived = unique()
          if (arrived < expectedDeliveries) return { done: false, progress: `delivery did not finish: ${arrived}/${expectedDeliveries} (event, endpoint) pairs arrived` }
          const waiting = database.handle
            ? expectedDeliveries - (await deliveryRows(database.handle.db, seeded.store.id)).succeeded
            : await pendingViaApi(running.origin, seeded.adminKey, seeded.endpointIds)
          return { done: waiting === 0, progress: `every pair arrived, ${waiting} deliveries not yet recorded as succeeded` }
        },
      })
      phase(`last run (${expectedDeliveries - before} pairs left)`)

      // Every event reached every endpoint at least once; nothing else arrived.
      for (const [index, receiver] of receivers.entries()) {
        const missing = [...seeded.events.keys()].filter((id) => !receiver.first.has(id))
        assert.deepEqual(missing.slice(0, 5), [], `receiver ${index}: ${missing.length} events never arrived`)
        const strangers = [...receiver.first.keys()].filter((id) => !seeded.events.has(id))
        assert.deepEqual(strangers, [], `receiver ${index}: deliveries of unknown events`)
      }

      let duplicates = 0
      for (const [index, receiver] of receivers.entries()) {
        // Every arrival verifies against this endpoint's secret, and its webhook-id is the event id.
        const unverified = receiver.arrivals.filter((arrival) => !arrival.verified)
        assert.equal(unverified.length, 0, `receiver ${index}: ${unverified.length} deliveries failed verification (${unverified[0]?.verifyError})`)
        for (const arrival of receiver.arrivals) assert.equal(arrival.webhookId, arrival.eventId, 'webhook-id is the event id')
        // Duplicates are identifiable: the same webhook-id, with a body byte-identical to the first arrival's.
        for (const arrival of receiver.arrivals) {
          const firstArrival = receiver.first.get(arrival.webhookId)!
          if (firstArrival === arrival) continue
          duplicates++
          assert.ok(arrival.body.equals(firstArrival.body), `receiver ${index}: a duplicate of ${arrival.webhookId} has a different body`)
        }
        // One entity's events first arrived in sequence order (a delivery waits for the entity's earlier ones).
        const lastSequence = new Map<string, number>()
        for (const arrival of receiver.first.values()) {
          const previous = lastSequence.get(arrival.entityId!) ?? 0
          assert.equal(arrival.sequence, previous + 1, `receiver ${index}: ${arrival.entityId} event ${arrival.sequence} arrived first after ${previous}`)
          lastSequence.set(arrival.entityId!, arrival.sequence!)
        }
      }
      const received = receivers.reduce((sum, receiver) => sum + receiver.arrivals.length, 0)
      assert.equal(received, expectedDeliveries + duplicates)
      // The receiver-side kills land between an arrival and its recorded attempt, so they must show as duplicates.
      assert.ok(duplicates > 0, 'the kills left deliveries to be sent again')

      // And the database agrees: one delivery per (event, endpoint), all succeeded.
      const rows = await database.use((db) => deliveryRows(db, seeded.store.id))
      assert.equal(rows.total, expectedDeliveries, 'one delivery row per event and endpoint')
      assert.equal(rows.succeeded, expectedDeliveries, 'every delivery row succeeded')

      t.diagnostic(`${eventCount} events x ${receivers.length} endpoints = ${expectedDeliveries} deliveries; ${KILLS} SIGKILLs (${killed.join('; ')})`)
      t.diagnostic(`received ${received} deliveries, ${duplicates} duplicates (${receivers.map((receiver, index) => `receiver ${index}: ${receiver.arrivals.length - receiver.first.size}`).join(', ')}); ${rows.attempts} attempts recorded${rows.failures.length > 0 ? `, failed ones: ${rows.failures.join('; ')}` : ''}`)
      t.diagnostic(phases.join(', '))
    } finally {
      if (worker) await worker.stop('SIGKILL')
      await Promise.all(receivers.map((receiver) => receiver.close()))
    }
  })
})
