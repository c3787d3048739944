// Payment recovery (docs/contract.md, Payment recovery; CONTRACT 17): retry a failed renewal now
// through the renewal engine, email the subscriber a single-use link to the portal's payment page, and
// the attention list of what needs a person now, read from current state. Time is the store's test
// clock; the email goes through a real SMTP server and the service's own send job.
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
// wall clock: waitFor below polls a running job runner and a real SMTP server.
import { setTimeout as sleep } from 'node:timers/promises'
import { pino } from 'pino'
import { createJobRunner, type JobRunner } from '../../../src/jobs/runner.ts'
import { createMailer, type Mailer } from '../../../src/lib/mailer.ts'
import { SendNotification } from '../../../src/modules/notifications/index.ts'
import { jobHandlersOf } from '../../../src/worker.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { startSmtpSink, type SmtpSink } from '../../helpers/smtp-sink.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, checkout, checkoutBody, closeTestApp, getSubscription, nextEmail } from '../subscriptions/fixtures.ts'

const PORTAL_URL = 'http://portal.test/portal'
const T0 = '2026-01-10T09:00:00.000Z'
const FEB10 = '2026-02-10T09:00:00.000Z'
const MAR10 = '2026-03-10T09:00:00.000Z'
const HOUR = 3_600_000
const DAY = 24 * HOUR
const plus = (iso: string, ms: number) => new Date(Date.parse(iso) + ms).toISOString()
const WAIT_MS = 20_000

interface Shop extends StoreWithKey {
  planId: string
}

describe('payment recovery: retry now, the payment update link, the attention list', () => {
  let t: TestApp
  let sink: SmtpSink
  let mailer: Mailer
  let runner: JobRunner

  before(async () => {
    sink = await startSmtpSink()
    mailer = createMailer({ smtpUrl: sink.url, from: 'Shop <no-reply@shop.test>', log: pino({ level: 'silent' }) })
    t = await buildTestApp({ env: { PORTAL_URL, SMTP_URL: sink.url }, mailer, portalUrl: () => PORTAL_URL })
    // Only the email job: renewals run through the test clock and retry-charge itself.
    runner = createJobRunner({ db: t.db, handlers: jobHandlersOf(t.services).filter(({ job }) => job === SendNotification), log: t.app.log, pollMs: 25 })
    runner.start()
  })
  after(async () => {
    await runner?.stop()
    mailer?.close()
    await closeTestApp(t)
    await sink?.close()
  })

  /** A test-mode store at T0 with a $15.00 monthly plan; retries 1 and 3 days after the first failure; no automatic emails. */
  async function newShop(settings: Record<string, unknown> = {}): Promise<Shop> {
    const shop = await createStoreWithKey(t.db)
    await t.db.updateTable('stores').set({ test_clock_now: new Date(T0) }).where('id', '=', shop.store.id).execute()
    const off = { subscription_created: false, renewal_upcoming: false, payment_failed: false, past_due: false, cancelled: false, payment_instrument_expiring: false, renewal_skipped: false }
    const patched = await call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload: { dunning_retry_days: [1, 3], notifications: off, ...settings } })
    assert.equal(patched.statusCode, 200, patched.body)
    const product = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, product.id, { name: 'Monthly', amount: 1500, interval: 'month' })
    return { ...shop, planId: plan.id }
  }

  async function subscribe(shop: Shop, instrument: string, email = nextEmail('recovery')): Promise<any> {
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(shop.planId, { payment_instrument_id: instrument, email }))
    return subscription
  }

  async function advance(shop: Shop, to: string): Promise<void> {
    const response = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to } })
    assert.equal(response.statusCode, 200, response.body)
  }

  const retry = (shop: Shop, id: string, headers: Record<string, string> = {}) => call(t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${id}/retry-charge`, headers: { ...shop.auth, ...headers } })
  const sendLink = (shop: Shop, id: string) => call(t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${id}/payment-update-link`, headers: shop.auth })
  /** The subscription's payment update link events as stored, oldest first. */
  const linkEvents = (shop: Shop, id: string) =>
    t.db.selectFrom('events').select(['payload']).where('store_id', '=', shop.store.id).where('entity_id', '=', id).where('event_type', '=', 'subscription.payment_update_link_sent').orderBy('position').execute()
  /** How many payment update link emails the subscription has in the log. */
  const linkEmails = async (shop: Shop, id: string) =>
    Number((await t.db.selectFrom('notifications').select((eb) => eb.fn.countAll<number>().as('n')).where('store_id', '=', shop.store.id).where('subscription_id', '=', id).where('template', '=', 'payment_update_link').executeTakeFirstOrThrow()).n)

  async function attention(shop: Shop): Promise<any[]> {
    const response = await call(t.app, { method: 'GET', url: '/api/v1/admin/attention', headers: shop.auth })
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json.has_more, false)
    return response.json.data
  }

  async function chargesOf(shop: Shop, id: string): Promise<any[]> {
    const response = await call(t.app, { method: 'GET', url: `/api/v1/admin/charges?subscription_id=${id}&limit=100`, headers: shop.auth })
    assert.equal(response.statusCode, 200, response.body)
    return [...response.json.data].reverse()
  }

  /** Money that moved for the subscription on the test gateway's ledger: what a double charge would show. */
  const paidOnLedger = async (id: string) => Number((await t.db.selectFrom('test_gateway_charges').select((eb) => eb.fn.countAll<number>().as('n')).where('subscription_id', '=', id).where('status', '=', 'succeeded').executeTakeFirstOrThrow()).n)

  /** A subscription whose Feb 10 renewal was declined: in dunning, its first retry on Feb 11. */
  async function inDunning(shop: Shop, instrument = 'pi_visa_declined_once', email?: string): Promise<any> {
    const subscription = await subscribe(shop, instrument, email)
    await advance(shop, plus(FEB10, HOUR))
    const [charge] = await chargesOf(shop, subscription.id)
    assert.equal(charge.status, 'failed', 'the renewal was declined')
    assert.equal(charge.next_retry_at, plus(FEB10, DAY))
    return subscription
  }

  describe('POST .../retry-charge', () => {
    test('a declined renewal in dunning, retried now with the same card (test gateway `_declined_once`): 200 with the paid charge, the subscription out of dunning, the period paid once', async () => {
      const shop = await newShop()
      const subscription = await inDunning(shop)

      const response = await retry(shop, subscription.id)
      assert.equal(response.statusCode, 200, response.body)
      const charge = response.json
      assert.deepEqual(
        { object: charge.object, subscription_id: charge.subscription_id, status: charge.status, attempt: charge.attempt, amount: charge.amount, payment_instrument_id: charge.payment_instrument_id, period_start: charge.period_start, period_end: charge.period_end, next_retry_at: charge.next_retry_at },
        { object: 'charge', subscription_id: subscription.id, status: 'succeeded', attempt: 2, amount: 1500, payment_instrument_id: 'pi_visa_declined_once', period_start: FEB10, period_end: MAR10, next_retry_at: null },
      )
      const after = await getSubscription(t.app, shop.auth, subscription.id)
      assert.equal(after.status, 'active')
      assert.equal(after.latest_charge_id, charge.id)
      assert.equal(after.current_period_start, FEB10)
      assert.equal(after.next_charge_at, MAR10, 'the next renewal, not a retry')
      // The engine's own events: the attempt recorded, then settled.
      // Who asked comes first (the admin's key), then the engine's own events: the attempt recorded, then settled.
      const events = await t.db.selectFrom('events').select(['event_type', 'entity_id', 'payload']).where('store_id', '=', shop.store.id).where('entity_id', 'in', [subscription.id, charge.id]).orderBy('position').execute()
      assert.deepEqual(events.slice(-3).map((event) => event.event_type), ['subscription.retry_requested', 'subscription.charged', 'charge.succeeded'])
      assert.equal(JSON.parse(events.at(-3)!.payload).actor.type, 'admin_key', 'the retry names who asked for it')

      // Nothing owed any more: a second retry is refused, and Feb 11's scheduled retry charges nothing.
      assertProblem(await retry(shop, subscription.id), 409, 'invalid_state', { what: 'nothing is owed' })
      await advance(shop, plus(FEB10, 2 * DAY))
      assert.equal((await chargesOf(shop, subscription.id)).length, 2)
      assert.equal(await paidOnLedger(subscription.id), 1, 'the period was paid once')
      assert.deepEqual(await attention(shop), [], 'recovered: nothing needs attention')
    })

    test('a retry that fails again counts as a dunning attempt: 200 with the failed charge and the next retry on the schedule; after the last, past due', async () => {
      const shop = await newShop()
      const subscription = await inDunning(shop, 'pi_visa_declined')
      const again = await retry(shop, subscription.id)
      assert.equal(again.statusCode, 200, again.body)
      assert.equal(again.json.status, 'failed')
      assert.equal(again.json.attempt, 2)
      assert.equal(again.json.next_retry_at, plus(FEB10, 3 * DAY), 'the schedule\'s next retry (day 3): this attempt took the place of day 1\'s')
      assert.equal((await getSubscription(t.app, shop.auth, subscription.id)).next_charge_at, plus(FEB10, 3 * DAY))
      const last = await retry(shop, subscription.id)
      assert.equal(last.statusCode, 200, last.body)
      assert.equal(last.json.next_retry_at, null)
      const pastDue = await getSubscription(t.app, shop.auth, subscription.id)
      assert.equal(pastDue.status, 'past_due')
      assert.equal(await paidOnLedger(subscription.id), 0)
    })

    test('past due: the retry with a card that works again recovers it (past_due -> active, subscription.activated)', async () => {
      const shop = await newShop({ dunning_retry_days: [1] })
      const subscription = await inDunning(shop, 'pi_visa_declined')
      await advance(shop, plus(FEB10, 2 * DAY))
      assert.equal((await getSubscription(t.app, shop.auth, subscription.id)).status, 'past_due')
      // The subscriber's bank accepts the card again. The test gateway decides by the instrument id, so the
      // row is made to name one it pays; set on the row itself, as an API change of instrument would retry at once by itself.
      await t.db.updateTable('subscriptions').set({ payment_instrument_id: 'pi_visa_ok' }).where('id', '=', subscription.id).execute()
      const [item] = await attention(shop)
      assert.equal(item.reason, 'past_due')
      assert.deepEqual(item.actions, ['retry_charge', 'payment_update_link'])

      const response = await retry(shop, subscription.id)
      assert.equal(response.statusCode, 200, response.body)
      assert.equal(response.json.status, 'succeeded')
      assert.equal(response.json.period_start, FEB10)
      const after = await getSubscription(t.app, shop.auth, subscription.id)
      assert.equal(after.status, 'active')
      assert.equal(after.past_due_at, null)
      assert.equal(after.next_charge_at, MAR10)
      const events = await t.db.selectFrom('events').select('event_type').where('entity_id', '=', subscription.id).orderBy('position').execute()
      assert.deepEqual(events.slice(-4).map((event) => event.event_type), ['subscription.past_due', 'subscription.retry_requested', 'subscription.charged', 'subscription.activated'])
      assert.deepEqual(await attention(shop), [])
    })

    test('two retries at once make one attempt: one charge, paid once; the second waits for it or is refused', async () => {
      const shop = await newShop()
      const subscription = await inDunning(shop)
      const [a, b] = await Promise.all([retry(shop, subscription.id), retry(shop, subscription.id)])
      const statuses = [a.statusCode, b.statusCode].sort()
      assert.ok(statuses[0] === 200 && [200, 409].includes(statuses[1]!), `answers ${statuses}: ${a.body} ${b.body}`)
      for (const answer of [a, b].filter((r) => r.statusCode === 200)) assert.equal(answer.json.status, 'succeeded')
      if (a.statusCode === 200 && b.statusCode === 200) assert.equal(a.json.id, b.json.id, 'both answer the same charge')
      assert.equal((await chargesOf(shop, subscription.id)).length, 2, 'the declined renewal and one retry')
      assert.equal(await paidOnLedger(subscription.id), 1)
    })

    test('the same Idempotency-Key, at once or later, answers the first retry: one charge', async () => {
      const shop = await newShop()
      const subscription = await inDunning(shop)
      const key = { 'idempotency-key': `retry-${subscription.id}` }
      const [a, b] = await Promise.all([retry(shop, subscription.id, key), retry(shop, subscription.id, key)])
      assert.equal(a.statusCode, 200, a.body)
      assert.equal(b.statusCode, 200, b.body)
      assert.deepEqual(b.json, a.json)
      const later = await retry(shop, subscription.id, key)
      assert.equal(later.statusCode, 200)
      assert.deepEqual(later.json, a.json)
      assert.equal((await chargesOf(shop, subscription.id)).length, 2)
      assert.equal(await paidOnLedger(subscription.id), 1)
    })

    test('409 invalid_state, saying why, when there is nothing to retry now; 404 for another store', async () => {
      const shop = await newShop()
      const paid = await subscribe(shop, 'pi_visa_ok')
      const cancelled = await subscribe(shop, 'pi_visa_declined')
      const paused = await subscribe(shop, 'pi_visa_declined')
      const unknown = await subscribe(shop, 'pi_visa_unknown')
      await advance(shop, plus(FEB10, 2 * HOUR))
      assert.equal((await act(t.app, shop.auth, cancelled.id, 'cancel', { reason: 'moved away' })).statusCode, 200)
      assert.equal((await act(t.app, shop.auth, paused.id, 'pause')).statusCode, 200)

      assertProblem(await retry(shop, paid.id), 409, 'invalid_state', { what: 'active, not in dunning' })
      assert.match((await retry(shop, paid.id)).json.detail, /nothing is owed/)
      assert.match((await retry(shop, cancelled.id)).json.detail, /is cancelled/)
      assert.match((await retry(shop, paused.id)).json.detail, /is paused/)
      // The gateway never answered the renewal: the charge is in flight until it settles or goes to review.
      assert.match((await retry(shop, unknown.id)).json.detail, /in flight/)
      for (const id of [paid.id, cancelled.id, paused.id, unknown.id]) assert.equal((await retry(shop, id)).statusCode, 409)
      const other = await newShop()
      assertProblem(await retry(other, paid.id), 404, 'not_found')
      assert.equal(await paidOnLedger(cancelled.id), 0)
    })
  })

  describe('POST .../payment-update-link', () => {
    test('202 with the log row; the email arrives with a link that signs in once and opens the payment method change of that subscription', async () => {
      const shop = await newShop()
      const email = nextEmail('update')
      const subscription = await inDunning(shop, 'pi_visa_declined', email)
      const response = await sendLink(shop, subscription.id)
      assert.equal(response.statusCode, 202, response.body)
      assert.deepEqual(
        { object: response.json.object, template: response.json.template, recipient: response.json.recipient, subscription_id: response.json.subscription_id, status: response.json.status, attempts: response.json.attempts },
        { object: 'notification', template: 'payment_update_link', recipient: email, subscription_id: subscription.id, status: 'pending', attempts: 0 },
      )
      // Sent although every automatic email of the store is switched off: the admin asked for this one.
      const message = await sink.waitForMessage(email, WAIT_MS)
      assert.match(String(message.parsed.subject), /Update your payment method/)
      const links = [...String(message.parsed.text).matchAll(/http:\/\/portal\.test\/portal\/login\?[^\s"<>]+/g)].map((match) => new URL(match[0]))
      const payment = links.find((link) => link.searchParams.get('action') === 'payment-instrument')
      assert.ok(payment, `a link to the payment page in: ${message.parsed.text}`)
      assert.equal(payment.searchParams.get('subscription'), subscription.id)
      assert.equal(payment.searchParams.get('store'), shop.store.store_hash)

      const token = payment.searchParams.get('token')!
      const first = await call(t.app, { method: 'POST', url: '/api/v1/portal/auth/verify', payload: { token } })
      assert.equal(first.statusCode, 200, first.body)
      const mine = await call(t.app, { method: 'GET', url: `/api/v1/portal/subscriptions/${subscription.id}`, headers: { authorization: `Bearer ${first.json.access_token}` } })
      assert.equal(mine.statusCode, 200, 'the link signs in the subscriber of that subscription')
      assertProblem(await call(t.app, { method: 'POST', url: '/api/v1/portal/auth/verify', payload: { token } }), 401, 'invalid_token', { what: 'a second use' })

      // The log lists it, sent, from the request on.
      const listed = await waitFor('the email to be recorded as sent', async () => {
        const log = await call(t.app, { method: 'GET', url: `/api/v1/admin/notifications?subscription_id=${subscription.id}`, headers: shop.auth })
        const row = log.json.data.find((n: any) => n.id === response.json.id)
        return row?.status === 'sent' ? row : undefined
      })
      assert.equal(listed.attempts, 1)
      assert.equal(listed.template, 'payment_update_link')
    })

    test('each request 10 minutes apart on the store clock is an email of its own; 409 for a cancelled subscription; 404 for another store', async () => {
      const shop = await newShop()
      const email = nextEmail('twice')
      const subscription = await inDunning(shop, 'pi_visa_declined', email)
      const a = await sendLink(shop, subscription.id)
      assert.equal(a.statusCode, 202, a.body)
      await advance(shop, plus(FEB10, HOUR + 10 * 60_000))
      const b = await sendLink(shop, subscription.id)
      assert.equal(b.statusCode, 202, b.body)
      assert.notEqual(a.json.id, b.json.id)
      await sink.waitForMessage(email, WAIT_MS)
      await sink.waitForMessage(email, WAIT_MS)
      assert.equal((await act(t.app, shop.auth, subscription.id, 'cancel', {})).statusCode, 200)
      assertProblem(await sendLink(shop, subscription.id), 409, 'invalid_state', { what: 'cancelled' })
      assertProblem(await sendLink(await newShop(), subscription.id), 404, 'not_found')
    })

    test('records subscription.payment_update_link_sent naming who asked, with the email, never the link or its token', async () => {
      const shop = await newShop()
      const email = nextEmail('recorded')
      const subscription = await inDunning(shop, 'pi_visa_declined', email)
      const response = await sendLink(shop, subscription.id)
      assert.equal(response.statusCode, 202, response.body)
      const sent = await linkEvents(shop, subscription.id)
      assert.equal(sent.length, 1, 'one event for the one email')
      const recorded = JSON.parse(sent[0]!.payload)
      assert.equal(recorded.actor.type, 'admin_key', 'names who asked')
      assert.match(recorded.actor.id, /^key_/)
      assert.equal(recorded.data.object, 'subscription')
      assert.equal(recorded.data.id, subscription.id)
      // Recorded with the email's log row, at the same store time.
      assert.equal(recorded.timestamp, response.json.created_at)
      // The admin API lists it like any event.
      const listed = await call(t.app, { method: 'GET', url: `/api/v1/admin/events?entity_id=${subscription.id}&event_type=subscription.payment_update_link_sent`, headers: shop.auth })
      assert.equal(listed.statusCode, 200, listed.body)
      assert.deepEqual(listed.json.data.map((event: any) => event.id), [recorded.id])

      // The link goes only to the subscriber: neither it nor its token is in the event, as stored or as listed.
      const message = await sink.waitForMessage(email, WAIT_MS)
      const link = /http:\/\/portal\.test\/portal\/login\?[^\s"<>]+/.exec(String(message.parsed.text))![0]
      const token = new URL(link).searchParams.get('token')!
      assert.ok(token.length >= 16, 'the email holds a token')
      for (const text of [sent[0]!.payload, listed.body]) {
        assert.ok(!text.includes(token), 'the token is not in the event')
        assert.ok(!text.includes('/login?'), 'the link is not in the event')
      }

      // Refused (cancelled): no email and no event.
      assert.equal((await act(t.app, shop.auth, subscription.id, 'cancel', {})).statusCode, 200)
      await advance(shop, plus(FEB10, 2 * HOUR))
      assertProblem(await sendLink(shop, subscription.id), 409, 'invalid_state')
      assert.equal((await linkEvents(shop, subscription.id)).length, 1)
      assert.equal(await linkEmails(shop, subscription.id), 1)
    })

    test('at most one link per subscription every 10 minutes of the store clock: a second is 429 rate_limited with Retry-After, and no email', async () => {
      const shop = await newShop()
      const subscription = await inDunning(shop, 'pi_visa_declined')
      const other = await subscribe(shop, 'pi_visa_ok')
      const first = await sendLink(shop, subscription.id)
      assert.equal(first.statusCode, 202, first.body)

      // The test clock stands still: the whole window is left, on the store's clock. Real waiting opens
      // nothing, so the detail says to advance the clock, and to when; Retry-After stays a number (how far).
      const again = await sendLink(shop, subscription.id)
      assertProblem(again, 429, 'rate_limited')
      assert.equal(again.headers['retry-after'], '600')
      assert.match(again.json.detail, /10 minutes/)
      assert.match(again.json.detail, /test clock \(POST \/api\/v1\/admin\/test-clock\/advance\) to 2026-02-10T10:10:00.000Z or later/)
      assert.doesNotMatch(again.json.detail, /try again in/)
      // Another subscription of the store is not held back.
      assert.equal((await sendLink(shop, other.id)).statusCode, 202)

      // One second before the window ends (store clock), still refused; an Idempotency-Key does not keep the refusal.
      await advance(shop, plus(FEB10, HOUR + 10 * 60_000 - 1_000))
      const key = { 'idempotency-key': `link-${subscription.id}` }
      const late = await call(t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${subscription.id}/payment-update-link`, headers: { ...shop.auth, ...key } })
      assertProblem(late, 429, 'rate_limited')
      assert.equal(late.headers['retry-after'], '1')
      assert.equal(await linkEmails(shop, subscription.id), 1, 'no email for a refused request')
      assert.equal((await linkEvents(shop, subscription.id)).length, 1, 'no event for a refused request')

      // Ten minutes on the store clock after the first: allowed again (no real time has passed), the same key too.
      await advance(shop, plus(FEB10, HOUR + 10 * 60_000))
      const next = await call(t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${subscription.id}/payment-update-link`, headers: { ...shop.auth, ...key } })
      assert.equal(next.statusCode, 202, next.body)
      assert.equal(await linkEmails(shop, subscription.id), 2)
      assert.equal((await linkEvents(shop, subscription.id)).length, 2)
    })

    test('two requests at once send one link: the second waits for the first and is refused', async () => {
      const shop = await newShop()
      const subscription = await inDunning(shop, 'pi_visa_declined')
      const answers = await Promise.all([sendLink(shop, subscription.id), sendLink(shop, subscription.id), sendLink(shop, subscription.id)])
      assert.deepEqual(answers.map((answer) => answer.statusCode).sort(), [202, 429, 429])
      assert.equal(await linkEmails(shop, subscription.id), 1)
    })
  })

  describe('GET /attention', () => {
    test('one item per subscription that needs a person now, the one waiting longest first; nothing cancelled, recovered or paid', async () => {
      const shop = await newShop({ dunning_retry_days: [1, 3, 5] })
      // Jan 10: three subscriptions whose Feb 10 renewals are declined.
      const pastDue = await subscribe(shop, 'pi_visa_declined')
      const cancelled = await subscribe(shop, 'pi_visa_declined')
      const recovered = await subscribe(shop, 'pi_visa_declined_once')
      await subscribe(shop, 'pi_visa_ok')
      // Jan 14: one whose Feb 14 renewal is declined.
      await advance(shop, '2026-01-14T09:00:00.000Z')
      const several = await subscribe(shop, 'pi_visa_declined')
      // Feb 12: Feb 11's retries failed again, except the one that recovered; one subscription is cancelled.
      await advance(shop, plus(FEB10, 2 * DAY))
      assert.equal((await act(t.app, shop.auth, cancelled.id, 'cancel', { reason: 'gone' })).statusCode, 200)
      // Feb 17 noon: the first is past due since its Feb 15 retry; the Feb 14 one has failed 3 times (Feb 14, 15, 17).
      await advance(shop, '2026-02-17T12:00:00.000Z')

      const severalCharges = await chargesOf(shop, several.id)
      assert.equal(severalCharges.length, 3, 'several failed attempts')
      // What the old page listed: every failed charge with a next retry, the cancelled and recovered subscriptions' included.
      const failedWithRetry = (await call(t.app, { method: 'GET', url: '/api/v1/admin/charges?status=failed&limit=100', headers: shop.auth })).json.data.filter((c: any) => c.next_retry_at)
      assert.ok(failedWithRetry.some((c: any) => c.subscription_id === cancelled.id) && failedWithRetry.some((c: any) => c.subscription_id === recovered.id))
      assert.equal(failedWithRetry.filter((c: any) => c.subscription_id === several.id).length, 3)

      const items = await attention(shop)
      assert.deepEqual(items.map((item) => [item.subscription_id, item.reason]), [[pastDue.id, 'past_due'], [several.id, 'dunning']], 'one item each, oldest first: failing since Feb 10, then since Feb 14')
      const [pastDueItem, severalItem] = items
      assert.equal(pastDueItem.since, FEB10)
      assert.equal(pastDueItem.failed_attempts, 4)
      assert.equal(pastDueItem.next_retry_at, null)
      assert.equal(pastDueItem.charge.attempt, 4, 'its latest failed attempt')
      assert.deepEqual(pastDueItem.actions, ['retry_charge', 'payment_update_link'])
      assert.equal(severalItem.since, '2026-02-14T09:00:00.000Z')
      assert.equal(severalItem.failed_attempts, 3)
      assert.equal(severalItem.charge.id, severalCharges.at(-1).id, 'its latest failed attempt')
      assert.equal(severalItem.charge.status, 'failed')
      assert.equal(severalItem.next_retry_at, '2026-02-19T09:00:00.000Z')
      assert.equal(severalItem.message, 'The card was declined.')
      assert.deepEqual(severalItem.actions, ['retry_charge', 'payment_update_link'])
      assert.equal(severalItem.subscriber.email, several.subscriber_email ?? severalItem.subscriber.email)
      assert.match(severalItem.subscriber.email, /@example\.com$/)
    })

    test('a charge under review is listed with its resolve action, whatever its subscription became', async () => {
      const shop = await newShop()
      const subscription = await subscribe(shop, 'pi_visa_unknown')
      await advance(shop, plus(FEB10, HOUR))
      const [charge] = await chargesOf(shop, subscription.id)
      // The grace period passed with no answer (as the reconciler marks it): the charge waits for an admin.
      const since = plus(FEB10, DAY + HOUR)
      await t.db.updateTable('charges').set({ status: 'requires_review', review: JSON.stringify({ code: 'outcome_unknown', message: 'the gateway never answered', since }), lease_until: null, lease_token: null }).where('id', '=', charge.id).execute()
      await t.db.updateTable('subscriptions').set({ billing_issue: JSON.stringify({ code: 'charge_requires_review', message: `charge ${charge.id} requires review`, since }) }).where('id', '=', subscription.id).execute()
      const [item, ...rest] = await attention(shop)
      assert.deepEqual(rest, [])
      assert.equal(item.reason, 'charge_requires_review')
      assert.equal(item.charge.id, charge.id)
      assert.equal(item.since, since)
      assert.deepEqual(item.actions, ['resolve_charge'])
      assertProblem(await retry(shop, subscription.id), 409, 'invalid_state', { what: 'under review' })
      // Resolved as paid: nothing needs attention.
      const resolved = await call(t.app, { method: 'POST', url: `/api/v1/admin/charges/${charge.id}/resolve`, headers: shop.auth, payload: { outcome: 'succeeded' } })
      assert.equal(resolved.statusCode, 200, resolved.body)
      assert.deepEqual(await attention(shop), [])
    })

    test('the admin list of stored instruments on a test-gateway store is empty: any instrument id is accepted', async () => {
      const shop = await newShop()
      const subscription = await subscribe(shop, 'pi_visa_ok')
      const listed = await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${subscription.id}/payment-instruments`, headers: shop.auth })
      assert.equal(listed.statusCode, 200, listed.body)
      assert.deepEqual(listed.json, { gateway: 'test', data: [] })
    })
  })
})

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = WAIT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    // wall clock: the job runner runs on its own poll loop and mails a real SMTP server.
    await sleep(25)
  }
}
