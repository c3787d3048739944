import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { gzipSync } from 'node:zlib'
import { sql } from 'kysely'
import type { TestApp } from '../../helpers/test-app.ts'
import type { Answer, WebhookReceiver } from '../../helpers/webhook-receiver.ts'
import { createWebhookAgent, createWebhookDispatcher } from '../../../src/modules/webhooks/index.ts'
import { createEndpoint, dispatcherClock, drive, listDeliveries, newShop, removeEndpoints, SECOND, storeEvents, subscribe, webhookSuite, type Shop } from './fixtures.ts'

/**
 * Whatever bytes a receiver answers with, its deliveries are recorded (issue: a NUL in one reply made
 * PostgreSQL refuse the batch's INSERT, so no attempt of the batch was recorded and all of them were
 * sent again at every lease expiry). The reply's first KiB is stored as printable text, and one
 * attempt the database still refuses holds back only its own delivery.
 */
describe('webhook replies with hostile bytes', () => {
  let t: TestApp
  const { receiver, dispatcher } = webhookSuite((app) => (t = app))

  const TYPES = ['subscription.created', 'subscription.activated']
  // The receiver types its body as text; res.end sends a Buffer's bytes as they are.
  const bytes = (body: Buffer): string => body as unknown as string
  const gzipped = gzipSync(Buffer.from('{"received":true}'))

  /** One endpoint on TYPES per answer, on a receiver of its own. */
  async function endpointsAnswering(shop: Shop, answers: Record<string, Answer>) {
    const made: Record<string, { inbox: WebhookReceiver; endpoint: any }> = {}
    for (const [name, answer] of Object.entries(answers)) {
      const inbox = await receiver(() => answer)
      made[name] = { inbox, endpoint: await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: TYPES }) }
    }
    return made
  }

  test('200 answers holding NUL, invalid UTF-8 or gzip bytes: every delivery is recorded as succeeded with its attempt, sent once', async () => {
    const shop = await newShop(t)
    const endpoints = await endpointsAnswering(shop, {
      nul: { status: 200, body: 'ok\u0000\u0000done\u0000' },
      invalidUtf8: { status: 200, body: bytes(Buffer.from([0x6f, 0x6b, 0xff, 0xfe, 0xc3, 0x28, 0xed, 0xa0, 0x80])) },
      gzipLabelled: { status: 200, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: bytes(gzipped) },
      gzipUnlabelled: { status: 200, headers: { 'content-type': 'application/octet-stream' }, body: bytes(gzipped) },
      plain: { status: 200, body: 'ok' },
    })
    for (let i = 0; i < 3; i++) await subscribe(t, shop)
    const events = (await storeEvents(t.db, shop.store.id)).filter((event) => TYPES.includes(event.event_type))
    assert.equal(events.length, 6)

    // All 30 deliveries are due in the same pass, so the old code's one INSERT carried every hostile reply.
    const run = dispatcher()
    await drive(run)

    const stored: Record<string, string[]> = {}
    for (const [name, { inbox, endpoint }] of Object.entries(endpoints)) {
      assert.equal(inbox.requests.length, events.length, `${name}: each event sent once, none again`)
      assert.deepEqual(inbox.verifyAll(endpoint.secret).map((event) => event.id).sort(), events.map((event) => event.id).sort(), name)
      const deliveries = await listDeliveries(t.app, shop.auth, endpoint.id) // answers 200
      assert.equal(deliveries.length, events.length, name)
      for (const delivery of deliveries) {
        assert.equal(delivery.status, 'succeeded', `${name}: ${delivery.event_type}`)
        assert.equal(delivery.attempts, 1)
        assert.equal(delivery.last_status_code, 200)
        assert.equal(delivery.attempt_log.length, 1, `${name}: one attempt row`)
        assert.equal(delivery.attempt_log[0].status_code, 200)
        assert.equal(delivery.attempt_log[0].error, null)
      }
      stored[name] = deliveries.map((delivery) => delivery.attempt_log[0].response_body)
    }
    const only = (name: string) => {
      assert.equal(new Set(stored[name]).size, 1, `${name}: the same reply each time`)
      return stored[name]![0]!
    }
    assert.equal(only('nul'), 'ok\\u0000\\u0000done\\u0000')
    assert.equal(only('invalidUtf8'), 'ok\\xff\\xfe\\xc3(\\xed\\xa0\\x80')
    assert.equal(only('plain'), 'ok')
    // Not inflated: what came over the wire, escaped. The gzip header is 1f 8b 08 00 ...
    assert.match(only('gzipLabelled'), /^\\u001f\\x8b\\u0008\\u0000/)
    assert.equal(only('gzipUnlabelled'), only('gzipLabelled'))
    for (const body of Object.values(stored).flat()) assert.ok(!body.includes('\u0000'), 'no NUL is stored')
    await removeEndpoints(t, shop.auth)
  })

  test('a 500 holding NUL bytes: the attempt is recorded and the delivery stays pending with a retry; the batch beside it is recorded too', async () => {
    const shop = await newShop(t)
    const endpoints = await endpointsAnswering(shop, {
      failing: { status: 500, body: 'boom\u0000' },
      plain: { status: 204 },
    })
    await subscribe(t, shop)
    const created = (await storeEvents(t.db, shop.store.id)).find((event) => event.event_type === 'subscription.created')!
    const clock = dispatcherClock()
    const t0 = clock.now().getTime()
    await drive(dispatcher({ clock, retrySchedule: [10 * SECOND] }))

    assert.equal(endpoints.failing!.inbox.requests.length, 1, 'the activation waits behind the failed creation')
    const [failed, ...rest] = (await listDeliveries(t.app, shop.auth, endpoints.failing!.endpoint.id)).filter((delivery) => delivery.event_id === created.id)
    assert.equal(rest.length, 0)
    assert.equal(failed.status, 'pending')
    assert.equal(failed.attempts, 1)
    assert.equal(failed.last_status_code, 500)
    const retry = Date.parse(failed.next_attempt_at)
    assert.ok(retry >= t0 + 9 * SECOND && retry <= t0 + 11 * SECOND, `retry ${retry - t0} ms after the failure`)
    assert.deepEqual(failed.attempt_log.map((attempt: any) => [attempt.status_code, attempt.response_body]), [[500, 'boom\\u0000']])

    assert.equal(endpoints.plain!.inbox.requests.length, 2)
    const delivered = await listDeliveries(t.app, shop.auth, endpoints.plain!.endpoint.id)
    assert.deepEqual(delivered.map((delivery) => [delivery.status, delivery.attempt_log.length]), [['succeeded', 1], ['succeeded', 1]])
    await removeEndpoints(t, shop.auth)
  })

  test('an attempt the database refuses to record holds back only its own delivery: logged once without the reply, counted, sent again after the lease', async () => {
    const shop = await newShop(t)
    const endpoints = await endpointsAnswering(shop, {
      refused: { status: 200, body: 'refuse me, secret reply' },
      first: { status: 200, body: 'ok' },
      second: { status: 200, body: 'ok' },
    })
    // Nothing a receiver sends can fail the record any more, so the database is made to refuse one: where
    // the attempt is written, an attempt row, or the delivery row itself for a first attempt that succeeded.
    await sql`CREATE FUNCTION refuse_attempt() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF TG_TABLE_NAME = 'webhook_attempts' THEN
          IF NEW.response_body LIKE 'refuse me%' THEN RAISE EXCEPTION 'attempt refused for the test'; END IF;
        ELSIF NEW.delivered_response_body LIKE 'refuse me%' THEN
          RAISE EXCEPTION 'attempt refused for the test';
        END IF;
        RETURN NEW;
      END $$`.execute(t.db)
    await sql`CREATE TRIGGER refuse_attempt BEFORE INSERT ON webhook_attempts FOR EACH ROW EXECUTE FUNCTION refuse_attempt()`.execute(t.db)
    await sql`CREATE TRIGGER refuse_delivery_record BEFORE UPDATE ON webhook_deliveries FOR EACH ROW EXECUTE FUNCTION refuse_attempt()`.execute(t.db)
    const warnings: { object: any; message: string }[] = []
    const clock = dispatcherClock()
    const t0 = clock.now().getTime()
    // testDispatcher takes no log, and the log is the point here.
    const agent = createWebhookAgent({ allowPrivateNetworks: true })
    const run = createWebhookDispatcher({
      db: t.db,
      clock,
      agent,
      retrySchedule: [60 * SECOND],
      disableAfterMs: 24 * 3_600 * SECOND,
      timeoutMs: 5 * SECOND,
      log: { warn: (object, message) => warnings.push({ object, message }) },
    })
    try {
      await subscribe(t, shop)
      const created = (await storeEvents(t.db, shop.store.id)).find((event) => event.event_type === 'subscription.created')!
      await drive(run)

      for (const name of ['first', 'second']) {
        assert.equal(endpoints[name]!.inbox.requests.length, 2)
        const deliveries = await listDeliveries(t.app, shop.auth, endpoints[name]!.endpoint.id)
        assert.deepEqual(deliveries.map((delivery) => [delivery.status, delivery.attempt_log.length]), [['succeeded', 1], ['succeeded', 1]], name)
      }
      const refused = endpoints.refused!
      assert.equal(refused.inbox.requests.length, 1)
      const [delivery] = (await listDeliveries(t.app, shop.auth, refused.endpoint.id)).filter((row) => row.event_id === created.id)
      assert.equal(delivery.status, 'pending')
      assert.equal(delivery.attempts, 0, 'its attempt was not recorded')
      assert.deepEqual(delivery.attempt_log, [])
      assert.equal(warnings.length, 1, JSON.stringify(warnings))
      assert.equal(warnings[0]!.object.deliveryId, delivery.id)
      assert.equal(warnings[0]!.object.unrecordedAttempts, 1, 'counted')
      assert.equal(warnings[0]!.object.webhookSubscriptionId, refused.endpoint.id)
      assert.match(warnings[0]!.message, /not recorded/)
      assert.ok(!JSON.stringify(warnings).includes('secret reply'), 'the reply is not logged')

      // Within its lease it is not sent again; after it, once the database takes it, it is recorded.
      await sql`DROP TRIGGER refuse_attempt ON webhook_attempts`.execute(t.db)
      await sql`DROP TRIGGER refuse_delivery_record ON webhook_deliveries`.execute(t.db)
      await drive(run)
      assert.equal(refused.inbox.requests.length, 1)
      clock.set(new Date(t0 + 60 * SECOND))
      await drive(run)
      assert.equal(refused.inbox.requests.length, 3, 'the creation again, then the activation behind it')
      const after = await listDeliveries(t.app, shop.auth, refused.endpoint.id)
      assert.deepEqual(after.map((row) => [row.status, row.attempt_log.length]), [['succeeded', 1], ['succeeded', 1]])
      assert.equal(warnings.length, 1, 'nothing more was refused')
    } finally {
      await agent.close()
      await sql`DROP TRIGGER IF EXISTS refuse_attempt ON webhook_attempts`.execute(t.db)
      await sql`DROP TRIGGER IF EXISTS refuse_delivery_record ON webhook_deliveries`.execute(t.db)
      await sql`DROP FUNCTION IF EXISTS refuse_attempt()`.execute(t.db)
      await removeEndpoints(t, shop.auth)
    }
  })
})
