import assert from 'node:assert/strict'
import { after, before, describe, test, type TestContext } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { adminClient, buildWebForTest, launchBrowser, screenshotAtWidths, serverDatabase, skipWithoutChromium, watchPage } from '../helpers/browser.ts'
import { startServer, type RunningServer } from '../helpers/server-process.ts'

/**
 * Settings and catalogue as forms, and the next order on a subscription's page (issue 26), in Chromium
 * against the real service process, on a test-mode store whose clock was advanced:
 *   - the time zone is picked from the zones the browser knows (it was a free-text box), dunning
 *     retries and cancellation reasons are edited row by row (they were a comma list and "code: label"
 *     lines), and the saved store is what was picked;
 *   - a plan is made with a trial and prepaid cycles from the catalogue (the form had neither), a
 *     product with a one-time price;
 *   - the subscription's page opens with its next order (the service's preview: date with its zone,
 *     lines, discount, shipping, tax, total);
 *   - the admin keys table is whole at 1440 px (its last columns were cut off beside the store form);
 *   - the header shows the store's test clock.
 * Screenshots at 1440 and 390 px go to test-results/console-settings-forms/ (and docs/screenshots/
 * with UPDATE_SCREENSHOTS=1).
 */

const STORE_HASH = 'consoleforms'
const ADMIN_KEY = 'sk_test_console_forms_0123456789abcdef00'

describe('console: settings and catalogue as forms, the next order', { skip: skipWithoutChromium, timeout: 120_000 }, () => {
  let web: Awaited<ReturnType<typeof buildWebForTest>>
  let server: RunningServer
  let database: Awaited<ReturnType<typeof serverDatabase>> | undefined
  let browser: Browser
  let page: Page
  let subscriptionId: string
  let productId: string
  let clockNow: string
  const pageProblems: string[] = []
  const foreignRequests: string[] = []
  const admin = adminClient(() => server.origin, ADMIN_KEY)

  before(async () => {
    web = await buildWebForTest()
    database = await serverDatabase('sb-console-forms-')
    const databaseEnv = database.env
    ;[server, browser] = await Promise.all([
      startServer({ ...databaseEnv, WEB_DIST_DIR: web.dir, SEED_DEMO_DATA: 'false', BOOTSTRAP_STORE_HASH: STORE_HASH, BOOTSTRAP_ADMIN_API_KEY: ADMIN_KEY, LOG_LEVEL: 'error' }),
      launchBrowser(),
    ])
    await admin('PATCH', '/store', {
      name: 'Harbour Tea Co.',
      timezone: 'America/New_York',
      dunning_retry_days: [1, 3, 5],
      cancellation_reasons: [{ code: 'too_expensive', label: 'It costs too much' }],
      renewal_shipping: 'flat',
      renewal_shipping_amount: 450,
      test_tax_rate_bps: 825,
    })
    const product = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'sencha', name: 'Sencha Green Tea' })
    productId = product.id
    const plan = await admin<{ id: string }>('POST', '/plans', { product_id: product.id, currency: 'USD', name: 'Monthly tin', amount: 1600, interval: 'month' })
    await admin('POST', '/discounts', { code: 'SAVE10', type: 'percentage', value: 10, duration: 'forever' })
    const made = await admin<{ data: { id: string }[] }>('POST', '/checkouts', {
      platform_order_id: 'order-7001',
      email: 'mei@example.com',
      name: 'Mei Tanaka',
      shipping_address: { name: 'Mei Tanaka', line1: '3 Harbour Road', city: 'Boston', state: 'MA', postal_code: '02110', country: 'US' },
      payment_instrument_id: 'pi_visa_ok',
      items: [{ plan_id: plan.id, quantity: 2, discount_code: 'SAVE10' }],
    })
    subscriptionId = made.data[0]!.id
    await admin('POST', '/api-keys', { name: 'Warehouse ERP sync (nightly export)' })
    const clock = await admin<{ now: string }>('GET', '/test-clock')
    clockNow = new Date(Date.parse(clock.now) + 2 * 86_400_000).toISOString()
    await admin('POST', '/test-clock/advance', { to: clockNow })

    page = await (await browser.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US', timezoneId: 'Europe/London' })).newPage()
    watchPage(page, () => server.origin, { foreignRequests, pageProblems })
    await page.goto(`${server.origin}/console`)
    await page.getByLabel('Admin API key').fill(ADMIN_KEY)
    await page.getByRole('button', { name: 'Sign in' }).click()
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor()
  })

  after(async () => {
    await browser?.close()
    await server?.stop()
    await database?.remove()
    web?.cleanup()
  })

  const dialog = () => page.getByRole('dialog')
  const notice = () => page.locator('#notice')

  const screenshot = (t: TestContext, name: string) => screenshotAtWidths(page, t, 'console-settings-forms', name, { prefix: 'console-forms' })

  test('settings: the time zone from a picker, dunning retries and cancellation reasons as rows; the keys table whole at 1440 px; the test clock in the header', async (t) => {
    await page.goto(`${server.origin}/console/settings`)
    await page.getByRole('heading', { level: 1, name: 'Settings' }).waitFor()
    // The store's clock beside "Test mode", in the store's zone.
    await page.locator('#store-mode').filter({ hasText: 'Test mode · clock' }).waitFor()
    assert.match(await page.locator('#store-mode').innerText(), /Test mode · clock [A-Z][a-z]{2} \d+, \d{4}, \d+:\d\d [AP]M (EST|EDT)/)

    // Every column of the keys table is in view: nothing scrolls away at 1440 px.
    const keys = page.locator('section[aria-label="Admin API keys"] .table-wrap')
    await keys.waitFor()
    const fit = await keys.evaluate((element) => ({ scroll: element.scrollWidth, client: element.clientWidth }))
    assert.ok(fit.scroll <= fit.client, `the keys table scrolls by ${fit.scroll - fit.client} px at 1440`)
    const lastHeading = await keys.locator('thead th').last().boundingBox()
    const box = await keys.boundingBox()
    assert.ok(lastHeading && box && lastHeading.x + lastHeading.width <= box.x + box.width, 'the Actions column is visible')
    await screenshot(t, 'settings')

    // The time zone: a picker of the zones the browser knows, with the store's selected.
    const zone = page.getByLabel('Time zone')
    assert.equal(await zone.evaluate((element) => element.tagName), 'SELECT')
    assert.equal(await zone.inputValue(), 'America/New_York')
    assert.ok((await zone.locator('option').count()) > 300, 'every IANA zone the browser knows')
    await zone.selectOption('Asia/Tokyo')

    // Dunning retries: remove the second (3 days), add one of 10.
    assert.deepEqual(await page.locator('input[name="dunning_retry_day"]').evaluateAll((inputs) => inputs.map((input) => (input as unknown as { value: string }).value)), ['1', '3', '5'])
    await page.getByRole('button', { name: 'Remove retry 2' }).click()
    await page.getByRole('button', { name: 'Add a retry' }).click()
    await page.getByLabel('Retry 3: days after the first failure').fill('10')
    await page.getByRole('button', { name: 'Save settings' }).click()
    assert.match(await dialog().innerText(), /Time zone Asia\/Tokyo; retries 1, 5, 10 days after the first failure/)
    await dialog().getByRole('button', { name: 'Save' }).click()
    await notice().filter({ hasText: 'Settings saved.' }).waitFor()
    const saved = await admin<{ timezone: string; dunning_retry_days: number[] }>('GET', '/store')
    assert.equal(saved.timezone, 'Asia/Tokyo')
    assert.deepEqual(saved.dunning_retry_days, [1, 5, 10])
    // The console follows the new zone at once.
    await page.locator('#store-mode').filter({ hasText: /GMT\+9/ }).waitFor()

    // A retry out of order is refused in words before anything is sent.
    await page.getByLabel('Retry 1: days after the first failure').fill('7')
    await page.getByRole('button', { name: 'Save settings' }).click()
    await page.getByRole('alert').filter({ hasText: 'List the dunning retries in order' }).waitFor()

    // Cancellation reasons: one more (its code made from its words), and the first one reworded.
    await page.getByRole('button', { name: 'Add a reason' }).click()
    await page.getByLabel('Reason 2: what the subscriber reads').fill('I am moving abroad')
    await page.getByLabel('Reason 1: what the subscriber reads').fill('It is too expensive')
    await page.getByRole('button', { name: 'Save reasons' }).click()
    assert.match(await dialog().innerText(), /2 reasons, in this order: It is too expensive; I am moving abroad/)
    await dialog().getByRole('button', { name: 'Save' }).click()
    await notice().filter({ hasText: 'Cancellation reasons saved.' }).waitFor()
    const reasons = (await admin<{ cancellation_reasons: { code: string; label: string }[] }>('GET', '/store')).cancellation_reasons
    assert.deepEqual(reasons, [{ code: 'too_expensive', label: 'It is too expensive' }, { code: 'i_am_moving_abroad', label: 'I am moving abroad' }])
    // Removed again: the list is what is left.
    await page.getByRole('button', { name: 'Remove reason 1' }).click()
    await page.getByRole('button', { name: 'Save reasons' }).click()
    await Promise.all([page.waitForResponse((response) => response.url().endsWith('/api/v1/admin/store') && response.request().method() === 'PATCH'), dialog().getByRole('button', { name: 'Save' }).click()])
    assert.deepEqual((await admin<{ cancellation_reasons: unknown[] }>('GET', '/store')).cancellation_reasons, [{ code: 'i_am_moving_abroad', label: 'I am moving abroad' }])
  })

  test('catalogue: a plan with a trial and prepaid cycles, and a product\'s one-time price, from the forms', async (t) => {
    await page.goto(`${server.origin}/console/catalogue`)
    await page.getByRole('heading', { level: 1, name: 'Catalogue' }).waitFor()
    const form = page.locator('section[aria-label="New plan"]')
    await form.getByLabel('Product', { exact: true }).selectOption(productId)
    await form.getByLabel('Plan name').fill('Quarterly tins')
    await form.getByLabel('Price per charge').fill('45.00')
    await form.getByLabel('Trial (days)').fill('14')
    await form.getByLabel('Prepaid cycles (optional)').fill('3')
    await form.getByRole('button', { name: 'Create plan' }).click()
    assert.match(await dialog().innerText(), /Quarterly tins: \$15\.00 a month, \$45\.00 every 3 months, 14-day trial\./)
    await dialog().getByRole('button', { name: 'Create plan' }).click()
    await notice().filter({ hasText: 'Plan Quarterly tins created.' }).waitFor()
    const plans = await admin<{ data: { name: string; trial_days: number; prepaid_cycles: number | null; amount: number; b2b: boolean }[] }>('GET', `/plans?product_id=${productId}`)
    const quarterly = plans.data.find((plan) => plan.name === 'Quarterly tins')
    assert.deepEqual(quarterly && { trial: quarterly.trial_days, prepaid: quarterly.prepaid_cycles, amount: quarterly.amount, b2b: quarterly.b2b }, { trial: 14, prepaid: 3, amount: 4500, b2b: false })

    // The product's one-time price, set from its Edit form.
    const row = page.locator('section[aria-label^="Products"] tbody tr', { hasText: 'Sencha Green Tea' })
    await row.locator('summary', { hasText: 'Edit…' }).click()
    await row.getByLabel('One-time price (optional)').fill('21.50')
    await row.getByRole('button', { name: 'Save product' }).click()
    await dialog().getByRole('button', { name: 'Save product' }).click()
    await notice().filter({ hasText: 'Sencha Green Tea is saved.' }).waitFor()
    assert.deepEqual((await admin<{ one_time_price: unknown }>('GET', `/products/${productId}`)).one_time_price, { amount: 2150, currency: 'USD' })
    await page.locator('section[aria-label^="Products"] tbody tr', { hasText: '$21.50' }).waitFor()
    // A plan's Edit form: what the API lets change, filled in with what it is.
    const quarterlyRow = page.locator('section[aria-label^="Plans"] tbody tr', { hasText: 'Quarterly tins' })
    await quarterlyRow.locator('summary', { hasText: 'Edit…' }).click()
    assert.equal(await quarterlyRow.getByLabel('Trial (days)').inputValue(), '14')
    await screenshot(t, 'catalogue')
  })

  test('a subscription opens with its next order: date with its zone, lines, discount, shipping, tax and total, as the service priced it', async (t) => {
    await page.goto(`${server.origin}/console/subscriptions/${subscriptionId}`)
    const next = page.locator('section[aria-label="Next order"]')
    await next.locator('[data-figure="upcoming-amount"]').waitFor()
    const upcoming = await admin<{ next_charge_at: string; subtotal: number; discount_amount: number; shipping_amount: number; tax_amount: number; amount: number }>('GET', `/subscriptions/${subscriptionId}/upcoming`)
    // By hand: 2 x $16.00 = $32.00, 10% off = $3.20, $4.50 flat shipping, 8.25% tax on $28.80 = $2.38 (half up): $35.68.
    assert.deepEqual([upcoming.subtotal, upcoming.discount_amount, upcoming.shipping_amount, upcoming.tax_amount, upcoming.amount], [3200, 320, 450, 238, 3568])
    const text = (await next.locator('[data-upcoming]').innerText()).replace(/\s+/g, ' ')
    const when = new Intl.DateTimeFormat('en-US', { year: 'numeric', month: 'short', day: 'numeric', hour: 'numeric', minute: '2-digit', timeZone: 'Asia/Tokyo', timeZoneName: 'short' }).format(new Date(upcoming.next_charge_at))
    assert.ok(text.startsWith(when), `the date in the store's zone, with it: ${text}`)
    assert.match(text, /Sencha Green Tea, 2 × \$16\.00 \$32\.00 Subtotal \$32\.00 Discount SAVE10 − \$3\.20 Shipping \$4\.50 Tax \$2\.38 Total \$35\.68/)
    // Near the top: the first panel of the page.
    assert.equal(await page.locator('main section.panel').first().getAttribute('aria-label'), 'Next order')
    await screenshot(t, 'subscription')
    assert.deepEqual(pageProblems, [])
    assert.deepEqual(foreignRequests, [])
  })
})
