import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import { call, type TestApp } from '../../helpers/test-app.ts'
import {
  allDeliveredBodies,
  assertNoCardNumbers,
  signaturesOf,
  verifiesWith,
  verifyDelivery,
} from '../../helpers/webhook-receiver.ts'
import { act } from '../subscriptions/fixtures.ts'
import {
  createEndpoint,
  deliverLifecycleEvents,
  deliveryOf,
  dispatcherClock,
  drive,
  endpointAction,
  endpointsUrl,
  HOUR,
  listDeliveries,
  MINUTE,
  newShop,
  patchEndpoint,
  removeEndpoints,
  storedPayload,
  storeEvents,
  subscribe,
  webhookSuite,
  type Shop,
} from './fixtures.ts'

/**
 * What reaches a receiver, and signed how (docs/contract.md, Webhook delivery): a real HTTP receiver on 127.0.0.1, every
 * request verified with the standardwebhooks package; the dispatcher is driven directly, as the worker's
 * loop drives it.
 */
describe('webhook delivery: signatures, routing, rotation, pings and order', () => {
  let t: TestApp
  const { receiver, dispatcher } = webhookSuite((app) => (t = app))

  const LIFECYCLE = ['subscription.created', 'subscription.activated', 'subscription.paused', 'subscription.resumed']

  test('every delivery verifies with standardwebhooks; webhook-id is the event id, the timestamp is now, the body is the stored event byte for byte', async () => {
    const shop = await newShop(t)
    const inbox = await receiver()
    const endpoint = await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: LIFECYCLE })
    const sub = await subscribe(t, shop)
    assert.equal((await act(t.app, shop.auth, sub.id, 'pause', {})).statusCode, 200)
    assert.equal((await act(t.app, shop.auth, sub.id, 'resume')).statusCode, 200)

    await drive(dispatcher())
    const expected = (await storeEvents(t.db, shop.store.id)).filter((event) => LIFECYCLE.includes(event.event_type))
    assert.deepEqual(expected.map((event) => event.event_type).sort(), [...LIFECYCLE].sort())
    assert.equal(inbox.requests.length, expected.length, 'one request per event')
    const payloads = inbox.verifyAll(endpoint.secret)

    for (const [i, request] of inbox.requests.entries()) {
      assert.equal(request.method, 'POST')
      assert.equal(request.url, '/hooks')
      assert.match(request.headers['content-type']!, /^application\/json/)
      const id = request.headers['webhook-id']!
      assert.match(id, /^evt_/)
      assert.equal(payloads[i].id, id, 'webhook-id is the event id')
      const timestamp = Number(request.headers['webhook-timestamp'])
      assert.ok(Number.isInteger(timestamp), request.headers['webhook-timestamp'])
      assert.ok(Math.abs(timestamp - request.receivedAt / 1000) < 5, `webhook-timestamp ${timestamp} is not the time of the attempt`)
      assert.equal(signaturesOf(request).length, 1, 'one secret signs')
      assert.equal(request.body, await storedPayload(t.db, id), 'the body is the stored payload, byte for byte')
      // A receiver with another secret, or a tampered body, does not verify.
      assert.equal(verifiesWith(request, `whsec_${Buffer.alloc(32, 7).toString('base64')}`), false)
      assert.equal(verifiesWith({ ...request, body: request.body.replace('"v1"', '"v2"') }, endpoint.secret), false)
    }
    assert.deepEqual(new Set(inbox.requests.map((request) => request.headers['webhook-id'])), new Set(expected.map((event) => event.id)))

    // The admin view agrees: one succeeded delivery per event, with its attempt.
    const deliveries = await listDeliveries(t.app, shop.auth, endpoint.id)
    assert.equal(deliveries.length, expected.length)
    for (const delivery of deliveries) {
      assert.equal(delivery.status, 'succeeded')
      assert.equal(delivery.attempts, 1)
      assert.equal(delivery.last_status_code, 200)
      assert.equal(delivery.next_attempt_at, null)
      assert.equal(delivery.attempt_log.length, 1)
    }
    await removeEndpoints(t, shop.auth)
  })

  test('a first attempt that succeeds is kept on its delivery row (no webhook_attempts row) and listed in attempt_log all the same; a redelivery moves it to webhook_attempts and the log shows both', async () => {
    const shop = await newShop(t)
    const inbox = await receiver()
    inbox.respond(() => ({ status: 202, body: 'thanks' }))
    const endpoint = await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: ['subscription.created'] })
    await subscribe(t, shop)
    await drive(dispatcher())
    assert.equal(inbox.requests.length, 1)
    const eventId = inbox.requests[0]!.headers['webhook-id']!
    const attemptRows = async (deliveryId: string) =>
      (await t.db.selectFrom('webhook_attempts').select('id').where('delivery_id', '=', deliveryId).execute()).length

    const first = await deliveryOf(t.app, shop.auth, endpoint.id, eventId)
    assert.equal(first.status, 'succeeded')
    assert.equal(first.attempts, 1)
    assert.equal(await attemptRows(first.id), 0, 'no attempt row written for a first-attempt success')
    assert.equal(first.attempt_log.length, 1)
    const [shown] = first.attempt_log
    assert.equal(shown.attempted_at, first.delivered_at)
    assert.equal(shown.status_code, 202)
    assert.equal(shown.error, null)
    assert.equal(shown.response_body, 'thanks')
    assert.ok(Number.isInteger(shown.latency_ms) && shown.latency_ms >= 0, String(shown.latency_ms))

    // Redelivered: the kept attempt becomes a row before the delivery starts again; the second success is kept on the row.
    inbox.respond(() => ({ status: 200, body: 'again' }))
    assert.equal((await endpointAction(t.app, shop.auth, endpoint.id, 'redeliver', { event_id: eventId })).statusCode, 202)
    const pending = await deliveryOf(t.app, shop.auth, endpoint.id, eventId)
    assert.equal(pending.status, 'pending')
    assert.deepEqual(pending.attempt_log, [shown], 'the first attempt is still listed while the redelivery waits')
    assert.equal(await attemptRows(first.id), 1)
    await drive(dispatcher(), { until: () => inbox.requests.length >= 2 })
    await drive(dispatcher())
    const again = await deliveryOf(t.app, shop.auth, endpoint.id, eventId)
    assert.equal(again.status, 'succeeded')
    assert.deepEqual(again.attempt_log.map((attempt: any) => [attempt.status_code, attempt.response_body]), [[200, 'again'], [202, 'thanks']], 'newest first')
    assert.deepEqual(again.attempt_log[1], shown)
    assert.equal(await attemptRows(first.id), 1)
    await removeEndpoints(t, shop.auth)
  })

  test('only subscribed event types arrive, per endpoint; another store\'s endpoints get nothing', async () => {
    const shop = await newShop(t)
    const other = await newShop(t)
    const pausedOnly = await receiver()
    const createdOnly = await receiver()
    const otherStore = await receiver()
    const paused = await createEndpoint(t.app, shop.auth, { url: pausedOnly.url, event_types: ['subscription.paused'] })
    const created = await createEndpoint(t.app, shop.auth, { url: createdOnly.url, event_types: ['subscription.created'] })
    await createEndpoint(t.app, other.auth, { url: otherStore.url, event_types: LIFECYCLE })

    const first = await subscribe(t, shop)
    const second = await subscribe(t, shop)
    assert.equal((await act(t.app, shop.auth, second.id, 'pause', {})).statusCode, 200)
    await drive(dispatcher())

    pausedOnly.verifyAll(paused.secret)
    assert.deepEqual(pausedOnly.requests.map((request) => JSON.parse(request.body).event_type), ['subscription.paused'])
    assert.equal(JSON.parse(pausedOnly.requests[0]!.body).data.id, second.id)
    createdOnly.verifyAll(created.secret)
    assert.deepEqual(createdOnly.requests.map((request) => JSON.parse(request.body).event_type), ['subscription.created', 'subscription.created'])
    assert.deepEqual(new Set(createdOnly.requests.map((request) => JSON.parse(request.body).data.id)), new Set([first.id, second.id]))
    assert.equal(otherStore.requests.length, 0)
    // The store recorded more than was delivered: activations were filtered out, not absent.
    assert.ok((await storeEvents(t.db, shop.store.id)).some((event) => event.event_type === 'subscription.activated'))
    await removeEndpoints(t, shop.auth)
    await removeEndpoints(t, other.auth)
  })

  test('a deleted endpoint and a disabled one receive nothing more, not even events already fanned out to them', async () => {
    const shop = await newShop(t)
    const [deletedInbox, disabledInbox, keptInbox] = [await receiver(), await receiver(), await receiver()]
    const deleted = await createEndpoint(t.app, shop.auth, { url: deletedInbox.url, event_types: LIFECYCLE })
    const disabled = await createEndpoint(t.app, shop.auth, { url: disabledInbox.url, event_types: LIFECYCLE })
    const kept = await createEndpoint(t.app, shop.auth, { url: keptInbox.url, event_types: LIFECYCLE })
    const run = dispatcher()

    const sub = await subscribe(t, shop)
    await drive(run)
    for (const inbox of [deletedInbox, disabledInbox, keptInbox]) assert.equal(inbox.requests.length, 2, 'created and activated reach all three')

    // The pause is fanned out to all three, then one endpoint is deleted and one disabled before delivery.
    assert.equal((await act(t.app, shop.auth, sub.id, 'pause', {})).statusCode, 200)
    assert.equal(await run.fanOut(), 1)
    assert.equal((await call(t.app, { method: 'DELETE', url: `${endpointsUrl}/${deleted.id}`, headers: shop.auth })).statusCode, 204)
    assert.equal((await patchEndpoint(t.app, shop.auth, disabled.id, { status: 'disabled' })).statusCode, 200)
    await drive(run)
    // And events recorded after the deletion and the disabling.
    assert.equal((await act(t.app, shop.auth, sub.id, 'resume')).statusCode, 200)
    await drive(run)

    assert.equal(deletedInbox.requests.length, 2)
    assert.equal(disabledInbox.requests.length, 2)
    keptInbox.verifyAll(kept.secret)
    assert.deepEqual(keptInbox.requests.map((request) => JSON.parse(request.body).event_type), LIFECYCLE)
    const pausedDelivery = (await listDeliveries(t.app, shop.auth, disabled.id)).find((delivery) => delivery.event_type === 'subscription.paused')
    assert.equal(pausedDelivery.status, 'failed', 'the delivery to the disabled endpoint is closed, not left pending')
    assert.match(pausedDelivery.last_error, /disabled/)
    assert.ok(!(await listDeliveries(t.app, shop.auth, disabled.id)).some((delivery) => delivery.event_type === 'subscription.resumed'), 'not fanned out to a disabled endpoint')

    // Re-enabled, it gets what happens from then on.
    assert.equal((await patchEndpoint(t.app, shop.auth, disabled.id, { status: 'enabled' })).statusCode, 200)
    assert.equal((await act(t.app, shop.auth, sub.id, 'pause', {})).statusCode, 200)
    await drive(run)
    assert.equal(disabledInbox.requests.length, 3)
    assert.equal(JSON.parse(disabledInbox.requests[2]!.body).event_type, 'subscription.paused')
    disabledInbox.verifyAll(disabled.secret)
    assert.equal(deletedInbox.requests.length, 2)
    await removeEndpoints(t, shop.auth)
  })

  test('an endpoint deleted while a delivery to it is in flight: the other attempts of the batch are recorded and not sent again', async () => {
    const shop = await newShop(t)
    const kept = await receiver()
    let deletion: Promise<unknown> | undefined
    const doomed = await receiver()
    const doomedEndpoint = await createEndpoint(t.app, shop.auth, { url: doomed.url, event_types: ['subscription.created'] })
    const keptEndpoint = await createEndpoint(t.app, shop.auth, { url: kept.url, event_types: ['subscription.created'] })
    doomed.respond(async () => {
      deletion ??= call(t.app, { method: 'DELETE', url: `${endpointsUrl}/${doomedEndpoint.id}`, headers: shop.auth })
      assert.equal(((await deletion) as { statusCode: number }).statusCode, 204)
      return { status: 200 }
    })
    const sub = await subscribe(t, shop)
    const run = dispatcher()
    assert.equal(await run.fanOut(), 2)
    assert.equal(await run.deliverDue(), 2, 'both deliveries were sent in one batch')
    assert.equal(doomed.requests.length, 1)
    assert.equal(kept.requests.length, 1)
    const keptDelivery = await deliveryOf(t.app, shop.auth, keptEndpoint.id, JSON.parse(kept.requests[0]!.body).id)
    assert.equal(keptDelivery.status, 'succeeded', 'the attempt to the endpoint that still exists was recorded')
    await drive(run)
    assert.equal(kept.requests.length, 1, 'and it was not sent again')
    assert.equal(JSON.parse(kept.requests[0]!.body).data.id, sub.id)
    await removeEndpoints(t, shop.auth)
  })

  test('after rotate-secret both secrets sign (two v1 signatures); 24 h later only the new one does', async () => {
    const shop = await newShop(t)
    const inbox = await receiver()
    const endpoint = await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: ['webhook.test'] })
    const clock = dispatcherClock()
    const run = dispatcher({ clock })
    const ping = async () => {
      const before = inbox.requests.length
      assert.equal((await endpointAction(t.app, shop.auth, endpoint.id, 'test')).statusCode, 202)
      await drive(run, { until: () => inbox.requests.length > before })
      return inbox.requests[before]!
    }
    const oldSecret = endpoint.secret as string

    const beforeRotation = await ping()
    assert.equal(signaturesOf(beforeRotation).length, 1)
    verifyDelivery(beforeRotation, oldSecret)

    const rotated = await endpointAction(t.app, shop.auth, endpoint.id, 'rotate-secret')
    assert.equal(rotated.statusCode, 200, rotated.body)
    const newSecret = rotated.json.secret as string
    const during = await ping()
    assert.equal(signaturesOf(during).length, 2, during.headers['webhook-signature'])
    verifyDelivery(during, newSecret)
    verifyDelivery(during, oldSecret)

    // 23 hours on: both still sign (the receiver's clock is the dispatcher's, as it would be then).
    clock.advance(23 * HOUR)
    const later = await ping()
    assert.equal(signaturesOf(later).length, 2)
    verifyDelivery(later, newSecret, { now: clock.now().getTime() })
    verifyDelivery(later, oldSecret, { now: clock.now().getTime() })

    // 24 h and a minute after the rotation: only the new secret.
    clock.advance(HOUR + MINUTE)
    const after = await ping()
    assert.equal(signaturesOf(after).length, 1, after.headers['webhook-signature'])
    verifyDelivery(after, newSecret, { now: clock.now().getTime() })
    assert.equal(verifiesWith(after, oldSecret, { now: clock.now().getTime() }), false, 'the old secret stopped signing')
    await removeEndpoints(t, shop.auth)
  })

  test('POST /{id}/test answers 202 and sends a verified webhook.test to that endpoint only, whatever its event types', async () => {
    const shop = await newShop(t)
    const inbox = await receiver()
    const bystander = await receiver()
    const endpoint = await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: ['charge.failed'] })
    await createEndpoint(t.app, shop.auth, { url: bystander.url, event_types: ['webhook.test'] })

    const answer = await endpointAction(t.app, shop.auth, endpoint.id, 'test')
    assert.equal(answer.statusCode, 202, answer.body)
    assert.equal(answer.json.object, 'webhook_delivery')
    assert.equal(answer.json.webhook_subscription_id, endpoint.id)
    assert.equal(answer.json.event_type, 'webhook.test')
    assert.equal(answer.json.status, 'pending')
    assert.equal(answer.json.attempts, 0)

    await drive(dispatcher(), { until: () => inbox.requests.length >= 1 })
    await drive(dispatcher())
    assert.equal(inbox.requests.length, 1)
    assert.equal(bystander.requests.length, 0, 'a ping goes to the endpoint asked for only')
    const [event] = inbox.verifyAll(endpoint.secret)
    assert.equal(event.id, answer.json.event_id)
    assert.equal(event.event_type, 'webhook.test')
    assert.equal(event.api_version, 'v1')
    assert.deepEqual(event.data, { object: 'webhook_test', webhook_subscription_id: endpoint.id })
    assert.equal(event.sequence, 1)
    assert.equal(inbox.requests[0]!.body, await storedPayload(t.db, event.id))
    const delivery = await deliveryOf(t.app, shop.auth, endpoint.id, event.id)
    assert.equal(delivery.status, 'succeeded')
    assert.deepEqual(delivery.attempt_log.map((attempt: any) => attempt.status_code), [200])

    // A second ping is a new event, next in that endpoint's sequence.
    const second = await endpointAction(t.app, shop.auth, endpoint.id, 'test')
    await drive(dispatcher(), { until: () => inbox.requests.length >= 2 })
    const again = verifyDelivery(inbox.requests[1]!, endpoint.secret)
    assert.equal(again.id, second.json.event_id)
    assert.notEqual(again.id, event.id)
    assert.equal(again.sequence, 2)
    await removeEndpoints(t, shop.auth)
  })

  test("one entity's events arrive in sequence order: a later event waits while an earlier one is retried; other entities go on", async () => {
    const shop: Shop = await newShop(t)
    const inbox = await receiver()
    const endpoint = await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: LIFECYCLE })
    const first = await subscribe(t, shop)
    assert.equal((await act(t.app, shop.auth, first.id, 'pause', {})).statusCode, 200)
    assert.equal((await act(t.app, shop.auth, first.id, 'resume')).statusCode, 200)
    const second = await subscribe(t, shop)
    const firstEvents = (await storeEvents(t.db, shop.store.id)).filter((event) => event.entity_id === first.id)
    assert.deepEqual(firstEvents.map((event) => event.event_type), LIFECYCLE)
    const firstEventId = firstEvents[0]!.id
    // The first subscription's first event fails once.
    inbox.respond((request, context) => ({ status: request.headers['webhook-id'] === firstEventId && context.attemptOfId === 1 ? 500 : 200 }))

    const clock = dispatcherClock()
    const run = dispatcher({ clock, retrySchedule: [10_000] })
    await drive(run)
    const arrived = () => inbox.requests.map((request) => JSON.parse(request.body))
    assert.deepEqual(arrived().filter((event) => event.data.id === first.id).map((event) => event.sequence), [1], 'the later events of the failing entity wait')
    assert.deepEqual(arrived().filter((event) => event.data.id === second.id).map((event) => event.sequence), [1, 2], 'another entity is not held up')
    const waiting = await listDeliveries(t.app, shop.auth, endpoint.id, 'status=pending&limit=100')
    assert.equal(waiting.length, 4, "the first subscription's four deliveries are pending")

    clock.advance(11_000)
    await drive(run)
    inbox.verifyAll(endpoint.secret)
    const ofFirst = inbox.requests.filter((request) => JSON.parse(request.body).data.id === first.id)
    assert.deepEqual(ofFirst.map((request) => [JSON.parse(request.body).sequence, request.answered]), [[1, 500], [1, 200], [2, 200], [3, 200], [4, 200]])
    for (let i = 1; i < ofFirst.length; i++) assert.ok(ofFirst[i]!.index > ofFirst[i - 1]!.index)
    assert.deepEqual(await listDeliveries(t.app, shop.auth, endpoint.id, 'status=pending'), [])
    await removeEndpoints(t, shop.auth)
  })

  test('no delivered body in this file holds a card number', async () => {
    // Deliveries of its own, so the scan is never empty, whichever tests ran before it.
    await deliverLifecycleEvents(t, await receiver(), dispatcher(), 20)
    assert.ok(allDeliveredBodies().length >= 20, `only ${allDeliveredBodies().length} bodies were delivered`)
    assertNoCardNumbers(allDeliveredBodies())
  })
})
