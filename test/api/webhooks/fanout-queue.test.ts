import assert from 'node:assert/strict'
// wall clock: real HTTP receivers: an absence of requests, and receivers of uneven speed (below).
import { setTimeout as sleep } from 'node:timers/promises'
import { describe, test } from 'node:test'
import { sql } from 'kysely'
import { Migrator } from 'kysely/migration'
import type { Db } from '../../../src/db/database.ts'
import { migrateToLatest } from '../../../src/db/migrate.ts'
import { migrations } from '../../../src/db/migrations/index.ts'
import { createEventsModule, takeEventsToFanOut, type NewEvent } from '../../../src/modules/events/index.ts'
import { startDispatchLoop } from '../../../src/modules/webhooks/index.ts'
import { createTestDatabase, onPostgres } from '../../helpers/database.ts'
import { createStoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { createEndpoint, drive, endpointAction, listDeliveries, newShop, removeEndpoints, webhookSuite } from './fixtures.ts'
import { TEST_ADMIN } from '../../helpers/actors.ts'

/** The event log as the modules record with it (no reactions: these tests watch the fan-out only). */
const eventLog = (db: Db) => createEventsModule({ db }).service.log

/**
 * The fan-out's work list is a narrow queue filled by a trigger on `events` (migration 0017), and
 * delivery lanes claim their next batch while the current one's last answers arrive (startDelivery).
 * Neither may lose, double or reorder a delivery.
 */

const updated = (storeId: string, entityId: string, note: string): NewEvent => ({
  storeId,
  eventType: 'subscription.updated',
  occurredAt: new Date(),
  data: { id: entityId, object: 'subscription', note },
  actor: TEST_ADMIN,
})

async function queued(db: Db, storeId: string): Promise<string[]> {
  const { rows } = await sql<{ event_id: string }>`SELECT event_id FROM event_fanout_queue WHERE store_id = ${storeId} ORDER BY position`.execute(db)
  return rows.map((row) => row.event_id)
}

describe('webhook fan-out queue and pipelined delivery lanes', () => {
  let t: TestApp
  const { receiver, dispatcher } = webhookSuite((app) => (t = app))

  test('an event is queued in the transaction that records it (never when it rolls back) and leaves the queue only with its deliveries', async () => {
    const shop = await newShop(t)
    const inbox = await receiver()
    const endpoint = await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: ['subscription.updated'] })
    const storeId = shop.store.id

    await assert.rejects(
      t.db.transaction().execute(async (trx) => {
        await eventLog(trx).recordMany(trx, [updated(storeId, 'sub_rolledback', 'never')])
        throw new Error('rolled back')
      }),
      /rolled back/,
    )
    assert.deepEqual(await queued(t.db, storeId), [], 'a rolled-back event was never queued')

    const recorded = await t.db.transaction().execute((trx) => eventLog(trx).recordMany(trx, [updated(storeId, 'sub_queue_a', 'first'), updated(storeId, 'sub_queue_a', 'second')]))
    const ids = recorded.map((event) => event.id)
    assert.deepEqual(await queued(t.db, storeId), ids, 'queued at commit, in log order')

    // A fan-out whose delivery insert fails rolls back the taking of its events too.
    await sql.raw(`CREATE FUNCTION refuse_delivery_insert() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused delivery insert'; END $$`).execute(t.db)
    await sql`CREATE TRIGGER refuse_delivery_insert BEFORE INSERT ON webhook_deliveries FOR EACH STATEMENT EXECUTE FUNCTION refuse_delivery_insert()`.execute(t.db)
    const run = dispatcher()
    try {
      await assert.rejects(run.fanOut(), /refused delivery insert/)
    } finally {
      await sql`DROP TRIGGER refuse_delivery_insert ON webhook_deliveries`.execute(t.db)
      await sql`DROP FUNCTION refuse_delivery_insert()`.execute(t.db)
    }
    assert.deepEqual(await queued(t.db, storeId), ids, 'still queued after the failed fan-out')
    assert.equal((await listDeliveries(t.app, shop.auth, endpoint.id)).length, 0)

    assert.equal(await run.fanOut(), 2)
    assert.deepEqual(await queued(t.db, storeId), [])
    assert.equal(await run.fanOut(), 0, 'taken once')
    await drive(run)
    assert.deepEqual(inbox.accepted().map((body) => body.id), ids, 'each once, in sequence order')
    assert.deepEqual((await listDeliveries(t.app, shop.auth, endpoint.id)).map((delivery) => delivery.status), ['succeeded', 'succeeded'])

    // A ping is delivered to its endpoint only, so it never waits in the fan-out queue.
    assert.equal((await endpointAction(t.app, shop.auth, endpoint.id, 'test')).statusCode, 202)
    assert.deepEqual(await queued(t.db, storeId), [])
    await removeEndpoints(t, shop.auth)
  })

  test('an event an admin redelivers before it is fanned out gets one delivery all the same: the fan-out batch is done again skipping it', async () => {
    const shop = await newShop(t)
    const inbox = await receiver()
    const endpoint = await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: ['subscription.updated'] })
    const other = await receiver()
    const otherEndpoint = await createEndpoint(t.app, shop.auth, { url: other.url, event_types: ['subscription.updated'] })
    const storeId = shop.store.id
    const [early, plain] = await t.db.transaction().execute((trx) => eventLog(trx).recordMany(trx, [updated(storeId, 'sub_early', 'early'), updated(storeId, 'sub_plain', 'plain')]))
    const redelivered = await endpointAction(t.app, shop.auth, endpoint.id, 'redeliver', { event_id: early!.id })
    assert.ok([200, 202].includes(redelivered.statusCode), redelivered.body)
    assert.deepEqual(await queued(t.db, storeId), [early!.id, plain!.id], 'both still waiting for fan-out')

    const run = dispatcher()
    assert.equal(await run.fanOut(), 2)
    assert.deepEqual(await queued(t.db, storeId), [])
    const deliveries = await listDeliveries(t.app, shop.auth, endpoint.id)
    assert.deepEqual(deliveries.map((delivery) => delivery.event_id).sort(), [early!.id, plain!.id].sort(), 'one delivery per event')
    assert.equal((await listDeliveries(t.app, shop.auth, otherEndpoint.id)).length, 2, 'the rest of the batch fanned out')
    await drive(run)
    assert.deepEqual(inbox.accepted().map((body) => body.id).sort(), [early!.id, plain!.id].sort())
    assert.equal(inbox.requests.length, 2, 'each sent once')
    assert.equal(other.requests.length, 2)
    await removeEndpoints(t, shop.auth)
  })

  test('concurrent takers get disjoint events, and an event taken by an open transaction is skipped, not waited for', async (context) => {
    const shop = await newShop(t)
    const storeId = shop.store.id
    const recorded = await t.db.transaction().execute((trx) => eventLog(trx).recordMany(trx, ['a', 'b', 'c'].map((n) => updated(storeId, `sub_take_${n}`, n))))
    let release!: () => void
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    let firstTook!: (ids: string[]) => void
    const first = new Promise<string[]>((resolve) => {
      firstTook = resolve
    })
    const holder = t.db.transaction().execute(async (trx) => {
      firstTook((await takeEventsToFanOut(trx, 1)).map((event) => event.id))
      await held
      throw new Error('rolled back on purpose')
    })
    const taken = await first
    assert.deepEqual(taken, [recorded[0]!.id], 'oldest first')
    if (onPostgres) {
      // PGlite has one connection: a second transaction would queue behind the first.
      const second = await t.db.transaction().execute((trx) => takeEventsToFanOut(trx, 10))
      assert.deepEqual(second.map((event) => event.id), [recorded[1]!.id, recorded[2]!.id], 'the held one skipped')
    } else {
      context.diagnostic('one connection (PGlite): concurrent takers not exercised')
    }
    release()
    await assert.rejects(holder, /rolled back on purpose/)
    const expected = onPostgres ? [recorded[0]!.id] : recorded.map((event) => event.id)
    assert.deepEqual(await queued(t.db, storeId), expected, 'the rolled-back taker gave its event back')
    await t.db.transaction().execute((trx) => takeEventsToFanOut(trx, 1_000))
  })

  test('a lane claims its next batch while the current one is still in flight: within the lane bound, and never a later event of an entity in flight', async () => {
    const shop = await newShop(t)
    const storeId = shop.store.id
    let open!: () => void
    const gate = new Promise<void>((resolve) => {
      open = resolve
    })
    let inFlight = 0
    let maxInFlight = 0
    const inbox = await receiver(async () => {
      inFlight += 1
      maxInFlight = Math.max(maxInFlight, inFlight)
      await gate
      inFlight -= 1
      return { status: 200 }
    })
    const endpoint = await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: ['subscription.updated'] })
    const entities = ['sub_lane_a', 'sub_lane_b', 'sub_lane_c']
    await t.db.transaction().execute((trx) => eventLog(trx).recordMany(trx, entities.flatMap((entity) => [updated(storeId, entity, '1'), updated(storeId, entity, '2')])))
    const run = dispatcher({ concurrency: 2, batchSize: 2 })
    assert.equal(await run.fanOut(), 6)

    const lane = run.lane()
    const first = await run.startDelivery(lane)
    assert.equal(first.count, 2)
    await first.started
    await inbox.waitFor(2)
    // Only the first event of the one entity not in flight is free: the second events wait for the first ones.
    const second = await run.startDelivery(lane)
    assert.equal(second.count, 1)
    // wall clock: proving an absence: a request the lane wrongly let out would reach the receiver's socket within this.
    await sleep(50)
    assert.equal(inbox.requests.length, 2, 'the next batch waits for the lane')
    open()
    await Promise.all([first.done, second.done])
    assert.equal(maxInFlight, 2, 'never more than the lane allows in flight')
    const firstEvents = inbox.accepted()
    assert.deepEqual(firstEvents.map((body) => body.sequence), [1, 1, 1])
    assert.deepEqual(new Set(firstEvents.map((body) => body.data.id)), new Set(entities))

    await drive(run)
    const all = inbox.accepted()
    assert.equal(all.length, 6)
    for (const entity of entities) assert.deepEqual(all.filter((body) => body.data.id === entity).map((body) => body.sequence), [1, 2], entity)
    assert.ok((await listDeliveries(t.app, shop.auth, endpoint.id)).every((delivery) => delivery.status === 'succeeded'))
    await removeEndpoints(t, shop.auth)
  })

  test('the dispatch loop drains many entities in per-entity order, each once, and stop() returns with every batch in hand recorded', async () => {
    const shop = await newShop(t)
    const storeId = shop.store.id
    let inFlight = 0
    let maxInFlight = 0
    const inbox = await receiver(async () => {
      inFlight += 1
      maxInFlight = Math.max(maxInFlight, inFlight)
      // wall clock: receivers of uneven speed, so the lanes' deliveries finish out of order.
      await sleep(Math.floor(Math.random() * 4))
      inFlight -= 1
      return { status: 200 }
    })
    const endpoint = await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: ['subscription.updated'] })
    const entities = Array.from({ length: 20 }, (_, i) => `sub_loop_${i}`)
    const recorded = await t.db.transaction().execute((trx) =>
      eventLog(trx).recordMany(trx, [1, 2, 3].flatMap((step) => entities.map((entity) => updated(storeId, entity, String(step))))),
    )
    const errors: unknown[] = []
    const loop = startDispatchLoop({ dispatcher: dispatcher({ concurrency: 3, batchSize: 4 }), log: { error: (object) => errors.push(object) }, lanes: 2, idleMs: 5 })
    try {
      await inbox.waitFor(recorded.length, 20_000)
    } finally {
      await loop.stop()
    }
    assert.deepEqual(errors, [])
    assert.equal(inbox.requests.length, recorded.length, 'no event sent twice')
    assert.ok(maxInFlight <= 2 * 3, `at most lanes x concurrency in flight (${maxInFlight})`)
    const bodies = inbox.accepted()
    for (const entity of entities) assert.deepEqual(bodies.filter((body) => body.data.id === entity).map((body) => body.sequence), [1, 2, 3], entity)
    const deliveries = await listDeliveries(t.app, shop.auth, endpoint.id)
    assert.equal(deliveries.length, recorded.length)
    assert.ok(deliveries.every((delivery) => delivery.status === 'succeeded'), 'every attempt recorded before stop() returned')
    await removeEndpoints(t, shop.auth)
  })
})

describe('migration 0017: events waiting for fan-out when it runs are queued, and back again on the way down', () => {
  test('down marks queued events not fanned out; up queues exactly those', async () => {
    const handle = await createTestDatabase()
    try {
      const { db } = handle
      const { store } = await createStoreWithKey(db)
      const [waiting, taken] = await db.transaction().execute((trx) => eventLog(trx).recordMany(trx, [updated(store.id, 'sub_mig_a', 'a'), updated(store.id, 'sub_mig_b', 'b')]))
      await db.transaction().execute(async (trx) => {
        const all = await takeEventsToFanOut(trx, 10)
        // Put back the one that should still be waiting.
        await sql`INSERT INTO event_fanout_queue (position, event_id, store_id, event_type, entity_id)
                  SELECT position, id, store_id, event_type, entity_id FROM events WHERE id = ${waiting!.id}`.execute(trx)
        assert.equal(all.length, 2)
      })
      const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } })
      const down = await migrator.migrateTo('0016-webhook-delivery-speed')
      assert.equal(down.error, undefined)
      const flags = await sql<{ id: string; fanned_out: boolean }>`SELECT id, fanned_out FROM events ORDER BY position`.execute(db)
      assert.deepEqual(flags.rows, [{ id: waiting!.id, fanned_out: false }, { id: taken!.id, fanned_out: true }])
      await sql`INSERT INTO events (id, store_id, entity_type, entity_id, event_type, sequence, occurred_at, payload)
                VALUES ('evt_mig_c', ${store.id}, 'subscription', 'sub_mig_c', 'subscription.updated', 1, now(), '{}')`.execute(db)

      await migrateToLatest(db)
      assert.deepEqual(await queued(db, store.id), [waiting!.id, 'evt_mig_c'])
      const columns = await sql<{ column_name: string }>`SELECT column_name FROM information_schema.columns WHERE table_name = 'events' AND column_name = 'fanned_out'`.execute(db)
      assert.equal(columns.rows.length, 0)
      const [later] = await db.transaction().execute((trx) => eventLog(trx).recordMany(trx, [updated(store.id, 'sub_mig_d', 'd')]))
      assert.deepEqual(await queued(db, store.id), [waiting!.id, 'evt_mig_c', later!.id])
    } finally {
      await handle.close()
    }
  })
})
