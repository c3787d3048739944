import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import { startBigCommerceSimulator, type BigCommerceSimulator } from '../helpers/bigcommerce-simulator.ts'
import { buildWebForTest, launchBrowser, skipWithoutChromium, adminClient, watchPage } from '../helpers/browser.ts'
import { createTestDatabase, onPostgres, scratchUrl } from '../helpers/database.ts'
import { startServer, type RunningServer } from '../helpers/server-process.ts'
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts'
import { newDataDir } from '../helpers/data-dir.ts'

/**
 * The portal's payment method change on a store that charges through BigCommerce, in Chromium
 * against the real service process and the BigCommerce simulator: the subscriber picks one of the
 * stored cards the platform lists for their customer (brand, last 4, expiry), the detail shows the
 * card's brand and last 4, and not one browser request leaves the service's origin. Then another
 * variant of the product (a grind the store sells; not one it stopped selling) through the page.
 * UPDATE_SCREENSHOTS=1 writes docs/screenshots/portal-stored-cards-1280.png and portal-variant-1280.png;
 * every run writes test-results/portal/portal-stored-cards-{1440,390}.png and portal-variant-1280.png.
 */

const STORE_HASH = 'northwindcards'
const STORE_NAME = 'Northwind Coffee Roasters'
const ADMIN_KEY = 'sk_test_portal_cards_0123456789abcdef'
const ACCESS_TOKEN = 'portal-cards-token-SECRET-1234'
const ADA = 'ada@example.com'
const CUSTOMER_ID = 41
const VISA = 'tokvisa'.padEnd(64, 'v')
const MASTERCARD = 'tokmastercard'.padEnd(64, 'm')
// The beans by grind; espresso is no longer sold.
const PRODUCT_ID = 77
const WHOLE = 7701
const GROUND = 7702
const ESPRESSO = 7703
const ADDRESS = { name: 'Ada Lovelace', line1: '12 Analytical Way', city: 'Portland', state: 'OR', postal_code: '97201', country: 'US' }
const SCREENSHOTS = new URL('../../docs/screenshots/', import.meta.url)
const ARTEFACTS = new URL('../../test-results/portal/', import.meta.url)

describe('portal: choosing a stored card on a BigCommerce store (real browser)', { skip: skipWithoutChromium, timeout: 120_000 }, () => {
  let web: Awaited<ReturnType<typeof buildWebForTest>>
  let sim: BigCommerceSimulator
  let sink: SmtpSink
  let server: RunningServer
  let handle: DatabaseHandle | undefined
  let dataDir: string | undefined
  let browser: Browser
  let page: Page
  let subscriptionId: string
  const foreignRequests: string[] = []
  const pageProblems: string[] = []

  const admin = adminClient(() => server.origin, ADMIN_KEY)

  before(async () => {
    sim = await startBigCommerceSimulator()
    sim.addStore({ hash: STORE_HASH, accessToken: ACCESS_TOKEN })
    sim.addCustomer(STORE_HASH, {
      id: CUSTOMER_ID,
      email: ADA,
      instruments: [
        { token: VISA, brand: 'VISA', last_4: '4242', expiry_month: 4, expiry_year: 2031, is_default: true },
        { token: MASTERCARD, brand: 'MASTERCARD', last_4: '4444', expiry_month: 11, expiry_year: 2029, is_default: false },
      ],
    })
    const grind = (id: number, label: string) => [{ id, label, option_id: 1, option_display_name: 'Grind' }, { id: 10, label: '1 kg', option_id: 2, option_display_name: 'Size' }]
    sim.addProduct(STORE_HASH, {
      id: PRODUCT_ID,
      name: 'House Blend Coffee Beans',
      price: 18,
      type: 'physical',
      variants: [
        { id: WHOLE, option_values: grind(1, 'Whole') },
        { id: GROUND, option_values: grind(2, 'Ground') },
        { id: ESPRESSO, option_values: grind(3, 'Espresso'), purchasing_disabled: true },
      ],
    })
    web = await buildWebForTest()
    sink = await startSmtpSink()
    let databaseEnv: Record<string, string>
    if (onPostgres) {
      handle = await createTestDatabase()
      databaseEnv = { DATABASE_URL: scratchUrl(handle)! }
    } else {
      dataDir = await newDataDir('sb-portal-cards-')
      databaseEnv = { DATA_DIR: dataDir }
    }
    server = await startServer({
      ...databaseEnv,
      SMTP_URL: sink.url,
      WEB_DIST_DIR: web.dir,
      SEED_DEMO_DATA: 'false',
      BOOTSTRAP_STORE_HASH: STORE_HASH,
      BOOTSTRAP_ADMIN_API_KEY: ADMIN_KEY,
      PLATFORM_API_URL: sim.apiUrl,
      PLATFORM_PAYMENTS_URL: sim.paymentsUrl,
      PLATFORM_LOGIN_URL: sim.loginUrl,
      PLATFORM_TOKEN_KEY: randomBytes(32).toString('hex'),
      LOG_LEVEL: 'error',
    })
    // A sandbox store: test mode, connected to the platform and charging through it.
    await admin('PATCH', '/store', { name: STORE_NAME })
    await admin('PUT', '/platform-connection', { access_token: ACCESS_TOKEN })
    await admin('PATCH', '/store', { gateway: 'platform' })
    const product = await admin<{ id: string }>('POST', '/products', { platform_product_id: String(PRODUCT_ID), name: 'House Blend Coffee Beans' })
    const plan = await admin<{ id: string }>('POST', '/plans', { product_id: product.id, currency: 'USD', name: 'Monthly bag', amount: 1800, interval: 'month' })
    const checkout = await admin<{ data: { id: string }[] }>('POST', '/checkouts', {
      platform_order_id: '5001',
      email: ADA,
      name: 'Ada Lovelace',
      shipping_address: ADDRESS,
      billing_address: ADDRESS,
      platform_customer_id: CUSTOMER_ID,
      payment_instrument_id: MASTERCARD,
      items: [{ plan_id: plan.id, quantity: 1, platform_variant_id: WHOLE }],
    })
    subscriptionId = checkout.data[0]!.id

    browser = await launchBrowser()
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'UTC' })
    page = await context.newPage()
    watchPage(page, () => server.origin, { foreignRequests, pageProblems })
  })

  after(async () => {
    await browser?.close()
    await server?.stop()
    await sink?.close()
    await sim?.close()
    await handle?.close()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
    web?.cleanup()
  })

  const heading = () => page.getByRole('heading', { level: 1 })
  const dialog = () => page.getByRole('dialog')
  const paymentFact = () => page.locator('section.summary dl div', { has: page.locator('dt', { hasText: 'Payment method' }) }).locator('dd')

  test('the detail shows the card, and the change picks one of the stored cards, confirmed first', async (t) => {
    await page.goto(`${server.origin}/portal?store=${STORE_HASH}`)
    await page.getByLabel('Email address').fill(ADA)
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click()
    await heading().filter({ hasText: 'Check your email' }).waitFor()
    const message = await sink.waitForMessage(ADA)
    const link = /https?:\/\/\S+\/portal\/login\?token=[A-Za-z0-9_-]+/.exec(message.parsed.text ?? '')![0]
    await page.goto(link)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await heading().filter({ hasText: 'Your subscriptions' }).waitFor()

    await page.goto(`${server.origin}/portal/subscriptions/${subscriptionId}`)
    await heading().filter({ hasText: 'House Blend Coffee Beans' }).waitFor()
    await page.locator('.loading').waitFor({ state: 'detached' })
    assert.equal(await paymentFact().innerText(), 'Mastercard ending in 4444')
    assert.ok(!(await page.locator('main').innerText()).includes(MASTERCARD), 'the token itself is not shown as the payment method')

    await page.locator('summary', { hasText: 'Change payment method' }).click()
    const choices = page.locator('fieldset.instrument-choices input[type=radio]')
    assert.equal(await choices.count(), 2)
    const labels = await page.locator('fieldset.instrument-choices label').allInnerTexts()
    assert.deepEqual(labels, ['Visa ending in 4242, expires 04/2031 (default)', 'Mastercard ending in 4444, expires 11/2029 (current)'])
    assert.equal(await page.getByLabel('Mastercard ending in 4444, expires 11/2029 (current)').isChecked(), true, 'the current card is chosen to begin with')
    await page.mouse.move(0, 0)
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      mkdirSync(SCREENSHOTS, { recursive: true })
      await page.screenshot({ path: new URL('portal-stored-cards-1280.png', SCREENSHOTS).pathname, fullPage: true })
      t.diagnostic('wrote docs/screenshots/portal-stored-cards-1280.png')
    }
    if (process.env.SCREENSHOT_DIR) await page.screenshot({ path: join(process.env.SCREENSHOT_DIR, 'portal-stored-cards-1280.png'), fullPage: true })
    // The open card picker at 1440 and 390 px into test-results/portal/; nothing may scroll sideways.
    mkdirSync(ARTEFACTS, { recursive: true })
    for (const width of [1440, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 1000 })
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')
      assert.ok(overflow <= 0, `${width} px: the page scrolls sideways by ${overflow} px`)
      await page.screenshot({ path: new URL(`portal-stored-cards-${width}.png`, ARTEFACTS).pathname, fullPage: true })
    }
    await page.setViewportSize({ width: 1280, height: 900 })

    // Submitting the current card again is stopped on the page.
    await page.getByRole('button', { name: 'Use this card' }).click()
    await page.getByRole('alert').filter({ hasText: 'This card already pays for the subscription' }).waitFor()

    await page.getByLabel('Visa ending in 4242, expires 04/2031 (default)').check()
    await page.getByRole('button', { name: 'Use this card' }).click()
    assert.match(await dialog().innerText(), /Future charges go to Visa ending in 4242, expires 04\/2031/)
    await dialog().getByRole('button', { name: 'Use it' }).click()
    await page.locator('#notice').filter({ hasText: 'Future charges go to Visa ending in 4242' }).waitFor()
    assert.equal(await paymentFact().innerText(), 'Visa ending in 4242')

    const stored = await admin<{ payment_instrument_id: string; payment_instrument: unknown }>('GET', `/subscriptions/${subscriptionId}`)
    assert.equal(stored.payment_instrument_id, VISA)
    assert.deepEqual(stored.payment_instrument, { brand: 'VISA', last_4: '4242' })
  })

  test('the variant changes through the page to another the store sells, confirmed first', async (t) => {
    await page.goto(`${server.origin}/portal/subscriptions/${subscriptionId}`)
    await heading().filter({ hasText: 'House Blend Coffee Beans' }).waitFor()
    await page.locator('.loading').waitFor({ state: 'detached' })
    const panel = page.locator('details', { has: page.locator('summary', { hasText: 'Change variant' }) })
    await panel.locator('summary').click()
    const select = panel.getByLabel('Variant', { exact: true })
    assert.deepEqual(await select.locator('option').allInnerTexts(), ['Grind: Whole, Size: 1 kg (current)', 'Grind: Ground, Size: 1 kg'], 'the current one and those the store sells')
    assert.equal(await select.inputValue(), String(WHOLE), 'the current one is chosen to begin with')
    await select.selectOption(String(GROUND))
    await page.mouse.move(0, 0)
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      mkdirSync(SCREENSHOTS, { recursive: true })
      await page.screenshot({ path: new URL('portal-variant-1280.png', SCREENSHOTS).pathname, fullPage: true })
      t.diagnostic('wrote docs/screenshots/portal-variant-1280.png')
    }
    if (process.env.SCREENSHOT_DIR) await page.screenshot({ path: join(process.env.SCREENSHOT_DIR, 'portal-variant-1280.png'), fullPage: true })
    mkdirSync(ARTEFACTS, { recursive: true })
    await page.screenshot({ path: new URL('portal-variant-1280.png', ARTEFACTS).pathname, fullPage: true })

    await panel.getByRole('button', { name: 'Change variant' }).click()
    assert.match(await dialog().innerText(), /From your next renewal: Grind: Ground, Size: 1 kg\. The price stays the same\./)
    await dialog().getByRole('button', { name: 'Change variant' }).click()
    await page.locator('#notice').filter({ hasText: 'Changed to Grind: Ground, Size: 1 kg from your next renewal' }).waitFor()

    const stored = await admin<{ platform_variant_id: string; amount: number }>('GET', `/subscriptions/${subscriptionId}`)
    assert.deepEqual([stored.platform_variant_id, stored.amount], [String(GROUND), 1800], 'another grind, the same price')
    await page.locator('summary', { hasText: 'Change variant' }).click()
    assert.equal(await page.getByLabel('Variant', { exact: true }).inputValue(), String(GROUND), 'the page shows the new one as current')
  })

  test('no request left the service origin; no script errors or CSP refusals; the platform saw only valid requests', () => {
    assert.deepEqual(foreignRequests, [])
    assert.deepEqual(pageProblems, [])
    assert.deepEqual(sim.violations, [])
  })
})
