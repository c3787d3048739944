import assert from 'node:assert/strict'
import { after, before, describe, test, type TestContext } from 'node:test'
import type { Page } from 'playwright-core'
import { adminClient, openSignedInConsole, screenshotAtWidths, skipWithoutChromium, type ConsoleSeed, type SignedInConsole } from '../helpers/browser.ts'
import type { RunningServer } from '../helpers/server-process.ts'

/**
 * The cutover switch in the merchant console (CONTRACT section 16, `billing_enabled`): Settings turns
 * the store's billing off and on with a confirmation; while it is off every page shows a banner, order
 * now is refused in the API's words, a renewal that falls due is not charged, and a new card for a
 * failed renewal is said to be saved until billing is on (not "retried now"); once on, the banner goes
 * and the renewal is charged once, the failed one with its new card. In Chromium against the real service process;
 * screenshots at 1440 and 390 px into test-results/console-billing-switch/ (and docs/screenshots/
 * with UPDATE_SCREENSHOTS=1).
 */

const STORE_HASH = 'cutoverconsole'
const ADMIN_KEY = 'sk_test_console_cutover_0123456789abcdef'
const DAY = 86_400_000
const ADDRESS = { name: 'Ada Lovelace', line1: '12 Analytical Way', city: 'Portland', state: 'OR', postal_code: '97201', country: 'US' }
const BANNER = 'Billing is off for this store: nothing is charged, retried or reminded. Turn it on in Settings when the old system is off.'

describe('the billing switch in the console', { skip: skipWithoutChromium, timeout: 120_000 }, () => {
  let opened: SignedInConsole<{ subscription: { id: string; next_charge_at: string }; declined: { id: string } }> | undefined
  let server: RunningServer
  let page: Page
  let subscription: { id: string; next_charge_at: string }
  /** A second subscription whose renewal was declined before billing went off: in dunning. */
  let declined: { id: string }
  let pageProblems: string[]
  const admin = adminClient(() => server.origin, ADMIN_KEY)

  /**
   * One monthly subscription on a test store whose clock stands still (so the renewal falls due only when the
   * test moves it), and one whose card was declined at a renewal moved two hours on (in dunning when billing goes off).
   */
  async function seed({ admin }: ConsoleSeed): Promise<{ subscription: { id: string; next_charge_at: string }; declined: { id: string } }> {
    await admin('PATCH', '/store', { name: 'Kettle & Leaf', timezone: 'Europe/Berlin' })
    const now = await admin<{ now: string }>('GET', '/test-clock')
    await admin('POST', '/test-clock/advance', { to: new Date(Date.parse(now.now) + 60_000).toISOString() })
    const product = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'leaf-tea', name: 'Leaf Tea' })
    const plan = await admin<{ id: string }>('POST', '/plans', { product_id: product.id, name: 'Tin every month', amount: 1250, currency: 'USD', interval: 'month' })
    const bought = await admin<{ data: { id: string; next_charge_at: string }[] }>('POST', '/checkouts', {
      platform_order_id: 'cutover-1', email: 'ada.cutover@example.com', name: 'Ada Lovelace', shipping_address: ADDRESS, payment_instrument_id: 'pi_visa_ok', items: [{ plan_id: plan.id, quantity: 1 }],
    })
    const declining = await admin<{ data: { id: string }[] }>('POST', '/checkouts', {
      platform_order_id: 'cutover-2', email: 'grace.cutover@example.com', name: 'Grace Hopper', shipping_address: ADDRESS, payment_instrument_id: 'pi_visa_declined', items: [{ plan_id: plan.id, quantity: 1 }],
    })
    await admin('POST', `/subscriptions/${declining.data[0]!.id}/reschedule`, { next_charge_at: new Date(Date.parse(now.now) + 2 * 3_600_000).toISOString() })
    // A day on, so order now is not refused for a period that began this very instant (and the declined renewal has failed).
    await admin('POST', '/test-clock/advance', { to: new Date(Date.parse(now.now) + DAY).toISOString() })
    return { subscription: bought.data[0]!, declined: declining.data[0]! }
  }

  before(async () => {
    opened = await openSignedInConsole({ databasePrefix: 'sb-cutover-', storeHash: STORE_HASH, adminKey: ADMIN_KEY, timezoneId: 'America/Los_Angeles', seed })
    ;({ server, page, pageProblems } = opened)
    ;({ subscription, declined } = opened.seeded)
  })

  after(async () => {
    await opened?.close()
  })

  const heading = () => page.getByRole('heading', { level: 1 })
  const notice = () => page.locator('#notice')
  const dialog = () => page.getByRole('dialog')
  const banner = () => page.getByRole('region', { name: 'Billing is off' })
  const billingBox = () => page.getByLabel('Bill this store', { exact: true })
  const charges = async (id = subscription.id) => (await admin<{ data: { id: string; status: string }[] }>('GET', `/charges?subscription_id=${id}`)).data

  const screenshot = (t: TestContext, name: string) => screenshotAtWidths(page, t, 'console-billing-switch', name, { prefix: 'console' })

  test('billing is on by default: no banner, the switch checked', async () => {
    await page.goto(`${server.origin}/console/settings`)
    await heading().filter({ hasText: 'Settings' }).waitFor()
    await billingBox().waitFor()
    assert.equal(await billingBox().isChecked(), true)
    assert.equal(await banner().count(), 0)
  })

  test('turning it off asks first, then every page shows the banner', async (t) => {
    await billingBox().uncheck()
    await page.getByRole('button', { name: 'Save billing' }).click()
    assert.match(await dialog().innerText(), /Nothing is charged, retried or reminded for this store until you turn it on again/)
    await screenshot(t, 'billing-off-confirm')
    await dialog().getByRole('button', { name: 'Turn billing off' }).click()
    await notice().filter({ hasText: 'Billing is off: nothing is charged, retried or reminded.' }).waitFor()
    assert.equal((await admin<{ billing_enabled: boolean }>('GET', '/store')).billing_enabled, false)
    await banner().waitFor()
    assert.equal((await banner().innerText()).replace(/\s+/g, ' ').trim(), BANNER)
    assert.equal(await billingBox().isChecked(), false)
    assert.match(await page.locator('.facts').filter({ hasText: 'Billing' }).first().innerText(), /Switched off \(see Billing\)/)
    await screenshot(t, 'billing-off-settings')

    for (const [path, title] of [['/console', 'Overview'], ['/console/subscriptions', 'Subscriptions'], ['/console/attention', 'Needs attention']] as const) {
      await page.goto(`${server.origin}${path}`)
      await heading().filter({ hasText: title }).waitFor()
      assert.equal((await banner().innerText()).replace(/\s+/g, ' ').trim(), BANNER, `the banner on ${path}`)
    }
    await screenshot(t, 'billing-off-subscriptions')
    // Its link goes to Settings.
    await banner().getByRole('link', { name: 'Settings' }).click()
    await heading().filter({ hasText: 'Settings' }).waitFor()
  })

  test('while off, order now is refused in the API\'s words and a renewal that falls due is not charged', async (t) => {
    await page.goto(`${server.origin}/console/subscriptions/${subscription.id}`)
    await heading().filter({ hasText: 'Subscription of' }).waitFor()
    await banner().waitFor()
    const orderNow = page.locator('.action-group', { has: page.getByRole('heading', { name: 'Order now' }) })
    await orderNow.getByRole('button', { name: 'Charge the renewal now' }).click()
    await dialog().getByRole('button', { name: 'Charge the renewal now' }).click()
    const refusal = orderNow.getByRole('alert')
    await refusal.waitFor()
    assert.match(await refusal.innerText(), /billing is switched off for this store/)
    await orderNow.scrollIntoViewIfNeeded()
    await screenshot(t, 'billing-off-order-now')

    await admin('POST', '/test-clock/advance', { to: new Date(Date.parse(subscription.next_charge_at) + DAY).toISOString() })
    assert.deepEqual(await charges(), [], 'nothing charged while off')
  })

  test('while off, a new card for a failed renewal is saved, and said to run when billing is on, not "retried now"', async (t) => {
    assert.deepEqual((await charges(declined.id)).map((c) => c.status), ['failed'])
    await page.goto(`${server.origin}/console/subscriptions/${declined.id}`)
    await heading().filter({ hasText: 'Subscription of' }).waitFor()
    const changeCard = page.getByRole('region', { name: 'Payment recovery' }).locator('.action-group', { has: page.getByRole('heading', { name: 'Charge another card' }) })
    await changeCard.getByLabel('Payment instrument id').fill('pi_visa_ok')
    await changeCard.getByRole('button', { name: 'Change card' }).click()
    const saying = 'Billing is off for this store: the card is saved, and the failed renewal runs with it when billing is turned on.'
    assert.ok((await dialog().innerText()).includes(saying), await dialog().innerText())
    assert.doesNotMatch(await dialog().innerText(), /retried/)
    await screenshot(t, 'billing-off-change-card')
    await dialog().getByRole('button', { name: 'Change card' }).click()
    await notice().filter({ hasText: `The card is changed to pi_visa_ok. ${saying}` }).waitFor()
    assert.deepEqual((await charges(declined.id)).map((c) => c.status), ['failed'], 'nothing charged while off')
  })

  test('turning it on asks first, the banner goes, and the renewal that fell due is charged once', async (t) => {
    await page.goto(`${server.origin}/console/settings`)
    await heading().filter({ hasText: 'Settings' }).waitFor()
    await billingBox().check()
    await page.getByRole('button', { name: 'Save billing' }).click()
    assert.match(await dialog().innerText(), /fell due while billing was off run now, once each, oldest first/)
    assert.match(await dialog().innerText(), /Make sure the old system no longer charges these subscribers/)
    await screenshot(t, 'billing-on-confirm')
    await dialog().getByRole('button', { name: 'Turn billing on' }).click()
    await notice().filter({ hasText: 'Billing is on' }).waitFor()
    await banner().waitFor({ state: 'hidden' })
    assert.equal(await banner().count(), 0)
    assert.equal((await admin<{ billing_enabled: boolean }>('GET', '/store')).billing_enabled, true)

    // The worker's next pass (here the test clock's, at the time it stands at) charges what fell due, once.
    const clock = await admin<{ now: string }>('GET', '/test-clock')
    await admin('POST', '/test-clock/advance', { to: clock.now })
    await admin('POST', '/test-clock/advance', { to: clock.now })
    const made = await charges()
    assert.deepEqual(made.map((c) => c.status), ['succeeded'])
    // The failed renewal ran with the card saved while billing was off.
    assert.deepEqual((await charges(declined.id)).map((c) => c.status).sort(), ['failed', 'succeeded'])
  })

  test('no script errors or CSP refusals', () => {
    assert.deepEqual(pageProblems, [])
  })
})
