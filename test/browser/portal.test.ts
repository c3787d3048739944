import assert from 'node:assert/strict'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import { buildWebForTest, launchBrowser, skipWithoutChromium, adminClient } from '../helpers/browser.ts'
import { createTestDatabase, onPostgres, scratchUrl } from '../helpers/database.ts'
import { startServer, type RunningServer } from '../helpers/server-process.ts'
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts'
import { newDataDir } from '../helpers/data-dir.ts'
import { waitUntil } from '../helpers/wait.ts'

/**
 * The subscriber portal end to end, in Chromium against the real service process: a sign-in link
 * from a real SMTP sink, the session in sessionStorage only, every kind of change confirmed first,
 * refusals in words, only the subscriber's own subscriptions, keyboard-only use, and not one request
 * to another origin. Screenshots at 1440, 1280, 390 and 360 px go to test-results/portal/portal-*.png;
 * UPDATE_SCREENSHOTS=1 also rewrites docs/screenshots/portal-{list,detail}-{1280,360}.png.
 */

const STORE_HASH = 'northwind-portal'
const STORE_NAME = 'Northwind Coffee Roasters'
const ADMIN_KEY = 'sk_test_portal_browser_0123456789abcdef'
const ADA = 'ada@example.com'
const GRACE = 'grace@example.com'
const SCREENSHOTS = new URL('../../docs/screenshots/', import.meta.url)
/** Every run's screenshots (gitignored), beside those of portal-manage.test.ts. */
const ARTEFACTS = new URL('../../test-results/portal/', import.meta.url)
const ADDRESS = { name: 'Ada Lovelace', line1: '12 Analytical Way', city: 'Portland', state: 'OR', postal_code: '97201', country: 'US' }

interface Seeded {
  coffee: string
  tea: string
  office: string
  grace: string
  graceProduct: string
}

describe('subscriber portal in a real browser', { skip: skipWithoutChromium, timeout: 120_000 }, () => {
  let web: Awaited<ReturnType<typeof buildWebForTest>>
  let sink: SmtpSink
  let server: RunningServer
  let handle: DatabaseHandle | undefined
  let dataDir: string | undefined
  let browser: Browser
  let context: BrowserContext
  let page: Page
  let seeded: Seeded
  const foreignRequests: string[] = []
  const pageProblems: string[] = []

  const admin = adminClient(() => server.origin, ADMIN_KEY)

  /** Watches a page: every request must stay on the service's origin; no script errors or CSP refusals. */
  const watch = (watched: Page) => {
    watched.on('request', (request) => {
      const url = request.url()
      if (url.startsWith('data:')) return
      if (new URL(url).origin !== server.origin) foreignRequests.push(url)
    })
    watched.on('pageerror', (error) => pageProblems.push(`page error: ${error.message}`))
    watched.on('console', (message) => {
      if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) pageProblems.push(`console: ${message.text()}`)
    })
  }

  async function seed(): Promise<Seeded> {
    await admin('PATCH', '/store', { name: STORE_NAME })
    const beans = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'house-beans', name: 'House Blend Coffee Beans' })
    const tea = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'darjeeling', name: 'Darjeeling Tea' })
    const office = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'office-coffee', name: 'Office Coffee Service' })
    const spice = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'secret-spice', name: 'Secret Spice Club' })
    const plan = (product: string, body: Record<string, unknown>) => admin<{ id: string }>('POST', '/plans', { product_id: product, currency: 'USD', ...body })
    const monthly = await plan(beans.id, { name: 'Monthly bag', amount: 1800, interval: 'month' })
    await plan(beans.id, { name: 'Fortnightly bag', amount: 1000, interval: 'week', interval_count: 2 })
    const teaPlan = await plan(tea.id, { name: 'Tin every month', amount: 1250, interval: 'month' })
    const officePlan = await plan(office.id, { name: 'Business monthly', amount: 9000, interval: 'month', b2b: true })
    const spicePlan = await plan(spice.id, { name: 'Spice box', amount: 2900, interval: 'month' })
    const checkout = async (order: string, email: string, instrument: string, items: { plan_id: string; quantity: number }[]) => {
      const result = await admin<{ data: { id: string; next_charge_at: string }[] }>('POST', '/checkouts', {
        platform_order_id: order,
        email,
        name: email === ADA ? 'Ada Lovelace' : 'Grace Hopper',
        shipping_address: email === ADA ? ADDRESS : { ...ADDRESS, name: 'Grace Hopper' },
        payment_instrument_id: instrument,
        items,
      })
      return result.data
    }
    const [coffee] = await checkout('order-1001', ADA, 'pi_visa_ok', [{ plan_id: monthly.id, quantity: 2 }])
    const [teaSub] = await checkout('order-1002', ADA, 'pi_visa_declined', [{ plan_id: teaPlan.id, quantity: 1 }])
    const [officeSub] = await checkout('order-1003', ADA, 'pi_visa_ok', [{ plan_id: officePlan.id, quantity: 5 }])
    const [graceSub] = await checkout('order-2001', GRACE, 'pi_visa_ok', [{ plan_id: spicePlan.id, quantity: 1 }])
    // A month on: the coffee renews, the tea's card is declined (a failed charge with a retry date).
    const due = Math.max(...[coffee!, teaSub!].map((s) => Date.parse(s.next_charge_at)))
    await admin('POST', '/test-clock/advance', { to: new Date(due + 3_600_000).toISOString() })
    // The tea's price goes up with the store's notice (30 days): the server's worker schedules it.
    await admin('POST', `/plans/${teaPlan.id}/price-change`, { amount: 1400, applies_to: 'existing_too' })
    await waitUntil('the tea subscription to show its scheduled price', async () => (await admin<{ scheduled_price: unknown }>('GET', `/subscriptions/${teaSub!.id}`)).scheduled_price, { timeoutMs: 20_000, everyMs: 50 })
    return { coffee: coffee!.id, tea: teaSub!.id, office: officeSub!.id, grace: graceSub!.id, graceProduct: 'Secret Spice Club' }
  }

  before(async () => {
    web = await buildWebForTest()
    sink = await startSmtpSink()
    let databaseEnv: Record<string, string>
    if (onPostgres) {
      handle = await createTestDatabase()
      databaseEnv = { DATABASE_URL: scratchUrl(handle)! }
    } else {
      dataDir = await newDataDir('sb-portal-')
      databaseEnv = { DATA_DIR: dataDir }
    }
    server = await startServer({
      ...databaseEnv,
      SMTP_URL: sink.url,
      WEB_DIST_DIR: web.dir,
      SEED_DEMO_DATA: 'false',
      BOOTSTRAP_STORE_HASH: STORE_HASH,
      BOOTSTRAP_ADMIN_API_KEY: ADMIN_KEY,
      LOG_LEVEL: 'error',
    })
    seeded = await seed()
    browser = await launchBrowser()
    context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale: 'en-US', timezoneId: 'UTC' })
    page = await context.newPage()
    watch(page)
  })

  after(async () => {
    await browser?.close()
    await server?.stop()
    await sink?.close()
    await handle?.close()
    if (dataDir) rmSync(dataDir, { recursive: true, force: true })
    web?.cleanup()
  })

  const heading = () => page.getByRole('heading', { level: 1 })
  const notice = () => page.locator('#notice')
  const dialog = () => page.getByRole('dialog')

  /** Email in the browser, link from the SMTP sink, "Sign in": lands on the subscription list. */
  async function signIn(email: string): Promise<void> {
    await page.goto(`${server.origin}/portal?store=${STORE_HASH}`)
    await page.getByLabel('Email address').fill(email)
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click()
    await heading().filter({ hasText: 'Check your email' }).waitFor()
    const message = await sink.waitForMessage(email)
    const link = /https?:\/\/\S+\/portal\/login\?token=[A-Za-z0-9_-]+/.exec(message.parsed.text ?? '')?.[0]
    assert.ok(link, `the email holds a sign-in link:\n${message.parsed.text}`)
    assert.ok(link.startsWith(`${server.origin}/portal/login?token=`))
    await page.goto(link)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await heading().filter({ hasText: 'Your subscriptions' }).waitFor()
  }

  async function openDetail(productName: string): Promise<void> {
    await page.getByRole('link', { name: productName }).click()
    await heading().filter({ hasText: productName }).waitFor()
  }

  // Page-side code goes in as strings: this file compiles with Node's types, not the DOM's.
  const storage = () =>
    page.evaluate<{ session: string | null; sessionKeys: string[]; localKeys: string[]; local: string; cookie: string }>(`({
      session: sessionStorage.getItem('portal.session'),
      sessionKeys: Object.keys(sessionStorage),
      localKeys: Object.keys(localStorage),
      local: JSON.stringify({ ...localStorage }),
      cookie: document.cookie,
    })`)
  const focused = () => page.evaluate<string | undefined>('document.activeElement?.textContent?.trim()')

  test('sign-in: the emailed link signs in only when "Sign in" is pressed; the token lives in sessionStorage only', async () => {
    await page.goto(`${server.origin}/portal?store=${STORE_HASH}`)
    await heading().filter({ hasText: 'Sign in' }).waitFor()
    assert.equal(await page.locator('#store-name').textContent(), STORE_NAME, "the header shows the store's name")
    await page.getByLabel('Email address').fill(ADA)
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click()
    await heading().filter({ hasText: 'Check your email' }).waitFor()

    const message = await sink.waitForMessage(ADA)
    const link = /https?:\/\/\S+\/portal\/login\?token=[A-Za-z0-9_-]+/.exec(message.parsed.text ?? '')![0]
    // A mail scanner fetches the link first: a GET must not use the token up.
    const scanned = await fetch(link)
    assert.equal(scanned.status, 200)
    assert.match(scanned.headers.get('content-security-policy') ?? '', /default-src 'none'/)

    await page.goto(link)
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor()
    assert.equal(new URL(page.url()).search, '', 'the token left the address bar')
    assert.equal((await storage()).session, null, 'opening the link alone does not sign in')
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await heading().filter({ hasText: 'Your subscriptions' }).waitFor()
    await page.getByText('You are signed in.').waitFor()

    const stored = await storage()
    assert.ok(stored.session, 'the session is in sessionStorage')
    const { token } = JSON.parse(stored.session) as { token: string }
    assert.match(token, /^[\w-]+\.[\w-]+\.[\w-]+$/, 'a JWT')
    const me = await fetch(`${server.origin}/api/v1/portal/me`, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(((await me.json()) as { email: string }).email, ADA, 'the stored token is the session of this subscriber')
    assert.deepEqual(stored.localKeys, [], 'nothing in localStorage')
    assert.ok(!stored.local.includes(token))
    assert.equal(stored.cookie, '', 'no cookie readable by the page')
    assert.deepEqual(await context.cookies(), [], 'no cookie at all')
    assert.equal(await page.locator('#store-name').textContent(), STORE_NAME)
    assert.ok(await page.getByRole('navigation', { name: 'Account' }).getByText(ADA).isVisible())

    // The link works once: opened again, it is refused in words and offers a new one.
    await page.goto(link)
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await page.getByRole('alert').filter({ hasText: 'This sign-in link is not valid' }).waitFor()
    assert.equal(await focused(), 'Request a new sign-in link', 'the way on takes the focus')
    await page.goto(`${server.origin}/portal`)
    await heading().filter({ hasText: 'Your subscriptions' }).waitFor()
  })

  test("the list shows the subscriber's own subscriptions, and another subscriber's is not found", async () => {
    const cards = page.locator('[data-subscription-id]')
    await cards.first().waitFor()
    assert.equal(await cards.count(), 3)
    const ids = await cards.evaluateAll((nodes) => nodes.map((node) => node.getAttribute('data-subscription-id')))
    assert.deepEqual(new Set(ids), new Set([seeded.coffee, seeded.tea, seeded.office]))

    const coffee = page.locator(`[data-subscription-id="${seeded.coffee}"]`)
    const coffeeText = (await coffee.innerText()).replace(/\s+/g, ' ')
    assert.match(coffeeText, /House Blend Coffee Beans/)
    assert.match(coffeeText, /Monthly bag/)
    assert.match(coffeeText, /Active/)
    assert.match(coffeeText, /House Blend Coffee Beans ×2, since [A-Z][a-z]{2} \d{1,2}, \d{4}/, 'the title says the quantity and the start')
    assert.match(coffeeText, new RegExp(`ref …${seeded.coffee.slice(-6)}`), 'and the end of the reference')
    assert.match(coffeeText, /\$18\.00 every month × 2/, 'price in the currency and how often, and the quantity')
    // The next charge is the service's figure (GET .../upcoming), not one the page worked out.
    const upcoming = await admin<{ amount: number }>('GET', `/subscriptions/${seeded.coffee}/upcoming`)
    assert.equal(upcoming.amount, 3600)
    assert.match(coffeeText, /Next charge \$36\.00 on [A-Z][a-z]{2} \d{1,2}, \d{4}/, 'the next charge, amount and date')

    const text = await page.locator('main').innerText()
    assert.ok(!text.includes(seeded.graceProduct), "another subscriber's product never appears")
    assert.ok(!(await page.content()).includes(seeded.grace), "another subscriber's subscription id never appears")

    await page.goto(`${server.origin}/portal/subscriptions/${seeded.grace}`)
    await heading().filter({ hasText: 'Subscription not found' }).waitFor()
    assert.ok(!(await page.locator('main').innerText()).includes(seeded.graceProduct))
  })

  test('detail: charge history with failure reasons in words', async () => {
    await page.goto(`${server.origin}/portal`)
    await openDetail('Darjeeling Tea')
    const history = page.locator('section.history')
    await history.getByText('Failed').waitFor()
    const text = await history.innerText()
    assert.match(text, /The card was declined by the bank\./)
    assert.match(text, /try again on/)
    assert.match(text, /\$12\.50/)
    assert.match(await page.locator('.callout').innerText(), /The last payment failed: the card was declined by the bank\. We'll try again on /)
    assert.match(await page.locator('section.summary').innerText(), /Price changes to \$14\.00 on [A-Z][a-z]{2} \d{1,2}, \d{4}/, 'the price change announced, with its date')

    await page.getByRole('link', { name: 'All subscriptions' }).click()
    await openDetail('House Blend Coffee Beans')
    assert.ok(await page.getByRole('navigation', { name: 'Account' }).getByText(ADA).isVisible(), 'the account stays in the header')
    const paid = await page.locator('section.history').innerText()
    assert.match(paid, /Paid/)
    assert.match(paid, /\$36\.00/)
  })

  test('pause (with a resume date), resume, change quantity and plan: each confirmed first', async () => {
    // Pause until a date, confirmed in the dialog.
    await page.locator('summary', { hasText: 'Pause' }).click()
    const resumeOn = new Date(Date.now() + 120 * 86_400_000).toISOString().slice(0, 10)
    await page.getByLabel('Resume automatically on (optional)').fill(resumeOn)
    await page.getByRole('button', { name: 'Pause subscription' }).click()
    await dialog().getByRole('heading', { name: 'Pause this subscription?' }).waitFor()
    await dialog().getByRole('button', { name: 'Pause subscription' }).click()
    await notice().filter({ hasText: 'Your subscription is paused until' }).waitFor()
    assert.match(await page.locator('.detail-head .badge').innerText(), /^Paused until /)

    // Resume.
    await page.getByRole('button', { name: 'Resume subscription' }).click()
    await dialog().getByRole('button', { name: 'Resume subscription' }).click()
    await notice().filter({ hasText: 'Your subscription is active again.' }).waitFor()
    assert.equal(await page.locator('.detail-head .badge').innerText(), 'Active')

    // Quantity.
    await page.locator('summary', { hasText: 'Change quantity' }).click()
    await page.getByLabel('Quantity', { exact: true }).fill('3')
    await page.getByRole('button', { name: 'Update quantity' }).click()
    assert.match(await dialog().innerText(), /you get 3 at \$18\.00 each, every month/)
    await dialog().getByRole('button', { name: 'Update quantity' }).click()
    await notice().filter({ hasText: 'The quantity is now 3.' }).waitFor()
    // The service prices the next charge at the new quantity.
    assert.match(await page.locator('section.summary').innerText(), /Next charge\s+\$54\.00 on /)

    // Swap, choosing from the swap options: radio buttons grouped by product, under "New plan".
    await page.locator('summary', { hasText: 'Change plan' }).click()
    const picker = page.getByRole('group', { name: 'New plan' })
    const beans = picker.getByRole('group', { name: 'House Blend Coffee Beans' })
    const choices = (await beans.locator('label').allInnerTexts()).map((text) => text.replace(/\s+/g, ' ').trim())
    assert.ok(choices.includes('Fortnightly bag $10.00 every 2 weeks'), `swap options: ${choices.join(' | ')}`)
    await beans.getByRole('radio', { name: /^Fortnightly bag/ }).check()
    await page.getByRole('button', { name: 'Change plan' }).click()
    const confirmation = (await dialog().innerText()).replace(/\s+/g, ' ')
    assert.match(confirmation, /From [A-Z][a-z]{2} \d{1,2}, \d{4}: House Blend Coffee Beans · Fortnightly bag · \$10\.00 every 2 weeks\./, 'the confirmation says from when')
    assert.match(confirmation, /New price: \$10\.00 every 2 weeks, for each of your 3\./, 'and the new price for each of the quantity')
    await dialog().getByRole('button', { name: 'Change plan' }).click()
    await notice().filter({ hasText: 'Your plan changes to House Blend Coffee Beans · Fortnightly bag' }).waitFor()
  })

  test('keyboard only: open a subscription and skip its next renewal with Tab and Enter', async () => {
    await page.goto(`${server.origin}/portal`)
    await heading().filter({ hasText: 'Your subscriptions' }).waitFor()
    const tabTo = async (text: string | RegExp) => {
      for (let presses = 0; presses < 40; presses++) {
        await page.keyboard.press('Tab')
        const now = (await focused())?.replace(/\s+/g, ' ')
        if (typeof text === 'string' ? now === text : now !== undefined && text.test(now)) return
      }
      assert.fail(`Tab never reached "${text}"`)
    }
    // The card's link names the product, the quantity and the start (two of one product stay apart).
    await tabTo(/^House Blend Coffee Beans ×3, since [A-Z][a-z]{2} \d{1,2}, \d{4}$/)
    await page.keyboard.press('Enter')
    await heading().filter({ hasText: 'House Blend Coffee Beans' }).waitFor()
    assert.equal(await page.evaluate<string>('document.activeElement.tagName'), 'H1', 'navigation moves the focus to the main heading')
    await tabTo('Skip next renewal')
    await page.keyboard.press('Enter')
    await dialog().waitFor()
    assert.equal(await focused(), 'Skip it', 'the dialog takes the focus')
    await page.keyboard.press('Enter')
    await notice().filter({ hasText: 'The next renewal will be skipped.' }).waitFor()
    assert.match(await page.locator('section.summary').innerText(), /Next charge\s+\$\d+\.\d{2} on [A-Z][a-z]{2} \d{1,2}, \d{4} \(the [A-Z][a-z]{2} \d{1,2}, \d{4} renewal is skipped\)/)
    // The next Tab lands on a link whose focus ring shows.
    await page.keyboard.press('Tab')
    assert.equal(await focused(), '← All subscriptions')
    assert.equal(await page.evaluate<string>('getComputedStyle(document.activeElement).outlineStyle'), 'solid', 'focus is visible')
  })

  test("a refused action shows the service's reason in words", async () => {
    // The store pauses the subscription while the subscriber's page still shows it active.
    await admin('POST', `/subscriptions/${seeded.coffee}/pause`)
    await page.locator('summary', { hasText: 'Pause' }).click()
    await page.getByRole('button', { name: 'Pause subscription' }).click()
    await dialog().getByRole('button', { name: 'Pause subscription' }).click()
    const alert = page.locator('.manage [role="alert"]').filter({ hasText: 'Not changed' })
    await alert.waitFor()
    assert.match(await alert.innerText(), /Not changed: Cannot pause a paused subscription\./)
  })

  test('cancel: "Keep subscription" changes nothing; confirming cancels with the reason', async () => {
    await page.reload()
    await heading().filter({ hasText: 'House Blend Coffee Beans' }).waitFor()
    assert.match(await page.locator('.detail-head .badge').innerText(), /^Paused/)
    await page.locator('summary', { hasText: 'Cancel subscription' }).click()
    await page.getByLabel('Reason (optional)').fill('Moving abroad')
    await page.getByRole('button', { name: 'Cancel subscription' }).click()
    // The destructive dialog starts on the safe choice.
    assert.equal(await focused(), 'Keep subscription')
    await dialog().getByRole('button', { name: 'Keep subscription' }).click()
    await dialog().waitFor({ state: 'hidden' })
    assert.match(await page.locator('.detail-head .badge').innerText(), /^Paused/, 'still paused')

    // Keeping the paid period is the default (ticked): ending it now takes unticking it.
    await page.getByLabel(/Keep it until the paid period ends/).uncheck()
    await page.getByRole('button', { name: 'Cancel subscription' }).click()
    await dialog().getByRole('button', { name: 'Yes, cancel it' }).click()
    await notice().filter({ hasText: 'Your subscription is cancelled.' }).waitFor()
    assert.equal(await page.locator('.detail-head .badge').innerText(), 'Cancelled')
    assert.match(await page.locator('section.summary').innerText(), /Reason given\s+Moving abroad/)
    assert.match(await page.locator('.manage').innerText(), /nothing left to change/)
  })

  test('business plan: a change request is confirmed, sent and listed with its status', async () => {
    await page.goto(`${server.origin}/portal`)
    await openDetail('Office Coffee Service')
    assert.equal(await page.locator('summary', { hasText: 'Change quantity' }).count(), 0, 'no direct changes on a business plan')
    // Every control of every form on the page has a label; one h1 per page.
    const unlabelled = await page.evaluate<string[]>(
      `[...document.querySelectorAll('input, select, textarea')].filter((el) => el.labels.length === 0).map((el) => el.name || el.outerHTML)`,
    )
    assert.deepEqual(unlabelled, [])
    assert.equal(await page.locator('h1').count(), 1)
    await page.locator('summary', { hasText: 'Request a change' }).click()
    await page.getByRole('button', { name: 'Send request' }).click()
    await page.locator('.manage [role="alert"]').filter({ hasText: 'Choose at least one change' }).waitFor()
    await page.getByLabel('New quantity (optional)').fill('12')
    await page.getByLabel('Note for the store (optional)').fill('The team doubled.')
    await page.getByRole('button', { name: 'Send request' }).click()
    assert.match(await dialog().innerText(), /Quantity 12/)
    await dialog().getByRole('button', { name: 'Send request' }).click()
    await notice().filter({ hasText: 'Your change request was sent to the store.' }).waitFor()
    const requests = await page.locator('section.requests').innerText()
    assert.match(requests, /Quantity 12/)
    assert.match(requests, /Waiting for the store/)
    assert.match(requests, /The team doubled\./)
  })

  test('screenshots at 1440, 1280, 390 and 360 px (test-results/portal/; UPDATE_SCREENSHOTS=1 also writes the docs ones)', async (t) => {
    const pages: [string, string][] = [
      ['portal-list', '/portal'],
      ['portal-detail', `/portal/subscriptions/${seeded.tea}`],
    ]
    // 1280 and 360 are the docs' screenshots; 1440 and 390 are artefacts like the other portal tests'.
    const widths = [1440, 1280, 390, 360]
    mkdirSync(ARTEFACTS, { recursive: true })
    if (process.env.UPDATE_SCREENSHOTS === '1') mkdirSync(SCREENSHOTS, { recursive: true })
    for (const width of widths) {
      for (const [name, path] of pages) {
        const file = `${name}-${width}.png`
        await page.setViewportSize({ width, height: width < 400 ? 800 : 900 })
        await page.goto(`${server.origin}${path}`)
        await heading().waitFor()
        await page.locator('.loading').waitFor({ state: 'detached' })
        // Nothing may stick out sideways, down to 360 px.
        const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')
        assert.ok(overflow <= 0, `${file}: the page scrolls sideways by ${overflow} px`)
        if (name === 'portal-detail') await page.locator('summary', { hasText: 'Pause' }).click()
        await page.mouse.move(0, 0)
        await page.screenshot({ path: new URL(file, ARTEFACTS).pathname, fullPage: true })
        if (process.env.UPDATE_SCREENSHOTS === '1' && (width === 1280 || width === 360)) {
          await page.screenshot({ path: new URL(file, SCREENSHOTS).pathname, fullPage: true })
          t.diagnostic(`wrote docs/screenshots/${file}`)
        }
      }
    }
    await page.setViewportSize({ width: 1280, height: 900 })
  })

  test('a refused session (401) returns to sign-in with a clear message', async () => {
    await page.goto(`${server.origin}/portal`)
    await heading().filter({ hasText: 'Your subscriptions' }).waitFor()
    const { token } = JSON.parse((await storage()).session!) as { token: string }
    // The session is revoked behind the page's back (as by a sign-out elsewhere).
    const revoked = await fetch(`${server.origin}/api/v1/portal/auth/logout`, { method: 'POST', headers: { authorization: `Bearer ${token}` } })
    assert.equal(revoked.status, 204)
    await openDetailExpectingSignIn()
    assert.equal((await storage()).session, null)

    async function openDetailExpectingSignIn() {
      await page.getByRole('link', { name: 'Darjeeling Tea' }).click()
      await heading().filter({ hasText: 'Sign in' }).waitFor()
      await page.getByRole('alert').filter({ hasText: 'Your session has ended or is no longer valid. Request a new sign-in link to continue.' }).waitFor()
      assert.equal(new URL(page.url()).searchParams.get('store'), STORE_HASH, 'sign-in keeps the store')
    }
  })

  test('an expired session returns to sign-in by itself', async () => {
    await signIn(ADA)
    // The session runs out a second from now (as after its 15 minutes).
    await page.evaluate(() => {
      const session = JSON.parse(sessionStorage.getItem('portal.session')!) as { token: string; expiresAt: number }
      sessionStorage.setItem('portal.session', JSON.stringify({ ...session, expiresAt: Date.now() + 1000 }))
    })
    await page.reload()
    await heading().filter({ hasText: 'Sign in' }).waitFor({ timeout: 5_000 })
    await page.getByRole('alert').filter({ hasText: 'Your session has expired.' }).waitFor()
    assert.equal((await storage()).session, null)
  })

  test('sign-out calls logout, clears sessionStorage and returns to sign-in', async () => {
    await signIn(ADA)
    const { token } = JSON.parse((await storage()).session!) as { token: string }
    await page.getByRole('button', { name: 'Sign out' }).click()
    await heading().filter({ hasText: 'Sign in' }).waitFor()
    await page.getByText('You have signed out.').waitFor()
    const stored = await storage()
    assert.deepEqual(stored.sessionKeys, [], 'sessionStorage is empty')
    assert.deepEqual(stored.localKeys, [])
    const me = await fetch(`${server.origin}/api/v1/portal/me`, { headers: { authorization: `Bearer ${token}` } })
    assert.equal(me.status, 401, 'the signed-out token is refused')
    assert.equal(await page.locator('#store-name').textContent(), STORE_NAME)
  })

  test('no request left the service origin; no script errors or CSP refusals', () => {
    assert.deepEqual(foreignRequests, [])
    assert.deepEqual(pageProblems, [])
  })
})
