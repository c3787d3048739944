// Subscriber emails (docs/contract.md, Subscriber emails) end to end: the service, a job runner with the
// real notification handlers, and a real SMTP server started here; the store's clock is moved with the
// test clock, and every email is read from what the SMTP server received, as a subscriber would.
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
// wall clock: waitFor below polls a running job runner and a real SMTP server.
import { setTimeout as sleep } from 'node:timers/promises'
import { pino } from 'pino'
import { ensureRecurring } from '../../../src/jobs/job-kinds.ts'
import { createJobRunner, type JobRunner } from '../../../src/jobs/runner.ts'
import { systemClock } from '../../../src/lib/clock.ts'
import { containsCardNumber } from '../../../src/lib/card-data.ts'
import { createMailer, type Mailer } from '../../../src/lib/mailer.ts'
import { InstrumentExpiryCheck, queueExpiryWarnings, SendNotification } from '../../../src/modules/notifications/index.ts'
import { jobHandlersOf } from '../../../src/worker.ts'
import { startBigCommerceSimulator, type BigCommerceSimulator } from '../../helpers/bigcommerce-simulator.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { startSmtpSink, type ReceivedMessage, type SmtpSink } from '../../helpers/smtp-sink.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { ADDRESS, checkout, checkoutBody, closeTestApp, nextEmail } from '../subscriptions/fixtures.ts'

const PORTAL_URL = 'http://portal.test/portal'
const STORE_NAME = 'Bean & Leaf <Roasters>'
const LINK = /http:\/\/portal\.test\/portal\/login\?[^\s"<>]+/g
const DAY = 86_400_000
const WAIT_MS = 30_000

interface Harness {
  t: TestApp
  sink: SmtpSink
  runner: JobRunner
  mailer: Mailer
  shop: StoreWithKey
  planId: string
  close(): Promise<void>
}

async function startHarness(env: Record<string, string> = {}, setup?: (t: TestApp) => Promise<StoreWithKey>): Promise<Harness> {
  const sink = await startSmtpSink()
  const mailer = createMailer({ smtpUrl: sink.url, from: 'Bean & Leaf <no-reply@bean.test>', log: pino({ level: 'silent' }) })
  const t = await buildTestApp({ env: { PORTAL_URL, SMTP_URL: sink.url, ...env }, mailer, portalUrl: () => PORTAL_URL })
  // Only the notification work: the other kinds checkouts queue are not what these tests are about.
  const runner = createJobRunner({
    db: t.db,
    handlers: jobHandlersOf(t.services).filter(({ job }) => job === SendNotification || job === InstrumentExpiryCheck),
    log: t.app.log,
    pollMs: 25,
  })
  runner.start()
  const shop = setup ? await setup(t) : await createStoreWithKey(t.db)
  const settings = await call(t.app, {
    method: 'PATCH',
    url: '/api/v1/admin/store',
    headers: shop.auth,
    payload: { name: STORE_NAME, renewal_reminder_days: 3, dunning_retry_days: [1], past_due_cancel_days: 2 },
  })
  assert.equal(settings.statusCode, 200, settings.body)
  const product = await createProduct(t.app, shop.auth)
  const plan = await createPlan(t.app, shop.auth, product.id, { name: 'Morning Blend' })
  return {
    t,
    sink,
    runner,
    mailer,
    shop,
    planId: plan.id,
    async close() {
      await runner.stop()
      mailer.close()
      await closeTestApp(t)
      await sink.close()
    },
  }
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = WAIT_MS): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`)
    // wall clock: the job runner runs on its own poll loop and mails a real SMTP server; polled until done, with a deadline.
    await sleep(25)
  }
}

/** No send job left for the store: every email it called for was sent (or decided against). */
async function drained(h: Harness): Promise<void> {
  await waitFor('the send jobs to finish', async () => {
    const left = await h.t.db.selectFrom('jobs').select('id').where('kind', '=', SendNotification.kind).where('failed_at', 'is', null).execute()
    return left.length === 0
  })
}

function linksOf(message: ReceivedMessage): URL[] {
  return [...String(message.parsed.text).matchAll(LINK)].map((match) => new URL(match[0]))
}

function verify(h: Harness, token: string) {
  return call(h.t.app, { method: 'POST', url: '/api/v1/portal/auth/verify', payload: { token } })
}

/** Every link signs in once, and only once; answers the portal session of the first. */
async function assertSingleUseLinks(h: Harness, message: ReceivedMessage): Promise<void> {
  const links = linksOf(message)
  assert.ok(links.length >= 1, `a sign-in link in "${message.parsed.subject}"`)
  for (const link of links) {
    const token = link.searchParams.get('token')!
    const first = await verify(h, token)
    assert.equal(first.statusCode, 200, `${message.parsed.subject}: ${first.body}`)
    const me = await call(h.t.app, { method: 'GET', url: '/api/v1/portal/me', headers: { authorization: `Bearer ${first.json.access_token}` } })
    assert.equal(me.statusCode, 200)
    assert.equal(me.json.email, message.to[0])
    const again = await verify(h, token)
    assert.equal(again.statusCode, 401, 'a link works once')
    assert.equal(again.json.code, 'invalid_token')
  }
}

/** Subject, recipient, the store's name (escaped in the HTML), no card number. */
function assertEmail(message: ReceivedMessage, to: string, subject: RegExp): void {
  assert.deepEqual(message.to, [to.toLowerCase()])
  assert.match(String(message.parsed.subject), subject)
  assert.ok(String(message.parsed.subject).includes(STORE_NAME) || String(message.parsed.text).includes(STORE_NAME), 'the store name')
  assert.ok(String(message.parsed.text).includes(STORE_NAME), 'the store name in the text body')
  const html = String(message.parsed.html)
  assert.ok(html.includes('Bean &amp; Leaf &lt;Roasters&gt;'), 'the store name escaped in the HTML body')
  assert.ok(!html.includes('<Roasters>'), 'nothing of the merchant\'s text unescaped')
  assertNoCardNumber(message)
}

function assertNoCardNumber(message: ReceivedMessage): void {
  const text = String(message.parsed.text).replace(LINK, '')
  const html = String(message.parsed.html).replace(/href="[^"]*"/g, '')
  for (const part of [String(message.parsed.subject), text, html]) assert.equal(containsCardNumber(part), false, `no card number in "${message.parsed.subject}"`)
}

async function advance(h: Harness, to: Date) {
  const response = await call(h.t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: h.shop.auth, payload: { to: to.toISOString() } })
  assert.equal(response.statusCode, 200, response.body)
  return response.json
}

async function listNotifications(h: Harness, query = '') {
  const response = await call(h.t.app, { method: 'GET', url: `/api/v1/admin/notifications${query}`, headers: h.shop.auth })
  assert.equal(response.statusCode, 200, response.body)
  return response.json
}

describe('subscriber emails through the lifecycle (test gateway, test clock)', () => {
  let h: Harness
  before(async () => {
    h = await startHarness()
  })
  after(async () => {
    await h?.close()
  })

  test('the renewal reminder names the amount the renewal will charge: after the subscription\'s discount', async () => {
    const email = nextEmail('discounted')
    const made = await call(h.t.app, { method: 'POST', url: '/api/v1/admin/discounts', headers: h.shop.auth, payload: { code: 'REMIND20', type: 'percentage', value: 20, duration: 'forever' } })
    assert.equal(made.statusCode, 201, made.body)
    const [subscription] = await checkout(h.t.app, h.shop.auth, checkoutBody(h.planId, { email, items: [{ plan_id: h.planId, quantity: 1, discount_code: 'REMIND20' }] }))
    await h.sink.waitForMessage(email, WAIT_MS)
    const renewal = new Date(subscription.next_charge_at)
    await advance(h, new Date(renewal.getTime() - 2 * DAY))
    const upcoming = await h.sink.waitForMessage(email, WAIT_MS)
    assertEmail(upcoming, email, /renews on/)
    assert.match(String(upcoming.parsed.text), /for \$12\.00/, '$15.00 less 20%')
  })

  test('the renewal reminder states the renewal as it will be charged: items, shipping at the checkout\'s rate and the store\'s tax, and their total', async () => {
    const email = nextEmail('taxed')
    const taxed = await call(h.t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: h.shop.auth, payload: { test_tax_rate_bps: 825 } })
    assert.equal(taxed.statusCode, 200, taxed.body)
    try {
      const [subscription] = await checkout(h.t.app, h.shop.auth, checkoutBody(h.planId, { email, shipping: { method: 'Ground', amount: 599 } }))
      await h.sink.waitForMessage(email, WAIT_MS)
      const renewal = new Date(subscription.next_charge_at)
      await advance(h, new Date(renewal.getTime() - 2 * DAY))
      const upcoming = await h.sink.waitForMessage(email, WAIT_MS)
      assertEmail(upcoming, email, /renews on/)
      // $15.00 + $5.99 shipping + 8.25% of $15.00 (123.75 -> $1.24): $22.23, the figure the preview shows.
      assert.match(String(upcoming.parsed.text), /for \$22\.23\./)
      assert.match(String(upcoming.parsed.text), /Items \$15\.00, plus \$5\.99 shipping and \$1\.24 tax\./)
      const preview = await call(h.t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${subscription.id}/upcoming`, headers: h.shop.auth })
      assert.equal(preview.json.amount, 2223)
    } finally {
      await call(h.t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: h.shop.auth, payload: { test_tax_rate_bps: 0 } })
    }
  })

  test('created, renewal upcoming, payment failed, past due and cancelled: each once, with single-use sign-in links', async () => {
    const email = nextEmail('lifecycle')
    const [subscription] = await checkout(h.t.app, h.shop.auth, checkoutBody(h.planId, { email, payment_instrument_id: 'instr_card_declined' }))

    const created = await h.sink.waitForMessage(email, WAIT_MS)
    assertEmail(created, email, /has started/)
    assert.match(String(created.parsed.text), /Morning Blend/)
    assert.match(String(created.parsed.text), /\$15\.00/)
    await assertSingleUseLinks(h, created)

    const renewal = new Date(subscription.next_charge_at)
    await advance(h, new Date(renewal.getTime() - 2 * DAY))
    const upcoming = await h.sink.waitForMessage(email, WAIT_MS)
    assertEmail(upcoming, email, /renews on/)
    assert.match(String(upcoming.parsed.text), /for \$15\.00/, 'the amount')
    const date = new Intl.DateTimeFormat('en-US', { dateStyle: 'long', timeZone: 'UTC' }).format(renewal)
    assert.ok(String(upcoming.parsed.text).includes(date), `the date ${date}`)
    const upcomingLinks = linksOf(upcoming)
    assert.deepEqual(upcomingLinks.map((link) => link.searchParams.get('action')), ['skip', null], 'a skip link and a manage link')
    for (const link of upcomingLinks) {
      assert.equal(link.searchParams.get('subscription'), subscription.id)
      assert.equal(link.searchParams.get('store'), h.shop.store.store_hash)
    }
    await assertSingleUseLinks(h, upcoming)

    // The renewal is declined: payment failed, with the link that opens the payment method change.
    await advance(h, new Date(renewal.getTime() + 3_600_000))
    const failed = await h.sink.waitForMessage(email, WAIT_MS)
    assertEmail(failed, email, /did not go through/)
    assert.match(String(failed.parsed.text), /could not collect \$15\.00/)
    const [change] = linksOf(failed)
    assert.equal(change!.searchParams.get('action'), 'payment-instrument')
    assert.equal(change!.searchParams.get('subscription'), subscription.id)
    await assertSingleUseLinks(h, failed)

    // The one dunning retry fails too: another payment failed, and past due.
    await advance(h, new Date(renewal.getTime() + DAY + 2 * 3_600_000))
    const next = [await h.sink.waitForMessage(email, WAIT_MS), await h.sink.waitForMessage(email, WAIT_MS)]
    const pastDue = next.find((message) => /past due/.test(String(message.parsed.subject)))
    assert.ok(pastDue, `a past due email among ${next.map((m) => m.parsed.subject).join(', ')}`)
    assertEmail(pastDue, email, /is past due/)
    assert.equal(linksOf(pastDue)[0]!.searchParams.get('action'), 'payment-instrument')
    await assertSingleUseLinks(h, pastDue)
    const retryFailed = next.find((message) => message !== pastDue)!
    assertEmail(retryFailed, email, /did not go through/)

    // Two days past due: cancelled.
    await advance(h, new Date(renewal.getTime() + 3 * DAY + 3 * 3_600_000))
    const cancelled = await h.sink.waitForMessage(email, WAIT_MS)
    assertEmail(cancelled, email, /is cancelled/)
    await assertSingleUseLinks(h, cancelled)

    await drained(h)
    assert.equal(h.sink.messagesTo(email).length, 6, 'each email once')

    // The log, newest first, paged like every admin list.
    const all = await listNotifications(h, `?subscription_id=${subscription.id}`)
    assert.deepEqual(
      all.data.map((row: any) => row.template),
      ['cancelled', ...(all.data[1].template === 'past_due' ? ['past_due', 'payment_failed'] : ['payment_failed', 'past_due']), 'payment_failed', 'renewal_upcoming', 'subscription_created'],
    )
    for (const row of all.data) {
      assert.equal(row.object, 'notification')
      assert.equal(row.recipient, email.toLowerCase())
      assert.equal(row.subscription_id, subscription.id)
      assert.equal(row.status, 'sent')
      assert.equal(row.attempts, 1)
      assert.equal(row.error, null)
      assert.ok(!Number.isNaN(Date.parse(row.sent_at)))
    }
    const first = await listNotifications(h, `?subscription_id=${subscription.id}&limit=4`)
    assert.equal(first.data.length, 4)
    const second = await listNotifications(h, `?subscription_id=${subscription.id}&limit=4&cursor=${encodeURIComponent(first.next_cursor)}`)
    assert.deepEqual([...first.data, ...second.data].map((row: any) => row.id), all.data.map((row: any) => row.id))
    assert.equal(second.next_cursor, null)
    const onlyFailed = await listNotifications(h, `?subscription_id=${subscription.id}&template=payment_failed`)
    assert.equal(onlyFailed.data.length, 2)
    const bad = await call(h.t.app, { method: 'GET', url: '/api/v1/admin/notifications?template=nope', headers: h.shop.auth })
    assert.equal(bad.statusCode, 400)
  })

  test('a template switched off sends nothing, the others still go; the Store view shows the switches', async () => {
    const off = await call(h.t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: h.shop.auth, payload: { notifications: { subscription_created: false } } })
    assert.equal(off.statusCode, 200, off.body)
    assert.deepEqual(off.json.notifications, {
      subscription_created: false,
      renewal_upcoming: true,
      payment_failed: true,
      past_due: true,
      cancelled: true,
      payment_instrument_expiring: true,
      renewal_skipped: true,
      price_change_notice: true,
    })
    const unknown = await call(h.t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: h.shop.auth, payload: { notifications: { birthday: true } } })
    assert.equal(unknown.statusCode, 400)
    const email = nextEmail('quiet')
    const [subscription] = await checkout(h.t.app, h.shop.auth, checkoutBody(h.planId, { email }))
    await drained(h)
    assert.equal(h.sink.messagesTo(email).length, 0, 'no email for a switched-off template')
    assert.equal((await listNotifications(h, `?subscription_id=${subscription.id}`)).data.length, 0)

    // Cancelling now still emails: only subscription_created is off.
    const cancel = await call(h.t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${subscription.id}/cancel`, headers: h.shop.auth, payload: {} })
    assert.equal(cancel.statusCode, 200, cancel.body)
    assertEmail(await h.sink.waitForMessage(email, WAIT_MS), email, /is cancelled/)

    const on = await call(h.t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: h.shop.auth, payload: { notifications: { subscription_created: true } } })
    assert.equal(on.json.notifications.subscription_created, true)
    const read = await call(h.t.app, { method: 'GET', url: '/api/v1/admin/store', headers: h.shop.auth })
    assert.equal(read.json.notifications.cancelled, true)
  })

  test('a mail server that refuses is retried until it accepts, and the email goes out once', async () => {
    h.sink.failNext(2)
    const refusedBefore = h.sink.rejected
    const email = nextEmail('retry')
    const [subscription] = await checkout(h.t.app, h.shop.auth, checkoutBody(h.planId, { email }))
    const message = await h.sink.waitForMessage(email, WAIT_MS)
    assertEmail(message, email, /has started/)
    assert.equal(h.sink.rejected - refusedBefore, 2, 'two refusals before it was accepted')
    await drained(h)
    assert.equal(h.sink.messagesTo(email).length, 1, 'no duplicate')
    const [row] = (await listNotifications(h, `?subscription_id=${subscription.id}`)).data
    assert.equal(row.status, 'sent')
    assert.equal(row.attempts, 3)
    // Only the link of the email that went out signs in; those of refused attempts were never seen.
    await assertSingleUseLinks(h, message)
  })
})

describe('a card that expires before the next renewal (BigCommerce simulator)', () => {
  const HASH = `notify${process.pid}`
  const ACCESS_TOKEN = 'notifications-test-token-SECRET-7781'
  const CARD = 'tokexpiring'.padEnd(64, 'x')
  const CUSTOMER = 21
  let sim: BigCommerceSimulator
  let h: Harness

  before(async () => {
    sim = await startBigCommerceSimulator()
    sim.addStore({ hash: HASH, accessToken: ACCESS_TOKEN })
    // Expires at the end of this month: before a monthly renewal a month from now.
    const now = new Date()
    sim.addCustomer(HASH, {
      id: CUSTOMER,
      email: 'expiring@example.com',
      instruments: [{ token: CARD, brand: 'VISA', last_4: '4242', expiry_month: now.getUTCMonth() + 1, expiry_year: now.getUTCFullYear(), is_default: true }],
    })
    h = await startHarness(
      {
        PLATFORM_API_URL: sim.apiUrl,
        PLATFORM_PAYMENTS_URL: sim.paymentsUrl,
        PLATFORM_LOGIN_URL: sim.loginUrl,
        PLATFORM_TOKEN_KEY: randomBytes(32).toString('hex'),
        PLATFORM_API_TIMEOUT_MS: '2000',
      },
      async (t) => {
        const shop = await createStoreWithKey(t.db, { storeHash: HASH })
        const connected = await call(t.app, { method: 'PUT', url: '/api/v1/admin/platform-connection', headers: shop.auth, payload: { access_token: ACCESS_TOKEN } })
        assert.equal(connected.statusCode, 200, connected.body)
        const switched = await call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload: { gateway: 'platform' } })
        assert.equal(switched.statusCode, 200, switched.body)
        return shop
      },
    )
  })
  after(async () => {
    await h?.close()
    await sim?.close()
  })

  test('the daily check warns once per card and renewal, with brand and last 4 only and the payment method link', async () => {
    const email = nextEmail('expiring')
    const [subscription] = await checkout(
      h.t.app,
      h.shop.auth,
      checkoutBody(h.planId, { email, payment_instrument_id: CARD, platform_customer_id: CUSTOMER, billing_address: ADDRESS }),
    )
    assert.deepEqual(subscription.payment_instrument, { brand: 'VISA', last_4: '4242' })
    assertEmail(await h.sink.waitForMessage(email, WAIT_MS), email, /has started/)

    // The daily job, as the worker runs it.
    await ensureRecurring(h.t.db, InstrumentExpiryCheck)
    const warning = await h.sink.waitForMessage(email, WAIT_MS)
    assertEmail(warning, email, /expires before your next renewal/)
    assert.match(String(warning.parsed.text), /VISA ending in 4242/)
    const [change] = linksOf(warning)
    assert.equal(change!.searchParams.get('action'), 'payment-instrument')
    await assertSingleUseLinks(h, warning)
    await drained(h)

    // Again (the next day's run): already warned for this card and renewal.
    assert.equal(await queueExpiryWarnings(h.t.db, systemClock, { storeId: h.shop.store.id }), 0)
    await drained(h)
    assert.equal(h.sink.messagesTo(email).length, 2)
    const rows = (await listNotifications(h, `?subscription_id=${subscription.id}`)).data
    assert.deepEqual(rows.map((row: any) => [row.template, row.status]), [['payment_instrument_expiring', 'sent'], ['subscription_created', 'sent']])
  })
})
