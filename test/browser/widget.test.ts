import assert from 'node:assert/strict'
import { mkdirSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, describe, test } from 'node:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { buildWebForTest, launchBrowser, skipWithoutChromium } from '../helpers/browser.ts'
import { createPlan, createProduct } from '../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../helpers/test-app.ts'

/** Widget screenshots land here (docs/screenshots/widget-360.png, widget-1280.png) with UPDATE_SCREENSHOTS=1. */
const SCREENSHOTS = new URL('../../docs/screenshots/', import.meta.url)
/** Every run's screenshots at all four widths (gitignored). */
const ARTEFACTS = new URL('../../test-results/widget/', import.meta.url)
const GZIP_BUDGET = 8 * 1024
/** Plans of the product at /many: more than the 100 one page of the plan list holds. */
const MANY_PLANS = 105

interface SelectDetail {
  store_hash: string
  platform_product_id: string
  plan_id: string | null
  plan: { id: string; name: string; amount: number } | null
}

/**
 * A storefront on an origin of its own: a product page with three widgets (one into a target
 * element with a one-time price to compare against, one right after its script tag, one for a
 * product without plans) and CSS of its own that styles label, legend, fieldset, span and input.
 */
function storefrontPage({ scriptOrigin, apiOrigin, storeHash }: { scriptOrigin: string; apiOrigin: string; storeHash: string }): string {
  const widget = (attributes: string) => `<script src="${scriptOrigin}/widget.js" data-store-hash="${storeHash}" data-api-origin="${apiOrigin}" ${attributes} async></script>`
  return `<!doctype html>
<html lang="en-US">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>Roastery: House blend</title>
<style>
  * { box-sizing: content-box; }
  body { margin: 0; font-family: Georgia, "Times New Roman", serif !important; color: #4a2c1a !important; background: #faf6f0; letter-spacing: .02em; line-height: 1.9; text-transform: none; }
  header { padding: 14px 24px; background: #3b2416; color: #fbe9d4 !important; font-size: 22px; font-style: italic; }
  main { max-width: 1080px; margin: 0 auto; padding: 24px; display: grid; gap: 32px; grid-template-columns: 1fr; }
  @media (min-width: 800px) { main { grid-template-columns: 1fr 1fr; } }
  .photo { aspect-ratio: 1; border-radius: 12px; background: radial-gradient(circle at 40% 35%, #b07a4f, #5a341d 70%); }
  h1 { margin: 0; font-size: 34px; font-weight: normal; }
  .price { font-size: 22px; margin: 4px 0 16px; }
  /* The theme's own form styles: none of these may reach the widget. */
  fieldset { border: 2px dashed #c9a27e; border-radius: 0; padding: 10px 16px; margin: 0 0 16px; }
  legend { font-size: 20px; font-style: italic; color: #8a5a3c !important; padding: 0 6px; }
  label { display: inline-block; text-transform: uppercase; letter-spacing: .12em; font-size: 12px; margin-right: 14px; cursor: crosshair; }
  span { font-weight: 900; text-decoration: underline; }
  input[type=radio] { accent-color: #d2691e; transform: scale(1.3); }
  #subscribe-here { margin: 0 0 16px; }
  button { font: inherit; font-size: 18px; padding: 12px 28px; border: 0; border-radius: 999px; background: #3b2416; color: #fbe9d4 !important; cursor: pointer; }
  #choice { margin: 12px 0 0; font-size: 14px; }
  .related { grid-column: 1 / -1; border-top: 1px solid #e2d3c1; padding-top: 16px; }
  .related h2 { margin: 0 0 8px; font-size: 22px; font-weight: normal; }
  .related p { margin: 0 0 12px; }
  /* The widget's own box is the theme's to place; what is inside it is not. */
  .related subscription-widget { margin: 0 0 24px; }
</style>
<script>
  // The storefront's add-to-cart code: it reads the shopper's choice from the widget's event.
  window.selections = []
  document.addEventListener('subscription-widget:select', (event) => {
    window.selections.push(event.detail)
    document.getElementById('choice').textContent = event.detail.plan ? 'In your cart: subscribe to ' + event.detail.plan.name : 'In your cart: one-time purchase'
  })
  window.globalsBefore = [...Object.getOwnPropertyNames(window), 'globalsBefore']
</script>
</head>
<body>
<header>Roastery</header>
<main>
  <div class="photo" role="img" aria-label="A bag of coffee"></div>
  <section>
    <h1>House blend, 1 kg</h1>
    <p class="price">$25.00</p>
    <fieldset id="grind">
      <legend>Grind</legend>
      <label><input type="radio" name="grind" value="whole" checked> Whole bean</label>
      <label><input type="radio" name="grind" value="filter"> Filter</label>
    </fieldset>
    <div id="subscribe-here"></div>
    <button id="add-to-cart" type="button">Add to cart</button>
    <p id="choice" aria-live="polite"></p>
    ${widget('data-platform-product-id="112" data-one-time-price="2500" data-target="#subscribe-here"')}
  </section>
  <section class="related">
    <h2>Also from the roastery</h2>
    <p>Breakfast tea, 500 g</p>
    ${widget('data-platform-product-id="tea-7"')}
    <p>Gift card</p>
    ${widget('data-platform-product-id="gift-card"')}
  </section>
</main>
</body>
</html>`
}

describe('storefront widget (/widget.js) in Chromium, on a storefront of another origin', { skip: skipWithoutChromium }, () => {
  let web: Awaited<ReturnType<typeof buildWebForTest>>
  let t: TestApp
  let shop: StoreWithKey
  let browser: Browser
  let storefront: Server
  let apiOrigin: string
  let shopOrigin: string
  const plans: Record<string, any> = {}

  before(async () => {
    web = await buildWebForTest()
    t = await buildTestApp({ env: { WEB_DIST_DIR: web.dir } })
    await t.app.listen({ port: 0, host: '127.0.0.1' })
    apiOrigin = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`

    shop = await createStoreWithKey(t.db)
    const coffee = await createProduct(t.app, shop.auth, { platform_product_id: '112', name: 'House blend', one_time_price: { amount: 2400, currency: 'USD' } })
    plans.biweekly = await createPlan(t.app, shop.auth, coffee.id, { name: 'Every 2 weeks', amount: 2250, interval: 'week', interval_count: 2 })
    plans.monthly = await createPlan(t.app, shop.auth, coffee.id, { name: 'Monthly', amount: 2125, interval: 'month', trial_days: 14 })
    plans.prepaid = await createPlan(t.app, shop.auth, coffee.id, { name: 'Quarterly box', amount: 6000, interval: 'month', prepaid_cycles: 3 })
    plans.archived = await createPlan(t.app, shop.auth, coffee.id, { name: 'Old weekly', amount: 900, interval: 'week' })
    const archived = await call(t.app, { method: 'PATCH', url: `/api/v1/admin/plans/${plans.archived.id}`, headers: shop.auth, payload: { active: false } })
    assert.equal(archived.statusCode, 200, archived.body)
    const tea = await createProduct(t.app, shop.auth, { platform_product_id: 'tea-7', name: 'Breakfast tea' })
    plans.tea = await createPlan(t.app, shop.auth, tea.id, { name: 'Yearly', amount: 9900, currency: 'EUR', interval: 'year' })
    await createProduct(t.app, shop.auth, { platform_product_id: 'gift-card', name: 'Gift card' })
    // More plans than one page of 100 holds: the widget must follow next_cursor to offer them all.
    const many = await createProduct(t.app, shop.auth, { platform_product_id: 'many', name: 'Sampler' })
    for (let day = 1; day <= MANY_PLANS; day++) {
      await createPlan(t.app, shop.auth, many.id, { name: `Every ${day} days`, amount: 1000, interval: 'day', interval_count: day })
    }

    const storeHash = shop.store.store_hash
    storefront = createServer((request, response) => {
      const html = (body: string) => void response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body)
      if (request.url === '/') return html(storefrontPage({ scriptOrigin: apiOrigin, apiOrigin, storeHash }))
      // The API origin pointing at the storefront itself, which has no API: every plan request is a 404.
      if (request.url === '/broken') return html(storefrontPage({ scriptOrigin: apiOrigin, apiOrigin: shopOrigin, storeHash }))
      if (request.url === '/many') {
        return html(`<!doctype html><html lang="en-US"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>Sampler</title></head><body>
<script src="${apiOrigin}/widget.js" data-store-hash="${storeHash}" data-platform-product-id="many" async></script></body></html>`)
      }
      response.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
    })
    await new Promise<void>((resolve) => storefront.listen(0, '127.0.0.1', resolve))
    shopOrigin = `http://127.0.0.1:${(storefront.address() as AddressInfo).port}`
    assert.notEqual(shopOrigin, apiOrigin)
    browser = await launchBrowser()
  })

  after(async () => {
    await browser?.close()
    await new Promise((resolve) => storefront?.close(resolve))
    await t?.close()
    web?.cleanup()
  })

  interface Visit {
    context: BrowserContext
    page: Page
    requests: string[]
    warnings: string[]
    errors: string[]
  }

  async function visit(path: string, viewport = { width: 1280, height: 900 }): Promise<Visit> {
    const context = await browser.newContext({ viewport, locale: 'en-US' })
    const page = await context.newPage()
    const visit: Visit = { context, page, requests: [], warnings: [], errors: [] }
    context.on('request', (request) => visit.requests.push(request.url()))
    page.on('console', (message) => {
      if (message.type() === 'warning') visit.warnings.push(message.text())
      if (message.type() === 'error') visit.errors.push(message.text())
    })
    page.on('pageerror', (error) => visit.errors.push(String(error)))
    await page.goto(`${shopOrigin}${path}`, { waitUntil: 'networkidle' })
    return visit
  }

  const normalize = (text: string) => text.replace(/\s+/g, ' ').trim()
  const selections = (page: Page) => page.evaluate(() => (globalThis as any).selections as SelectDetail[])

  test('the widget is small: its gzipped size is within budget', (t) => {
    t.diagnostic(`widget.js: ${web.widgetGzipBytes} bytes gzipped`)
    assert.ok(web.widgetGzipBytes < GZIP_BUDGET, `widget.js is ${web.widgetGzipBytes} bytes gzipped, over ${GZIP_BUDGET}`)
  })

  test('/widget.js may be loaded by any origin', async () => {
    const response = await fetch(`${apiOrigin}/widget.js`, { headers: { origin: 'https://shop.example' } })
    assert.equal(response.status, 200)
    assert.equal(response.headers.get('access-control-allow-origin'), '*')
    assert.match(response.headers.get('content-type') ?? '', /^text\/javascript/)
  })

  test('renders the active plans with price, interval, trial, prepaid and savings, talking only to the two origins', async () => {
    const { context, page, requests, warnings, errors } = await visit('/')
    try {
      const widgets = page.locator('subscription-widget')
      await widgets.first().waitFor()
      // A product without plans renders nothing: two widgets, not three.
      assert.equal(await widgets.count(), 2)
      const [coffee, tea] = [widgets.nth(0), widgets.nth(1)]
      assert.equal(await page.locator('#subscribe-here > subscription-widget').count(), 1, 'data-target places the widget in that element')
      assert.equal(await tea.evaluate((host) => host.previousElementSibling?.tagName), 'SCRIPT', 'without data-target the widget follows its script tag')

      assert.equal(await coffee.getByRole('group', { name: 'Purchase options' }).count(), 1)
      const options = (await coffee.locator('label').allInnerTexts()).map(normalize)
      assert.deepEqual(options, [
        'One-time purchase $25.00',
        'Every 2 weeks Save 10% $22.50 every 2 weeks',
        'Monthly Save 15% $21.25 every month 14-day free trial',
        'Quarterly box Save 20% $20.00 every month 3 months prepaid: $60.00 per charge',
      ])
      assert.ok(!options.some((text) => text.includes('Old weekly')), 'archived plans are not offered')
      assert.deepEqual((await tea.locator('label').allInnerTexts()).map(normalize), ['One-time purchase', 'Yearly €99.00 every year'])

      // Radios with accessible names, the one-time purchase chosen to begin with.
      assert.equal(await coffee.getByRole('radio').count(), 4)
      assert.ok(await coffee.getByRole('radio', { name: /^One-time purchase/ }).isChecked())
      assert.ok(await coffee.getByRole('radio', { name: /^Monthly .*14-day free trial/ }).isVisible())

      const origins = new Set(requests.map((url) => new URL(url).origin))
      assert.deepEqual([...origins].sort(), [apiOrigin, shopOrigin].sort(), `requests: ${requests.join(', ')}`)
      assert.ok(requests.some((url) => url.startsWith(`${apiOrigin}/api/v1/storefront/plans?`)))
      assert.deepEqual(errors, [])
      assert.deepEqual(warnings, [])
      // No globals: the page's own are all there is.
      const added = await page.evaluate(() => Object.getOwnPropertyNames(globalThis).filter((name) => !(globalThis as any).globalsBefore.includes(name)))
      assert.deepEqual(added, [])
    } finally {
      await context.close()
    }
  })

  test('picking a plan with the mouse or the keyboard fires subscription-widget:select that page code reads', async () => {
    const { context, page, errors } = await visit('/')
    try {
      const coffee = page.locator('#subscribe-here subscription-widget')
      const tea = page.locator('.related subscription-widget')
      await coffee.waitFor()
      await tea.waitFor()

      await coffee.getByRole('radio', { name: /^Quarterly box/ }).click()
      let seen = await selections(page)
      assert.equal(seen.length, 1)
      assert.deepEqual({ ...seen[0], plan: seen[0]!.plan && { id: seen[0]!.plan.id, name: seen[0]!.plan.name, amount: seen[0]!.plan.amount } }, {
        store_hash: shop.store.store_hash,
        platform_product_id: '112',
        plan_id: plans.prepaid.id,
        plan: { id: plans.prepaid.id, name: 'Quarterly box', amount: 6000 },
      })
      assert.equal(await page.locator('#choice').textContent(), 'In your cart: subscribe to Quarterly box')
      assert.equal(await coffee.getAttribute('data-plan-id'), plans.prepaid.id)

      // Keyboard only: Tab from the theme's own radio group into the widget, arrows move the choice.
      await page.locator('#grind input[value=filter]').focus()
      await page.keyboard.press('Tab')
      assert.ok(await coffee.getByRole('radio', { name: /^Quarterly box/ }).evaluate((input) => input === (input.getRootNode() as any).activeElement), 'Tab lands on the checked option')
      await page.keyboard.press('ArrowUp')
      await page.keyboard.press('ArrowUp')
      seen = await selections(page)
      assert.deepEqual(seen.slice(1).map((detail) => detail.plan_id), [plans.monthly.id, plans.biweekly.id])
      assert.ok(await coffee.getByRole('radio', { name: /^Every 2 weeks/ }).isChecked())
      await page.keyboard.press('ArrowUp')
      seen = await selections(page)
      assert.deepEqual({ plan_id: seen.at(-1)!.plan_id, plan: seen.at(-1)!.plan, product: seen.at(-1)!.platform_product_id }, { plan_id: null, plan: null, product: '112' })
      assert.equal(await page.locator('#choice').textContent(), 'In your cart: one-time purchase')
      assert.equal(await coffee.getAttribute('data-plan-id'), '')

      // Two widgets on one page keep their own choices and say which product they speak for.
      await tea.getByRole('radio', { name: /^Yearly/ }).click()
      assert.deepEqual((await selections(page)).at(-1)!.platform_product_id, 'tea-7')
      assert.deepEqual((await selections(page)).at(-1)!.plan_id, plans.tea.id)
      assert.ok(await coffee.getByRole('radio', { name: /^One-time purchase/ }).isChecked())
      assert.ok(await page.locator('#grind input[value=whole]').isChecked(), "the theme's own radio group is untouched")
      assert.deepEqual(errors, [])
    } finally {
      await context.close()
    }
  })

  test('a product with more plans than one page holds shows every plan, asking 100 at a time', async () => {
    const { context, page, requests, warnings, errors } = await visit('/many')
    try {
      const widget = page.locator('subscription-widget')
      await widget.waitFor()
      const options = (await widget.locator('label').allInnerTexts()).map(normalize)
      assert.equal(options.length, 1 + MANY_PLANS, 'one-time purchase and every plan')
      assert.deepEqual(options.slice(1).map((text) => text.split(' $')[0]), Array.from({ length: MANY_PLANS }, (_, i) => `Every ${i + 1} days`))
      const planRequests = requests.filter((url) => url.startsWith(`${apiOrigin}/api/v1/storefront/plans?`)).map((url) => new URL(url).searchParams)
      assert.equal(planRequests.length, 2, 'two pages')
      assert.ok(planRequests.every((query) => query.get('limit') === '100'))
      assert.deepEqual(planRequests.map((query) => query.has('cursor')), [false, true])
      assert.deepEqual(errors, [])
      assert.deepEqual(warnings, [])
    } finally {
      await context.close()
    }
  })

  test("the host page's CSS does not restyle the widget, and the widget's CSS stays inside it", async () => {
    const { context, page } = await visit('/')
    try {
      const coffee = page.locator('#subscribe-here subscription-widget')
      await coffee.waitFor()
      const inside = await coffee.evaluate((host) => {
        const root = host.shadowRoot!
        const style = (selector: string) => (globalThis as any).getComputedStyle(root.querySelector(selector)!)
        const [legend, label, title, input, fieldset] = ['legend', 'label', '.t', 'input', 'fieldset'].map(style)
        return {
          legendFont: legend!.fontFamily,
          legendStyle: legend!.fontStyle,
          legendColor: legend!.color,
          labelTransform: label!.textTransform,
          labelSpacing: label!.letterSpacing,
          labelCursor: label!.cursor,
          labelBorder: label!.borderTopWidth,
          titleDecoration: title!.textDecorationLine,
          titleWeight: title!.fontWeight,
          titleColor: title!.color,
          inputTransform: input!.transform,
          fieldsetBorder: fieldset!.borderTopStyle,
        }
      })
      assert.doesNotMatch(inside.legendFont, /Georgia/)
      assert.deepEqual({ ...inside, legendFont: undefined }, {
        legendFont: undefined,
        legendStyle: 'normal',
        legendColor: 'rgb(31, 35, 40)',
        labelTransform: 'none',
        labelSpacing: 'normal',
        labelCursor: 'pointer',
        labelBorder: '1px',
        titleDecoration: 'none',
        titleWeight: '600',
        titleColor: 'rgb(31, 35, 40)',
        inputTransform: 'none',
        fieldsetBorder: 'none',
      })
      const outside = await page.evaluate(() => {
        const { document, getComputedStyle } = globalThis as any
        const label = getComputedStyle(document.querySelector('#grind label'))
        const fieldset = getComputedStyle(document.querySelector('#grind'))
        return { labelTransform: label.textTransform, labelBorder: label.borderTopWidth, labelDisplay: label.display, fieldsetBorder: fieldset.borderTopStyle }
      })
      assert.deepEqual(outside, { labelTransform: 'uppercase', labelBorder: '0px', labelDisplay: 'inline-block', fieldsetBorder: 'dashed' })
    } finally {
      await context.close()
    }
  })

  test('an API that cannot answer leaves the page as it was, with a console warning and no error', async () => {
    const { context, page, warnings, errors } = await visit('/broken')
    try {
      assert.equal(await page.locator('subscription-widget').count(), 0)
      assert.ok(warnings.some((text) => text.includes('[subscription-widget] could not load plans')), warnings.join('\n'))
      assert.deepEqual(errors.filter((text) => !text.includes('404')), [])
    } finally {
      await context.close()
    }
  })

  test('screenshots at 360, 390, 1280 and 1440 px (test-results/widget/; the docs ones with UPDATE_SCREENSHOTS=1)', async (t) => {
    mkdirSync(ARTEFACTS, { recursive: true })
    for (const width of [360, 390, 1280, 1440]) {
      const { context, page } = await visit('/', { width, height: 900 })
      try {
        await page.locator('.related subscription-widget').waitFor()
        await page.locator('#subscribe-here subscription-widget').getByRole('radio', { name: /^Monthly/ }).click()
        // Nothing sticks out sideways at either width.
        assert.ok(await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth <= (globalThis as any).innerWidth), `the page scrolls sideways at ${width} px`)
        const screenshot = await page.screenshot({ fullPage: true })
        writeFileSync(new URL(`widget-${width}.png`, ARTEFACTS), screenshot)
        if (process.env.UPDATE_SCREENSHOTS === '1' && (width === 360 || width === 1280)) {
          mkdirSync(SCREENSHOTS, { recursive: true })
          writeFileSync(new URL(`widget-${width}.png`, SCREENSHOTS), screenshot)
          t.diagnostic(`wrote docs/screenshots/widget-${width}.png`)
        }
      } finally {
        await context.close()
      }
    }
  })
})
