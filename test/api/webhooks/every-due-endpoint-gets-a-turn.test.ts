import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { sql } from 'kysely'
import type { Db } from '../../../src/db/database.ts'
import type { TestApp } from '../../helpers/test-app.ts'
import { createEndpoint, newShop, webhookSuite, type Shop } from './fixtures.ts'

// The claim shares its batch among the due endpoints: shares that add up to more than the batch would be
// cut in endpoint order, and the endpoint with the highest id would wait until the others drained.
describe('the fair webhook claim reaches every due endpoint', () => {
  let t: TestApp
  const { receiver, dispatcher } = webhookSuite((app) => (t = app))

  async function backlog(db: Db, shop: Shop, endpointId: string, count: number): Promise<void> {
    const at = new Date(Date.now() - 3_600_000)
    await sql`
      INSERT INTO events (id, store_id, entity_type, entity_id, event_type, sequence, occurred_at, payload, created_at)
      SELECT 'evt_r_' || ${endpointId} || '_' || g, ${shop.store.id}, 'subscription', 'sub_r_' || ${endpointId} || '_' || g,
             'subscription.created', 1, ${at}, '{"type":"subscription.created"}', ${at} FROM generate_series(1, ${count}) g`.execute(db)
    await sql`DELETE FROM event_fanout_queue WHERE event_id LIKE ${`evt_r_${endpointId}_%`}`.execute(db)
    await sql`
      INSERT INTO webhook_deliveries (id, store_id, webhook_subscription_id, event_id, event_type, entity_id, event_position, status, next_attempt_at, created_at, updated_at)
      SELECT 'msg_r_' || ${endpointId} || '_' || g, ${shop.store.id}, ${endpointId}, e.id, e.event_type, e.entity_id, e.position, 'pending', ${at}::timestamptz + g * interval '1 ms', ${at}, ${at}
        FROM generate_series(1, ${count}) g JOIN events e ON e.id = 'evt_r_' || ${endpointId} || '_' || g`.execute(db)
  }

  test('three due endpoints, batches of 4: the highest id is sent within three batches', async () => {
    const made: { shop: Shop; id: string; inbox: Awaited<ReturnType<typeof receiver>> }[] = []
    for (let i = 0; i < 3; i++) {
      const shop = await newShop(t)
      const inbox = await receiver()
      made.push({ shop, inbox, id: (await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: ['subscription.created'] })).id })
    }
    made.sort((a, b) => (a.id < b.id ? -1 : 1))
    await backlog(t.db, made[0]!.shop, made[0]!.id, 20)
    await backlog(t.db, made[1]!.shop, made[1]!.id, 20)
    await backlog(t.db, made[2]!.shop, made[2]!.id, 1)
    const d = dispatcher({ batchSize: 4 })
    for (let i = 0; i < 3; i++) await d.deliverDue()
    assert.deepEqual(made.map(({ inbox }) => inbox.requests.length > 0), [true, true, true], `sent: ${made.map(({ inbox }) => inbox.requests.length)}`)
  })
})
