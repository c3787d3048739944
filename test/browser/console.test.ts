import assert from 'node:assert/strict'
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, before, describe, test, type TestContext } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import { buildWebForTest, launchBrowser, skipWithoutChromium } from '../helpers/browser.ts'
import { createTestDatabase, onPostgres, scratchUrl } from '../helpers/database.ts'
import { startServer, type RunningServer } from '../helpers/server-process.ts'
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts'

/**
 * The merchant console end to end, in Chromium against the real service process: sign-in with an
 * admin key (a wrong one refused in words), each page on the admin API alone, every change
 * confirmed, keyboard-only use, and not one request to another origin. Screenshots of every page at
 * 1440 and 360 px go to test-results/console/ (artefacts); UPDATE_SCREENSHOTS=1 also writes them to
 * docs/screenshots/console-*.png.
 */

const STORE_HASH = 'northwind-console'
const STORE_NAME = 'Northwind Coffee Roasters'
const ADMIN_KEY = 'sk_test_console_browser_0123456789abcdef'
const ADA = 'ada@example.com'
const GRACE = 'grace@example.com'
const ARTEFACTS = new URL('../../test-results/console/', import.meta.url)
const SCREENSHOTS = new URL('../../docs/screenshots/', import.meta.url)
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

  const admin = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${server.origin}/api/v1/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${ADMIN_KEY}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    assert.ok(response.ok, `${method} ${path} answered ${response.status}: ${text}`)
    return (text ? JSON.parse(text) : undefined) as T
  }

  async function seed(): Promise<Seeded> {
    await admin('PATCH', '/store', { name: STORE_NAME, timezone: 'Europe/Berlin' })
    const beans = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'house-beans', name: 'House Blend Coffee Beans' })
    const tea = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'darjeeling', name: 'Darjeeling Tea' })
    const plan = (product: string, body: Record<string, unknown>) => admin<{ id: string }>('POST', '/plans', { product_id: product, currency: 'USD', ...body })
    const monthly = await plan(beans.id, { name: 'Monthly bag', amount: 1800, interval: 'month' })
    const fortnightly = await plan(beans.id, { name: 'Fortnightly bag', amount: 1000, interval: 'week', interval_count: 2 })
    const teaPlan = await plan(tea.id, { name: 'Tin every month', amount: 1250, interval: 'month' })
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
      dataDir = mkdtempSync(join(tmpdir(), 'sb-console-'))
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
      LOG_LEVEL: 'error',
    })
    seeded = await seed()
    browser = await launchBrowser()
    context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US', timezoneId: 'America/Los_Angeles' })
    page = await context.newPage()
    page.on('request', (request) => {
      const url = request.url()
      if (!url.startsWith('data:') && new URL(url).origin !== server.origin) foreignRequests.push(url)
    })
    page.on('pageerror', (error) => pageProblems.push(`page error: ${error.message}`))
    page.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) pageProblems.push(`console: ${message.text()}`)
    })
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

  async function screenshot(t: TestContext, name: string): Promise<void> {
    await page.locator('.loading').first().waitFor({ state: 'detached' })
    for (const width of [1440, 360]) {
      await page.setViewportSize({ width, height: width === 360 ? 780 : 900 })
      await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))')
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')
      assert.ok(overflow <= 0, `${name} at ${width} px: the page scrolls sideways by ${overflow} px`)
      await page.mouse.move(0, 0)
      const file = `console-${name}-${width}.png`
      mkdirSync(ARTEFACTS, { recursive: true })
      await page.screenshot({ path: new URL(file, ARTEFACTS).pathname, fullPage: true })
      if (process.env.UPDATE_SCREENSHOTS === '1') {
        mkdirSync(SCREENSHOTS, { recursive: true })
        await page.screenshot({ path: new URL(file, SCREENSHOTS).pathname, fullPage: true })
      }
      t.diagnostic(`screenshot ${file}`)
    }
    await page.setViewportSize({ width: 1440, height: 900 })
  }

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
    assert.equal(await page.evaluate<string | null>("sessionStorage.getItem('console.admin_key')"), ADMIN_KEY)
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
    await page.getByLabel('Email or subscription id').fill(ADA)
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
    assert.match(coffeeRow, /\$36\.00 \(2 × \$18\.00\)/)
    await page.getByLabel('Email or subscription id').fill(seeded.coffee)
    await page.getByRole('button', { name: 'Search' }).click()
    await notice().filter({ hasText: '1 subscription shown' }).waitFor()
    await page.locator('.results tbody a').first().click()
    await heading().filter({ hasText: `Subscription of ${ADA}` }).waitFor()
    assert.equal(await focusedTag(), 'H1')
    const details = await page.locator('section[aria-label="Details"]').innerText()
    assert.match(details, /Monthly bag/)
    assert.match(details, /GMT\+1|GMT\+2|CET|CEST/, 'times are shown in the store time zone (Europe/Berlin), not the browser\'s')
    await page.locator('section[aria-label="Timeline"] li').first().waitFor()
    await screenshot(t, 'subscription')
  })

  test('subscription detail: pause (confirmed), then subscription.paused shows in its timeline; a refusal shows in words', async () => {
    await page.goto(`${server.origin}/console/subscriptions?q=${encodeURIComponent(ADA)}`)
    await page.locator('.results tbody a').first().waitFor()
    await page.locator('.results tbody tr', { hasText: seeded.coffee }).getByRole('link').click()
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
    for (let tries = 0; tries < 60 && !reviewCharge; tries++) {
      reviewCharge = (await admin<{ data: { id: string }[] }>('GET', `/charges?status=requires_review&subscription_id=${seeded.review}`)).data[0]
      if (!reviewCharge) await new Promise((resolve) => setTimeout(resolve, 500))
    }
    assert.ok(reviewCharge, 'the unknown charge went to review')
    await page.goto(`${server.origin}/console/attention`)
    await heading().filter({ hasText: 'Needs attention' }).waitFor()
    const reviewSection = page.locator('section', { has: page.getByRole('heading', { name: /Charges to review/ }) })
    await reviewSection.locator('tbody tr').first().waitFor()
    const dunning = page.locator('section', { has: page.getByRole('heading', { name: /Failed charges in dunning/ }) })
    assert.match(await dunning.innerText(), new RegExp(seeded.tea), 'the declined tea is in dunning with its next retry')
    await screenshot(t, 'attention')
    await reviewSection.locator('tbody tr', { hasText: seeded.review }).getByRole('button', { name: 'Resolve as paid' }).click()
    await dialog().getByRole('heading', { name: 'Mark this charge as paid?' }).waitFor()
    await dialog().getByRole('button', { name: 'Mark as paid' }).click()
    await notice().filter({ hasText: 'The charge is now succeeded' }).waitFor()
    assert.equal((await admin<{ status: string }>('GET', `/charges/${reviewCharge.id}`)).status, 'succeeded')
    await page.getByRole('heading', { name: 'Charges to review (0)' }).waitFor()
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
    for (let tries = 0; tries < 60 && !failed; tries++) {
      failed = (await admin<{ data: { event_id: string }[] }>('GET', `/webhook-subscriptions/${endpoint.id}/deliveries?status=failed`)).data[0]
      if (!failed) await new Promise((resolve) => setTimeout(resolve, 250))
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
    await page.goto(`${server.origin}/console/catalogue`)
    await heading().filter({ hasText: 'Catalogue' }).waitFor()
    await page.locator('tbody tr').first().waitFor()
    await page.getByLabel('Product', { exact: true }).selectOption({ label: 'Darjeeling Tea' })
    await page.getByLabel('Plan name').fill('Tin every week')
    await page.getByLabel('Price').fill('4.50')
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
    await screenshot(t, 'settings')
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
    for (const [link, title] of [['Subscriptions', 'Subscriptions'], ['Needs attention', 'Needs attention'], ['Catalogue', 'Catalogue'], ['Webhooks', 'Webhooks'], ['Settings', 'Settings'], ['Overview', 'Overview']] as const) {
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
    await page.keyboard.press('Tab')
    await page.keyboard.type(GRACE)
    await page.keyboard.press('Enter')
    await notice().filter({ hasText: '1 subscription shown' }).waitFor()
    await tabTo(GRACE)
    await page.keyboard.press('Enter')
    await heading().filter({ hasText: `Subscription of ${GRACE}` }).waitFor()
    assert.equal(await focusedTag(), 'H1')
  })

  test('no request left the service origin; no script errors or CSP refusals', () => {
    assert.deepEqual(foreignRequests, [])
    assert.deepEqual(pageProblems, [])
  })
})
