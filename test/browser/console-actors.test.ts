import assert from 'node:assert/strict'
import { after, before, describe, test, type TestContext } from 'node:test'
import type { Page } from 'playwright-core'
import { adminClient, openSignedInConsole, screenshotAtWidths, skipWithoutChromium, type ConsoleSeed, type SignedInConsole } from '../helpers/browser.ts'
import type { RunningServer } from '../helpers/server-process.ts'
import { startSmtpSink, type SmtpSink } from '../helpers/smtp-sink.ts'

/**
 * Who did what, and reactivation, in the merchant console (issue 26, finding 6; CONTRACT 17): the
 * subscription's timeline names who did each thing ("by key Support bot", "by the subscriber (...)",
 * "by the renewal worker", "by scheduled work"); a cancelled subscription has a Reactivate action; the
 * settings page switches portal reactivation on. In Chromium against the real service process;
 * screenshots at 1440 and 390 px into test-results/console-actors/ (and docs/screenshots/ with
 * UPDATE_SCREENSHOTS=1).
 */

const STORE_HASH = 'actorsconsole'
const ADMIN_KEY = 'sk_test_console_actors_0123456789abcdef'
const DAY = 86_400_000
const ADA = 'ada.actors@example.com'
const ADDRESS = { name: 'Ada Lovelace', line1: '12 Analytical Way', city: 'Portland', state: 'OR', postal_code: '97201', country: 'US' }

describe('who did what, and reactivation, in the console', { skip: skipWithoutChromium, timeout: 120_000 }, () => {
  let opened: SignedInConsole<string> | undefined
  let server: RunningServer
  let sink: SmtpSink
  let page: Page
  let subscriptionId: string
  let pageProblems: string[]
  const admin = adminClient(() => server.origin, ADMIN_KEY)

  /**
   * One subscription with a history by four hands: bought with the bootstrap key, skipped by the
   * subscriber in the portal, its (skipped) renewal passed by the renewal worker, cancelled by the
   * "Support bot" key.
   */
  async function seed({ server, admin }: ConsoleSeed): Promise<string> {
    await admin('PATCH', '/store', { name: 'Kettle & Leaf', timezone: 'Europe/Berlin' })
    const product = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'leaf-tea', name: 'Leaf Tea' })
    const plan = await admin<{ id: string }>('POST', '/plans', { product_id: product.id, name: 'Tin every month', amount: 1250, currency: 'USD', interval: 'month' })
    const support = await admin<{ key: string }>('POST', '/api-keys', { name: 'Support bot', scope: 'support' })
    const bought = await admin<{ data: { id: string; next_charge_at: string }[] }>('POST', '/checkouts', {
      platform_order_id: 'actors-1', email: ADA, name: 'Ada Lovelace', shipping_address: ADDRESS, payment_instrument_id: 'pi_visa_ok', items: [{ plan_id: plan.id, quantity: 1 }],
    })
    const sub = bought.data[0]!
    // The subscriber signs in with the emailed link and skips the next renewal.
    const asked = await fetch(`${server.origin}/api/v1/portal/auth/request-link`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: ADA, store_hash: STORE_HASH }) })
    assert.equal(asked.status, 202)
    const message = await sink.waitForMessage(ADA, 15_000)
    const token = /\/portal\/login\?token=([A-Za-z0-9_-]+)/.exec(String(message.parsed.text))![1]
    const verified = await fetch(`${server.origin}/api/v1/portal/auth/verify`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) })
    const session = ((await verified.json()) as { access_token: string }).access_token
    const skipped = await fetch(`${server.origin}/api/v1/portal/subscriptions/${sub.id}/skip`, { method: 'POST', headers: { authorization: `Bearer ${session}` } })
    assert.equal(skipped.status, 200, await skipped.text())
    // The skipped renewal passes on the test clock (the renewal worker), then the support key cancels.
    await admin('POST', '/test-clock/advance', { to: new Date(Date.parse(sub.next_charge_at) + DAY).toISOString() })
    const cancelled = await fetch(`${server.origin}/api/v1/admin/subscriptions/${sub.id}/cancel`, {
      method: 'POST', headers: { authorization: `Bearer ${support.key}`, 'content-type': 'application/json' }, body: JSON.stringify({ reason: 'moved abroad' }),
    })
    assert.equal(cancelled.status, 200, await cancelled.text())
    return sub.id
  }

  before(async () => {
    sink = await startSmtpSink()
    opened = await openSignedInConsole({ databasePrefix: 'sb-actors-', storeHash: STORE_HASH, adminKey: ADMIN_KEY, timezoneId: 'America/Los_Angeles', env: { SMTP_URL: sink.url }, seed })
    ;({ server, page, seeded: subscriptionId, pageProblems } = opened)
  })

  after(async () => {
    await opened?.close()
    await sink?.close()
  })

  const heading = () => page.getByRole('heading', { level: 1 })
  const notice = () => page.locator('#notice')
  const dialog = () => page.getByRole('dialog')
  const timeline = () => page.locator('ol.timeline')
  /** The timeline's line for an event type (its code is on the line), newest first. */
  const line = (type: string) => timeline().locator('li', { has: page.locator('code.event-code', { hasText: new RegExp(`^${type.replace('.', '\\.')}$`) }) }).first()

  const screenshot = (t: TestContext, name: string) => screenshotAtWidths(page, t, 'console-actors', name, { prefix: 'console' })

  test('the timeline says who did each thing: a named key, the subscriber, the renewal worker', async (t) => {
    await page.goto(`${server.origin}/console/subscriptions/${subscriptionId}`)
    await heading().filter({ hasText: 'Subscription of' }).waitFor()
    await timeline().waitFor()
    assert.match(await line('subscription.created').innerText(), /Subscription created by key bootstrap/)
    assert.match(await line('subscription.skipped').innerText(), new RegExp(`Subscription skipped by the subscriber \\(${ADA.replace('.', '\\.')}\\)`))
    assert.match(await line('subscription.updated').innerText(), /by the renewal worker/)
    assert.match(await line('subscription.cancelled').innerText(), /Subscription cancelled by key Support bot/)
    await screenshot(t, 'actors-timeline')
  })

  test('a cancelled subscription is reactivated from its page: charged now, active again, and the timeline says by whom', async (t) => {
    const actions = page.locator('.action-group', { has: page.getByRole('heading', { name: 'Reactivate' }) })
    await actions.waitFor()
    await actions.getByRole('button', { name: 'Reactivate' }).click()
    assert.match(await dialog().innerText(), /It is active again now, on the same plan and card, and a new period is charged now\./)
    await screenshot(t, 'reactivate-confirm')
    await dialog().getByRole('button', { name: 'Reactivate and charge now' }).click()
    await notice().filter({ hasText: 'Reactivated: the renewal was charged now' }).waitFor()
    await line('subscription.reactivated').waitFor()
    assert.match(await line('subscription.reactivated').innerText(), /Subscription reactivated by key bootstrap/)
    assert.match(await line('subscription.charged').innerText(), /by the renewal worker/)
    const after = await admin<{ status: string; latest_charge_id: string }>('GET', `/subscriptions/${subscriptionId}`)
    assert.equal(after.status, 'active')
    const charge = await admin<{ status: string }>('GET', `/charges/${after.latest_charge_id}`)
    assert.equal(charge.status, 'succeeded')
    await screenshot(t, 'reactivated')
  })

  test('settings: portal reactivation is off by default and switched on with its checkbox', async (t) => {
    await page.goto(`${server.origin}/console/settings`)
    await heading().filter({ hasText: 'Settings' }).waitFor()
    const box = page.getByLabel('Subscribers may reactivate a cancelled subscription')
    assert.equal(await box.isChecked(), false)
    await box.check()
    await page.getByRole('button', { name: 'Save portal settings' }).click()
    await dialog().getByRole('button', { name: 'Save' }).click()
    await notice().filter({ hasText: 'Subscribers may now reactivate in the portal.' }).waitFor()
    assert.equal((await admin<{ portal_reactivation: boolean }>('GET', '/store')).portal_reactivation, true)
    await page.locator('#portal-reactivation').scrollIntoViewIfNeeded()
    await screenshot(t, 'settings-portal-reactivation')
  })

  test('no script errors or CSP refusals', () => {
    assert.deepEqual(pageProblems, [])
  })
})
