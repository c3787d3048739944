// One clock for a test-mode store on every page: once its test clock is advanced, the times written
// for the store (its emails in the notification log, its webhook endpoints, deliveries and attempts,
// a test event, its admin keys' creation, last use and revocation) are the store's time, not the
// real time they happened at. What drives work in real time stays real: a failed delivery's next
// attempt is due on the dispatcher's clock, and the retry happens when that clock says so; shown (the
// delivery's next_attempt_at, the health's next_retry_at) it keeps its distance from the store's now.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
// wall clock: a key's last use is written after the answer (fire and forget); keyRow polls for it, with a bound.
import { setImmediate as nextTurn } from 'node:timers/promises'
import { pino } from 'pino'
import { createJobRunner, type JobRunner } from '../../../src/jobs/runner.ts'
import { fixedClock } from '../../../src/lib/clock.ts'
import type { Mail, Mailer } from '../../../src/lib/mailer.ts'
import { SendNotification } from '../../../src/modules/notifications/index.ts'
import { jobHandlersOf } from '../../../src/worker.ts'
import { createShopWithPlan } from '../../helpers/catalog.ts'
import { buildTestApp, call, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { startWebhookReceiver, type WebhookReceiver } from '../../helpers/webhook-receiver.ts'
import { checkout, checkoutBody, closeTestApp } from '../subscriptions/fixtures.ts'
import { createEndpoint, drive, endpointAction, listDeliveries, testDispatcher, type TestDispatcher } from '../webhooks/fixtures.ts'

const DAY = 86_400_000
// Far from real time either way, on whole seconds: a time written at the real clock cannot pass for it.
const storeTime = (daysAhead: number) => new Date(Math.floor((Date.now() + daysAhead * DAY) / 1000) * 1000).toISOString()

describe('a test-mode store reads its own clock on every page', () => {
  let t: TestApp
  let runner: JobRunner
  let receiver: WebhookReceiver
  let dispatcher: TestDispatcher
  let shop: StoreWithKey & { planId: string }
  const sent: Mail[] = []
  // Real time as the worker's dispatcher sees it: moved by hand, never waited for.
  // (set when the tests start, not when a shared test process loads the file, maybe minutes earlier).
  const realClock = fixedClock(new Date(0))
  let failFirst = true

  before(async () => {
    realClock.set(new Date(Date.now() + 60_000))
    const mailer: Mailer = { send: async (mail) => void sent.push(mail), close: () => {} }
    t = await buildTestApp({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }, mailer, portalUrl: () => 'http://portal.test/portal' })
    runner = createJobRunner({ db: t.db, handlers: jobHandlersOf(t.services).filter(({ job }) => job === SendNotification), log: pino({ level: 'silent' }) })
    // The first delivery fails (a retry is due a minute later in real time); every later one succeeds.
    receiver = await startWebhookReceiver(() => {
      if (failFirst) {
        failFirst = false
        return { status: 500 }
      }
      return { status: 200 }
    })
    dispatcher = testDispatcher(t.db, { clock: realClock, retrySchedule: [60_000] })
    shop = await createShopWithPlan(t)
  })
  after(async () => {
    await dispatcher.close()
    await receiver.close()
    await closeTestApp(t)
  })

  const admin = (method: 'GET' | 'POST' | 'DELETE', url: string, payload?: Record<string, unknown>, auth = shop.auth) =>
    call(t.app, { method, url: `/api/v1/admin${url}`, headers: auth, ...(payload ? { payload } : {}) })
  async function advance(to: string): Promise<void> {
    const response = await admin('POST', '/test-clock/advance', { to })
    assert.equal(response.statusCode, 200, response.body)
  }
  async function runJobs(): Promise<void> {
    for (let i = 0; i < 20 && (await runner.runOnce()) > 0; i++);
  }
  /** A key's row as listed, once `ready` holds: its last use is written after the answer. */
  async function keyRow(id: string, ready: (row: any) => boolean): Promise<any> {
    for (let i = 0; i < 500; i++) {
      const row = (await admin('GET', '/api-keys')).json.data.find((key: { id: string }) => key.id === id)
      if (row && ready(row)) return row
      await nextTurn()
    }
    assert.fail(`key ${id} never reached the expected state`)
  }

  test("emails, webhooks and admin keys carry the store's time, and follow the clock when it moves", async () => {
    // Used before the clock moves: the bootstrap key's last use is real time.
    const first = (await admin('GET', '/api-keys')).json.data[0]
    const T1 = storeTime(100)
    await advance(T1)

    // Admin keys: made, used and revoked at the store's time; the older key's next use is stamped again at once.
    const made = await admin('POST', '/api-keys', { name: 'ERP sync' })
    assert.equal(made.statusCode, 201, made.body)
    assert.equal(made.json.created_at, T1)
    const erp = { authorization: `Bearer ${made.json.key}` }
    assert.equal((await admin('GET', '/store', undefined, erp)).statusCode, 200)
    assert.equal((await keyRow(made.json.id, (row) => row.last_used_at !== null)).last_used_at, T1)
    assert.equal((await keyRow(first.id, (row) => row.last_used_at === T1)).last_used_at, T1, 'used again after the clock moved: stamped at the store time')
    const revoked = await admin('DELETE', `/api-keys/${made.json.id}`)
    assert.equal(revoked.statusCode, 200, revoked.body)
    assert.equal(revoked.json.revoked_at, T1)

    // A webhook endpoint, a subscription's events delivered (the first attempt fails), a test ping.
    const endpoint = await createEndpoint(t.app, shop.auth, { url: receiver.url, event_types: ['subscription.created'] })
    assert.equal(endpoint.created_at, T1)
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(shop.planId))
    await drive(dispatcher)
    const [failed] = await listDeliveries(t.app, shop.auth, endpoint.id)
    assert.equal(failed.status, 'pending')
    assert.equal(failed.created_at, T1)
    assert.deepEqual(failed.attempt_log.map((attempt: { attempted_at: string }) => attempt.attempted_at), [T1])
    // The retry is real-time mechanics: due a minute (± 10% jitter) after the real attempt, whatever the store's clock says.
    const due = await t.db.selectFrom('webhook_deliveries').select('next_attempt_at').where('id', '=', failed.id).executeTakeFirstOrThrow()
    const retryIn = due.next_attempt_at!.getTime() - realClock.now().getTime()
    assert.ok(retryIn >= 54_000 && retryIn <= 66_000, `next attempt in ${retryIn} ms of real time`)
    // The delivery list and the endpoint's health show that retry at its distance from now on the store's
    // clock (the dispatcher's clock here runs a minute ahead of the app's, hence up to two minutes), not 100
    // days away at real time; both the same instant (give or take the moment each page was read).
    const shownIn = Date.parse(failed.next_attempt_at) - Date.parse(T1)
    assert.ok(shownIn > 0 && shownIn <= 130_000, `the delivery shows its next attempt ${shownIn} ms after the store's now`)
    const health = (await admin('GET', `/webhook-subscriptions/${endpoint.id}/health`)).json
    const healthIn = Date.parse(health.next_retry_at) - Date.parse(T1)
    assert.ok(healthIn > 0 && healthIn <= 130_000, `health shows the retry ${healthIn} ms after the store's now`)
    assert.ok(Math.abs(healthIn - shownIn) < 1_000, `the delivery (${shownIn} ms) and the health (${healthIn} ms) show the same retry`)
    // The delivery inspector shows it the same way.
    const inspected = (await admin('GET', `/webhook-subscriptions/${endpoint.id}/deliveries/${failed.id}`)).json
    assert.ok(Math.abs(Date.parse(inspected.next_attempt_at) - Date.parse(failed.next_attempt_at)) < 1_000, `inspector ${inspected.next_attempt_at}, list ${failed.next_attempt_at}`)

    // The subscriber's welcome email: logged at the store's time.
    await runJobs()
    assert.equal(sent.length, 1)
    const [email] = (await admin('GET', `/notifications?subscription_id=${subscription.id}`)).json.data
    assert.equal(email.status, 'sent')
    assert.equal(email.created_at, T1)
    assert.equal(email.sent_at, T1)

    // The clock moves on; the retry goes when real time says, and its attempt carries the store's new time.
    const T2 = storeTime(130)
    await advance(T2)
    realClock.advance(66_001)
    await drive(dispatcher)
    const [retried] = await listDeliveries(t.app, shop.auth, endpoint.id)
    assert.equal(retried.status, 'succeeded')
    assert.equal(retried.created_at, T1, 'made when the event was')
    assert.equal(retried.delivered_at, T2)
    assert.deepEqual(retried.attempt_log.map((attempt: { attempted_at: string }) => attempt.attempted_at), [T2, T1])

    const ping = await endpointAction(t.app, shop.auth, endpoint.id, 'test')
    assert.equal(ping.statusCode, 202, ping.body)
    assert.equal(ping.json.created_at, T2)
    await drive(dispatcher)
    const pinged = (await listDeliveries(t.app, shop.auth, endpoint.id)).find((delivery) => delivery.event_type === 'webhook.test')
    assert.equal(pinged.delivered_at, T2)
    const testEvent = (await admin('GET', `/events?event_type=webhook.test`)).json.data[0]
    assert.equal(testEvent.timestamp, T2)
    // The endpoint changed at the store's time too.
    const renamed = await call(t.app, { method: 'PATCH', url: `/api/v1/admin/webhook-subscriptions/${endpoint.id}`, headers: shop.auth, payload: { description: 'ledger' } })
    assert.equal(renamed.json.updated_at, T2)
  })
})
