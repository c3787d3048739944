import assert from 'node:assert/strict'
import { mkdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import type { DatabaseHandle } from '../../src/db/connect.ts'
import { buildWebForTest, launchBrowser, skipWithoutChromium, adminClient, watchPage } from '../helpers/browser.ts'
import { createTestDatabase, onPostgres, scratchUrl } from '../helpers/database.ts'
import { startServer, type RunningServer } from '../helpers/server-process.ts'
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts'
import { newDataDir } from '../helpers/data-dir.ts'

/**
 * The portal's issue 15 pages in Chromium against the real service: a discount code, an add-on for
 * the next order, order now with what it charges, reschedule with the date picker, the retention
 * step before a cancellation (take an offer; decline and cancel with the store's reason), and the swap
 * picker's labels (prepaid per cycle and per charge, grouped, sorted), and a refunded charge's label in
 * the charge history (partly, then in full). Each step is screenshotted at
 * 1440 and 390 px into test-results/portal/ (artefacts).
 */

const STORE_HASH = 'northwind-manage'
const STORE_NAME = 'Northwind Coffee Roasters'
const ADMIN_KEY = 'sk_test_portal_manage_0123456789abcdef'
const ADA = 'ada@example.com'
const ARTEFACTS = new URL('../../test-results/portal/', import.meta.url)
const ADDRESS = { name: 'Ada Lovelace', line1: '12 Analytical Way', city: 'Portland', state: 'OR', postal_code: '97201', country: 'US' }

describe('portal: discounts, add-ons, order now, reschedule, retention (real browser)', { skip: skipWithoutChromium, timeout: 180_000 }, () => {
  let web: Awaited<ReturnType<typeof buildWebForTest>>
  let sink: SmtpSink
  let server: RunningServer
  let handle: DatabaseHandle | undefined
  let dataDir: string | undefined
  let browser: Browser
  let page: Page
  const subs: Record<string, string> = {}
  const pageProblems: string[] = []

  const admin = adminClient(() => server.origin, ADMIN_KEY)

  before(async () => {
    mkdirSync(ARTEFACTS, { recursive: true })
    web = await buildWebForTest()
    sink = await startSmtpSink()
    let databaseEnv: Record<string, string>
    if (onPostgres) {
      handle = await createTestDatabase()
      databaseEnv = { DATABASE_URL: scratchUrl(handle)! }
    } else {
      dataDir = await newDataDir('sb-portal-manage-')
      databaseEnv = { DATA_DIR: dataDir }
    }
    server = await startServer({ ...databaseEnv, SMTP_URL: sink.url, WEB_DIST_DIR: web.dir, SEED_DEMO_DATA: 'false', BOOTSTRAP_STORE_HASH: STORE_HASH, BOOTSTRAP_ADMIN_API_KEY: ADMIN_KEY, LOG_LEVEL: 'error' })

    await admin('PATCH', '/store', {
      name: STORE_NAME,
      timezone: 'UTC',
      cancellation_reasons: [{ code: 'too_expensive', label: 'It costs too much' }, { code: 'too_much_coffee', label: 'I have too much coffee' }],
      retention_offers: [{ type: 'pause', days: 30 }, { type: 'skip' }],
    })
    const beans = await admin('POST', '/products', { platform_product_id: 'house-beans', name: 'House Blend Coffee Beans', one_time_price: { amount: 2400, currency: 'USD' } })
    const decaf = await admin('POST', '/products', { platform_product_id: 'decaf', name: 'Decaf Blend', one_time_price: { amount: 2000, currency: 'USD' } })
    await admin('POST', '/products', { platform_product_id: 'mug', name: 'Enamel Mug', one_time_price: { amount: 1200, currency: 'USD' } })
    const plan = (product: string, body: Record<string, unknown>) => admin('POST', '/plans', { product_id: product, currency: 'USD', ...body })
    const monthly = await plan(beans.id, { name: 'Monthly bag', amount: 1800, interval: 'month' })
    await plan(beans.id, { name: 'Every 6 weeks', amount: 2100, interval: 'week', interval_count: 6 })
    await plan(beans.id, { name: 'Quarterly prepaid', amount: 6120, interval: 'month', prepaid_cycles: 3 })
    await plan(decaf.id, { name: 'Decaf monthly', amount: 1900, interval: 'month' })
    await admin('POST', '/discounts', { code: 'SAVE20', type: 'percentage', value: 20, duration: 'forever' })
    let order = 3000
    const checkout = async (quantity: number) => {
      const result = await admin<{ data: { id: string }[] }>('POST', '/checkouts', {
        platform_order_id: `order-${order++}`, email: ADA, name: 'Ada Lovelace', shipping_address: ADDRESS, payment_instrument_id: 'pi_visa_ok', items: [{ plan_id: monthly.id, quantity }],
      })
      return result.data[0]!.id
    }
    // The one managed below: 2 x 1,800, so 20% off and a 1,200 add-on make 3,600 - 720 + 1,200 = 4,080.
    for (const [name, quantity] of [['manage', 2], ['keep', 1], ['cancel', 1]] as const) subs[name] = await checkout(quantity)
    browser = await launchBrowser()
    page = await (await browser.newContext({ viewport: { width: 1440, height: 1000 }, locale: 'en-US', timezoneId: 'UTC' })).newPage()
    watchPage(page, () => server.origin, { pageProblems })
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
  const panel = (summary: string) => page.locator('details.action', { has: page.locator('summary', { hasText: summary }) })

  /** Both widths, the whole page, into test-results/portal/; nothing may scroll sideways at 390 px. */
  async function shoot(name: string): Promise<void> {
    for (const width of [1440, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 1000 })
      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')
      assert.ok(overflow <= 0, `${name} at ${width}: the page scrolls sideways by ${overflow} px`)
      await page.screenshot({ path: new URL(`${name}-${width}.png`, ARTEFACTS).pathname, fullPage: true })
    }
    await page.setViewportSize({ width: 1440, height: 1000 })
  }

  async function openSubscription(id: string): Promise<void> {
    await page.goto(`${server.origin}/portal/subscriptions/${id}`)
    await heading().filter({ hasText: 'House Blend Coffee Beans' }).waitFor()
  }

  test('a sign-in link opens a page that keeps the store name; a portal without ?store= explains how to get in', async () => {
    await page.goto(`${server.origin}/portal`)
    await heading().filter({ hasText: 'Sign in' }).waitFor()
    const text = await page.locator('main').innerText()
    assert.ok(!/Store ID/i.test(text), text)
    assert.match(text, /Manage subscriptions/)
    await shoot('no-store')

    await page.goto(`${server.origin}/portal?store=${STORE_HASH}`)
    await page.getByLabel('Email address').fill(ADA)
    await page.getByRole('button', { name: 'Email me a sign-in link' }).click()
    await heading().filter({ hasText: 'Check your email' }).waitFor()
    // The subscriptions' "created" emails came first: wait for the requested sign-in link itself.
    let message = sink.messagesTo(ADA).find((m) => /sign-in link/i.test(m.parsed.subject ?? ''))
    for (let tries = 0; !message && tries < 100; tries++) {
      // wall clock: the server process mails the link to a real SMTP server; polled, with a deadline.
      await new Promise((resolve) => setTimeout(resolve, 100))
      message = sink.messagesTo(ADA).find((m) => /sign-in link/i.test(m.parsed.subject ?? ''))
    }
    assert.ok(message, 'the sign-in link arrived')
    const link = /https?:\/\/\S+\/portal\/login\?\S+/.exec(message.parsed.text ?? '')![0]
    assert.equal(new URL(link).searchParams.get('store'), STORE_HASH)
    await page.goto(link)
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor()
    await page.locator('#store-name', { hasText: STORE_NAME }).waitFor()
    await page.getByRole('button', { name: 'Sign in', exact: true }).click()
    await heading().filter({ hasText: 'Your subscriptions' }).waitFor({ timeout: 5000 }).catch(async (error) => {
      throw new Error(`${error}\n${link}\n${await page.locator('main').innerText()}`)
    })
    // Three identical subscriptions: each title says which one it is.
    const titles = await page.locator('.subscription-card h2').allInnerTexts()
    assert.equal(titles.length, 3)
    const tags = await page.locator('.subscription-card .plan-name').allInnerTexts()
    assert.equal(new Set(tags).size, 3, `told apart: ${tags.join(' | ')}`)
    const card = (await page.locator(`[data-subscription-id="${subs.manage}"]`).innerText()).replace(/\s+/g, ' ')
    assert.equal(card.match(/every month/gi)?.length, 1, `the interval once: ${card}`)
    assert.equal(card.match(/Active/g)?.length, 1, `the status once: ${card}`)
    await shoot('list')
  })

  test('the swap picker: grouped by product, sorted, prepaid per month and per charge; the confirmation shows the date and new price', async () => {
    await openSubscription(subs.manage!)
    await page.locator('summary', { hasText: 'Change plan' }).click()
    const groups = await panel('Change plan').locator('fieldset.plan-group legend').allInnerTexts()
    assert.deepEqual(groups, ['House Blend Coffee Beans', 'Decaf Blend'])
    const labels = (await panel('Change plan').locator('fieldset.plan-group').first().locator('label').allInnerTexts()).map((t) => t.replace(/\s+/g, ' ').trim())
    // Sorted by what one delivery costs: $20.40 before $21.00.
    assert.deepEqual(labels, ['Quarterly prepaid $20.40 a month, $61.20 every 3 months', 'Every 6 weeks $21.00 every 6 weeks'])
    await panel('Change plan').getByLabel(/Quarterly prepaid/).check()
    await panel('Change plan').getByRole('button', { name: 'Change plan' }).click()
    const confirmation = await dialog().innerText()
    // The plan named with its product, so two products' plans of one name never read alike.
    assert.match(confirmation, /From [A-Z][a-z]{2} \d{1,2}, \d{4}: House Blend Coffee Beans · Quarterly prepaid · \$20\.40 a month, \$61\.20 every 3 months\./)
    assert.match(confirmation, /New price: \$20\.40 a month, \$61\.20 every 3 months, for each of your 2\./)
    await shoot('swap-confirm')
    await dialog().getByRole('button', { name: 'Go back' }).click()
  })

  test('apply a discount code (a refusal in the API words), add an add-on: the next charge is the service\'s $40.80; order now charges it', async () => {
    await page.locator('summary', { hasText: 'Apply a discount code' }).click()
    await page.getByLabel('Discount code').fill('NOPE')
    await panel('Apply a discount code').getByRole('button', { name: 'Apply code' }).click()
    await dialog().getByRole('button', { name: 'Apply code' }).click()
    const refusal = panel('Apply a discount code').locator('[role="alert"]').filter({ hasText: 'Not changed' })
    await refusal.waitFor()
    assert.match(await refusal.innerText(), /Not changed: .*(code|discount)/i)
    await page.getByLabel('Discount code').fill('save20')
    await panel('Apply a discount code').getByRole('button', { name: 'Apply code' }).click()
    await dialog().getByRole('button', { name: 'Apply code' }).click()
    await notice().filter({ hasText: 'The code SAVE20 is applied.' }).waitFor()
    assert.match(await page.locator('section.summary').innerText(), /SAVE20: 20% off/)

    await page.locator('summary', { hasText: 'Add something to the next order' }).click()
    const products = await page.getByLabel('Product').locator('option').allInnerTexts()
    assert.deepEqual(products, ['Choose a product', 'Decaf Blend, $20.00', 'Enamel Mug, $12.00', 'House Blend Coffee Beans, $24.00'])
    await page.getByLabel('Product').selectOption({ label: 'Enamel Mug, $12.00' })
    await panel('Add something').getByLabel('Quantity').fill('1')
    await panel('Add something').getByRole('button', { name: 'Add to next order' }).click()
    assert.match(await dialog().innerText(), /1 × Enamel Mug at \$12\.00 each/)
    await dialog().getByRole('button', { name: 'Add to next order' }).click()
    await notice().filter({ hasText: 'Enamel Mug is added to your next order.' }).waitFor()
    await page.locator('summary', { hasText: 'Add something to the next order' }).click()
    assert.match(await page.locator('.addon-list').innerText(), /1 × Enamel Mug, \$12\.00/)

    // By hand: 2 x $18.00 = $36.00, 20% off it = $7.20, the mug $12.00 in full: $40.80. The page shows the
    // service's preview (the same figures the charge will carry), line by line.
    const upcoming = await admin<{ amount: number; subtotal: number; discount_amount: number }>('GET', `/subscriptions/${subs.manage}/upcoming`)
    assert.deepEqual([upcoming.subtotal, upcoming.discount_amount, upcoming.amount], [4800, 720, 4080])
    const summary = await page.locator('section.summary').innerText()
    assert.match(summary, /Next charge\s+\$40\.80 on [A-Z][a-z]{2} \d{1,2}, \d{4}/)
    // The next order near the top: its date (the store's calendar), lines, discount, shipping, tax and total.
    const lines = (await page.locator('section.next-order .charge-lines li').allInnerTexts()).map((line) => line.replace(/\s+/g, ' ').trim())
    assert.deepEqual(lines, ['House Blend Coffee Beans × 2 $36.00', 'Discount SAVE20 − $7.20', 'Enamel Mug × 1 (once) $12.00', 'Shipping Free', 'Tax $0.00', 'Total $40.80'])
    const orderDate = new Intl.DateTimeFormat('en-US', { dateStyle: 'medium', timeZone: 'UTC' }).format(new Date((upcoming as unknown as { next_charge_at: string }).next_charge_at))
    assert.equal(await page.locator('section.next-order .next-order-when').innerText(), orderDate)
    await shoot('discount-addon')

    await page.getByRole('button', { name: 'Order now' }).click()
    const order = await dialog().innerText()
    assert.match(order, /\$40\.80 \(\$36\.00 − \$7\.20 \(code SAVE20\) \+ \$12\.00 Enamel Mug\) is charged now/)
    await shoot('order-now')
    await dialog().getByRole('button', { name: 'Order and pay now' }).click()
    await notice().filter({ hasText: 'Your order is placed' }).waitFor()
    const history = await page.locator('section.history').innerText()
    assert.match(history, /\$40\.80/, 'the charge made is the amount shown')
    assert.match(history, /Paid at checkout/)
  })

  test('reschedule with the date picker: limits from tomorrow to a year on the store clock', async () => {
    await page.locator('summary', { hasText: 'Change the next order date' }).click()
    const input = page.getByLabel('Next order on')
    const [min, max] = await Promise.all([input.getAttribute('min'), input.getAttribute('max')])
    const today = new Date().toISOString().slice(0, 10)
    assert.ok(min! > today, `min ${min} after today ${today}`)
    assert.equal(max!.slice(0, 4), String(Number(today.slice(0, 4)) + 1))
    const target = new Date(Date.now() + 75 * 86_400_000).toISOString().slice(0, 10)
    await input.fill(target)
    await panel('Change the next order date').getByRole('button', { name: 'Move next order' }).click()
    assert.match(await dialog().innerText(), /The next renewal moves from .* to /)
    await shoot('reschedule')
    await dialog().getByRole('button', { name: 'Move next order' }).click()
    await notice().filter({ hasText: 'Your next order is now on' }).waitFor()
    const subscription = await admin('GET', `/subscriptions/${subs.manage}`)
    assert.equal(subscription.next_charge_at.slice(0, 10), target)
  })

  test('retention: taking an offer performs it instead of cancelling', async () => {
    await openSubscription(subs.keep!)
    await page.locator('summary', { hasText: 'Cancel subscription' }).click()
    await page.getByRole('heading', { name: 'Before you go' }).waitFor()
    assert.ok(!(await panel('Cancel subscription').locator('form').isVisible()), 'the cancel form waits behind the offers')
    await shoot('retention-offers')
    await page.getByRole('button', { name: 'Skip the next order instead' }).click()
    await notice().filter({ hasText: 'The next renewal will be skipped, and your subscription stays.' }).waitFor()
    const subscription = await admin('GET', `/subscriptions/${subs.keep}`)
    assert.equal(subscription.status, 'active')
    assert.equal(subscription.skip_next, true)
    // The next charge shown is the real one, after the skipped renewal.
    assert.match(await page.locator('section.summary').innerText(), /Next charge\s+\$18\.00 on [A-Z][a-z]{2} \d{1,2}, \d{4} \(the .* renewal is skipped\)/)
  })

  test('retention: declining goes on to the cancellation with a reason from the store', async () => {
    await openSubscription(subs.cancel!)
    await page.locator('summary', { hasText: 'Cancel subscription' }).click()
    await page.getByRole('button', { name: 'No thanks, continue to cancel' }).click()
    await page.getByLabel('Why are you cancelling?').selectOption({ label: 'I have too much coffee' })
    // Keeping what was paid for is the default: the box is ticked, and the confirmation says so.
    const keep = page.getByLabel(/Keep it until the paid period ends/)
    assert.equal(await keep.isChecked(), true, 'keep until the paid period ends is ticked by default')
    await panel('Cancel subscription').getByRole('button', { name: 'Cancel subscription' }).click()
    assert.match(await dialog().innerText(), /It stays active until [A-Z][a-z]{2} \d{1,2}, \d{4} and is not renewed after that\./)
    await shoot('cancel-default-period-end')
    await dialog().getByRole('button', { name: 'Keep subscription' }).click()
    // Ending it now takes unticking the box.
    await keep.uncheck()
    await panel('Cancel subscription').getByRole('button', { name: 'Cancel subscription' }).click()
    assert.match(await dialog().innerText(), /Reason: I have too much coffee\./)
    assert.match(await dialog().innerText(), /It ends now and is not renewed\./)
    await shoot('cancel-reason')
    await dialog().getByRole('button', { name: 'Yes, cancel it' }).click()
    await notice().filter({ hasText: 'Your subscription is cancelled.' }).waitFor()
    assert.match(await page.locator('section.summary').innerText(), /Reason given\s+I have too much coffee/)
    const subscription = await admin('GET', `/subscriptions/${subs.cancel}`)
    assert.equal(subscription.cancellation_reason_code, 'too_much_coffee')
  })

  test('reactivation: offered only once the store allows it; it starts the subscription again, charged when the period already paid ends', async () => {
    await openSubscription(subs.cancel!)
    assert.match(await page.locator('section.manage').innerText(), /nothing left to change/)
    assert.equal(await page.getByRole('button', { name: 'Reactivate subscription' }).count(), 0, 'no button while the store does not allow it')
    await admin('PATCH', '/store', { portal_reactivation: true })
    await openSubscription(subs.cancel!)
    // Cancelled the day it was bought: the month it paid for still runs, so nothing is charged until it ends.
    const before = await admin('GET', `/subscriptions/${subs.cancel}`)
    await page.getByRole('button', { name: 'Reactivate subscription' }).click()
    assert.match(await dialog().innerText(), /It starts again now on the same plan\. The period you paid for runs until [A-Z][a-z]{2} \d{1,2}, \d{4}: the next charge is then/)
    await shoot('reactivate-confirm')
    await dialog().getByRole('button', { name: 'Reactivate' }).click()
    await notice().filter({ hasText: 'Your subscription is active again.' }).waitFor()
    await shoot('reactivated')
    const subscription = await admin('GET', `/subscriptions/${subs.cancel}`)
    assert.equal(subscription.status, 'active')
    assert.equal(subscription.cancelled_at, null)
    assert.equal(subscription.next_charge_at, before.current_period_end, 'the next charge is where the paid period ends')
    const charges = await admin<{ data: unknown[] }>('GET', `/charges?subscription_id=${subs.cancel}`)
    assert.equal(charges.data.length, 0, 'nothing charged now')
  })

  test('a refunded charge reads "Partly refunded" then "Refunded" in the charge history, not "Paid"', async () => {
    // The $40.80 that order now charged above, refunded in two parts by the merchant.
    const charges = await admin<{ data: { id: string; amount: number; status: string }[] }>('GET', `/charges?subscription_id=${subs.manage}`)
    const charge = charges.data.find((c) => c.amount === 4080 && c.status === 'succeeded')
    assert.ok(charge, `the order now charge among ${JSON.stringify(charges.data)}`)
    const row = () => page.locator('section.history tr.charge-succeeded').filter({ hasText: '$40.80' })
    const status = () => row().locator('td[data-label="Status"] .badge')

    await admin('POST', `/charges/${charge.id}/refund`, { amount: 1000, reason: 'Mug arrived chipped' })
    await openSubscription(subs.manage!)
    assert.equal(await status().innerText(), 'Partly refunded ($10.00)')
    assert.ok(await status().evaluate((badge) => badge.classList.contains('charge-status-refunded')), 'told apart from a paid charge')
    assert.match(await row().locator('td[data-label="Details"]').innerText(), /\$10\.00 refunded\./)
    // At 390 px each cell is "label | value": every line of the details sits in the value column (a line
    // falling into the label column read "1 add-on included | $10.00 refunded.").
    await page.setViewportSize({ width: 390, height: 844 })
    // Where each line of text of the row's details cell starts, from the cell's left edge.
    const columns = await page.evaluate<number[]>(`(() => {
      const row = [...document.querySelectorAll('section.history tr.charge-succeeded')].find((tr) => tr.textContent.includes('$40.80'))
      const cell = row.querySelector('td[data-label="Details"]')
      const left = cell.getBoundingClientRect().left
      const range = document.createRange()
      const starts = []
      const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT)
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (!node.textContent.trim()) continue
        range.selectNodeContents(node)
        starts.push(Math.round(range.getBoundingClientRect().left - left))
      }
      return starts
    })()`)
    await page.setViewportSize({ width: 1440, height: 1000 })
    assert.ok(columns.length >= 3 && new Set(columns).size === 1 && columns[0]! > 40, `the details' lines start at ${columns.join(', ')} px in the cell`)
    // The merchant's reason stays with the merchant.
    assert.ok(!(await page.locator('section.history').innerText()).includes('chipped'), 'no refund reason in the portal')
    await shoot('refund-partial')

    await admin('POST', `/charges/${charge.id}/refund`, { reason: 'Customer moved away' })
    await openSubscription(subs.manage!)
    assert.equal(await status().innerText(), 'Refunded')
    assert.match(await row().locator('td[data-label="Details"]').innerText(), /Refunded in full\./)
    assert.ok(!/\bPaid\b/.test(await status().innerText()))
    await shoot('refund-full')
  })

  test('no script errors or CSP refusals', () => {
    assert.deepEqual(pageProblems, [])
  })
})
