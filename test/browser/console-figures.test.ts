import assert from 'node:assert/strict'
import { after, before, describe, test, type TestContext } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { adminClient, buildWebForTest, launchBrowser, screenshotAtWidths, serverDatabase, signInToConsole, skipWithoutChromium, watchPage } from '../helpers/browser.ts'
import { startServer, type RunningServer } from '../helpers/server-process.ts'

/**
 * The console's numbers and plan names (issue 26 points 2 and 4), in Chromium against the real
 * service. Before: "Expected from renewals, next 30 days" counted one renewal per subscription (a
 * weekly one once, a skipped one not at all) and ignored add-ons; two products' "Every month" plans
 * read the same in the list, the heading and the change-plan dialog, so coffee could be swapped to
 * tea unseen; a prepaid plan read "$20.40 every month, $61.20 per charge".
 *
 * The seed, on a UTC test store whose clock is set to Tue 2030-01-01 12:00 for the checkouts and then
 * to NOW = 2030-01-10 12:00. The next 30 days are [Jan 10 12:00, Feb 9 12:00). By hand:
 *
 *   ada     House Blend Coffee · Every month, 2 x $18.00, a $12.00 mug added: Feb 1     $48.00  (1)
 *   grace   Darjeeling Tea · Every month, $12.50: Feb 1                                 $12.50  (1)
 *   linus   Darjeeling Tea · Three tins prepaid, $61.20 for 3 months, paid to Apr 1      $0.00  (0)
 *   mary    House Blend Coffee · Every week, $5.00: Jan 15, 22, 29, Feb 5 (Feb 12 is out) $20.00  (4)
 *                                                                                 ------------------
 *                                                                                      $80.50  (6)
 *
 * Screenshots at 1440 and 390 px go to test-results/console-figures/ (UPDATE_SCREENSHOTS=1: also
 * docs/screenshots/console-figures-*.png).
 */

const STORE_HASH = 'figuresconsole'
const ADMIN_KEY = 'sk_test_console_figures_0123456789abcdef'
const ADDRESS = { name: 'Ada Lovelace', line1: '12 Analytical Way', city: 'Portland', state: 'OR', postal_code: '97201', country: 'US' }
const T0 = '2030-01-01T12:00:00.000Z'
const NOW = '2030-01-10T12:00:00.000Z'
/** The hand computation above, in cents. */
const EXPECTED = { amount: 8050, renewals: 6 }

describe('console figures and plan names in a real browser', { skip: skipWithoutChromium, timeout: 120_000 }, () => {
  let web: Awaited<ReturnType<typeof buildWebForTest>>
  let server: RunningServer
  let database: Awaited<ReturnType<typeof serverDatabase>> | undefined
  let browser: Browser
  let page: Page
  let ada: string
  const pageProblems: string[] = []
  const admin = adminClient(() => server.origin, ADMIN_KEY)

  async function seed(): Promise<void> {
    await admin('PATCH', '/store', { name: 'Figures Coffee & Tea', timezone: 'UTC' })
    await admin('POST', '/test-clock/advance', { to: T0 })
    const coffee = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'house-coffee', name: 'House Blend Coffee' })
    const tea = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'darjeeling', name: 'Darjeeling Tea' })
    const mug = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'mug', name: 'Enamel Mug', one_time_price: { amount: 1200, currency: 'USD' } })
    const plan = (product: string, body: Record<string, unknown>) => admin<{ id: string }>('POST', '/plans', { product_id: product, currency: 'USD', interval: 'month', ...body })
    // Two products, each with a plan called "Every month".
    const coffeeMonthly = await plan(coffee.id, { name: 'Every month', amount: 1800 })
    const teaMonthly = await plan(tea.id, { name: 'Every month', amount: 1250 })
    const weekly = await plan(coffee.id, { name: 'Every week', amount: 500, interval: 'week' })
    const prepaid = await plan(tea.id, { name: 'Three tins prepaid', amount: 6120, prepaid_cycles: 3 })
    let order = 0
    const checkout = async (email: string, planId: string, quantity = 1) => {
      const result = await admin<{ data: { id: string }[] }>('POST', '/checkouts', {
        platform_order_id: `order-${++order}`,
        email,
        name: email.split('@')[0],
        shipping_address: ADDRESS,
        payment_instrument_id: 'pi_visa_ok',
        items: [{ plan_id: planId, quantity }],
      })
      return result.data[0]!.id
    }
    ada = await checkout('ada@example.com', coffeeMonthly.id, 2)
    await checkout('grace@example.com', teaMonthly.id)
    await checkout('linus@example.com', prepaid.id)
    await checkout('mary@example.com', weekly.id)
    await admin('POST', '/test-clock/advance', { to: NOW })
    await admin('POST', `/subscriptions/${ada}/onetimes`, { product_id: mug.id, quantity: 1 })
  }

  before(async () => {
    web = await buildWebForTest()
    database = await serverDatabase('sb-console-figures-')
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
  const dialog = () => page.getByRole('dialog')

  const screenshot = (t: TestContext, name: string) => screenshotAtWidths(page, t, 'console-figures', name)

  test('overview: "Expected from renewals, next 30 days" is the hand-computed $80.50 from 6 renewals (the weekly one four times, the prepaid none, the add-on in)', async (t) => {
    const forecast = await admin<{ from: string; currencies: { currency: string; amount: number; renewals: number }[] }>('GET', '/analytics/expected-revenue?days=30')
    assert.equal(forecast.from, NOW)
    assert.deepEqual(forecast.currencies, [{ currency: 'USD', ...EXPECTED }])
    const card = page.locator('section.card', { has: page.getByRole('heading', { name: 'Expected from renewals, next 30 days' }) })
    assert.equal(await card.locator('[data-figure="expected"]').innerText(), '$80.50')
    assert.match(await card.innerText(), /6 renewals due by Feb 9, 2030, 12:00 PM UTC/)
    await screenshot(t, 'overview')
  })

  test('the subscription list and its plan filter name the product: two "Every month" plans are told apart; prepaid per month and per block', async (t) => {
    await page.goto(`${server.origin}/console/subscriptions`)
    await page.locator('.results table').waitFor()
    const rows = await page.locator('.results tbody tr').allInnerTexts()
    const row = (email: string) => rows.find((text) => text.includes(email)) ?? ''
    assert.match(row('ada@example.com'), /House Blend Coffee · Every month\s+2 × \$18\.00 every month/)
    assert.match(row('grace@example.com'), /Darjeeling Tea · Every month\s+\$12\.50 every month/)
    assert.match(row('linus@example.com'), /Darjeeling Tea · Three tins prepaid\s+\$20\.40 a month, \$61\.20 every 3 months/)
    const options = (await page.getByLabel('Plan', { exact: true }).locator('option').allInnerTexts()).map((text) => text.trim())
    assert.deepEqual(options, [
      'Any plan',
      'Darjeeling Tea · Every month · $12.50 every month',
      'Darjeeling Tea · Three tins prepaid · $20.40 a month, $61.20 every 3 months',
      'House Blend Coffee · Every month · $18.00 every month',
      'House Blend Coffee · Every week · $5.00 every week',
    ])
    await screenshot(t, 'subscriptions')
  })

  test('the subscription heading names the product; the change-plan dialog names each plan\'s product and says when the product changes', async (t) => {
    await page.goto(`${server.origin}/console/subscriptions/${ada}`)
    await heading().filter({ hasText: 'Subscription of ada@example.com to House Blend Coffee · Every month' }).waitFor()
    assert.match(await page.locator('section[aria-label="Details"]').innerText(), /House Blend Coffee · Every month · \$18\.00 every month/)
    const planSelect = page.getByLabel('New plan')
    await planSelect.locator('option', { hasText: 'Darjeeling Tea · Every month' }).waitFor({ state: 'attached' })
    const options = (await planSelect.locator('option').allInnerTexts()).map((text) => text.trim())
    assert.deepEqual(options, [
      'Choose a plan',
      'Darjeeling Tea · Every month · $12.50 every month',
      'Darjeeling Tea · Three tins prepaid · $20.40 a month, $61.20 every 3 months',
      'House Blend Coffee · Every week · $5.00 every week',
    ])
    await screenshot(t, 'subscription')
    await planSelect.selectOption({ label: 'Darjeeling Tea · Every month · $12.50 every month' })
    await page.getByRole('button', { name: 'Change plan' }).click()
    const text = await dialog().innerText()
    assert.match(text, /Now: House Blend Coffee · Every month · \$18\.00 every month\./)
    assert.match(text, /From the next charge: Darjeeling Tea · Every month · \$12\.50 every month\./)
    assert.match(text, /This changes the product: House Blend Coffee becomes Darjeeling Tea\./)
    await screenshot(t, 'swap-dialog')
    await dialog().getByRole('button', { name: 'Go back' }).click()
    await dialog().waitFor({ state: 'detached' })
  })

  test('the catalogue lists each plan under its product, prepaid per month and per block', async (t) => {
    await page.goto(`${server.origin}/console/catalogue`)
    await heading().filter({ hasText: 'Catalogue' }).waitFor()
    const plans = page.locator('table', { has: page.locator('caption', { hasText: 'Plans' }) })
    // The heading is drawn before the plans arrive: read the rows once the table has them.
    await plans.locator('tbody tr').nth(3).waitFor()
    const rows = (await plans.locator('tbody tr').allInnerTexts()).map((text) => text.split('\t').slice(0, 3).join(' | ').trim())
    assert.deepEqual(rows.slice(0, 4), [
      'Darjeeling Tea | Every month | $12.50 every month',
      'Darjeeling Tea | Three tins prepaid | $20.40 a month, $61.20 every 3 months',
      'House Blend Coffee | Every month | $18.00 every month',
      'House Blend Coffee | Every week | $5.00 every week',
    ])
    await screenshot(t, 'catalogue')
  })
})
