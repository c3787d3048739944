import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import type { TestApp } from '../../helpers/test-app.ts'
import { allDeliveredBodies, assertNoCardNumbers, verifyDelivery, type WebhookReceiver } from '../../helpers/webhook-receiver.ts'
import {
  createEndpoint,
  deliverLifecycleEvents,
  deliveryOf,
  dispatcherClock,
  drive,
  endpointAction,
  getEndpoint,
  listDeliveries,
  newShop,
  patchEndpoint,
  removeEndpoints,
  SECOND,
  storedPayload,
  storeEvents,
  subscribe,
  webhookSuite,
} from './fixtures.ts'

/**
 * Retries and endpoint health (docs/contract.md, Webhook delivery): the schedule (with its 10 % jitter),
 * exhaustion then replay and redelivery, Retry-After on 429 and 503, 410 Gone, and disabling after a run
 * of failures. Time is a fixed clock the test moves, except where a short real schedule is the point.
 */
describe('webhook retries, redelivery and endpoint health', () => {
  let t: TestApp
  const { receiver, dispatcher } = webhookSuite((app) => (t = app))

  /** A shop with one endpoint on subscription.created and one checkout: one delivery to watch. */
  async function oneDelivery(inbox: WebhookReceiver) {
    const shop = await newShop(t)
    const endpoint = await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: ['subscription.created'] })
    const subscription = await subscribe(t, shop)
    const event = (await storeEvents(t.db, shop.store.id)).find((row) => row.event_type === 'subscription.created')!
    return { shop, endpoint, subscription, eventId: event.id }
  }

  test('500, 500, then 200: the same webhook-id and body three times, on the configured schedule; the attempts are listed', async () => {
    const inbox = await receiver((_request, { attemptOfId }) => (attemptOfId < 3 ? { status: 500, body: `boom ${attemptOfId}` } : { status: 200, body: 'ok' }))
    const { shop, endpoint, eventId } = await oneDelivery(inbox)
    const clock = dispatcherClock()
    const run = dispatcher({ clock, retrySchedule: [10 * SECOND, 30 * SECOND] })
    const t0 = clock.now().getTime()
    // Not a moment early: nothing 1 ms before `at`, the next attempt at `at`.
    const retriedAt = async (at: number, attempts: number) => {
      clock.set(new Date(at - 1))
      await drive(run)
      assert.equal(inbox.requests.length, attempts - 1, 'retried before its time')
      clock.set(new Date(at))
      await drive(run)
      assert.equal(inbox.requests.length, attempts)
    }

    await drive(run)
    assert.equal(inbox.requests.length, 1)
    let delivery = await deliveryOf(t.app, shop.auth, endpoint.id, eventId)
    assert.equal(delivery.status, 'pending')
    assert.equal(delivery.attempts, 1)
    assert.equal(delivery.last_status_code, 500)
    const retry1 = Date.parse(delivery.next_attempt_at)
    assert.ok(retry1 >= t0 + 9 * SECOND && retry1 <= t0 + 11 * SECOND, `first retry ${retry1 - t0} ms after the failure, not 10 s +- 10 %`)

    await retriedAt(retry1, 2)
    delivery = await deliveryOf(t.app, shop.auth, endpoint.id, eventId)
    assert.equal(delivery.attempts, 2)
    const retry2 = Date.parse(delivery.next_attempt_at)
    assert.ok(retry2 >= retry1 + 27 * SECOND && retry2 <= retry1 + 33 * SECOND, `second retry ${retry2 - retry1} ms after the second failure, not 30 s +- 10 %`)

    await retriedAt(retry2, 3)

    const stored = await storedPayload(t.db, eventId)
    for (const request of inbox.requests) {
      assert.equal(request.headers['webhook-id'], eventId, 'the same webhook-id on every attempt')
      assert.equal(request.body, stored, 'the same body on every attempt')
      verifyDelivery(request, endpoint.secret)
    }
    assert.deepEqual(inbox.requests.map((request) => Number(request.headers['webhook-timestamp'])), [t0, retry1, retry2].map((ms) => Math.floor(ms / 1000)), 'each attempt is signed at its own time')
    assert.deepEqual(inbox.requests.map((request) => request.answered), [500, 500, 200])

    delivery = await deliveryOf(t.app, shop.auth, endpoint.id, eventId)
    assert.equal(delivery.status, 'succeeded')
    assert.equal(delivery.attempts, 3)
    assert.equal(delivery.next_attempt_at, null)
    assert.equal(delivery.last_status_code, 200)
    assert.equal(delivery.last_error, null)
    assert.equal(Date.parse(delivery.delivered_at), retry2)
    // Newest first.
    const log = [...delivery.attempt_log].reverse()
    assert.deepEqual(log.map((attempt: any) => attempt.status_code), [500, 500, 200])
    assert.deepEqual(log.map((attempt: any) => Date.parse(attempt.attempted_at)), [t0, retry1, retry2])
    assert.deepEqual(log.map((attempt: any) => attempt.response_body), ['boom 1', 'boom 2', 'ok'])
    for (const attempt of log) {
      assert.ok(Number.isInteger(attempt.latency_ms) && attempt.latency_ms >= 0 && attempt.latency_ms < 5_000, `latency ${attempt.latency_ms}`)
      assert.equal(attempt.error, null)
    }
    await removeEndpoints(t, shop.auth)
  })

  test('a short schedule used up: failed after schedule length + 1 attempts; then replay since a time and redeliver one event send it again', async () => {
    let answer = 500
    const inbox = await receiver(() => ({ status: answer }))
    const { shop, endpoint, eventId } = await oneDelivery(inbox)
    const createdBefore = new Date(Date.now() - 60_000).toISOString()
    const clock = dispatcherClock()
    const run = dispatcher({ clock, retrySchedule: [150, 300] })

    // Each retry at the time the delivery says, on the dispatcher's clock.
    await drive(run)
    for (let attempts = 1; attempts < 3; attempts++) {
      const pending = await deliveryOf(t.app, shop.auth, endpoint.id, eventId)
      assert.equal(pending.status, 'pending', `a retry is scheduled after attempt ${attempts}`)
      clock.set(new Date(pending.next_attempt_at))
      await drive(run)
    }
    assert.equal(inbox.requests.length, 3)
    const attemptedAt = [...(await deliveryOf(t.app, shop.auth, endpoint.id, eventId)).attempt_log].reverse().map((attempt: any) => Date.parse(attempt.attempted_at))
    const gaps = attemptedAt.slice(1).map((at, i) => at - attemptedAt[i]!)
    assert.ok(gaps[0]! >= 150 * 0.9 && gaps[0]! <= 150 * 1.1, `first retry after ${gaps[0]} ms`)
    assert.ok(gaps[1]! >= 300 * 0.9 && gaps[1]! <= 300 * 1.1, `second retry after ${gaps[1]} ms`)
    // Nothing is left to try: the schedule is used up, long after its last step.
    clock.advance(10 * SECOND)
    await drive(run)
    assert.equal(inbox.requests.length, 3, 'no attempt after the schedule ended')
    let delivery = await deliveryOf(t.app, shop.auth, endpoint.id, eventId)
    assert.equal(delivery.status, 'failed')
    assert.equal(delivery.attempts, 3)
    assert.equal(delivery.next_attempt_at, null)
    assert.equal(delivery.last_status_code, 500)
    assert.match(delivery.last_error, /500/)
    assert.deepEqual(delivery.attempt_log.map((attempt: any) => attempt.status_code), [500, 500, 500])
    assert.deepEqual((await listDeliveries(t.app, shop.auth, endpoint.id, 'status=failed')).map((d) => d.event_id), [eventId])
    assert.equal((await getEndpoint(t.app, shop.auth, endpoint.id)).json.status, 'enabled', 'three failures in a second do not disable it')

    // Replay since after the delivery was made (on the dispatcher's clock, which made it) finds nothing; since before, it finds it.
    answer = 200
    const none = await endpointAction(t.app, shop.auth, endpoint.id, 'replay', { since: new Date(clock.now().getTime() + 1000).toISOString() })
    assert.deepEqual(none.json, { object: 'webhook_replay', redelivered: 0 })
    const replay = await endpointAction(t.app, shop.auth, endpoint.id, 'replay', { since: createdBefore })
    assert.equal(replay.statusCode, 202, replay.body)
    assert.deepEqual(replay.json, { object: 'webhook_replay', redelivered: 1 })
    await drive(run, { until: () => inbox.requests.length >= 4 })
    await drive(run)
    assert.equal(inbox.requests.length, 4)
    assert.equal(inbox.requests[3]!.headers['webhook-id'], eventId)
    assert.equal(inbox.requests[3]!.body, inbox.requests[0]!.body)
    verifyDelivery(inbox.requests[3]!, endpoint.secret)
    delivery = await deliveryOf(t.app, shop.auth, endpoint.id, eventId)
    assert.equal(delivery.status, 'succeeded')
    assert.equal(delivery.attempts, 1, 'a replay starts a new round of attempts (the schedule applies again)')
    assert.equal(delivery.attempt_log.length, 4, 'the log keeps every attempt')
    assert.deepEqual((await endpointAction(t.app, shop.auth, endpoint.id, 'replay', { since: createdBefore })).json.redelivered, 0, 'a succeeded delivery is not replayed')

    // Redeliver sends one event again, even one that succeeded: same webhook-id, same body.
    const redeliver = await endpointAction(t.app, shop.auth, endpoint.id, 'redeliver', { event_id: eventId })
    assert.equal(redeliver.statusCode, 202, redeliver.body)
    assert.equal(redeliver.json.event_id, eventId)
    assert.equal(redeliver.json.status, 'pending')
    await drive(run, { until: () => inbox.requests.length >= 5 })
    await drive(run)
    assert.equal(inbox.requests.length, 5)
    assert.equal(inbox.requests[4]!.headers['webhook-id'], eventId)
    assert.equal(inbox.requests[4]!.body, inbox.requests[0]!.body)
    verifyDelivery(inbox.requests[4]!, endpoint.secret)
    assert.equal((await deliveryOf(t.app, shop.auth, endpoint.id, eventId)).status, 'succeeded')
    await removeEndpoints(t, shop.auth)
  })

  test('redeliver sends an event the endpoint never subscribed to, with its own webhook-id and stored body', async () => {
    const inbox = await receiver()
    const shop = await newShop(t)
    await subscribe(t, shop)
    const activated = (await storeEvents(t.db, shop.store.id)).find((row) => row.event_type === 'subscription.activated')!
    const endpoint = await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: ['charge.failed'] })
    const run = dispatcher()
    await drive(run)
    assert.equal(inbox.requests.length, 0)
    assert.equal((await endpointAction(t.app, shop.auth, endpoint.id, 'redeliver', { event_id: activated.id })).statusCode, 202)
    await drive(run, { until: () => inbox.requests.length >= 1 })
    assert.equal(inbox.requests[0]!.headers['webhook-id'], activated.id)
    assert.equal(inbox.requests[0]!.body, activated.payload)
    verifyDelivery(inbox.requests[0]!, endpoint.secret)
    await removeEndpoints(t, shop.auth)
  })

  test('429 and 503 with Retry-After wait at least that long, even with a shorter schedule; a 500 Retry-After is not honoured', async () => {
    const shop = await newShop(t)
    const answers = { 429: await receiver(), 503: await receiver(), 500: await receiver() } as const
    const endpoints: Record<string, any> = {}
    for (const [status, inbox] of Object.entries(answers)) {
      inbox.respond((_request, { attemptOfId }) => (attemptOfId === 1 ? { status: Number(status), headers: { 'retry-after': '2' } } : { status: 204 }))
      endpoints[status] = await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: ['subscription.created'] })
    }
    await subscribe(t, shop)
    const eventId = (await storeEvents(t.db, shop.store.id)).find((row) => row.event_type === 'subscription.created')!.id
    const clock = dispatcherClock()
    const t0 = clock.now().getTime()
    const run = dispatcher({ clock, retrySchedule: [100] })
    await drive(run)
    for (const status of ['429', '503']) {
      const delivery = await deliveryOf(t.app, shop.auth, endpoints[status].id, eventId)
      assert.equal(delivery.last_status_code, Number(status))
      assert.ok(Date.parse(delivery.next_attempt_at) >= t0 + 2_000, `${status}: next attempt ${Date.parse(delivery.next_attempt_at) - t0} ms after, not 2 s`)
    }
    const plain = await deliveryOf(t.app, shop.auth, endpoints['500'].id, eventId)
    assert.ok(Date.parse(plain.next_attempt_at) <= t0 + 110, 'a 500 follows the schedule whatever its Retry-After says')

    clock.set(new Date(t0 + 1_999))
    await drive(run)
    assert.equal(answers[500].requests.length, 2, 'the 500 was retried on the schedule')
    assert.equal(answers[429].requests.length, 1, 'the 429 was retried before its Retry-After')
    assert.equal(answers[503].requests.length, 1, 'the 503 was retried before its Retry-After')
    clock.set(new Date(t0 + 2_200))
    await drive(run)
    for (const status of ['429', '503'] as const) {
      assert.equal(answers[status].requests.length, 2)
      answers[status].verifyAll(endpoints[status].secret)
      assert.equal((await deliveryOf(t.app, shop.auth, endpoints[status].id, eventId)).status, 'succeeded')
    }
    await removeEndpoints(t, shop.auth)
  })

  test('410 Gone disables the endpoint at once; nothing more is delivered; PATCH status enabled re-enables it', async () => {
    const inbox = await receiver(() => ({ status: 410 }))
    const shop = await newShop(t)
    const endpoint = await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: ['subscription.created', 'subscription.activated'] })
    const first = await subscribe(t, shop)
    const second = await subscribe(t, shop)
    const run = dispatcher({ batchSize: 1, retrySchedule: [100, 100, 100] })
    await drive(run)
    assert.equal(inbox.requests.length, 1, 'one 410, then no more calls')
    const read = (await getEndpoint(t.app, shop.auth, endpoint.id)).json
    assert.equal(read.status, 'disabled')
    assert.match(read.disabled_reason, /410/)
    const deliveries = await listDeliveries(t.app, shop.auth, endpoint.id)
    assert.equal(deliveries.length, 4)
    assert.deepEqual(deliveries.map((delivery) => delivery.status), ['failed', 'failed', 'failed', 'failed'], 'nothing stays pending for a gone endpoint')
    assert.equal(deliveries.filter((delivery) => delivery.last_status_code === 410).length, 1)

    await subscribe(t, shop)
    await drive(run)
    assert.equal(inbox.requests.length, 1, 'an event after the 410 is not delivered')

    inbox.respond(() => ({ status: 200 }))
    const enabled = await patchEndpoint(t.app, shop.auth, endpoint.id, { status: 'enabled' })
    assert.equal(enabled.statusCode, 200, enabled.body)
    assert.equal(enabled.json.status, 'enabled')
    assert.equal(enabled.json.disabled_reason, null)
    const third = await subscribe(t, shop)
    await drive(run)
    const payloads = inbox.verifyAll(endpoint.secret)
    assert.deepEqual(payloads.slice(1).map((event) => [event.data.id, event.event_type]), [[third.id, 'subscription.created'], [third.id, 'subscription.activated']])
    assert.ok(![first.id, second.id].includes(payloads.at(-1).data.id))
    await removeEndpoints(t, shop.auth)
  })

  test('failing without a success for longer than disableAfterMs disables the endpoint; a success starts the count again', async () => {
    let answer = 500
    const inbox = await receiver(() => ({ status: answer }))
    const shop = await newShop(t)
    const endpoint = await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: ['subscription.created'] })
    const clock = dispatcherClock()
    const t0 = clock.now().getTime()
    const run = dispatcher({ clock, retrySchedule: Array.from({ length: 20 }, () => 10 * SECOND), disableAfterMs: 60 * SECOND })
    const at = async (seconds: number) => {
      clock.set(new Date(t0 + seconds * SECOND))
      await drive(run)
      return (await getEndpoint(t.app, shop.auth, endpoint.id)).json
    }

    await subscribe(t, shop)
    assert.equal((await at(0)).status, 'enabled') // first failure: the run of failures starts at t0
    answer = 200
    assert.equal((await at(30)).status, 'enabled') // the retry succeeds: the run ends
    assert.equal(inbox.requests.length, 2)
    answer = 500
    await subscribe(t, shop)
    assert.equal((await at(40)).status, 'enabled') // a new run starts at t0 + 40 s
    // 80 s after the first failure but only 40 s into this run: still enabled.
    assert.equal((await at(80)).status, 'enabled')
    assert.equal(inbox.requests.length, 4)
    // 61 s into the run: disabled.
    const disabled = await at(101)
    assert.equal(inbox.requests.length, 5)
    assert.equal(disabled.status, 'disabled')
    assert.match(disabled.disabled_reason, /fail/)
    assert.match(disabled.disabled_reason, /1 minute/)

    // Nothing more reaches it, neither the pending retry nor new events.
    answer = 200
    await subscribe(t, shop)
    await at(200)
    await at(400)
    assert.equal(inbox.requests.length, 5)
    inbox.verifyAll(endpoint.secret, { now: t0 + 50 * SECOND })
    await removeEndpoints(t, shop.auth)
  })

  test('a redirect is a failure and is never followed; no answer within the timeout is a failure; only the first KiB of an answer is kept', async () => {
    const target = await receiver()
    const redirecting = await receiver(() => ({ status: 307, headers: { location: target.url } }))
    const slow = await receiver(() => ({ status: 200, delayMs: 4_000 }))
    const chatty = await receiver(() => ({ status: 500, body: 'x'.repeat(5_000) }))
    const shop = await newShop(t)
    const endpoints = []
    for (const inbox of [redirecting, slow, chatty]) endpoints.push(await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: ['subscription.created'] }))
    await subscribe(t, shop)
    const eventId = (await storeEvents(t.db, shop.store.id)).find((row) => row.event_type === 'subscription.created')!.id
    // Long enough that a loaded machine never times out the quick answers; the slow one takes longer.
    await drive(dispatcher({ timeoutMs: 1_500 }))

    assert.equal(redirecting.requests.length, 1)
    assert.equal(target.requests.length, 0, 'the redirect was followed')
    const redirected = await deliveryOf(t.app, shop.auth, endpoints[0].id, eventId)
    assert.equal(redirected.status, 'pending')
    assert.equal(redirected.last_status_code, 307)

    assert.equal(slow.requests.length, 1)
    const timedOut = await deliveryOf(t.app, shop.auth, endpoints[1].id, eventId)
    assert.equal(timedOut.status, 'pending', 'a 200 after the timeout is not a success')
    assert.equal(timedOut.attempt_log[0].status_code, null)
    assert.match(timedOut.attempt_log[0].error, /1\.5 s/)
    assert.ok(timedOut.attempt_log[0].latency_ms >= 1_400 && timedOut.attempt_log[0].latency_ms < 4_000, `latency ${timedOut.attempt_log[0].latency_ms}`)

    const kept = (await deliveryOf(t.app, shop.auth, endpoints[2].id, eventId)).attempt_log[0].response_body
    assert.equal(kept, 'x'.repeat(1024))
    await removeEndpoints(t, shop.auth)
  })

  test('no delivered body in this file holds a card number', async () => {
    // Deliveries of its own, so the scan is never empty, whichever tests ran before it.
    await deliverLifecycleEvents(t, await receiver(), dispatcher(), 15)
    assert.ok(allDeliveredBodies().length >= 15, `only ${allDeliveredBodies().length} bodies were delivered`)
    assertNoCardNumbers(allDeliveredBodies())
  })
})
