import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { EVENT_TYPES } from '../../../src/modules/events/event.schemas.ts'
import { call, type TestApp } from '../../helpers/test-app.ts'
import { allDeliveredBodies, assertNoCardNumbers, findLuhnRun, startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.ts'
import { checkoutBody, closeTestApp, postCheckout } from '../subscriptions/fixtures.ts'
import { createEndpoint, deliverLifecycleEvents, drive, newShop, storeEvents, subscribe, testDispatcher, webhookTestApp, type TestDispatcher } from './fixtures.ts'
import { assertProblem } from '../../helpers/problem.ts'

/**
 * The spec's test-mode story, end to end through the HTTP API and the store's test clock, as a receiver
 * sees it (docs/contract.md, Webhook delivery): a renewal, a declined card through dunning to past_due, every event a
 * verified webhook, each entity's events in `sequence` order. And no card number ever in a payload.
 */
const T0 = '2026-01-10T09:00:00.000Z'
const FEB10 = '2026-02-10T09:00:00.000Z'
const feb = (day: number, hour = 9) => `2026-02-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00.000Z`
const EVERY_TYPE = EVENT_TYPES.filter((type) => type !== 'webhook.test')

describe('end to end: renewal and dunning arrive as verified webhooks', () => {
  let t: TestApp
  let inbox: WebhookReceiver
  let run: TestDispatcher

  before(async () => {
    t = await webhookTestApp()
    inbox = await startWebhookReceiver()
    run = testDispatcher(t.db)
  })
  after(async () => {
    await run.close()
    await inbox.close()
    await closeTestApp(t)
  })

  test('renewal (subscription.charged, charge.succeeded) and a declined card (charge.failed, retries, subscription.past_due), in per-entity order', async () => {
    const shop = await newShop(t)
    // Back in time, which the test clock's API refuses: written straight, and this process told.
    await t.db.updateTable('stores').set({ test_clock_now: new Date(T0) }).where('id', '=', shop.store.id).execute()
    t.services.modules.stores.service.auth.forgetStore(shop.store.id)
    const endpoint = await createEndpoint(t.app, shop.auth, { url: inbox.url, event_types: EVERY_TYPE, description: 'ledger' })
    const advance = async (to: string) => {
      const response = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to } })
      assert.equal(response.statusCode, 200, response.body)
      // The worker delivers as things happen.
      await drive(run)
    }

    const good = await subscribe(t, shop, { payment_instrument_id: 'pi_visa_4242' })
    const declined = await subscribe(t, shop, { payment_instrument_id: 'pi_card_declined' })
    await drive(run)
    await advance(feb(10, 12))
    await advance(feb(18))

    // Every event the store recorded arrived, exactly once, and verifies.
    const stored = await storeEvents(t.db, shop.store.id)
    assert.equal(inbox.requests.length, stored.length, 'one request per event (every attempt answered 200)')
    const payloads = inbox.verifyAll(endpoint.secret)
    assert.deepEqual(inbox.requests.map((request) => request.headers['webhook-id']).sort(), stored.map((event) => event.id).sort())
    const storedById = new Map(stored.map((event) => [event.id, event]))
    for (const request of inbox.requests) assert.equal(request.body, storedById.get(request.headers['webhook-id']!)!.payload, 'byte for byte')

    // Per entity, in arrival order, the sequences are 1, 2, 3 ... with no gap and no reordering.
    const byEntity = new Map<string, any[]>()
    for (const event of payloads) {
      const entity = event.data.id as string
      byEntity.set(entity, [...(byEntity.get(entity) ?? []), event])
    }
    for (const [entity, events] of byEntity) {
      assert.deepEqual(events.map((event) => event.sequence), events.map((_event, i) => i + 1), `${entity} arrived out of order: ${events.map((e) => `${e.sequence}:${e.event_type}`)}`)
    }

    // The renewal: subscription.charged (naming the charge), then charge.succeeded, both at the renewal time.
    const goodEvents = byEntity.get(good.id)!
    const charged = goodEvents.filter((event) => event.event_type === 'subscription.charged')
    assert.equal(charged.length, 1)
    const chargeId = charged[0].data.latest_charge_id as string
    assert.match(chargeId, /^ch_/)
    const chargeEvents = byEntity.get(chargeId)!
    assert.deepEqual(chargeEvents.map((event) => event.event_type), ['charge.succeeded'])
    assert.equal(chargeEvents[0].data.object, 'charge')
    assert.equal(chargeEvents[0].data.subscription_id, good.id)
    assert.equal(chargeEvents[0].data.status, 'succeeded')
    assert.ok(charged[0].id < chargeEvents[0].id, 'subscription.charged was recorded before charge.succeeded')
    assert.equal(charged[0].timestamp, FEB10)
    assert.equal(chargeEvents[0].timestamp, FEB10)
    assert.ok(!goodEvents.some((event) => event.event_type === 'subscription.past_due'))

    // The declined card: five failed attempts, each a charge.failed about its own charge, then past_due.
    const declinedEvents = byEntity.get(declined.id)!
    const declinedCharges = payloads.filter((event) => event.event_type.startsWith('charge.') && event.data.subscription_id === declined.id)
    assert.deepEqual(declinedCharges.map((event) => event.event_type), Array(5).fill('charge.failed'))
    assert.deepEqual(declinedCharges.map((event) => event.data.attempt).sort(), [1, 2, 3, 4, 5])
    assert.equal(new Set(declinedCharges.map((event) => event.data.id)).size, 5)
    for (const event of declinedCharges) {
      assert.equal(event.data.failure_code, 'card_declined')
      assert.equal(event.sequence, 1)
    }
    assert.equal(declinedEvents.filter((event) => event.event_type === 'subscription.charged').length, 5, 'each attempt is announced')
    const pastDue = declinedEvents.filter((event) => event.event_type === 'subscription.past_due')
    assert.equal(pastDue.length, 1)
    assert.equal(pastDue[0].data.status, 'past_due')
    assert.equal(pastDue[0].timestamp, feb(17))
    for (const failed of declinedCharges) {
      assert.ok(failed.id < pastDue[0].id, 'subscription.past_due was recorded after every charge.failed')
      assert.ok(failed.timestamp <= pastDue[0].timestamp)
    }
    assert.equal(pastDue[0].sequence, declinedEvents.at(-1).sequence, 'past_due is the subscription\'s latest event')
    // Nothing is left to deliver.
    const pending = await t.db.selectFrom('webhook_deliveries').select('id').where('webhook_subscription_id', '=', endpoint.id).where('status', '!=', 'succeeded').execute()
    assert.deepEqual(pending, [])
  })

  test('card numbers in a checkout are refused at the edge (400 card_data_rejected): nothing is recorded, nothing is delivered', async () => {
    const shop = await newShop(t)
    const receiver = await startWebhookReceiver()
    try {
      await createEndpoint(t.app, shop.auth, { url: receiver.url, event_types: EVERY_TYPE })
      const before = (await storeEvents(t.db, shop.store.id)).length
      const cards = ['4111 1111 1111 1111', '5555-5555-5555-4444', '378282246310005']
      const attempts: Record<string, unknown>[] = [
        { name: cards[0] },
        { email: 'ada@example.com', shipping_address: { name: 'Ada', line1: `Card ${cards[1]}`, city: 'London', postal_code: 'N1 9GU', country: 'GB' } },
        { platform_order_id: cards[2] },
        { gift: { recipient_email: 'friend@example.com', message: `use ${cards[0]}` } },
        { payment_instrument_id: cards[2] },
      ]
      for (const overrides of attempts) {
        const response = await postCheckout(t.app, shop.auth, checkoutBody(shop.planId, overrides))
        assertProblem(response, 400, 'card_data_rejected')
        assert.equal(findLuhnRun(response.body), undefined, 'the number is not echoed back')
      }
      assert.equal((await storeEvents(t.db, shop.store.id)).length, before, 'no event was recorded')
      // A clean checkout goes through and is delivered: the endpoint works.
      await subscribe(t, shop)
      await drive(run)
      assert.ok(receiver.requests.length >= 2)
      for (const request of receiver.requests) assert.equal(findLuhnRun(request.body), undefined)
    } finally {
      await receiver.close()
    }
  })

  test('the Luhn scanner finds card numbers however they are written, and passes other digit runs', () => {
    for (const text of ['4111111111111111', 'x 4242 4242 4242 4242 y', '"5555-5555-5555-4444"', 'amex 378282246310005.', '6011111111111117']) {
      assert.notEqual(findLuhnRun(text), undefined, text)
    }
    for (const text of ['4111111111111112', '411111111111', '2026-02-10T09:00:00.000Z', 'evt_01JABCDEFGHJKMNPQRSTVWXYZ0', '{"amount":1500,"sequence":12}']) {
      assert.equal(findLuhnRun(text), undefined, text)
    }
  })

  test('no delivered body in this file holds a card number', async () => {
    // Deliveries of its own, so the scan is never empty, whichever tests ran before it.
    const receiver = await startWebhookReceiver()
    try {
      await deliverLifecycleEvents(t, receiver, run, 20)
    } finally {
      await receiver.close()
    }
    assert.ok(allDeliveredBodies().length >= 20, `only ${allDeliveredBodies().length} bodies were delivered`)
    assertNoCardNumbers(allDeliveredBodies())
  })
})
