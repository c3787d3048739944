import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { fixedClock } from '../../../src/lib/clock.ts'
import { createShopWithPlan } from '../../helpers/catalog.ts'
import { buildTestApp, call, type TestApp } from '../../helpers/test-app.ts'
import { startWebhookReceiver, verifyDelivery, type ReceivedRequest, type WebhookReceiver } from '../../helpers/webhook-receiver.ts'
import { closeTestApp } from '../subscriptions/fixtures.ts'
import { createEndpoint, drive, endpointAction, endpointsUrl, HOUR, MINUTE, subscribe, testDispatcher, type TestDispatcher } from './fixtures.ts'

/**
 * The delivery inspector and endpoint health (issue 26), against real receivers: what an attempt
 * sent (headers and body exactly as the receiver got them, the signature but never the secret) and
 * what it got back (status, and exactly the first 1,024 bytes of a 5 KiB answer); health counted
 * from the attempts themselves, checked against a hand count over a 24-hour window that moves.
 * The service counts the last 24 hours of real time; the dispatcher runs on a clock the test sets
 * before and after it (a day and an hour ago, ten hours ago, eight hours ago), as a worker would have
 * sent them then.
 */
describe('webhook delivery inspector and health', () => {
  // Real time when the tests start (not when the file is loaded: a shared test process may load it
  // minutes earlier), to the second (webhook-timestamp is in seconds).
  let R = 0
  const clock = fixedClock(new Date(0))
  let t: TestApp
  let run: TestDispatcher
  const receivers: WebhookReceiver[] = []

  // 5 KiB of text that says where each byte is, so any other cut than the first 1,024 shows.
  const BIG = Array.from({ length: (5 * 1024) / 8 }, (_, i) => `<${String(i).padStart(5, '0')}>\n`).join('')

  before(async () => {
    R = Math.floor(Date.now() / 1000) * 1000
    clock.set(new Date(R - 25 * HOUR))
    t = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } })
    run = testDispatcher(t.db, { clock, retrySchedule: [HOUR, HOUR, HOUR] })
  })
  after(async () => {
    await run?.close()
    for (const receiver of receivers) await receiver.close()
    await closeTestApp(t)
  })

  async function receiver(...args: Parameters<typeof startWebhookReceiver>): Promise<WebhookReceiver> {
    const started = await startWebhookReceiver(...args)
    receivers.push(started)
    return started
  }
  /** The dispatcher's passes with its clock at R + `ms`. */
  const sendAt = async (ms: number) => {
    clock.set(new Date(R + ms))
    await drive(run)
  }
  const get = async (auth: Record<string, string>, path: string) => {
    const response = await call(t.app, { method: 'GET', url: `${endpointsUrl}${path}`, headers: auth })
    assert.equal(response.statusCode, 200, response.body)
    return { json: response.json, body: response.body }
  }
  const deliveryOf = async (endpointId: string, subscriptionId: string): Promise<string> => {
    const row = await t.db.selectFrom('webhook_deliveries').select('id').where('webhook_subscription_id', '=', endpointId).where('entity_id', '=', subscriptionId).executeTakeFirstOrThrow()
    return row.id
  }
  const pick = (object: Record<string, unknown>, keys: string[]) => Object.fromEntries(keys.map((key) => [key, object[key]]))

  test('an attempt is shown as sent and as answered: headers and body byte for byte, the first 1,024 bytes of a 5 KiB answer, the signature verifies, the secret is nowhere; health matches a hand count', async () => {
    assert.equal(Buffer.byteLength(BIG), 5 * 1024)
    const shop = await createShopWithPlan(t)
    const failingInbox = await receiver(() => ({ status: 500, body: BIG }))
    const healthyInbox = await receiver(() => ({ status: 200, body: 'ok' }))
    const failing = await createEndpoint(t.app, shop.auth, { url: failingInbox.url, event_types: ['subscription.created'] })
    const healthy = await createEndpoint(t.app, shop.auth, { url: healthyInbox.url, event_types: ['subscription.created'] })

    // 25 hours ago: the first subscription's event fails at one endpoint (retry an hour later) and reaches the other.
    const first = await subscribe(t, shop)
    await sendAt(-25 * HOUR)
    // 10 hours ago: that one fails again, and so does the second subscription's first attempt; the healthy endpoint takes it.
    const second = await subscribe(t, shop)
    await sendAt(-10 * HOUR)
    assert.equal(failingInbox.requests.length, 3)
    assert.equal(healthyInbox.requests.length, 2)
    const f1 = await deliveryOf(failing.id, first.id)
    const g2 = await deliveryOf(healthy.id, second.id)

    // The inspector, for the delivery tried twice.
    const { json: detail, body: raw } = await get(shop.auth, `/${failing.id}/deliveries/${f1}`)
    assert.equal(detail.id, f1)
    assert.equal(detail.status, 'pending')
    assert.equal(detail.attempts, 2)
    const sent = failingInbox.withId(detail.event_id)
    assert.equal(sent.length, 2)
    assert.equal(detail.attempt_log.length, 2)
    const names = ['content-type', 'user-agent', 'webhook-id', 'webhook-timestamp', 'webhook-signature']
    for (const [i, attempt] of (detail.attempt_log as any[]).entries()) {
      const request: ReceivedRequest = sent[sent.length - 1 - i]! // the log is newest first
      assert.deepEqual(attempt.request_headers, Object.fromEntries(names.map((name) => [name, request.headers[name]])), 'the headers exactly as the receiver got them')
      assert.equal(detail.request_body, request.body, 'the body exactly as the receiver got it')
      assert.equal(attempt.status_code, 500)
      assert.equal(attempt.response_body, BIG.slice(0, 1024), 'exactly the first 1,024 bytes of the answer')
      // The signature shown is the one that verifies, at the time it was sent.
      verifyDelivery({ headers: attempt.request_headers, body: detail.request_body }, failing.secret, { now: Number(attempt.request_headers['webhook-timestamp']) * 1000 })
    }
    assert.deepEqual(detail.attempt_log.map((a: any) => Number(a.request_headers['webhook-timestamp']) * 1000), [R - 10 * HOUR, R - 25 * HOUR])
    assert.ok(!raw.includes(failing.secret.slice('whsec_'.length)), 'the signing secret is not in the answer')
    const stored = await t.db.selectFrom('webhook_attempts').select(sql<number>`max(octet_length(response_body))`.as('longest')).executeTakeFirstOrThrow()
    assert.equal(Number(stored.longest), 1024, 'never more than 1 KiB stored per attempt')

    // A first attempt that succeeded is kept on its delivery row: shown the same way.
    const { json: inline } = await get(shop.auth, `/${healthy.id}/deliveries/${g2}`)
    assert.equal(inline.attempt_log.length, 1)
    const got = healthyInbox.withId(inline.event_id)[0]!
    assert.deepEqual(inline.attempt_log[0].request_headers, Object.fromEntries(names.map((name) => [name, got.headers[name]])))
    assert.equal(inline.attempt_log[0].response_body, 'ok')
    // Another endpoint's delivery is not found under this one.
    const other = await call(t.app, { method: 'GET', url: `${endpointsUrl}/${failing.id}/deliveries/${g2}`, headers: shop.auth })
    assert.equal(other.statusCode, 404)

    // Health by hand, now (the window is the last 24 hours): the attempts of 25 hours ago are outside it.
    const { json: sick } = await get(shop.auth, `/${failing.id}/health`)
    assert.deepEqual(pick(sick, ['status', 'window_hours', 'attempts', 'succeeded', 'failed', 'success_rate', 'failing', 'failures_since_success', 'pending', 'last_success_at']), {
      status: 'enabled', window_hours: 24, attempts: 2, succeeded: 0, failed: 2, success_rate: 0, failing: true, failures_since_success: 2, pending: 2, last_success_at: null,
    })
    assert.equal(sick.last_failure.status_code, 500)
    assert.equal(Date.parse(sick.last_failure.attempted_at), R - 10 * HOUR)
    assert.equal(Date.parse(sick.failing_since), R - 25 * HOUR, 'failing since the first failure')
    // The next retry: an hour after the last attempts, give or take the schedule's 10% jitter.
    const nextRetry = Date.parse(sick.next_retry_at) - (R - 10 * HOUR)
    assert.ok(nextRetry >= 0.9 * HOUR && nextRetry <= 1.1 * HOUR, `next retry ${nextRetry} ms after`)
    const { json: fine } = await get(shop.auth, `/${healthy.id}/health`)
    assert.deepEqual(pick(fine, ['attempts', 'succeeded', 'failed', 'success_rate', 'failing', 'failing_since', 'pending', 'last_failure', 'next_retry_at']), {
      attempts: 1, succeeded: 1, failed: 0, success_rate: 1, failing: false, failing_since: null, pending: 0, last_failure: null, next_retry_at: null,
    })
    assert.equal(Date.parse(fine.last_success_at), R - 10 * HOUR)

    // 8 hours ago the receiver was back: both retries succeeded. In the window: 2 failed, then 2 succeeded.
    failingInbox.respond(() => ({ status: 200, body: 'back' }))
    await sendAt(-8 * HOUR)
    assert.equal(failingInbox.requests.length, 5)
    const { json: recovered } = await get(shop.auth, `/${failing.id}/health`)
    assert.deepEqual(pick(recovered, ['attempts', 'succeeded', 'failed', 'success_rate', 'failing', 'failing_since', 'failures_since_success', 'pending', 'next_retry_at']), {
      attempts: 4, succeeded: 2, failed: 2, success_rate: 0.5, failing: false, failing_since: null, failures_since_success: 0, pending: 0, next_retry_at: null,
    })
    assert.equal(Date.parse(recovered.last_success_at), R - 8 * HOUR)
    assert.equal(Date.parse(recovered.last_failure.attempted_at), R - 10 * HOUR)
  })

  test('an endpoint disabled for 410 Gone says why; an answer of NUL bytes is stored within 1 KiB however it escapes', async () => {
    const shop = await createShopWithPlan(t)
    const nulInbox = await receiver(() => ({ status: 410, body: '\u0000'.repeat(2048) }))
    const gone = await createEndpoint(t.app, shop.auth, { url: nulInbox.url, event_types: ['subscription.created'] })
    const ping = await endpointAction(t.app, shop.auth, gone.id, 'test')
    assert.equal(ping.statusCode, 202, ping.body)
    await sendAt(MINUTE)
    const { json: health } = await get(shop.auth, `/${gone.id}/health`)
    assert.deepEqual(pick(health, ['status', 'disabled_reason', 'attempts', 'failed', 'pending']), { status: 'disabled', disabled_reason: 'the endpoint answered 410 Gone', attempts: 1, failed: 1, pending: 0 })
    const { json: detail } = await get(shop.auth, `/${gone.id}/deliveries/${ping.json.id}`)
    const body: string = detail.attempt_log[0].response_body
    // 2,048 NUL bytes escape as \u0000 each (6 bytes): 170 whole escapes fit in 1,024 bytes.
    assert.equal(body, '\\u0000'.repeat(170))
    assert.ok(Buffer.byteLength(body) <= 1024)
  })

  test('a read_only key sees each attempt\'s headers with the signature hidden (signature and body could be replayed); support and full keys see it', async () => {
    const shop = await createShopWithPlan(t)
    const inbox = await receiver(() => ({ status: 200, body: 'ok' }))
    const endpoint = await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: ['subscription.created'] })
    await subscribe(t, shop)
    await sendAt(2 * MINUTE)
    const deliveryId = (await t.db.selectFrom('webhook_deliveries').select('id').where('webhook_subscription_id', '=', endpoint.id).executeTakeFirstOrThrow()).id
    const keyOf = async (scope: string) => {
      const made = await call(t.app, { method: 'POST', url: '/api/v1/admin/api-keys', headers: shop.auth, payload: { name: `${scope} key`, scope } })
      assert.equal(made.statusCode, 201, made.body)
      return { authorization: `Bearer ${made.json.key}` }
    }
    const signature = inbox.requests[0]!.headers['webhook-signature']!
    const path = `/${endpoint.id}/deliveries/${deliveryId}`

    const { json: reader, body: readerRaw } = await get(await keyOf('read_only'), path)
    const [readerAttempt] = reader.attempt_log
    assert.equal(readerAttempt.request_headers['webhook-signature'], '(hidden: needs a full or support key)')
    assert.ok(!readerRaw.includes(signature.slice('v1,'.length)), 'the signature is nowhere in the answer')
    // Everything else is as sent: the body, the other headers, the answer.
    assert.equal(reader.request_body, inbox.requests[0]!.body)
    assert.equal(readerAttempt.request_headers['webhook-id'], reader.event_id)
    assert.equal(readerAttempt.request_headers['webhook-timestamp'], inbox.requests[0]!.headers['webhook-timestamp'])
    assert.equal(readerAttempt.response_body, 'ok')

    for (const auth of [await keyOf('support'), await keyOf('full'), shop.auth]) {
      const { json } = await get(auth, path)
      assert.equal(json.attempt_log[0].request_headers['webhook-signature'], signature)
    }
  })
})
