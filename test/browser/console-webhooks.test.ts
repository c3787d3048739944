import assert from 'node:assert/strict'
import { after, before, describe, test, type TestContext } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { adminClient, buildWebForTest, launchBrowser, screenshotAtWidths, serverDatabase, skipWithoutChromium, watchPage } from '../helpers/browser.ts'
import { startServer, type RunningServer } from '../helpers/server-process.ts'
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts'

/**
 * Webhook health and the delivery inspector in the console (issue 26), against the real service
 * process and its own dispatcher: one endpoint that answers 200 and one that answers 500 to every one
 * of 15 deliveries (30 attempts: each is retried once a second later, then waits an hour). Health
 * read "No deliveries yet" for such an endpoint (it counted settled deliveries, and these are all still
 * being retried); it now shows the service's figures. "View" opens a delivery's request as sent and
 * its answer. Screenshots at 1440 and 390 px go to test-results/console-webhooks/ (and docs/screenshots/
 * with UPDATE_SCREENSHOTS=1).
 */

const STORE_HASH = 'consolewebhooks'
const ADMIN_KEY = 'sk_test_console_webhooks_0123456789abcdef'
// With the refunded subscription's, 16 deliveries to each endpoint: 32 attempts at the failing one.
const SUBSCRIPTIONS = 15
const REFUSAL = '{"error":"database is down","retry":true}'

describe('console: webhook health and the delivery inspector', { skip: skipWithoutChromium, timeout: 120_000 }, () => {
  let web: Awaited<ReturnType<typeof buildWebForTest>>
  let server: RunningServer
  let database: Awaited<ReturnType<typeof serverDatabase>> | undefined
  let healthyInbox: WebhookReceiver
  let failingInbox: WebhookReceiver
  let browser: Browser
  let page: Page
  let refunded: { subscription: string; email: string }
  let failing: { id: string; secret: string }
  let healthy: { id: string; secret: string }
  const pageProblems: string[] = []
  const foreignRequests: string[] = []
  const admin = adminClient(() => server.origin, ADMIN_KEY)

  before(async () => {
    ;[web, healthyInbox, failingInbox] = await Promise.all([buildWebForTest(), startWebhookReceiver(() => ({ status: 200, body: 'ok' })), startWebhookReceiver(() => ({ status: 500, body: REFUSAL }))])
    database = await serverDatabase('sb-console-webhooks-')
    const databaseEnv = database.env
    ;[server, browser] = await Promise.all([
      startServer({
        ...databaseEnv,
        WEB_DIST_DIR: web.dir,
        SEED_DEMO_DATA: 'false',
        BOOTSTRAP_STORE_HASH: STORE_HASH,
        BOOTSTRAP_ADMIN_API_KEY: ADMIN_KEY,
        // A failed delivery is retried a second later, then an hour later: still pending when the test looks.
        WEBHOOK_RETRY_SCHEDULE: '1s,1h',
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        LOG_LEVEL: 'error',
      }),
      launchBrowser(),
    ])
    await admin('PATCH', '/store', { name: 'Webhook Roasters', timezone: 'Europe/Berlin' })
    healthy = await admin('POST', '/webhook-subscriptions', { url: healthyInbox.url, event_types: ['subscription.created'], description: 'Fulfilment' })
    failing = await admin('POST', '/webhook-subscriptions', { url: failingInbox.url, event_types: ['subscription.created'], description: 'Accounting' })
    const product = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'beans', name: 'House Blend' })
    const plan = await admin<{ id: string }>('POST', '/plans', { product_id: product.id, currency: 'USD', name: 'Monthly bag', amount: 1800, interval: 'month' })
    await Promise.all(
      Array.from({ length: SUBSCRIPTIONS }, (_, i) =>
        admin('POST', '/checkouts', {
          platform_order_id: `order-${5000 + i}`,
          email: `buyer${i}@example.com`,
          shipping_address: { name: `Buyer ${i}`, line1: '1 Main St', city: 'Portland', state: 'OR', postal_code: '97201', country: 'US' },
          payment_instrument_id: 'pi_visa_ok',
          items: [{ plan_id: plan.id, quantity: 1 }],
        }),
      ),
    )
    // A subscription whose renewal was refunded twice, each time with a reason.
    const [sub] = (await admin<{ data: { id: string }[] }>('POST', '/checkouts', {
      platform_order_id: 'order-6000', email: 'ada@example.com', name: 'Ada Lovelace',
      shipping_address: { name: 'Ada Lovelace', line1: '1 Main St', city: 'Portland', state: 'OR', postal_code: '97201', country: 'US' },
      payment_instrument_id: 'pi_visa_ok', items: [{ plan_id: plan.id, quantity: 1 }],
    })).data
    await admin('POST', `/subscriptions/${sub!.id}/charge-now`)
    const charge = (await admin<{ data: { id: string }[] }>('GET', `/charges?subscription_id=${sub!.id}`)).data[0]!
    await admin('POST', `/charges/${charge.id}/refund`, { amount: 500, reason: 'Bag arrived torn' })
    await admin('POST', `/charges/${charge.id}/refund`, { reason: 'Moved away' })
    refunded = { subscription: sub!.id, email: 'ada@example.com' }
    // Every delivery tried twice at the failing endpoint, once at the healthy one; then every attempt recorded.
    await failingInbox.waitFor(2 * (SUBSCRIPTIONS + 1), 20_000)
    await healthyInbox.waitFor(SUBSCRIPTIONS + 1, 20_000)
    for (let tries = 0; ; tries++) {
      const [sick, fine] = await Promise.all([admin<{ attempts: number }>('GET', `/webhook-subscriptions/${failing.id}/health`), admin<{ attempts: number }>('GET', `/webhook-subscriptions/${healthy.id}/health`)])
      if (sick.attempts === 2 * (SUBSCRIPTIONS + 1) && fine.attempts === SUBSCRIPTIONS + 1) break
      assert.ok(tries < 100, `attempts not recorded: ${sick.attempts} and ${fine.attempts}`)
      // wall clock: the server is a separate process that records its attempts on its own; polled, with a deadline.
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US', timezoneId: 'America/Los_Angeles' })
    page = await context.newPage()
    watchPage(page, () => server.origin, { foreignRequests, pageProblems })
    await page.goto(`${server.origin}/console`)
    await page.getByLabel('Admin API key').fill(ADMIN_KEY)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
  })

  after(async () => {
    await browser?.close()
    await server?.stop()
    await healthyInbox?.close()
    await failingInbox?.close()
    await database?.remove()
    web?.cleanup()
  })

  const screenshot = (t: TestContext, name: string) => screenshotAtWidths(page, t, 'console-webhooks', name)

  test('the endpoints list shows each endpoint\'s health from its attempts: the failing one 0% of 32 and failing now (it read "No deliveries yet"), the healthy one 100% of 16', async (t) => {
    await page.goto(`${server.origin}/console/webhooks`)
    await page.locator(`[data-health="${failing.id}"]`).waitFor()
    const sick = await page.locator(`[data-health="${failing.id}"]`).innerText()
    assert.doesNotMatch(sick, /No deliveries yet/)
    assert.match(sick, /Failing/)
    assert.match(sick, /0% delivered: 0 of 32 attempts in the last 24 h/)
    assert.match(sick, /The last 32 attempts failed; next retry in \d+ minutes\./)
    const fine = await page.locator(`[data-health="${healthy.id}"]`).innerText()
    assert.match(fine, /100% delivered: 16 of 16 attempts in the last 24 h/)
    assert.doesNotMatch(fine, /Failing|failed/)
    await screenshot(t, 'list')
  })

  test('an endpoint\'s page: its health, a deliveries table; "View" opens the inspector with the request headers and body as sent and the answer, never the secret', async (t) => {
    await page.getByRole('link', { name: failingInbox.url }).click()
    await page.getByRole('heading', { level: 1, name: failingInbox.url }).waitFor()
    const health = await page.locator('section[aria-label="Health"]').innerText()
    assert.match(health, /0% delivered: 0 of 32 attempts succeeded, 32 failed/)
    assert.match(health, /Failing now\s+Yes: the last 32 attempts failed/)
    assert.match(health, /Last failure\s+.*HTTP 500/)
    assert.match(health, /Waiting\s+16 deliveries; next retry in \d+ minutes \(real time\)/)

    const rows = page.locator('section[aria-label="Recent deliveries"] tbody tr')
    assert.equal(await rows.count(), 16)
    const deliveries = await admin<{ data: { id: string; event_id: string }[] }>('GET', `/webhook-subscriptions/${failing.id}/deliveries?limit=1`)
    const newest = deliveries.data[0]!
    await rows.first().getByRole('link', { name: 'View' }).click()
    const inspector = page.locator('#delivery-inspector')
    await inspector.waitFor()
    assert.match(page.url(), new RegExp(`delivery=${newest.id}`))
    assert.equal(await page.evaluate<string | undefined>('document.activeElement?.textContent'), 'Delivery of subscription.created', 'the inspector takes the focus')
    const text = await inspector.innerText()
    const sent = failingInbox.withId(newest.event_id)
    assert.equal(sent.length, 2)
    const latest = sent.at(-1)!
    for (const name of ['content-type', 'user-agent', 'webhook-id', 'webhook-timestamp', 'webhook-signature']) {
      assert.ok(text.includes(`${name}: ${latest.headers[name]}`), `${name} as sent`)
    }
    // The earlier attempt is folded away (a closed <details>), its headers there all the same.
    assert.ok((await inspector.textContent())!.includes(`webhook-signature: ${sent[0]!.headers['webhook-signature']}`), 'the earlier attempt\'s signature too')
    assert.equal(await inspector.locator('[data-request-body]').innerText(), latest.body, 'the body as sent')
    assert.match(text, /Status 500/)
    assert.equal(await inspector.locator('[data-response-body]').first().innerText(), REFUSAL)
    assert.match(text, /Attempts, newest first \(2\)/)
    const whole = await page.locator('body').innerText()
    assert.ok(!whole.includes(failing.secret.slice('whsec_'.length)), 'the signing secret is nowhere on the page')
    await screenshot(t, 'inspector')

    await inspector.getByRole('link', { name: 'Close the inspector' }).click()
    await inspector.waitFor({ state: 'detached' })
    assert.deepEqual(pageProblems, [])
    assert.deepEqual(foreignRequests, [])
  })

  test('a charge refunded in two parts reads "Refunded", not "Succeeded"; the timeline shows each refund with its amount, reason and time', async (t) => {
    await page.goto(`${server.origin}/console/subscriptions/${refunded.subscription}`)
    await page.getByRole('heading', { level: 1, name: `Subscription of ${refunded.email}` }).waitFor()
    const charges = await page.locator('section[aria-label="Charges"] tbody').innerText()
    assert.match(charges, /Refunded/)
    assert.doesNotMatch(charges, /Succeeded/)
    assert.match(charges, /\$18\.00, \$18\.00 refunded/)
    const refunds = page.locator('section[aria-label="Timeline"] li[data-refund]')
    await refunds.first().waitFor()
    assert.equal(await refunds.count(), 2)
    const [latest, earlier] = await refunds.allInnerTexts()
    assert.match(latest!, /Charge refunded( by [^:]+)?: \$13\.00 of the \$18\.00 charge of .* \(reason: Moved away\); now refunded in full\./)
    assert.match(earlier!, /Charge refunded( by [^:]+)?: \$5\.00 of the \$18\.00 charge of .* \(reason: Bag arrived torn\); \$5\.00 refunded in all\./)
    assert.match(earlier!, /GMT\+1|CET/, 'when, in the store\'s zone')
    await screenshot(t, 'refunded-subscription')
    assert.deepEqual(pageProblems, [])
  })
})
