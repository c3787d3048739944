import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, rmSync } from 'node:fs'
import { after, before, describe, test } from 'node:test'
import type { Browser, Page } from 'playwright-core'
import { DEMO_STORE_HASH } from '../../src/demo/demo-data.ts'
import { launchBrowser, skipWithoutChromium } from '../helpers/browser.ts'
import { startServer, type RunningServer } from '../helpers/server-process.ts'
import { newDataDir } from '../helpers/data-dir.ts'

/**
 * The API reference page at /docs, in Chromium against the real service process as `npm start` runs
 * it (an embedded database it creates, seeded with the demo store): the service's own name and
 * version, the versioned document, demo-store examples, no framework top bar, no console error or CSP
 * refusal, no request to another origin, and no sideways scrolling at 390 px. Screenshots at 1440 and
 * 390 px go to test-results/docs/ (artefacts); UPDATE_SCREENSHOTS=1 also writes docs/screenshots/docs-*.png.
 */

const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
const ARTEFACTS = new URL('../../test-results/docs/', import.meta.url)
const SCREENSHOTS = new URL('../../docs/screenshots/', import.meta.url)

describe('the API reference page in a real browser', { skip: skipWithoutChromium, timeout: 120_000 }, () => {
  let server: RunningServer
  let dataDir: string
  let browser: Browser

  before(async () => {
    dataDir = await newDataDir('sb-docs-')
    server = await startServer({ DATA_DIR: dataDir, LOG_LEVEL: 'error' })
    browser = await launchBrowser()
  })
  after(async () => {
    await browser?.close()
    await server?.stop()
    rmSync(dataDir, { recursive: true, force: true })
  })

  async function open(width: number, height: number): Promise<{ page: Page; problems: string[]; foreign: string[] }> {
    const context = await browser.newContext({ viewport: { width, height }, deviceScaleFactor: 1 })
    const page = await context.newPage()
    const problems: string[] = []
    const foreign: string[] = []
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
    page.on('console', (message) => {
      if (message.type() === 'error' || message.type() === 'warning') problems.push(`console ${message.type()}: ${message.text()}`)
    })
    page.on('request', (request) => {
      const url = request.url()
      if (!url.startsWith('data:') && new URL(url).origin !== server.origin) foreign.push(url)
    })
    page.on('response', (response) => {
      if (response.status() >= 400) problems.push(`${response.status()} ${response.url()}`)
    })
    await page.goto(`${server.origin}/docs`)
    await page.locator('.swagger-ui .info .title').waitFor()
    await page.locator('.opblock-tag').first().waitFor()
    return { page, problems, foreign }
  }

  async function settle(page: Page): Promise<void> {
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))')
  }

  async function screenshot(page: Page, file: string, t: { diagnostic(message: string): void }): Promise<void> {
    mkdirSync(ARTEFACTS, { recursive: true })
    await page.screenshot({ path: new URL(file, ARTEFACTS).pathname, fullPage: false })
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      mkdirSync(SCREENSHOTS, { recursive: true })
      await page.screenshot({ path: new URL(file, SCREENSHOTS).pathname, fullPage: false })
    }
    t.diagnostic(`screenshot ${new URL(file, ARTEFACTS).pathname}`)
  }

  for (const [width, height] of [[1440, 900], [390, 844]] as const) {
    test(`at ${width} px: the service's name and version, the versioned document, demo-store examples, no console error`, async (t) => {
      const { page, problems, foreign } = await open(width, height)
      assert.equal(await page.title(), `Subscription Billing API ${PACKAGE.version} · API reference`)
      const title = await page.locator('.swagger-ui .info .title').innerText()
      assert.match(title, /Subscription Billing API/)
      assert.match(title, new RegExp(PACKAGE.version.replaceAll('.', '\\.')))
      assert.doesNotMatch(title, /1\.0\.0/)
      // The document shown is the versioned one; no framework top bar, logo or box to explore another.
      assert.equal(await page.locator('.swagger-ui .info a[href$="/api/v1/openapi.json"]').count(), 1)
      assert.equal(await page.locator('.topbar, .download-url-wrapper, input.download-url-input').count(), 0)
      assert.ok((await page.locator('.opblock-tag').count()) >= 10)
      await screenshot(page, `docs-${width}.png`, t)

      // An operation opened (its tag first: tags start folded): its example names the demo store that npm start seeds.
      await page.locator('.opblock-tag', { hasText: 'Portal sign-in' }).first().click()
      const requestLink = page.locator('#operations-Portal_sign-in-requestPortalLink, [id^="operations-Portal_sign-in-"]').filter({ hasText: '/api/v1/portal/auth/request-link' }).first()
      await requestLink.locator('.opblock-summary').first().click()
      const example = requestLink.locator('.body-param__example, .highlight-code, .example').first()
      await example.waitFor()
      assert.match(await example.innerText(), new RegExp(`"store_hash": "${DEMO_STORE_HASH}"`))
      await requestLink.scrollIntoViewIfNeeded()
      await settle(page)
      await screenshot(page, `docs-operation-${width}.png`, t)

      const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')
      assert.ok(overflow <= 0, `at ${width} px the page scrolls sideways by ${overflow} px`)
      if (width < 500) {
        // Readable on a phone: body text at least 12 px, every operation's path inside the screen.
        const outside = await page.evaluate<string[]>(`[...document.querySelectorAll('.opblock-summary-path, .opblock-summary-description, .info .title')]
          .filter((element) => { const box = element.getBoundingClientRect(); return box.width > 0 && (box.left < 0 || box.right > document.documentElement.clientWidth + 0.5) })
          .map((element) => element.textContent)`)
        assert.deepEqual(outside, [], 'text outside the screen')
        const small = await page.evaluate<number>(`Math.min(...[...document.querySelectorAll('.opblock-summary-path, .opblock-summary-description, .renderedMarkdown p')]
          .filter((element) => element.getBoundingClientRect().width > 0).map((element) => parseFloat(getComputedStyle(element).fontSize)))`)
        assert.ok(small >= 12, `smallest text ${small} px`)
      }
      assert.deepEqual(problems, [])
      assert.deepEqual(foreign, [])
      await page.context().close()
    })
  }
})
