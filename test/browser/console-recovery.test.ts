import assert from 'node:assert/strict'
import { after, before, describe, test, type TestContext } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { adminClient, buildWebForTest, launchBrowser, screenshotAtWidths, serverDatabase, skipWithoutChromium, watchPage } from '../helpers/browser.ts'
import { startServer, type RunningServer } from '../helpers/server-process.ts'
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts'

/**
 * Payment recovery in the merchant console, in Chromium against the real service process (issue 26,
 * finding 1 and 3; docs/contract.md, Payment recovery). The attention page lists what needs action
 * now, one row per subscription, the one waiting longest first: a subscription with several failed
 * attempts once, a past due one, never a cancelled one with old failed charges nor one that recovered.
 * "Retry now" beside a row recovers it; "Send update-card link" sends the email whose link signs the
 * subscriber in once, on the portal's payment page of that subscription. On a subscription page the
 * "Payment recovery" section offers the same and "Change card". Screenshots at 1440 and 390 px go to
 * test-results/console-recovery/ (and docs/screenshots/ with UPDATE_SCREENSHOTS=1).
 */

const STORE_HASH = 'recoveryconsole'
const ADMIN_KEY = 'sk_test_console_recovery_0123456789abcdef'
const DAY = 86_400_000
const HOUR = 3_600_000
const ADDRESS = { name: 'Ada Lovelace', line1: '12 Analytical Way', city: 'Portland', state: 'OR', postal_code: '97201', country: 'US' }

interface Seeded {
  /** Past due: every retry of its renewal failed. */
  pastDue: string
  /** In dunning with two failed attempts. */
  several: string
  /** Cancelled, with the failed charges (each with a "next retry") of its dunning. */
  cancelled: string
  /** Declined once, paid by the first retry. */
  recovered: string
  /** In dunning with one failed attempt, on a card that pays now (`_declined_once`). */
  retryMe: string
  paid: string
  emails: Record<string, string>
}

describe('payment recovery in the console (attention list, subscription page)', { skip: skipWithoutChromium, timeout: 120_000 }, () => {
  let web: Awaited<ReturnType<typeof buildWebForTest>>
  let server: RunningServer
  let sink: SmtpSink
  let database: Awaited<ReturnType<typeof serverDatabase>> | undefined
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let seeded: Seeded
  const pageProblems: string[] = []
  const foreignRequests: string[] = []
  const admin = adminClient(() => server.origin, ADMIN_KEY)

  async function seed(): Promise<Seeded> {
    // The automatic emails are off: the update-card link is sent anyway (an admin asked for it), and is the only mail.
    const notifications = Object.fromEntries(['subscription_created', 'renewal_upcoming', 'payment_failed', 'past_due', 'cancelled', 'payment_instrument_expiring', 'renewal_skipped'].map((name) => [name, false]))
    await admin('PATCH', '/store', { name: 'Kettle & Leaf', timezone: 'Europe/Berlin', dunning_retry_days: [1, 3], notifications })
    const product = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'leaf-tea', name: 'Leaf Tea' })
    const plan = await admin<{ id: string }>('POST', '/plans', { product_id: product.id, name: 'Tin every month', amount: 1250, currency: 'USD', interval: 'month' })
    const emails: Record<string, string> = {}
    let order = 0
    const checkout = async (who: string, instrument: string) => {
      order += 1
      emails[who] = `${who}@example.com`
      const result = await admin<{ data: { id: string; next_charge_at: string }[] }>('POST', '/checkouts', {
        platform_order_id: `recovery-${order}`,
        email: emails[who],
        name: who.replace(/^./, (c) => c.toUpperCase()),
        shipping_address: ADDRESS,
        payment_instrument_id: instrument,
        items: [{ plan_id: plan.id, quantity: 1 }],
      })
      return result.data[0]!
    }
    const advance = (to: number) => admin('POST', '/test-clock/advance', { to: new Date(to).toISOString() })
    const start = Date.parse((await admin<{ now: string }>('GET', '/test-clock')).now)
    // Day 0: the one that will be past due. Day 3: three that fail on their renewal. Day 4: one more, and one that pays.
    const pastDue = await checkout('pat', 'pi_visa_declined')
    await advance(start + 3 * DAY)
    const several = await checkout('sam', 'pi_visa_declined')
    const cancelled = await checkout('carl', 'pi_visa_declined')
    const recovered = await checkout('rita', 'pi_visa_declined_once')
    await advance(start + 4 * DAY)
    const retryMe = await checkout('eve', 'pi_visa_declined_once')
    const paid = await checkout('paula', 'pi_visa_ok')
    // A month on, an hour after the last renewal: Pat's retries (day 1, day 3) are used up; Sam's and
    // Carl's renewal and first retry failed; Rita's first retry paid; Eve's renewal just failed.
    await advance(Date.parse(retryMe.next_charge_at) + HOUR)
    await admin('POST', `/subscriptions/${cancelled.id}/cancel`, { reason: 'moved abroad' })
    return { pastDue: pastDue.id, several: several.id, cancelled: cancelled.id, recovered: recovered.id, retryMe: retryMe.id, paid: paid.id, emails }
  }

  before(async () => {
    sink = await startSmtpSink()
    web = await buildWebForTest()
    database = await serverDatabase('sb-recovery-')
    const databaseEnv = database.env
    server = await startServer({
      ...databaseEnv,
      WEB_DIST_DIR: web.dir,
      SEED_DEMO_DATA: 'false',
      BOOTSTRAP_STORE_HASH: STORE_HASH,
      BOOTSTRAP_ADMIN_API_KEY: ADMIN_KEY,
      SMTP_URL: sink.url,
      LOG_LEVEL: 'error',
    })
    ;[seeded, browser] = await Promise.all([seed(), launchBrowser()])
    context = await signedIn(ADMIN_KEY)
    page = await context.newPage()
    watchPage(page, () => server.origin, { foreignRequests, pageProblems })
  })

  /** A browser signed in with `key` as the sign-in page leaves it (test/browser/console.test.ts signs in through the page). */
  async function signedIn(key: string): Promise<BrowserContext> {
    const made = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US', timezoneId: 'America/Los_Angeles' })
    await made.addInitScript((token: string) => sessionStorage.setItem('console.session', JSON.stringify({ token, expiresAt: null, via: 'api_key' })), key)
    return made
  }

  after(async () => {
    await browser?.close()
    await server?.stop()
    await sink?.close()
    await database?.remove()
    web?.cleanup()
  })

  const heading = () => page.getByRole('heading', { level: 1 })
  const notice = () => page.locator('#notice')
  const dialog = () => page.getByRole('dialog')
  const row = (id: string) => page.locator('.attention-item', { has: page.locator(`a[href$="/subscriptions/${id}"]`) })
  /** The subscriptions the page links to, in document order: one per row. */
  const linkedSubscriptions = async () => (await page.locator('main a[href*="/console/subscriptions/"]').evaluateAll((links) => links.map((a) => (a.getAttribute('href') ?? '').split('?')[0]!.split('/').pop()!)))

  const screenshot = (t: TestContext, name: string) => screenshotAtWidths(page, t, 'console-recovery', name, { prefix: 'console' })

  test('the attention page lists exactly what needs action now: one row per subscription, the one waiting longest first', async (t) => {
    // The failed charges the old page listed one by one: each attempt, cancelled and recovered subscriptions' too.
    const failed = (await admin<{ data: { subscription_id: string; next_retry_at: string | null }[] }>('GET', '/charges?status=failed&limit=100')).data.filter((c) => c.next_retry_at)
    assert.ok(failed.filter((c) => c.subscription_id === seeded.several).length === 2 && failed.some((c) => c.subscription_id === seeded.cancelled) && failed.some((c) => c.subscription_id === seeded.recovered))

    await page.goto(`${server.origin}/console/attention`)
    await heading().filter({ hasText: 'Needs attention' }).waitFor()
    await page.locator('.attention-list').waitFor()
    assert.deepEqual(await linkedSubscriptions(), [seeded.pastDue, seeded.several, seeded.retryMe], 'past due since its renewal failed a month after day 0; then day 3\'s; then day 4\'s')
    assert.match(await page.locator('.subtitle').innerText(), /^3 subscriptions to look at/)
    const text = async (id: string) => (await row(id).innerText()).replace(/\s+/g, ' ')
    assert.match(await text(seeded.pastDue), /Past due .*\$12\.50 for the renewal of .*: 3 failed attempts, the last on .*: The card was declined\. No retries left\./)
    assert.match(await text(seeded.several), /Payment failed .*2 failed attempts, .*Next retry .*(CET|CEST|GMT\+1|GMT\+2)/)
    assert.match(await text(seeded.retryMe), /1 failed attempt, /)
    for (const id of [seeded.pastDue, seeded.several, seeded.retryMe]) {
      assert.equal(await row(id).getByRole('button', { name: 'Retry now' }).count(), 1)
      assert.equal(await row(id).getByRole('button', { name: 'Send update-card link' }).count(), 1)
    }
    await screenshot(t, 'recovery-attention')
  })

  test('"Send update-card link" beside a row emails a link that signs the subscriber in once, on the payment page of that subscription', async () => {
    await row(seeded.several).getByRole('button', { name: 'Send update-card link' }).click()
    await dialog().getByRole('heading', { name: `Email ${seeded.emails.sam} a link to update their card?` }).waitFor()
    await dialog().getByRole('button', { name: 'Send the link' }).click()
    await notice().filter({ hasText: `The email to ${seeded.emails.sam} is on its way` }).waitFor()
    const message = await sink.waitForMessage(seeded.emails.sam!, 15_000)
    assert.match(String(message.parsed.subject), /Update your payment method for Kettle & Leaf/)
    const link = [...String(message.parsed.text).matchAll(/https?:\/\/\S+\/portal\/login\?\S+/g)].map((m) => new URL(m[0])).find((url) => url.searchParams.get('action') === 'payment-instrument')
    assert.ok(link, String(message.parsed.text))
    assert.equal(link.searchParams.get('subscription'), seeded.several)

    const portal = await context.newPage()
    try {
      await portal.goto(link.toString())
      await portal.getByRole('button', { name: 'Sign in' }).click()
      await portal.waitForURL((url) => url.pathname.endsWith(`/subscriptions/${seeded.several}`) && url.searchParams.get('action') === 'payment-instrument')
      await portal.locator('details[open] summary', { hasText: 'Change payment method' }).waitFor()
      // Used once: the same link again is refused.
      await portal.evaluate('sessionStorage.clear()')
      await portal.goto(link.toString())
      await portal.getByRole('button', { name: 'Sign in' }).click()
      await portal.getByRole('alert').filter({ hasText: /not valid|used|expired/i }).waitFor()
    } finally {
      await portal.close()
    }
    const logged = await admin<{ data: { template: string; subscription_id: string }[] }>('GET', `/notifications?subscription_id=${seeded.several}`)
    assert.deepEqual(logged.data.map((n) => n.template), ['payment_update_link'])
  })

  test('"Retry now" beside a row charges the failed renewal at once: the subscription recovers and its row goes', async () => {
    await page.goto(`${server.origin}/console/attention`)
    await row(seeded.retryMe).getByRole('button', { name: 'Retry now' }).click()
    await dialog().getByRole('heading', { name: 'Retry the failed payment now?' }).waitFor()
    assert.match(await dialog().innerText(), /\$12\.50 for the renewal of/)
    await dialog().getByRole('button', { name: 'Retry now' }).click()
    await notice().filter({ hasText: `Paid: $12.50 was charged and the subscription of ${seeded.emails.eve} is active.` }).waitFor()
    await row(seeded.retryMe).waitFor({ state: 'detached' })
    assert.deepEqual(await linkedSubscriptions(), [seeded.pastDue, seeded.several])
    const charges = await admin<{ data: { status: string; attempt: number }[] }>('GET', `/charges?subscription_id=${seeded.retryMe}`)
    assert.deepEqual(charges.data.map((c) => [c.status, c.attempt]), [['succeeded', 2], ['failed', 1]], 'one retry, paid once')
    const after = await admin<{ status: string; next_charge_at: string }>('GET', `/subscriptions/${seeded.retryMe}`)
    assert.equal(after.status, 'active')
  })

  test('a subscription page shows "Payment recovery" while a payment is owed; "Change card" retries with the new card and recovers it', async (t) => {
    const recovery = page.locator('section[aria-label="Payment recovery"]')
    // In dunning: what failed, the next retry, the three ways out; Order now says it is not for it, and where to go instead.
    await page.goto(`${server.origin}/console/subscriptions/${seeded.several}`)
    await recovery.waitFor()
    const said = (await recovery.innerText()).replace(/\s+/g, ' ')
    assert.match(said, /The renewal payment failed and is retried on the store’s schedule/)
    assert.match(said, /Failed attempts 2 Next retry .*(CET|CEST|GMT\+1|GMT\+2)/)
    for (const name of ['Retry now', 'Send update-card link', 'Change card']) assert.equal(await recovery.getByRole('button', { name }).count(), 1, name)
    assert.match(await page.locator('[data-order-now="dunning"]').innerText(), /Use Payment recovery above: Retry now, Send update-card link or Change card/)
    assert.equal(await page.getByRole('button', { name: 'Charge the renewal now' }).count(), 0)
    await screenshot(t, 'recovery-subscription')

    // Past due: Change card (a test store: any instrument id) retries the failed renewal with it.
    await page.goto(`${server.origin}/console/subscriptions/${seeded.pastDue}`)
    await recovery.waitFor()
    assert.match((await recovery.innerText()).replace(/\s+/g, ' '), /Every retry failed: the subscription is past due.*Failed attempts 3/)
    await recovery.getByLabel('Payment instrument id').fill('pi_mastercard_ok')
    await recovery.getByRole('button', { name: 'Change card' }).click()
    await dialog().getByRole('heading', { name: 'Charge another card from now on?' }).waitFor()
    await dialog().getByRole('button', { name: 'Change card' }).click()
    await notice().filter({ hasText: 'The card is changed to pi_mastercard_ok. The failed payment is retried with it now.' }).waitFor()
    let status = ''
    for (let tries = 0; tries < 100 && status !== 'active'; tries++) {
      status = (await admin<{ status: string }>('GET', `/subscriptions/${seeded.pastDue}`)).status
      // wall clock: the server's worker charges the retry the new card made due; polled, with a deadline.
      if (status !== 'active') await new Promise((resolve) => setTimeout(resolve, 100))
    }
    assert.equal(status, 'active', 'the retry with the new card paid')
    await page.reload()
    await heading().filter({ hasText: 'Subscription of' }).waitFor()
    await page.locator('section[aria-label="Charges"] tbody tr').first().waitFor()
    assert.equal(await page.locator('section[aria-label="Payment recovery"]').count(), 0, 'nothing owed: no recovery section')
    assert.equal(await page.getByRole('button', { name: 'Change card' }).count(), 1, 'the card can still be changed, under Actions')
  })

  test('a read-only key sees what needs attention but is offered no action', async () => {
    const { key } = await admin<{ key: string }>('POST', '/api-keys', { name: 'read-only desk', scope: 'read_only' })
    const tab = await (await signedIn(key)).newPage()
    try {
      await tab.goto(`${server.origin}/console/attention`)
      await tab.locator('.attention-list').waitFor()
      assert.equal(await tab.locator('.attention-item').count(), 1)
      assert.equal(await tab.getByRole('button', { name: /Retry now|Send update-card link/ }).count(), 0)
      await tab.goto(`${server.origin}/console/subscriptions/${seeded.several}`)
      await tab.locator('section[aria-label="Payment recovery"]').waitFor()
      assert.equal(await tab.locator('section[aria-label="Payment recovery"]').getByRole('button').count(), 0)
    } finally {
      await tab.context().close()
    }
  })

  test('no request left the service origin; no script errors', () => {
    assert.deepEqual(foreignRequests, [])
    assert.deepEqual(pageProblems, [])
  })
})
