import assert from 'node:assert/strict'
import { rmSync } from 'node:fs'
import { after, before, describe, test, type TestContext } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { SignJWT } from 'jose'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import { adminClient, buildWebForTest, launchBrowser, screenshotAtWidths, skipWithoutChromium, watchPage } from '../helpers/browser.ts'
import { createTestDatabase, onPostgres, scratchUrl } from '../helpers/database.ts'
import { startServer, type RunningServer } from '../helpers/server-process.ts'
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts'
import { newDataDir } from '../helpers/data-dir.ts'

/**
 * The merchant console end to end, in Chromium against the real service process: sign-in with an
 * admin key (a wrong one refused in words), each page on the admin API alone, every change
 * confirmed, keyboard-only use, and not one request to another origin. Screenshots of every page at
 * 1440 and 360 px go to test-results/console/ (artefacts); UPDATE_SCREENSHOTS=1 also writes them to
 * docs/screenshots/console-*.png.
 */

const STORE_HASH = 'northwindconsole'
const STORE_NAME = 'Northwind Coffee Roasters'
const ADMIN_KEY = 'sk_test_console_browser_0123456789abcdef'
const ADA = 'ada@example.com'
const GRACE = 'grace@example.com'
const CLIENT_ID = 'console-browser-client'
const CLIENT_SECRET = 'console-browser-client-secret-0123456789'
const ADDRESS = { name: 'Ada Lovelace', line1: '12 Analytical Way', city: 'Portland', state: 'OR', postal_code: '97201', country: 'US' }

interface Seeded {
  coffee: string
  tea: string
  grace: string
  review: string
  monthly: string
  fortnightly: string
}

describe('merchant console in a real browser', { skip: skipWithoutChromium, timeout: 240_000 }, () => {
  let web: Awaited<ReturnType<typeof buildWebForTest>>
  let server: RunningServer
  let receiver: WebhookReceiver
  let handle: DatabaseHandle | undefined
  let dataDir: string | undefined
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let seeded: Seeded
  const foreignRequests: string[] = []
  const pageProblems: string[] = []

  const admin = adminClient(() => server.origin, ADMIN_KEY)

  async function seed(): Promise<Seeded> {
    await admin('PATCH', '/store', { name: STORE_NAME, timezone: 'Europe/Berlin' })
    const beans = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'house-beans', name: 'House Blend Coffee Beans' })
    const tea = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'darjeeling', name: 'Darjeeling Tea' })
    const plan = (product: string, body: Record<string, unknown>) => admin<{ id: string }>('POST', '/plans', { product_id: product, currency: 'USD', ...body })
    const monthly = await plan(beans.id, { name: 'Monthly bag', amount: 1800, interval: 'month' })
    const fortnightly = await plan(beans.id, { name: 'Fortnightly bag', amount: 1000, interval: 'week', interval_count: 2 })
    const teaPlan = await plan(tea.id, { name: 'Tin every month', amount: 1250, interval: 'month' })
    await admin('POST', '/products', { platform_product_id: 'gift-wrap', name: 'Gift wrap', one_time_price: { amount: 350, currency: 'USD' } })
    const mug = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'mug', name: 'Enamel Mug', one_time_price: { amount: 1200, currency: 'USD' } })
    const checkout = async (order: string, email: string, instrument: string, planId: string, quantity = 1) => {
      const result = await admin<{ data: { id: string; next_charge_at: string }[] }>('POST', '/checkouts', {
        platform_order_id: order,
        email,
        name: email === ADA ? 'Ada Lovelace' : 'Grace Hopper',
        shipping_address: email === ADA ? ADDRESS : { ...ADDRESS, name: 'Grace Hopper' },
        payment_instrument_id: instrument,
        items: [{ plan_id: planId, quantity }],
      })
      return result.data[0]!
    }
    const coffee = await checkout('order-1001', ADA, 'pi_visa_ok', monthly.id, 2)
    const teaSub = await checkout('order-1002', ADA, 'pi_visa_declined', teaPlan.id)
    const graceSub = await checkout('order-2001', GRACE, 'pi_visa_ok', teaPlan.id)
    const review = await checkout('order-3001', 'linus@example.com', 'pi_visa_unknown', monthly.id)
    // A month on: the coffee renews, the tea's card is declined (dunning), the unknown one stays pending.
    const due = Math.max(...[coffee, teaSub, review].map((s) => Date.parse(s.next_charge_at)))
    await admin('POST', '/test-clock/advance', { to: new Date(due + 3_600_000).toISOString() })
    // For the next renewal by hand: 2 x $18.00 with 20% off and a $12.00 mug is $36.00 - $7.20 + $12.00 = $40.80.
    await admin('POST', '/discounts', { code: 'SAVE20', type: 'percentage', value: 20, duration: 'forever' })
    await admin('POST', `/subscriptions/${coffee.id}/discount`, { code: 'SAVE20' })
    await admin('POST', `/subscriptions/${coffee.id}/onetimes`, { product_id: mug.id, quantity: 1 })
    return { coffee: coffee.id, tea: teaSub.id, grace: graceSub.id, review: review.id, monthly: monthly.id, fortnightly: fortnightly.id }
  }

  before(async () => {
    web = await buildWebForTest()
    receiver = await startWebhookReceiver()
    let databaseEnv: Record<string, string>
    if (onPostgres) {
      handle = await createTestDatabase()
      databaseEnv = { DATABASE_URL: scratchUrl(handle)! }
    } else {
      dataDir = await newDataDir('sb-console-')
      databaseEnv = { DATA_DIR: dataDir }
    }
    server = await startServer({
      ...databaseEnv,
      WEB_DIST_DIR: web.dir,
      SEED_DEMO_DATA: 'false',
      BOOTSTRAP_STORE_HASH: STORE_HASH,
      BOOTSTRAP_ADMIN_API_KEY: ADMIN_KEY,
      // An unknown gateway answer goes to review after a second; a failed delivery gives up after one retry.
      BILLING_UNKNOWN_GRACE_MS: '1000',
      WEBHOOK_RETRY_SCHEDULE: '1s',
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      // The BigCommerce app's load callback signs the merchant into the console.
      PLATFORM_CLIENT_ID: CLIENT_ID,
      PLATFORM_CLIENT_SECRET: CLIENT_SECRET,
      LOG_LEVEL: 'error',
    })
    seeded = await seed()
    browser = await launchBrowser()
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US', timezoneId: 'America/Los_Angeles' })
    page = await context.newPage()
    watchPage(page, () => server.origin, { foreignRequests, pageProblems })
  })

  after(async () => {
    await browser?.close()
    await server?.stop()
    await receiver?.close()
    await handle?.close()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
    web?.cleanup()
  })

  const heading = () => page.getByRole('heading', { level: 1 })
  const notice = () => page.locator('#notice')
  const dialog = () => page.getByRole('dialog')
  const focused = () => page.evaluate<string | undefined>('document.activeElement?.textContent?.trim()')
  const focusedTag = () => page.evaluate<string>('document.activeElement.tagName')

  const screenshot = (t: TestContext, name: string) => screenshotAtWidths(page, t, 'console', name, { widths: [1440, 360] })

  test('served at /console with a strict CSP; a wrong key is refused with a message; the right key signs in, kept in sessionStorage only', async (t) => {
    const response = await fetch(`${server.origin}/console/subscriptions`)
    assert.equal(response.status, 200)
    const csp = response.headers.get('content-security-policy') ?? ''
    assert.match(csp, /default-src 'none'/)
    assert.match(csp, /script-src 'self'(;|$)/)
    assert.doesNotMatch(await response.text(), /<script>(?!<\/script>)/, 'no inline script')

    await page.goto(`${server.origin}/console`)
    await heading().filter({ hasText: 'Sign in' }).waitFor()
    await screenshot(t, 'sign-in')
    await page.getByLabel('Admin API key').fill('sk_test_not_a_real_key_00000000000000')
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('alert').filter({ hasText: 'That key was refused' }).waitFor()
    assert.equal(await page.evaluate<number>('sessionStorage.length'), 0, 'a refused key is not kept')

    await page.getByLabel('Admin API key').fill(ADMIN_KEY)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await heading().filter({ hasText: 'Overview' }).waitFor()
    await notice().filter({ hasText: `Signed in to ${STORE_NAME}` }).waitFor()
    assert.equal(await page.locator('#store-name').textContent(), STORE_NAME)
    assert.equal(await page.evaluate<string | null>("JSON.parse(sessionStorage.getItem('console.session')).token"), ADMIN_KEY)
    assert.equal(await page.evaluate<number>('localStorage.length'), 0)
    assert.equal(await page.evaluate<string>('document.cookie'), '')
  })

  test("overview: the figures match the analytics route for the seeded store, each with a 90-day chart", async (t) => {
    await heading().filter({ hasText: 'Overview' }).waitFor()
    await page.locator('[data-figure="mrr"]').waitFor()
    const summary = await admin<{ currencies: { currency: string; mrr: number; active_subscriptions: number; new_subscriptions: number; churned_subscriptions: number; revenue: number }[] }>('GET', '/analytics/summary')
    const usd = summary.currencies.find((c) => c.currency === 'USD')!
    const money = (minor: number) => new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD' }).format(minor / 100)
    const figure = (id: string) => page.locator(`[data-figure="${id}"]`).innerText()
    assert.ok(usd.mrr > 0 && usd.revenue > 0, 'the seeded store has MRR and revenue')
    assert.equal(await figure('mrr'), money(usd.mrr))
    assert.equal(await figure('active'), String(usd.active_subscriptions))
    assert.equal(await figure('new'), String(usd.new_subscriptions))
    assert.equal(await figure('churned'), String(usd.churned_subscriptions))
    assert.equal(await figure('revenue'), money(usd.revenue))
    const series = await admin<{ points: { date: string }[] }>('GET', '/analytics/timeseries')
    assert.equal(series.points.length, 90)
    assert.equal(await page.locator('.card canvas').count(), 7, 'one chart per figure')
    assert.match((await page.locator('.card .chart').first().getAttribute('aria-label'))!, /daily from .* to .*: lowest .* highest .* latest/)
    await screenshot(t, 'overview')
  })

  test('navigation moves the focus to the heading; the current section is marked', async () => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Subscriptions' }).click()
    await heading().filter({ hasText: 'Subscriptions' }).waitFor()
    assert.equal(await focusedTag(), 'H1')
    assert.equal(await page.getByRole('link', { name: 'Subscriptions' }).getAttribute('aria-current'), 'page')
    await page.locator('.results table').waitFor()
  })

  test('subscriptions: find one by email, filter by status, open it; money in the store currency, dates in the store time zone', async (t) => {
    await page.goto(`${server.origin}/console/subscriptions`)
    await page.locator('.results table').waitFor()
    await screenshot(t, 'subscriptions')
    await page.getByLabel('Email, name, order number or id').fill(ADA)
    await page.getByRole('button', { name: 'Search' }).click()
    await notice().filter({ hasText: '2 subscriptions shown' }).waitFor()
    assert.match(page.url(), /q=ada%40example\.com/)
    await page.getByLabel('Status').selectOption('past_due')
    await page.getByRole('button', { name: 'Search' }).click()
    await notice().filter({ hasText: /No subscriptions match|1 subscription shown/ }).waitFor()
    await page.getByLabel('Status').selectOption('')
    await page.getByRole('button', { name: 'Search' }).click()
    await notice().filter({ hasText: '2 subscriptions shown' }).waitFor()
    const rows = await page.locator('.results tbody tr').allInnerTexts()
    const coffeeRow = rows.find((row) => row.includes(seeded.coffee))!
    assert.match(coffeeRow, /2 × \$18\.00/)
    await page.getByLabel('Email, name, order number or id').fill(seeded.coffee)
    await page.getByRole('button', { name: 'Search' }).click()
    await notice().filter({ hasText: '1 subscription shown' }).waitFor()
    // The plan opens the subscription (the subscriber's name opens their page).
    await page.locator('.results tbody td a').first().click()
    await heading().filter({ hasText: `Subscription of ${ADA}` }).waitFor()
    assert.equal(await focusedTag(), 'H1')
    const details = await page.locator('section[aria-label="Details"]').innerText()
    assert.match(details, /Monthly bag/)
    assert.match(details, /GMT\+1|GMT\+2|CET|CEST/, 'times are shown in the store time zone (Europe/Berlin), not the browser\'s')
    // The next renewal is the service's preview (GET .../upcoming), shown as it is: 2 x $18.00 - 20% + a $12.00 mug.
    const upcoming = await admin<{ subtotal: number; discount_amount: number; amount: number }>('GET', `/subscriptions/${seeded.coffee}/upcoming`)
    assert.deepEqual([upcoming.subtotal, upcoming.discount_amount, upcoming.amount], [4800, 720, 4080])
    assert.equal(await page.locator('[data-figure="upcoming-amount"]').innerText(), '$40.80')
    assert.match(details, /Next charge\s+\$40\.80 on /)
    const renewal = (await page.locator('section[aria-label="Next order"]').innerText()).replace(/\s+/g, ' ')
    assert.match(renewal, /House Blend Coffee Beans, 2 × \$18\.00 \$36\.00/)
    assert.match(renewal, /Enamel Mug, 1 × \$12\.00 \(add-on, once\) \$12\.00/)
    assert.match(renewal, /Subtotal \$48\.00 Discount SAVE20 − \$7\.20 Shipping \$0\.00 Tax \$0\.00 Total \$40\.80/)
    await page.locator('section[aria-label="Timeline"] li').first().waitFor()
    await screenshot(t, 'subscription')
  })

  test('subscription detail: pause (confirmed), then subscription.paused shows in its timeline; a refusal shows in words', async () => {
    await page.goto(`${server.origin}/console/subscriptions?q=${encodeURIComponent(ADA)}`)
    await page.locator('.results tbody a').first().waitFor()
    await page.locator('.results tbody tr', { hasText: seeded.coffee }).locator('td a').click()
    await heading().filter({ hasText: `Subscription of ${ADA}` }).waitFor()
    await page.getByRole('button', { name: 'Pause', exact: true }).click()
    await dialog().getByRole('heading', { name: 'Pause this subscription?' }).waitFor()
    await dialog().getByRole('button', { name: 'Pause' }).click()
    await notice().filter({ hasText: 'Paused' }).waitFor()
    await page.locator('section[aria-label="Timeline"]').getByText('subscription.paused').waitFor()
    assert.equal((await admin<{ status: string }>('GET', `/subscriptions/${seeded.coffee}`)).status, 'paused')

    // Going back from the dialog changes nothing.
    await page.getByRole('button', { name: 'Resume' }).click()
    await dialog().getByRole('button', { name: 'Go back' }).click()
    assert.equal((await admin<{ status: string }>('GET', `/subscriptions/${seeded.coffee}`)).status, 'paused')

    // The API refuses a quantity change on a cancelled subscription: the page says why, in words.
    await page.goto(`${server.origin}/console/subscriptions/${seeded.grace}`)
    await heading().filter({ hasText: `Subscription of ${GRACE}` }).waitFor()
    await admin('POST', `/subscriptions/${seeded.grace}/cancel`, { reason: 'moved away' })
    await page.getByLabel('New quantity').fill('3')
    await page.getByRole('button', { name: 'Change quantity' }).click()
    await dialog().getByRole('button', { name: 'Change quantity' }).click()
    const refusal = page.locator('.action-form [role="alert"]')
    await refusal.waitFor()
    assert.ok((await refusal.innerText()).length > 10, `the refusal is in words: ${await refusal.innerText()}`)
    await notice().filter({ hasText: 'Refused' }).waitFor()
  })

  test('needs attention: a charge the gateway never answered is resolved as paid; dunning and past due listed', async (t) => {
    // The unknown outcome turns into requires_review after the grace period (1 s here) at the next look.
    let reviewCharge: { id: string } | undefined
    for (let tries = 0; tries < 300 && !reviewCharge; tries++) {
      reviewCharge = (await admin<{ data: { id: string }[] }>('GET', `/charges?status=requires_review&subscription_id=${seeded.review}`)).data[0]
      // wall clock: the server is a separate process: its reconciler hands the charge to review after its own 1 s grace; polled, with a deadline.
      if (!reviewCharge) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    assert.ok(reviewCharge, 'the unknown charge went to review')
    await page.goto(`${server.origin}/console/attention`)
    await heading().filter({ hasText: 'Needs attention' }).waitFor()
    // One row per subscription (test/browser/console-recovery.test.ts has the whole of it).
    const reviewRow = page.locator(`.attention-item[data-subscription="${seeded.review}"]`)
    await reviewRow.waitFor()
    assert.equal(await reviewRow.getAttribute('data-reason'), 'charge_requires_review')
    const dunning = page.locator(`.attention-item[data-subscription="${seeded.tea}"]`)
    assert.equal(await dunning.getAttribute('data-reason'), 'dunning', 'the declined tea is in dunning with its next retry')
    assert.match(await dunning.innerText(), /Next retry/)
    await screenshot(t, 'attention')
    await reviewRow.getByRole('button', { name: 'Resolve as paid' }).click()
    await dialog().getByRole('heading', { name: 'Mark this charge as paid?' }).waitFor()
    await dialog().getByRole('button', { name: 'Mark as paid' }).click()
    await notice().filter({ hasText: 'The charge is now succeeded' }).waitFor()
    assert.equal((await admin<{ status: string }>('GET', `/charges/${reviewCharge.id}`)).status, 'succeeded')
    await reviewRow.waitFor({ state: 'detached' })
  })

  test('webhooks: add an endpoint (secret shown once), a failed delivery is replayed to the receiver, test ping, rotate', async (t) => {
    receiver.respond(() => ({ status: 500 }))
    await page.goto(`${server.origin}/console/webhooks`)
    await heading().filter({ hasText: 'Webhooks' }).waitFor()
    await page.getByLabel('Endpoint URL').fill(receiver.url)
    await page.getByRole('button', { name: 'Add endpoint' }).click()
    await dialog().getByRole('button', { name: 'Add endpoint' }).click()
    await notice().filter({ hasText: 'Endpoint added' }).waitFor()
    const secret = await page.locator('.secret').innerText()
    assert.match(secret, /^whsec_/)
    const endpoint = (await admin<{ data: { id: string }[] }>('GET', '/webhook-subscriptions')).data[0]!

    // An event the receiver refuses twice (first try and the one retry): the delivery is failed.
    await admin('POST', `/subscriptions/${seeded.tea}/skip`)
    let failed: { event_id: string } | undefined
    for (let tries = 0; tries < 150 && !failed; tries++) {
      failed = (await admin<{ data: { event_id: string }[] }>('GET', `/webhook-subscriptions/${endpoint.id}/deliveries?status=failed`)).data[0]
      // wall clock: the server is a separate process whose dispatcher retries on its own clock; polled, with a deadline.
      if (!failed) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    assert.ok(failed, 'the delivery failed')
    receiver.respond(() => ({ status: 200 }))
    const before = receiver.withId(failed.event_id).length

    await page.goto(`${server.origin}/console/webhooks`)
    await page.getByRole('link', { name: receiver.url }).click()
    await heading().filter({ hasText: receiver.url }).waitFor()
    assert.equal(await focusedTag(), 'H1')
    assert.match(await page.locator('section[aria-label="Health"]').innerText(), /0% delivered/)
    await page.locator('section[aria-label="Recent deliveries"] tbody tr').first().waitFor()
    await screenshot(t, 'webhook')
    await page.getByRole('button', { name: 'Replay failures' }).click()
    await dialog().getByRole('button', { name: 'Replay' }).click()
    await notice().filter({ hasText: '1 failed delivery is being sent again' }).waitFor()
    await receiver.waitFor((requests) => requests.filter((r) => r.headers['webhook-id'] === failed!.event_id).length > before, 15_000)
    assert.equal(receiver.withId(failed.event_id).at(-1)!.answered, 200)
    receiver.verifyAll([secret])

    await page.getByRole('button', { name: 'Send a test ping' }).click()
    await dialog().getByRole('button', { name: 'Send ping' }).click()
    await notice().filter({ hasText: 'webhook.test event is on its way' }).waitFor()
    await receiver.waitFor((requests) => requests.some((r) => r.body.includes('"webhook.test"')), 15_000)

    await page.getByRole('button', { name: 'Rotate the secret' }).click()
    await dialog().getByRole('button', { name: 'Rotate secret' }).click()
    await notice().filter({ hasText: 'Secret rotated' }).waitFor()
    const rotated = await page.locator('.secret').innerText()
    assert.match(rotated, /^whsec_/)
    assert.notEqual(rotated, secret)

    await page.goto(`${server.origin}/console/webhooks`)
    await page.locator('section tbody tr').first().waitFor()
    await screenshot(t, 'webhooks')
  })

  test('catalogue: create a plan, archive it; settings: save the store settings', async (t) => {
    // A prepaid block reads per cycle and per charge with the span it pays for, as the portal says it (it read "$61.20 every month").
    await admin('POST', '/plans', { product_id: (await admin<{ data: { id: string }[] }>('GET', '/products?platform_product_id=darjeeling')).data[0]!.id, name: 'Three tins prepaid', amount: 6120, currency: 'USD', interval: 'month', prepaid_cycles: 3 })
    await page.goto(`${server.origin}/console/catalogue`)
    await heading().filter({ hasText: 'Catalogue' }).waitFor()
    await page.locator('tbody tr').first().waitFor()
    await page.locator('tbody tr', { hasText: 'Three tins prepaid' }).getByText('$20.40 a month, $61.20 every 3 months').waitFor()
    await page.getByLabel('Product', { exact: true }).selectOption({ label: 'Darjeeling Tea' })
    await page.getByLabel('Plan name').fill('Tin every week')
    await page.getByLabel('Price per charge').fill('4.50')
    await page.getByRole('button', { name: 'Create plan' }).click()
    await dialog().getByText('Tin every week: $4.50 every month.').waitFor()
    await dialog().getByRole('button', { name: 'Create plan' }).click()
    await notice().filter({ hasText: 'Plan Tin every week created.' }).waitFor()
    const row = page.locator('tbody tr', { hasText: 'Tin every week' })
    await row.getByRole('button', { name: 'Archive' }).click()
    await dialog().getByRole('button', { name: 'Archive' }).click()
    await notice().filter({ hasText: 'Tin every week is archived.' }).waitFor()
    const plans = await admin<{ data: { name: string; active: boolean; amount: number }[] }>('GET', '/plans')
    assert.deepEqual(plans.data.filter((plan) => plan.name === 'Tin every week').map((plan) => [plan.amount, plan.active]), [[450, false]])
    await screenshot(t, 'catalogue')

    await page.goto(`${server.origin}/console/settings`)
    await heading().filter({ hasText: 'Settings' }).waitFor()
    await page.getByLabel('Renewal reminder (days before)').fill('5')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await dialog().getByRole('button', { name: 'Save' }).click()
    await notice().filter({ hasText: 'Settings saved.' }).waitFor()
    assert.equal((await admin<{ renewal_reminder_days: number }>('GET', '/store')).renewal_reminder_days, 5)
    // Renewals: a flat rate needs its amount (said in words), then stock retried for 4 days, tax 8.25%.
    await page.getByLabel('Shipping on renewals').selectOption('flat')
    await page.getByLabel('Flat shipping rate (USD)').fill('')
    await page.getByRole('button', { name: 'Save renewal settings' }).click()
    await page.getByText('Enter the flat shipping rate.').waitFor()
    await page.getByLabel('Flat shipping rate (USD)').fill('4.50')
    await page.getByLabel('When an item is out of stock').selectOption('retry')
    await page.getByLabel('Days to keep trying (out of stock)').fill('4')
    await page.getByLabel('Test tax rate (%)').fill('8.25')
    await page.getByRole('button', { name: 'Save renewal settings' }).click()
    await dialog().getByRole('button', { name: 'Save' }).click()
    await notice().filter({ hasText: 'Renewal settings saved.' }).waitFor()
    const renewals = await admin<{ renewal_shipping: string; renewal_shipping_amount: number; out_of_stock: string; out_of_stock_retry_days: number; test_tax_rate_bps: number }>('GET', '/store')
    assert.deepEqual([renewals.renewal_shipping, renewals.renewal_shipping_amount, renewals.out_of_stock, renewals.out_of_stock_retry_days, renewals.test_tax_rate_bps], ['flat', 450, 'retry', 4, 825])
    await screenshot(t, 'settings')
  })

  test('discounts: create one (confirmed), a taken code is refused in words, deactivate and activate, delete', async (t) => {
    await page.goto(`${server.origin}/console/discounts`)
    await heading().filter({ hasText: 'Discounts' }).waitFor()
    await page.locator('.loading').first().waitFor({ state: 'detached' })
    const create = async (code: string, value: string, duration: string, cycles?: string) => {
      await page.getByLabel('Code', { exact: true }).fill(code)
      await page.getByLabel('Percent or amount off').fill(value)
      await page.getByLabel('Duration').selectOption(duration)
      if (cycles) await page.getByLabel('Charges (a number of charges only)').fill(cycles)
      await page.getByRole('button', { name: 'Create discount' }).click()
      await dialog().getByRole('button', { name: 'Create discount' }).click()
    }
    await create('WELCOME10', '10', 'repeating', '3')
    await notice().filter({ hasText: 'Discount WELCOME10 created.' }).waitFor()
    await create('welcome10', '15', 'once')
    await page.locator('main [role="alert"]').filter({ hasText: 'The discount code welcome10 is taken in this store' }).waitFor()
    await page.getByLabel('Kind').selectOption('fixed_amount')
    await create('SPRING5', '5.00', 'once')
    await notice().filter({ hasText: 'Discount SPRING5 created.' }).waitFor()
    const row = (code: string) => page.locator('tbody tr', { hasText: code })
    assert.match(await row('WELCOME10').innerText(), /10% off, 3 charges/)
    assert.match(await row('SPRING5').innerText(), /\$5\.00 off, the next charge/)

    await row('SPRING5').getByRole('button', { name: 'Deactivate' }).click()
    await dialog().getByRole('button', { name: 'Deactivate' }).click()
    await notice().filter({ hasText: 'SPRING5 is deactivated.' }).waitFor()
    await row('SPRING5').getByRole('button', { name: 'Activate' }).click()
    await dialog().getByRole('button', { name: 'Activate' }).click()
    await notice().filter({ hasText: 'SPRING5 is active.' }).waitFor()
    await row('SPRING5').getByRole('button', { name: 'Delete' }).click()
    await dialog().getByRole('button', { name: 'Delete' }).click()
    await notice().filter({ hasText: 'SPRING5 is deleted.' }).waitFor()
    const left = await admin<{ data: { code: string }[] }>('GET', '/discounts')
    assert.deepEqual(left.data.map((d) => d.code), ['WELCOME10', 'SAVE20'])
    await screenshot(t, 'discounts')
  })

  test('settings: cancellation reasons (a bad code refused in words), retention offers, notification switches, the notifications log, admin keys created once and revoked', async (t) => {
    await page.goto(`${server.origin}/console/settings`)
    await heading().filter({ hasText: 'Settings' }).waitFor()
    // Reasons are rows: what the subscriber reads and its code.
    const reasons = page.locator('section[aria-label="Cancellation reasons"]')
    await reasons.getByRole('button', { name: 'Add a reason' }).click()
    await reasons.getByLabel('Reason 1: what the subscriber reads').fill('It costs too much')
    await reasons.getByLabel('Reason 1: code').fill('Too Expensive')
    await page.getByRole('button', { name: 'Save reasons' }).click()
    await reasons.locator('[role="alert"]').filter({ hasText: 'Reason 1: the code is lower-case letters' }).waitFor()
    await reasons.getByLabel('Reason 1: code').fill('too_expensive')
    await reasons.getByRole('button', { name: 'Add a reason' }).click()
    await reasons.getByLabel('Reason 2: what the subscriber reads').fill('I do not need it any more')
    await reasons.getByLabel('Reason 2: code').fill('not_needed')
    await page.getByRole('button', { name: 'Save reasons' }).click()
    await dialog().getByRole('button', { name: 'Save' }).click()
    await notice().filter({ hasText: 'Cancellation reasons saved.' }).waitFor()

    await page.getByLabel('Offer a pause of (days)').fill('30')
    await page.getByLabel('Offer to skip the next renewal').check()
    await page.getByLabel('Offer a discount code').selectOption('WELCOME10')
    await page.getByRole('button', { name: 'Save offers' }).click()
    await dialog().getByText('Offered before cancelling: a 30-day pause, skipping the next renewal, the code WELCOME10.').waitFor()
    await dialog().getByRole('button', { name: 'Save' }).click()
    await notice().filter({ hasText: 'Retention offers saved.' }).waitFor()

    await page.getByLabel('Renewal reminder', { exact: true }).uncheck()
    await page.getByRole('button', { name: 'Save notifications' }).click()
    await dialog().getByText('Not sent from now on: Renewal reminder.').waitFor()
    await dialog().getByRole('button', { name: 'Save' }).click()
    await notice().filter({ hasText: 'Notification settings saved.' }).waitFor()
    const store = await admin<{ cancellation_reasons: unknown; retention_offers: unknown; notifications: Record<string, boolean> }>('GET', '/store')
    assert.deepEqual(store.cancellation_reasons, [{ code: 'too_expensive', label: 'It costs too much' }, { code: 'not_needed', label: 'I do not need it any more' }])
    assert.deepEqual(store.retention_offers, [{ type: 'pause', days: 30 }, { type: 'skip' }, { type: 'discount', code: 'WELCOME10' }])
    assert.equal(store.notifications.renewal_upcoming, false)
    assert.equal(store.notifications.payment_failed, true)
    await page.locator('.notification-log [role="status"]').filter({ hasText: /emails shown|No emails sent yet/ }).waitFor()

    await page.getByLabel('Name of the new key').fill('ERP sync')
    await page.getByRole('button', { name: 'Create key' }).click()
    await dialog().getByRole('button', { name: 'Create key' }).click()
    await notice().filter({ hasText: 'Key ERP sync created' }).waitFor()
    const newKey = (await page.locator('[data-new-key]').innerText()).trim()
    assert.match(newKey, /^sk_/)
    const withNewKey = () => fetch(`${server.origin}/api/v1/admin/store`, { headers: { authorization: `Bearer ${newKey}` } })
    assert.equal((await withNewKey()).status, 200)
    await screenshot(t, 'settings')
    await page.locator('tbody tr', { hasText: 'ERP sync' }).getByRole('button', { name: 'Revoke' }).click()
    await dialog().getByRole('button', { name: 'Revoke key' }).click()
    await notice().filter({ hasText: 'The key ERP sync is revoked.' }).waitFor()
    assert.equal(await page.locator('[data-new-key]').count(), 0, 'the new key is shown once only')
    assert.equal((await withNewKey()).status, 401)
  })

  test('subscription detail: apply and remove a discount, add and remove an add-on, reschedule, order now, cancel with a reason code', async (t) => {
    // A fresh subscription with a card that pays (the seeded ones are paused, cancelled or in dunning by now).
    const MARY = 'mary@example.com'
    const fresh = await admin<{ data: { id: string }[] }>('POST', '/checkouts', {
      platform_order_id: 'order-4001', email: MARY, name: 'Mary Somerville', shipping_address: { ...ADDRESS, name: 'Mary Somerville' }, payment_instrument_id: 'pi_visa_ok', items: [{ plan_id: seeded.monthly, quantity: 1 }],
    })
    const id = fresh.data[0]!.id
    await page.goto(`${server.origin}/console/subscriptions/${id}`)
    await heading().filter({ hasText: `Subscription of ${MARY}` }).waitFor()
    const details = () => page.locator('section[aria-label="Details"]').innerText()

    await page.locator('select[name="discount_code"] option[value="WELCOME10"]').waitFor({ state: 'attached' })
    await page.getByLabel('Discount code').selectOption('WELCOME10')
    await page.getByRole('button', { name: 'Apply discount' }).click()
    await dialog().getByRole('button', { name: 'Apply discount' }).click()
    await notice().filter({ hasText: 'WELCOME10 is applied from the next charge.' }).waitFor()
    assert.match(await details(), /WELCOME10: 10% off, 3 more charges/)
    await page.locator('section[aria-label="Timeline"]').getByText('subscription.discount_applied').waitFor()

    await page.locator('select[name="product_id"] option', { hasText: 'Gift wrap' }).waitFor({ state: 'attached' })
    await page.getByLabel('Add-on product').selectOption({ label: 'Gift wrap ($3.50)' })
    await page.getByLabel('Add-on quantity').fill('2')
    await page.getByRole('button', { name: 'Add to the next renewal' }).click()
    await dialog().getByText(/Gift wrap × 2 at \$3\.50 each/).waitFor()
    await dialog().getByRole('button', { name: 'Add' }).click()
    await notice().filter({ hasText: 'Added to the next renewal.' }).waitFor()
    const addOns = page.locator('section[aria-label="One-time add-ons"]')
    await addOns.locator('tbody tr', { hasText: 'Gift wrap' }).waitFor()
    await screenshot(t, 'subscription-actions')
    await addOns.getByRole('button', { name: 'Remove' }).click()
    await dialog().getByRole('button', { name: 'Remove add-on' }).click()
    await notice().filter({ hasText: 'The add-on is removed.' }).waitFor()
    await page.getByRole('button', { name: 'Remove discount' }).click()
    await dialog().getByRole('button', { name: 'Remove discount' }).click()
    await notice().filter({ hasText: 'WELCOME10 is removed.' }).waitFor()

    // Reschedule three days later, typed in the store's zone (Europe/Berlin) whatever the browser's.
    const before = await admin<{ next_charge_at: string }>('GET', `/subscriptions/${id}`)
    const picker = page.getByLabel('Next charge on (Europe/Berlin)')
    const shown = await picker.inputValue()
    const later = new Date(Date.parse(`${shown}:00Z`) + 3 * 86_400_000).toISOString().slice(0, 16)
    await picker.fill(later)
    await page.getByRole('button', { name: 'Reschedule' }).click()
    await dialog().getByRole('button', { name: 'Reschedule' }).click()
    await notice().filter({ hasText: 'The next charge is on' }).waitFor()
    const after = await admin<{ next_charge_at: string }>('GET', `/subscriptions/${id}`)
    // The picker holds minutes: the new time is three days later to the minute.
    assert.ok(Math.abs(Date.parse(after.next_charge_at) - Date.parse(before.next_charge_at) - 3 * 86_400_000) < 60_000, `${before.next_charge_at} → ${after.next_charge_at}`)
    await page.locator('section[aria-label="Timeline"]').getByText('subscription.rescheduled').waitFor()

    // The test clock stands still: a day on, so the period did not begin "at this very moment".
    const clockNow = Date.parse((await admin<{ now: string }>('GET', '/test-clock')).now)
    await admin('POST', '/test-clock/advance', { to: new Date(clockNow + 86_400_000).toISOString() })
    const chargesBefore = (await admin<{ data: unknown[] }>('GET', `/charges?subscription_id=${id}`)).data.length
    await page.getByRole('button', { name: 'Charge the renewal now' }).click()
    await dialog().getByRole('button', { name: 'Charge the renewal now' }).click()
    await notice().filter({ hasText: 'The renewal was charged now' }).waitFor({ timeout: 15_000 }).catch(async (error: Error) => {
      throw new Error(`${error.message}\n${await page.locator('main [role="alert"]').allInnerTexts()} / ${await notice().innerText()}`)
    })
    assert.equal((await admin<{ data: unknown[] }>('GET', `/charges?subscription_id=${id}`)).data.length, chargesBefore + 1)

    await page.getByLabel('Reason', { exact: true }).selectOption({ label: 'It costs too much' })
    await page.getByRole('button', { name: 'Cancel subscription' }).click()
    await dialog().getByText('Reason: It costs too much').waitFor()
    await dialog().getByRole('button', { name: 'Cancel subscription' }).click()
    await notice().filter({ hasText: 'Cancelled.' }).waitFor()
    const cancelled = await admin<{ status: string; cancellation_reason_code: string }>('GET', `/subscriptions/${id}`)
    assert.deepEqual([cancelled.status, cancelled.cancellation_reason_code], ['cancelled', 'too_expensive'])
    assert.match(await details(), /It costs too much/)
  })

  test('keyboard only: through the main pages with Tab and Enter', async () => {
    await page.goto(`${server.origin}/console`)
    await heading().filter({ hasText: 'Overview' }).waitFor()
    const tabTo = async (text: string) => {
      for (let presses = 0; presses < 60; presses++) {
        await page.keyboard.press('Tab')
        if ((await focused()) === text) return
      }
      assert.fail(`Tab never reached "${text}"`)
    }
    for (const [link, title] of [['Subscriptions', 'Subscriptions'], ['Needs attention', 'Needs attention'], ['Catalogue', 'Catalogue'], ['Discounts', 'Discounts'], ['Webhooks', 'Webhooks'], ['Settings', 'Settings'], ['Overview', 'Overview']] as const) {
      await tabTo(link)
      assert.equal(await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle'), 'solid', `the focus on "${link}" is visible`)
      await page.keyboard.press('Enter')
      await heading().filter({ hasText: title }).waitFor()
      await page.locator('.loading').first().waitFor({ state: 'detached' })
      assert.equal(await focusedTag(), 'H1', `after opening ${title} the focus is on its heading`)
    }
    // Into a subscription by keyboard: search, open, the focus on its heading.
    await tabTo('Subscriptions')
    await page.keyboard.press('Enter')
    await heading().filter({ hasText: 'Subscriptions' }).waitFor()
    // Past the header's actions (Export CSV) to the search field.
    for (let presses = 0; presses < 5 && (await page.evaluate<string>("document.activeElement?.getAttribute('name') ?? ''")) !== 'q'; presses++) await page.keyboard.press('Tab')
    assert.equal(await page.evaluate<string>("document.activeElement?.getAttribute('name') ?? ''"), 'q', 'Tab reaches the search field')
    await page.keyboard.type(GRACE)
    await page.keyboard.press('Enter')
    await notice().filter({ hasText: '1 subscription shown' }).waitFor()
    // Her row's plan opens the subscription (her name, before it, opens her page).
    await tabTo('Darjeeling Tea · Tin every month')
    await page.keyboard.press('Enter')
    await heading().filter({ hasText: `Subscription of ${GRACE}` }).waitFor()
    assert.equal(await focusedTag(), 'H1')
  })

  test('opened from the BigCommerce control panel: the load callback signs in without a key and ends on the overview', async () => {
    await admin('PUT', '/platform-connection', { access_token: 'store-api-token-console-browser' })
    // Signed for the service's clock (the test clock moved a month ahead in the seed).
    const now = Math.floor(Date.parse((await admin<{ now: string }>('GET', '/test-clock')).now) / 1000)
    const payload = await new SignJWT({ user: { id: 1, email: 'owner@example.com' }, owner: { id: 1, email: 'owner@example.com' }, url: '/' })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      // The platform names each payload (jti): a payload opens one console session.
      .setJti(crypto.randomUUID())
      .setAudience(CLIENT_ID)
      .setIssuer('bc')
      .setSubject(`stores/${STORE_HASH}`)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(new TextEncoder().encode(CLIENT_SECRET))
    const fresh = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US' })
    try {
      const tab = await fresh.newPage()
      await tab.goto(`${server.origin}/platform/load?signed_payload_jwt=${encodeURIComponent(payload)}`)
      await tab.getByRole('heading', { level: 1 }).filter({ hasText: 'Overview' }).waitFor({ timeout: 10_000 }).catch(async (error: Error) => {
        throw new Error(`${error.message}\nat ${tab.url()}: ${(await tab.locator('body').innerText()).slice(0, 500)}`)
      })
      await tab.locator('[data-figure="mrr"]').waitFor()
      assert.equal(new URL(tab.url()).pathname, '/console')
      assert.equal(new URL(tab.url()).hash, '', 'the session is taken out of the address')
      assert.equal(await tab.locator('#store-name').textContent(), STORE_NAME)
      assert.equal(await tab.evaluate<string | null>("JSON.parse(sessionStorage.getItem('console.session')).via"), 'platform')
      const token = await tab.evaluate<string | null>("JSON.parse(sessionStorage.getItem('console.session')).token")
      assert.match(token ?? '', /^[\w-]+\.[\w-]+\.[\w-]+$/, 'a console session, not a key')
      assert.equal(await tab.evaluate<number>('localStorage.length'), 0)
      // The page may be framed by the control panel, and by nothing else.
      const consolePage = await fetch(`${server.origin}/console`)
      assert.match(consolePage.headers.get('content-security-policy') ?? '', /frame-ancestors https:\/\/\*\.bigcommerce\.com https:\/\/\*\.mybigcommerce\.com/)
      assert.equal(consolePage.headers.get('x-frame-options'), null)
      // A session from the control panel cannot make a key that would outlive it: no form to.
      await tab.goto(`${server.origin}/console/settings`)
      await tab.getByRole('heading', { level: 1 }).filter({ hasText: 'Settings' }).waitFor()
      await tab.getByText('keys are created with an admin API key').waitFor()
      assert.equal(await tab.getByRole('button', { name: 'Create key' }).count(), 0)
      // Signing out ends the session on the server: the token is refused from then on.
      await tab.getByRole('button', { name: 'Sign out' }).click()
      await tab.getByText('You have signed out.').waitFor()
      const refused = await fetch(`${server.origin}/api/v1/admin/store`, { headers: { authorization: `Bearer ${token}` } })
      assert.equal(refused.status, 401, 'the copied token no longer works')
    } finally {
      await fresh.close()
    }
  })

  test('a narrower key is offered only what its scope allows: read-only sees no change at all; support acts on a subscription but changes no setting', async () => {
    const fresh = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US' })
    try {
      for (const [scope, badgeText] of [['read_only', 'Read-only key'], ['support', 'Support key']] as const) {
        const { key } = await admin<{ key: string }>('POST', '/api-keys', { name: `${scope} desk`, scope })
        const tab = await fresh.newPage()
        await tab.goto(`${server.origin}/console`)
        await tab.getByLabel('Admin API key').fill(key)
        await tab.getByRole('button', { name: 'Sign in' }).click()
        await tab.getByRole('heading', { level: 1 }).filter({ hasText: 'Overview' }).waitFor()
        await tab.getByText(badgeText).waitFor()
        await tab.goto(`${server.origin}/console/subscriptions/${seeded.coffee}`)
        await tab.getByRole('heading', { level: 1 }).filter({ hasText: 'Subscription of' }).waitFor()
        await tab.locator('.loading').first().waitFor({ state: 'detached' })
        // Paused by an earlier case: pause or resume, whichever applies, is offered to support only.
        assert.equal(await tab.getByRole('button', { name: /^(Pause|Resume)$/ }).count(), scope === 'support' ? 1 : 0, `${scope}: pause or resume offered only to support`)
        await tab.goto(`${server.origin}/console/settings`)
        await tab.getByRole('heading', { level: 1 }).filter({ hasText: 'Settings' }).waitFor()
        await tab.locator('.loading').first().waitFor({ state: 'detached' })
        assert.equal(await tab.getByRole('button', { name: 'Save settings' }).count(), 0, `${scope}: no settings change offered`)
        assert.equal(await tab.getByRole('button', { name: 'Create key' }).count(), 0, `${scope}: no key creation offered`)
        await tab.close()
      }
    } finally {
      await fresh.close()
    }
  })

  test('no request left the service origin; no script errors or CSP refusals', () => {
    assert.deepEqual(foreignRequests, [])
    assert.deepEqual(pageProblems, [])
  })
})
