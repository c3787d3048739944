import assert from 'node:assert/strict'
import { after, before, describe, test, type TestContext } from 'node:test'
import type { Page } from 'playwright-core'
import { adminClient, openSignedInConsole, screenshotAtWidths, skipWithoutChromium, type ConsoleSeed, type SignedInConsole } from '../helpers/browser.ts'
import type { RunningServer } from '../helpers/server-process.ts'

/**
 * The console's Bulk changes page (issue 27) in Chromium against the real service process, whose own
 * worker runs the operation: 20 subscriptions on plan A (one of them cancelled) and 3 on plan B. A
 * swap A -> B is previewed (with a range of next charges in the store's zone, 19: the cancelled one
 * has none; without it, 20), applied after a confirmation naming the count and the change, its
 * progress bar read until it is whole, and its results show 19 changed and the cancelled one not,
 * linked, with `invalid_state`; the past operations list it and open it again. Screenshots at 1440 and
 * 390 px into test-results/console-bulk-changes/.
 */

const STORE_HASH = 'bulkconsole'
const ADMIN_KEY = 'sk_test_console_bulk_0123456789abcdef'
const ZONE = 'Asia/Tokyo'
const DAY = 86_400_000
const ADDRESS = { name: 'Ada Lovelace', line1: '12 Analytical Way', city: 'Portland', state: 'OR', postal_code: '97201', country: 'US' }

/** A day as a date input takes it ("2026-05-03"), in the store's zone. */
const storeDay = (ms: number) => new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(ms))

describe('bulk changes in the console', { skip: skipWithoutChromium, timeout: 120_000 }, () => {
  let opened: SignedInConsole<{ planA: string; planB: string; cancelled: string }> | undefined
  let server: RunningServer
  let page: Page
  let seeded: { planA: string; planB: string; cancelled: string }
  let pageProblems: string[]
  const admin = adminClient(() => server.origin, ADMIN_KEY)

  async function seed({ admin }: ConsoleSeed): Promise<{ planA: string; planB: string; cancelled: string }> {
    await admin('PATCH', '/store', { name: 'Kettle & Leaf', timezone: ZONE })
    const product = await admin<{ id: string }>('POST', '/products', { platform_product_id: 'leaf-tea', name: 'Leaf Tea' })
    const planA = await admin<{ id: string }>('POST', '/plans', { product_id: product.id, name: 'Tin every month', amount: 1250, currency: 'USD', interval: 'month' })
    const planB = await admin<{ id: string }>('POST', '/plans', { product_id: product.id, name: 'Big tin every month', amount: 2200, currency: 'USD', interval: 'month' })
    const made: string[] = []
    for (let n = 1; n <= 23; n++) {
      const plan = n <= 20 ? planA : planB
      const bought = await admin<{ data: { id: string }[] }>('POST', '/checkouts', {
        platform_order_id: `bulk-${n}`, email: `tea.${n}@example.com`, name: `Tea Drinker ${n}`, shipping_address: ADDRESS, payment_instrument_id: 'pi_visa_ok', items: [{ plan_id: plan.id, quantity: 1 }],
      })
      made.push(bought.data[0]!.id)
    }
    await admin('POST', `/subscriptions/${made[4]}/cancel`, { at_period_end: false, reason: 'Moved away' })
    return { planA: planA.id, planB: planB.id, cancelled: made[4]! }
  }

  before(async () => {
    opened = await openSignedInConsole({ databasePrefix: 'sb-bulk-', storeHash: STORE_HASH, adminKey: ADMIN_KEY, timezoneId: 'America/Los_Angeles', seed })
    ;({ server, page, seeded, pageProblems } = opened)
  })

  after(async () => {
    await opened?.close()
  })

  const heading = () => page.getByRole('heading', { level: 1 })
  const notice = () => page.locator('#notice')
  const preview = () => page.locator('.bulk-preview')
  const operation = () => page.locator('.bulk-operation')
  const focused = () => page.evaluate<string>("document.activeElement?.textContent ?? ''")
  const rows = (region: string) => page.getByRole('region', { name: region }).locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.children].map((cell) => (cell.textContent ?? '').trim())))
  const screenshot = (t: TestContext, name: string) => screenshotAtWidths(page, t, 'console-bulk-changes', name, { prefix: 'console' })

  test('the page opens from the navigation with no operations yet', async () => {
    await page.goto(`${server.origin}/console`)
    await heading().filter({ hasText: 'Overview' }).waitFor()
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Bulk changes' }).click()
    await heading().filter({ hasText: 'Bulk changes' }).waitFor()
    assert.match(await page.getByRole('region', { name: 'Past operations' }).innerText(), /No bulk changes yet/)
    // Previewing a swap without its plan says so, at the plan.
    await page.getByLabel('Action').selectOption('swap_plan')
    await page.getByRole('button', { name: 'Preview' }).click()
    assert.equal(await page.getByRole('alert').innerText(), 'Choose the plan to move to.')
    assert.equal(await page.evaluate<string>("document.activeElement?.getAttribute('name') ?? ''"), 'swap_plan_id')
  })

  test('a preview counts the subscriptions the filter selects, with a sample of 10', async (t) => {
    await page.getByLabel('Plan', { exact: true }).selectOption(seeded.planA)
    await page.getByLabel('New plan').selectOption(seeded.planB)
    // Renewing in the coming two months, in the store's zone: the cancelled one renews never.
    await page.getByLabel(`Next charge from (${ZONE})`).fill(storeDay(Date.now() - DAY))
    await page.getByLabel(`Next charge to (${ZONE})`).fill(storeDay(Date.now() + 60 * DAY))
    await page.getByRole('button', { name: 'Preview' }).click()
    await preview().getByRole('heading', { name: '19 subscriptions' }).waitFor()
    assert.equal(await focused(), '19 subscriptions', 'the preview takes the focus')

    await page.getByLabel(`Next charge from (${ZONE})`).fill('')
    assert.equal((await preview().innerText()).trim(), '', 'a changed form sets the preview aside')
    await page.getByLabel(`Next charge to (${ZONE})`).fill('')
    await page.getByRole('button', { name: 'Preview' }).click()
    await preview().getByRole('heading', { name: '20 subscriptions' }).waitFor()
    await notice().filter({ hasText: '20 subscriptions match.' }).waitFor()
    const sample = page.getByRole('region', { name: 'The first 10 of 20 subscriptions' })
    assert.deepEqual(await sample.locator('thead th').allTextContents(), ['Subscription', 'Email', 'Plan', 'Status', 'Next charge'])
    const sampled = await rows('The first 10 of 20 subscriptions')
    assert.equal(sampled.length, 10)
    for (const [id, email, plan] of sampled) {
      assert.match(id!, /^sub_/)
      assert.match(email!, /^tea\.\d+@example\.com$/)
      assert.match(plan!, /Tin every month/)
      assert.doesNotMatch(plan!, /Big tin/)
    }
    assert.match(await preview().innerText(), /Change plan to Leaf Tea · Big tin every month.*: 20 subscriptions match\. Nothing has changed yet\./)
    assert.equal((await admin<{ data: unknown[] }>('GET', '/bulk-operations')).data.length, 0, 'a preview writes nothing')
    await screenshot(t, 'bulk-preview')
  })

  test('applying asks first naming N and the change, then the progress reaches completed with the cancelled one refused', async (t) => {
    await preview().getByRole('button', { name: 'Apply to 20 subscriptions' }).click()
    const dialog = page.getByRole('dialog')
    assert.match(await dialog.getByRole('heading').innerText(), /^Change plan to Leaf Tea · Big tin every month.*: 20 subscriptions\?$/)
    await dialog.getByRole('button', { name: 'Apply to 20 subscriptions' }).click()

    const bar = operation().getByRole('progressbar', { name: 'Progress' })
    await bar.waitFor()
    assert.equal(await bar.getAttribute('aria-valuemax'), '20')
    assert.ok(Number(await bar.getAttribute('aria-valuenow')) <= 20)
    // The worker of the service process runs it; the page reads its progress every second until it is whole.
    await operation().getByRole('heading', { name: 'Results' }).waitFor({ timeout: 30_000 })
    assert.equal(await bar.getAttribute('aria-valuenow'), '20')
    assert.equal(await bar.getAttribute('aria-valuetext'), '20 of 20 subscriptions done')
    assert.equal(await focused(), 'Results', 'the results take the focus')
    await notice().filter({ hasText: '19 changed, 1 not.' }).waitFor()
    assert.match(await operation().innerText(), /20 of 20 subscriptions done: 19 changed, 1 not\./)
    assert.match(await operation().innerText(), /Completed/)

    const failed = page.getByRole('region', { name: 'Not changed (1)' })
    await failed.waitFor()
    assert.deepEqual(await failed.locator('thead th').allTextContents(), ['Subscription', 'Code', 'Detail'])
    const refused = await rows('Not changed (1)')
    assert.equal(refused.length, 1)
    const [id, code, detail] = refused[0]!
    assert.equal(id, seeded.cancelled)
    assert.equal(code, 'invalid_state')
    assert.ok(detail!.length > 0)
    assert.equal(await failed.getByRole('link', { name: seeded.cancelled }).getAttribute('href'), `/console/subscriptions/${seeded.cancelled}`)

    // What the page says is what the service did.
    const onB = (await admin<{ data: { id: string }[] }>('GET', `/subscriptions?plan_id=${seeded.planB}&limit=100`)).data
    assert.equal(onB.length, 22)
    assert.ok(!onB.some((s) => s.id === seeded.cancelled))
    await operation().scrollIntoViewIfNeeded()
    await screenshot(t, 'bulk-results')
  })

  test('the past operations list it, and open it again', async (t) => {
    const past = page.getByRole('region', { name: 'Past operations, newest first' })
    await past.getByText('Completed').waitFor()
    const listed = await rows('Past operations, newest first')
    assert.equal(listed.length, 1)
    const [, change, status, done, notChanged] = listed[0]!
    assert.match(change!, /^Change plan to Leaf Tea · Big tin every month/)
    assert.deepEqual([status, done, notChanged], ['Completed', '20 of 20', '1'])
    await past.locator('tbody a').first().click()
    await heading().filter({ hasText: 'Bulk changes' }).waitFor()
    const shown = page.getByRole('region', { name: 'Operation' })
    await shown.getByRole('region', { name: 'Not changed (1)' }).waitFor()
    assert.equal(await shown.getByRole('progressbar').getAttribute('aria-valuenow'), '20')
    await screenshot(t, 'bulk-operation')
  })

  test("each change's parameters reach the preview as the API takes them (minor units, the store's zone)", async () => {
    const sent: Record<string, unknown>[] = []
    const listen = (request: import('playwright-core').Request) => {
      if (request.method() === 'POST' && request.url().endsWith('/api/v1/admin/bulk-operations')) sent.push(request.postDataJSON() as Record<string, unknown>)
    }
    page.on('request', listen)
    await page.goto(`${server.origin}/console/bulk-changes`)
    await heading().filter({ hasText: 'Bulk changes' }).waitFor()
    await page.getByLabel('Status').selectOption('active')
    const cases: [string, () => Promise<void>, Record<string, unknown>][] = [
      ['change_price', () => page.getByLabel('New price (USD)').fill('15.5'), { amount: 1550 }],
      ['reschedule', () => page.getByLabel('Days to move each next charge').fill('-2'), { shift_days: -2 }],
      ['reschedule', async () => {
        await page.getByLabel('All to one date and time').check()
        await page.getByLabel(`New next charge (${ZONE})`).fill('2031-03-04T09:30')
      }, { next_charge_at: '2031-03-04T00:30:00.000Z' }],
      ['pause', () => page.getByLabel(`Resume on (optional, ${ZONE})`).fill('2031-03-04'), { resume_at: '2031-03-03T15:00:00.000Z' }],
      ['resume', async () => {}, {}],
      ['cancel', () => page.getByLabel('Note (optional)').fill('Range retired'), { at_period_end: true, reason: 'Range retired' }],
      ['apply_discount', () => page.getByLabel('Discount code').fill('SPRING'), { code: 'SPRING' }],
    ]
    for (const [action, fill, params] of cases) {
      await page.getByLabel('Action').selectOption(action)
      await fill()
      await page.getByRole('button', { name: 'Preview' }).click()
      // 22 active: the 19 swapped and the 3 on plan B.
      await preview().getByRole('heading', { name: '22 subscriptions' }).waitFor()
      assert.deepEqual(sent.pop(), { action, filter: { status: 'active' }, params, dry_run: true }, action)
    }
    page.off('request', listen)
    assert.equal((await admin<{ data: unknown[] }>('GET', '/bulk-operations')).data.length, 1, 'previews write nothing')
  })

  test('no script errors or CSP refusals', () => {
    assert.deepEqual(pageProblems, [])
  })
})
