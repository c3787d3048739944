import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { sql } from 'kysely'
import type { Db } from '../../../src/db/database.ts'
import type { TestApp } from '../../helpers/test-app.ts'
import { createEndpoint, newShop, removeEndpoints, subscribe, webhookSuite, type Shop } from './fixtures.ts'

/**
 * Fair delivery across stores (issue 28, CONTRACT section 19): the claim takes each endpoint's oldest due
 * deliveries in turn, so one store's backlog, or an endpoint that does not answer, never holds back
 * another store's deliveries. Per-entity order within an endpoint is unchanged (delivery.test.ts).
 */
describe("one store's webhook backlog does not delay another store's deliveries", () => {
  let t: TestApp
  const { receiver, dispatcher } = webhookSuite((app) => (t = app))

  /**
   * `count` deliveries to `endpointId`, already fanned out and due an hour ago (older than anything the
   * other store has), one event each, written by SQL as a backlog left by an outage would be.
   */
  async function backlog(db: Db, shop: Shop, endpointId: string, count: number): Promise<void> {
    const at = new Date(Date.now() - 3_600_000)
    await db.transaction().execute(async (trx) => {
      await sql`
        INSERT INTO events (id, store_id, entity_type, entity_id, event_type, sequence, occurred_at, payload, created_at)
        SELECT 'evt_backlog_' || ${endpointId} || '_' || g, ${shop.store.id}, 'subscription', 'sub_backlog_' || ${endpointId} || '_' || g,
               'subscription.created', 1, ${at}, '{"type":"subscription.created"}', ${at}
          FROM generate_series(1, ${count}) g`.execute(trx)
      await sql`DELETE FROM event_fanout_queue WHERE event_id LIKE ${`evt_backlog_${endpointId}_%`}`.execute(trx)
      await sql`
        INSERT INTO webhook_deliveries (id, store_id, webhook_subscription_id, event_id, event_type, entity_id, event_position, status, next_attempt_at, created_at, updated_at)
        SELECT 'msg_backlog_' || ${endpointId} || '_' || g, ${shop.store.id}, ${endpointId}, e.id, e.event_type, e.entity_id, e.position, 'pending', ${at}::timestamptz + g * interval '1 ms', ${at}, ${at}
          FROM generate_series(1, ${count}) g JOIN events e ON e.id = 'evt_backlog_' || ${endpointId} || '_' || g`.execute(trx)
    })
  }

  async function pendingOf(db: Db, endpointId: string): Promise<number> {
    const row = await db.selectFrom('webhook_deliveries').select((eb) => eb.fn.countAll<number | string>().as('n')).where('webhook_subscription_id', '=', endpointId).where('status', '=', 'pending').executeTakeFirstOrThrow()
    return Number(row.n)
  }

  test("store A's 2,000 older due deliveries: store B's one delivery goes out in the first claim", async () => {
    const [a, b] = [await newShop(t), await newShop(t)]
    const [inboxA, inboxB] = [await receiver(), await receiver()]
    const endpointA = await createEndpoint(t.app, a.auth, { url: inboxA.url, event_types: ['subscription.created'] })
    const endpointB = await createEndpoint(t.app, b.auth, { url: inboxB.url, event_types: ['subscription.created'] })
    await backlog(t.db, a, endpointA.id, 2_000)
    await subscribe(t, b)
    const d = dispatcher({ batchSize: 50 })
    assert.ok((await d.fanOut()) > 0)
    assert.equal(await pendingOf(t.db, endpointB.id), 1)

    const sent = await d.deliverDue()
    assert.ok(sent <= 50, `one batch: ${sent}`)
    assert.equal(inboxB.requests.length, 1, "store B's delivery went out in the first batch, beside store A's backlog")
    assert.equal(await pendingOf(t.db, endpointB.id), 0)
    // A is not starved either: it fills the rest of the batch with its oldest.
    assert.equal(inboxA.requests.length, sent - 1)
    assert.deepEqual(new Set(inboxA.requests.map((request) => request.headers['webhook-id'])), new Set(Array.from({ length: sent - 1 }, (_, i) => `evt_backlog_${endpointA.id}_${i + 1}`)))
    await removeEndpoints(t, a.auth)
  })

  test("store A's endpoint holding every call open: store B's delivery is sent and answered meanwhile", async () => {
    const [a, b] = [await newShop(t), await newShop(t)]
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    const inboxA = await receiver(async () => {
      await held
      return { status: 200 }
    })
    const inboxB = await receiver()
    const endpointA = await createEndpoint(t.app, a.auth, { url: inboxA.url, event_types: ['subscription.created'] })
    await createEndpoint(t.app, b.auth, { url: inboxB.url, event_types: ['subscription.created'] })
    await backlog(t.db, a, endpointA.id, 500)
    await subscribe(t, b)
    // Fewer calls in flight than A has due: B's call must not queue behind A's.
    const d = dispatcher({ batchSize: 100, concurrency: 8 })
    await d.fanOut()

    const delivering = d.deliverDue()
    try {
      await inboxB.waitFor(1, 10_000)
      assert.ok(inboxA.requests.length <= 8, 'A holds at most the concurrency bound')
    } finally {
      release()
    }
    await delivering
  })
})
