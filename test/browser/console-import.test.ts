import assert from 'node:assert/strict'
import { request } from 'node:http'
import { after, before, describe, test, type TestContext } from 'node:test'
import type { Page } from 'playwright-core'
import { adminClient, openSignedInConsole, screenshotAtWidths, skipWithoutChromium, type ConsoleSeed, type SignedInConsole } from '../helpers/browser.ts'
import type { RunningServer } from '../helpers/server-process.ts'

/**
 * The console's Import page (issue 27) in Chromium against the real service process: a Recharge file
 * with one bad row is checked (the dry run's report names the bad row, and nothing is created), then
 * imported with the same file (its two good rows become subscriptions, once); the page says the
 * cutover order and whether billing is on; past imports are listed; a big file's check shows its
 * progress while the upload is in flight. Screenshots at 1440 and 390 px into test-results/console-import/.
 */

const STORE_HASH = 'importconsole'
const ADMIN_KEY = 'sk_test_console_import_0123456789abcdef'
const DAY = 86_400_000
const HEADER = 'subscription_id,email,first_name,last_name,product_title,external_product_id,recurring_price,quantity,charge_interval_frequency,charge_interval_unit_type,next_charge_date,processor_payment_method_token,recharge_internal_note'

/** A Recharge row of a monthly Leaf Tea subscription (product 501 in the catalogue) charging on `next`. */
const row = (id: number, email: string, next: string, productId = '501') => `${id},${email},Ada,Lovelace,Leaf Tea,${productId},12.50,1,1,month,${next},pi_visa_ok,migrated`

describe('the import page in the console', { skip: skipWithoutChromium, timeout: 120_000 }, () => {
  let opened: SignedInConsole<void> | undefined
  let server: RunningServer
  let page: Page
  let pageProblems: string[]
  const admin = adminClient(() => server.origin, ADMIN_KEY)
  const nextCharge = new Date(Date.now() + 10 * DAY).toISOString().slice(0, 10)
  // Two good rows and one naming a product the catalogue does not have (row 4: the header is row 1).
  const small = [HEADER, row(70001, 'ada.import@example.com', nextCharge), row(70002, 'grace.import@example.com', nextCharge), row(70003, 'mystery@example.com', nextCharge, '999')].join('\r\n') + '\r\n'

  async function seed({ admin }: ConsoleSeed): Promise<void> {
    await admin('PATCH', '/store', { name: 'Kettle & Leaf' })
    const product = await admin<{ id: string }>('POST', '/products', { platform_product_id: '501', name: 'Leaf Tea' })
    await admin('POST', '/plans', { product_id: product.id, name: 'Tin every month', amount: 1250, currency: 'USD', interval: 'month' })
  }

  before(async () => {
    opened = await openSignedInConsole({ databasePrefix: 'sb-import-', storeHash: STORE_HASH, adminKey: ADMIN_KEY, timezoneId: 'UTC', seed })
    ;({ server, page, pageProblems } = opened)
  })

  after(async () => {
    await opened?.close()
  })

  const heading = () => page.getByRole('heading', { level: 1 })
  const notice = () => page.locator('#notice')
  const report = () => page.locator('.import-report')
  const figures = async () => Object.fromEntries(await report().locator('.import-figures > div').evaluateAll((items) => items.map((item) => [item.querySelector('dt')!.textContent, item.querySelector('dd')!.textContent])))
  const subscriptions = async () => (await admin<{ data: { external_id: string | null; status: string }[] }>('GET', '/subscriptions?limit=100')).data
  const focused = () => page.evaluate<string>("document.activeElement?.textContent ?? ''")
  const pastRows = () => page.getByRole('region', { name: 'Past imports, newest first' }).locator('tbody tr').evaluateAll((rows) => rows.map((r) => [...r.children].map((cell) => (cell.textContent ?? '').trim())))
  const screenshot = (t: TestContext, name: string) => screenshotAtWidths(page, t, 'console-import', name, { prefix: 'console' })

  test('the page says the cutover order and that billing is on, and has no imports yet', async () => {
    await page.goto(`${server.origin}/console`)
    await heading().filter({ hasText: 'Overview' }).waitFor()
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Import' }).click()
    await heading().filter({ hasText: 'Import subscriptions' }).waitFor()
    const cutover = page.getByRole('region', { name: 'Switching from another system' })
    await cutover.waitFor()
    const text = (await cutover.innerText()).replace(/\s+/g, ' ')
    assert.match(text, /Billing is on for this store/)
    assert.match(text, /Switch billing off in Settings before you import, so that nothing is charged while subscriptions move\. Then import the file, switch the old system off, and switch billing on in Settings/)
    assert.equal(await cutover.getByRole('link', { name: 'Settings' }).getAttribute('href'), '/console/settings')
    assert.match(await page.getByRole('region', { name: 'Past imports' }).innerText(), /No imports yet/)
    // Checking without a file says so, at the file.
    await page.getByRole('button', { name: 'Check file' }).click()
    assert.equal(await page.getByRole('alert').innerText(), 'Choose a CSV file first.')
    assert.equal(await page.evaluate<string>('document.activeElement?.type'), 'file')
  })

  test('the check names the bad row and creates nothing', async (t) => {
    await page.getByLabel('CSV file').setInputFiles({ name: 'recharge.csv', mimeType: 'text/csv', buffer: Buffer.from(small) })
    await page.getByLabel('Recharge', { exact: true }).check()
    await page.getByRole('button', { name: 'Check file' }).click()
    await report().getByRole('heading', { name: 'Check of recharge.csv' }).waitFor()
    assert.equal(await focused(), 'Check of recharge.csv', 'the report takes the focus')
    await notice().filter({ hasText: 'Checked 3 rows: 2 would be created, 0 already imported, 1 row refused.' }).waitFor()
    assert.deepEqual(await figures(), { Rows: '3', 'Would create': '2', 'Already imported (skipped)': '0', Refused: '1' })
    const refused = report().getByRole('region', { name: 'Refused rows (1)' })
    assert.deepEqual(await refused.locator('thead th').allTextContents(), ['Row', 'Column', 'Code', 'Detail'])
    const cells = await refused.locator('tbody tr').first().locator('th, td').allInnerTexts()
    assert.deepEqual(cells.slice(0, 3), ['4', 'external_product_id', 'product_not_found'])
    assert.match(cells[3]!, /no product of the catalogue has BigCommerce product id 999/)
    assert.match(await report().innerText(), /Columns not read: recharge_internal_note\./)
    assert.deepEqual(await subscriptions(), [], 'a check creates nothing')
    await report().getByRole('button', { name: 'Import 2 subscriptions' }).waitFor()
    await screenshot(t, 'import-checked')
  })

  test('importing the same file creates the two good rows, once, and lists both runs', async (t) => {
    await report().getByRole('button', { name: 'Import 2 subscriptions' }).click()
    const dialog = page.getByRole('dialog')
    assert.match(await dialog.innerText(), /Nothing is charged now: each renews on its next charge date/)
    assert.match(await dialog.innerText(), /Billing is on for this store:/)
    await dialog.getByRole('button', { name: 'Import 2 subscriptions' }).click()
    await report().getByRole('heading', { name: 'Import of recharge.csv' }).waitFor()
    assert.equal(await focused(), 'Import of recharge.csv')
    assert.deepEqual(await figures(), { Rows: '3', Created: '2', 'Already imported (skipped)': '0', Refused: '1' })
    assert.deepEqual((await subscriptions()).map((s) => s.external_id).sort(), ['70001', '70002'])
    assert.equal(await report().getByRole('button', { name: /^Import/ }).count(), 0, 'nothing more to import from this report')
    const rows = await pastRows()
    assert.equal(rows.length, 2)
    assert.deepEqual(rows.map((r) => r.slice(1)), [
      ['Recharge', 'No', 'Completed', '3', '2', '0', '1'],
      ['Recharge', 'Yes', 'Completed', '3', '2', '0', '1'],
    ])
    await screenshot(t, 'import-done')

    // The same file checked again: every good row is already imported, so there is nothing to import.
    await page.getByRole('button', { name: 'Check file' }).click()
    await report().getByRole('heading', { name: 'Check of recharge.csv' }).waitFor()
    assert.deepEqual(await figures(), { Rows: '3', 'Would create': '0', 'Already imported (skipped)': '2', Refused: '1' })
    assert.match(await report().innerText(), /Nothing to import/)
  })

  test("a big file's check shows its progress while the upload is in flight; billing off is said", async (t) => {
    await admin('PATCH', '/store', { billing_enabled: false })
    await page.reload()
    await heading().filter({ hasText: 'Import subscriptions' }).waitFor()
    assert.match(await page.getByRole('region', { name: 'Switching from another system' }).innerText(), /Billing is off for this store: nothing is charged until you switch it on\./)

    // 1,200 rows; the service records its progress every 500. The page's upload is held by the test,
    // which sends the same bytes to the service itself, stopping after 700 rows until the bar has moved.
    const lines = [HEADER, ...Array.from({ length: 1200 }, (_, i) => row(80000 + i, `bulk${i}@example.com`, nextCharge))]
    const file = Buffer.from(lines.join('\r\n') + '\r\n')
    const cut = Buffer.byteLength(lines.slice(0, 701).join('\r\n') + '\r\n')
    let release!: () => void
    const released = new Promise<void>((resolve) => (release = resolve))
    const sentQueries: string[] = []
    const uploads = (url: URL) => url.pathname === '/api/v1/admin/imports'
    await page.route(uploads, async (route) => {
      if (route.request().method() !== 'POST') return route.continue()
      const url = new URL(route.request().url())
      sentQueries.push(url.search)
      const answer = await slowUpload(`${server.origin}${url.pathname}${url.search}`, file, cut, released)
      await route.fulfill({ status: answer.status, contentType: 'application/json', body: answer.body })
    })
    try {
      await page.getByLabel('CSV file').setInputFiles({ name: 'bulk.csv', mimeType: 'text/csv', buffer: file })
      await page.getByRole('button', { name: 'Check file' }).click()
      const bar = page.getByRole('progressbar', { name: 'Checking bulk.csv' })
      await bar.waitFor()
      await page.locator('.import-progress .hint').filter({ hasText: '500 rows read' }).waitFor()
      const value = await bar.evaluate((element) => (element as unknown as { position: number }).position)
      assert.ok(value > 0.4 && value < 0.8, `the bar stands at the bytes read (700 of 1,200 rows), not ${value}`)
      assert.match(await page.locator('.import-progress .hint').innerText(), /^500 rows read · [\d.]+% of the file$/)
      await screenshot(t, 'import-progress')
    } finally {
      release()
    }
    await report().getByRole('heading', { name: 'Check of bulk.csv' }).waitFor()
    assert.deepEqual(sentQueries, ['?format=recharge&dry_run=true'])
    assert.deepEqual(await figures(), { Rows: '1,200', 'Would create': '1,200', 'Already imported (skipped)': '0', Refused: '0' })
    assert.equal(await page.locator('.import-progress').isHidden(), true)
    await page.unroute(uploads)
  })

  test('no script errors or CSP refusals', () => {
    assert.deepEqual(pageProblems, [])
  })
})

/** Sends `body` to the service as the page would, the part after `cut` only once `go` settles; answers the service's reply. */
function slowUpload(url: string, body: Buffer, cut: number, go: Promise<void>): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'text/csv', 'content-length': String(body.length) } }, (res) => {
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => (text += chunk))
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }))
    })
    req.on('error', reject)
    req.write(body.subarray(0, cut))
    void go.then(() => req.end(body.subarray(cut)))
  })
}
