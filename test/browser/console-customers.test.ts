import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { after, before, describe, test, type TestContext } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { adminClient, buildWebForTest, launchBrowser, screenshotAtWidths, serverDatabase, signInToConsole, skipWithoutChromium, watchPage } from '../helpers/browser.ts'
import { startServer, type RunningServer } from '../helpers/server-process.ts'

/**
 * Finding a customer in the console (issue 26 point 5), in Chromium against the real service. Before:
 * the search box took only a whole email or a subscription id: "love" was an error ("Search by a full
 * email address..."), "ada@" found nothing, and there was no page for a subscriber at all.
 *
 * The seed, on a UTC test store: Ada Lovelace buys a weekly coffee on Dec 4 (12 renewals by Mar 2),
 * a monthly coffee on Jan 1 (order 1042, renewed Feb 1 and Mar 1) and tea (cancelled) shipped
 * elsewhere and paid by another card, and was sent a payment update link; Grace Hopper buys tea. Screenshots at 1440 and 390 px go to test-results/console-customers/
 * (UPDATE_SCREENSHOTS=1: also docs/screenshots/console-customers-*.png). "Export CSV" on the list downloads the
 * search's subscriptions (issue 27).
 */

const STORE_HASH = 'customersconsole'
const ADMIN_KEY = 'sk_test_console_customers_0123456789abcdef'
const HOME = { name: 'Ada Lovelace', line1: '12 Analytical Way', city: 'Portland', state: 'OR', postal_code: '97201', country: 'US' }
const OFFICE = { name: 'Ada Lovelace', line1: '1 Engine House', line2: 'Floor 2', city: 'London', postal_code: 'N1 9GU', country: 'GB' }

describe('console: find a customer and open their page', { skip: skipWithoutChromium, timeout: 120_000 }, () => {
  let web: Awaited<ReturnType<typeof buildWebForTest>>
  let server: RunningServer
  let database: Awaited<ReturnType<typeof serverDatabase>> | undefined
  let browser: Browser
  let page: Page
  const seeded = { coffee: '', tea: '', grace: '', ada: '' }
  const pageProblems: string[] = []
  const admin = adminClient(() => server.origin, ADMIN_KEY)

  async function seed(): Promise<void> {
    await admin('PATCH', '/store', { name: 'Analytical Coffee', timezone: 'UTC' })
    await admin('POST', '/test-clock/advance', { to: '2029-12-04T12:00:00.000Z' })
    const coffee = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'house-coffee', name: 'House Blend Coffee' })
    const tea = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'darjeeling', name: 'Darjeeling Tea' })
    const plan = (product: string, body: Record<string, unknown>) => admin<{ id: string }>('POST', '/plans', { product_id: product, currency: 'USD', interval: 'month', ...body })
    const coffeeMonthly = await plan(coffee.id, { name: 'Every month', amount: 1800 })
    const teaMonthly = await plan(tea.id, { name: 'Every month', amount: 1250 })
    const coffeeWeekly = await plan(coffee.id, { name: 'Every week', amount: 500, interval: 'week' })
    const checkout = async (order: string, email: string, name: string, planId: string, address: object, instrument: string) =>
      (await admin<{ data: { id: string; subscriber_id: string }[] }>('POST', '/checkouts', { platform_order_id: order, email, name, shipping_address: address, payment_instrument_id: instrument, items: [{ plan_id: planId, quantity: 1 }] })).data[0]!
    await checkout('1041', 'ada@example.com', 'Ada Lovelace', coffeeWeekly.id, HOME, 'pi_visa_ok')
    await admin('POST', '/test-clock/advance', { to: '2030-01-01T12:00:00.000Z' })
    const ada = await checkout('1042', 'ada@example.com', 'Ada Lovelace', coffeeMonthly.id, HOME, 'pi_visa_ok')
    seeded.coffee = ada.id
    seeded.ada = ada.subscriber_id
    seeded.tea = (await checkout('1043', 'ada@example.com', 'Ada Lovelace', teaMonthly.id, OFFICE, 'pi_amex_ok')).id
    seeded.grace = (await checkout('2001', 'grace@example.com', 'Grace Hopper', teaMonthly.id, { ...HOME, name: 'Grace Hopper' }, 'pi_visa_ok')).id
    await admin('POST', `/subscriptions/${seeded.tea}/cancel`, { reason: 'prefers coffee' })
    await admin('POST', '/test-clock/advance', { to: '2030-03-02T12:00:00.000Z' })
    await admin('POST', `/subscriptions/${seeded.coffee}/payment-update-link`, {})
  }

  before(async () => {
    web = await buildWebForTest()
    database = await serverDatabase('sb-console-customers-')
    const databaseEnv = database.env
    server = await startServer({ ...databaseEnv, WEB_DIST_DIR: web.dir, SEED_DEMO_DATA: 'false', BOOTSTRAP_STORE_HASH: STORE_HASH, BOOTSTRAP_ADMIN_API_KEY: ADMIN_KEY, LOG_LEVEL: 'error' })
    await seed()
    browser = await launchBrowser()
    const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US', timezoneId: 'America/Los_Angeles' })
    page = await context.newPage()
    watchPage(page, () => server.origin, { pageProblems })
    await signInToConsole(page, server.origin, ADMIN_KEY)
  })

  after(async () => {
    await browser?.close()
    await server?.stop()
    await database?.remove()
    web?.cleanup()
    assert.deepEqual(pageProblems, [])
  })

  const heading = () => page.getByRole('heading', { level: 1 })
  const notice = () => page.locator('.results .result-count')
  const rows = () => page.locator('.results tbody tr').allInnerTexts()

  const screenshot = (t: TestContext, name: string) => screenshotAtWidths(page, t, 'console-customers', name)

  async function searchFor(text: string): Promise<void> {
    await page.getByLabel('Email, name, order number or id').fill(text)
    await page.getByRole('button', { name: 'Search' }).click()
    await page.waitForURL((url) => url.searchParams.get('q') === text)
    await page.locator('.loading').first().waitFor({ state: 'detached' })
  }

  test('part of a name ("love") finds Ada\'s subscriptions, each row with her name and email; "ada@" and order "#1042" find her too', async (t) => {
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Subscriptions' }).click()
    await page.locator('.results table').waitFor()
    await searchFor('love')
    await notice().filter({ hasText: '3 subscriptions shown.' }).waitFor()
    const found = await rows()
    assert.equal(found.length, 3)
    for (const row of found) assert.match(row, /^Ada Lovelace\s+ada@example\.com/)
    assert.match(found.join('\n'), /Darjeeling Tea · Every month/)
    assert.match(found.join('\n'), /House Blend Coffee · Every month/)
    await screenshot(t, 'search')

    await searchFor('ada@')
    await notice().filter({ hasText: '3 subscriptions shown.' }).waitFor()
    assert.ok((await rows()).every((row) => row.includes('ada@example.com')))
    await searchFor('#1042')
    await notice().filter({ hasText: '1 subscription shown.' }).waitFor()
    assert.match((await rows())[0]!, /House Blend Coffee · Every month/)
    await searchFor('100%')
    await notice().filter({ hasText: 'No subscriptions match.' }).waitFor()
  })

  test('"Export CSV" downloads what the search finds, through the console\'s own credential: the native header, then her three subscriptions', async (t) => {
    await searchFor('love')
    await notice().filter({ hasText: '3 subscriptions shown.' }).waitFor()
    await screenshot(t, 'export')
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()])
    assert.match(download.suggestedFilename(), new RegExp(`^subscriptions-${STORE_HASH}-2030-03-02\\.csv$`))
    const lines = readFileSync((await download.path())!, 'utf8').split('\r\n')
    assert.match(lines[0]!, /^id,external_id,status,email,name,platform_customer_id,plan_id,/)
    assert.deepEqual(lines.slice(1, -1).map((line) => line.split(',')[3]), ['ada@example.com', 'ada@example.com', 'ada@example.com'], 'the search, not the whole store')
    assert.equal(lines.at(-1), '', 'every row ends with CRLF')
    await page.locator('#notice').filter({ hasText: `Downloaded ${download.suggestedFilename()}.` }).waitFor()
  })

  test("her name opens her page: every subscription, address, card, charge and email sent", async (t) => {
    await searchFor('ada@')
    await page.locator('.results tbody tr').first().getByRole('link', { name: 'Ada Lovelace' }).click()
    await heading().filter({ hasText: 'Ada Lovelace' }).waitFor()
    assert.equal(new URL(page.url()).pathname, `/console/subscribers/${seeded.ada}`)
    const subscriptions = (await page.locator('section[aria-label="Subscriptions"]').innerText()).replace(/\s+/g, ' ')
    assert.match(subscriptions, /3 subscriptions: 1 cancelled, 2 active\./)
    assert.match(subscriptions, /House Blend Coffee · Every month Active \$18\.00 every month/)
    assert.match(subscriptions, /House Blend Coffee · Every week Active \$5\.00 every week/)
    assert.match(subscriptions, /Darjeeling Tea · Every month Cancelled/)
    const addresses = await page.locator('section[aria-label="Shipping addresses"]').innerText()
    assert.match(addresses, /12 Analytical Way/)
    assert.match(addresses, /1 Engine House, Floor 2, London/)
    const cards = await page.locator('section[aria-label="Payment methods"]').innerText()
    assert.match(cards, /pi_visa_ok/)
    assert.match(cards, /pi_amex_ok/)
    // Fourteen renewals (twelve weekly, two monthly): the ten newest, each with the zone, then the rest on asking.
    const charges = page.locator('section[aria-label="Charges"] tbody tr')
    assert.equal(await charges.count(), 10)
    // (Newest first as the charges were made: one advance of the test clock makes them in its own order.)
    assert.match((await charges.allInnerTexts()).join('\n'), /Mar 1, 2030.*UTC\s+House Blend Coffee · Every month\s+Succeeded\s+\$18\.00/)
    await page.locator('section[aria-label="Charges"]').getByText('10 charges shown; older ones below.').waitFor()
    // The worker logs each email as it sends it, in its own time: the link may come before or after the reminders.
    const emails = page.locator('section[aria-label="Emails sent"]')
    assert.equal(await emails.locator('tbody tr').count(), 10)
    assert.match(await emails.innerText(), /10 emails shown; older ones below\./)
    await screenshot(t, 'subscriber')
    await page.locator('section[aria-label="Charges"]').getByRole('button', { name: 'Show older' }).click()
    await page.locator('section[aria-label="Charges"]').getByText('14 charges shown.').waitFor()
    assert.equal(await charges.count(), 14)
    assert.match((await charges.allInnerTexts()).join('\n'), /Dec 11, 2029.*UTC\s+House Blend Coffee · Every week\s+Succeeded\s+\$5\.00/)
    assert.equal(await page.locator('section[aria-label="Charges"]').getByRole('button', { name: 'Show older' }).count(), 0, 'nothing older')
    for (let pages = 0; pages < 5 && (await emails.getByRole('button', { name: 'Show older' }).count()) > 0; pages++) {
      const before = await emails.locator('tbody tr').count()
      await emails.getByRole('button', { name: 'Show older' }).click()
      await emails.locator('tbody tr').nth(before).waitFor()
    }
    assert.match(await emails.innerText(), /Payment update link\s+House Blend Coffee · Every month/)

    // Each subscription opens from her page, and her page from the subscription's.
    await page.locator('section[aria-label="Subscriptions"]').getByRole('link', { name: 'Darjeeling Tea · Every month' }).click()
    await heading().filter({ hasText: 'Subscription of ada@example.com' }).waitFor()
    await page.locator('section[aria-label="Details"]').getByRole('link', { name: 'Ada Lovelace' }).click()
    await heading().filter({ hasText: 'Ada Lovelace' }).waitFor()
    assert.equal(new URL(page.url()).pathname, `/console/subscribers/${seeded.ada}`)
  })

  test("a subscriber id that is not the store's says so", async () => {
    await page.goto(`${server.origin}/console/subscribers/cus_00000000000000000000000000`)
    await page.locator('.error-box').filter({ hasText: /subscriber/i }).waitFor()
  })
})
