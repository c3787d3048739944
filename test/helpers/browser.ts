import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestContext } from 'node:test'
import { pathToFileURL } from 'node:url'
import assert from 'node:assert/strict'
import { chromium, type Browser, type Page } from 'playwright-core'
import { buildWeb } from '../../src/web-build/build-web.ts'
import { createTestDatabase, onPostgres, scratchUrl } from './database.ts'
import { newDataDir } from './data-dir.ts'
import { startServer, type RunningServer } from './server-process.ts'

/** Debian's chromium (`apt-get install -y chromium`); .ci/run installs it when missing. */
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium'
export const haveChromium = existsSync(CHROMIUM)
/** For `describe(..., { skip })`: browser tests need Chromium; CI always has it. */
export const skipWithoutChromium = haveChromium ? false : `needs Chromium at ${CHROMIUM} (apt-get install -y chromium)`

/**
 * A headless Chromium on a fresh profile (playwright makes a temporary user-data-dir per launch and
 * removes it on close) that talks to nothing but loopback.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-dev-shm-usage', '--no-first-run'],
  })
}

/** Builds the portal and widget into a directory of this test file's own (WEB_DIST_DIR for the app). */
export async function buildWebForTest(): Promise<{ dir: string; widgetGzipBytes: number; cleanup(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'sb-web-'))
  const result = await buildWeb({ outDir: pathToFileURL(`${dir}/`) })
  return { dir, widgetGzipBytes: result.widgetGzipBytes, cleanup: () => rmSync(dir, { recursive: true, force: true }) }
}

/**
 * The admin API of a service a browser test started, for seeding: `origin` is read at each call
 * (the server starts in a `before`). A refusal fails the test with the service's answer.
 */
export function adminClient(origin: () => string, key: string) {
  return async <T = Record<string, any>>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${origin()}/api/v1/admin${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    })
    const text = await response.text()
    assert.ok(response.ok, `${method} ${path} answered ${response.status}: ${text}`)
    return (text ? JSON.parse(text) : undefined) as T
  }
}

export type AdminClient = ReturnType<typeof adminClient>

/**
 * Collects what a page must never do: requests to any origin but the service's (`foreignRequests`,
 * when given) and script errors or console errors other than a refused resource (`pageProblems`).
 */
export function watchPage(page: Page, origin: () => string, into: { foreignRequests?: string[]; pageProblems: string[] }): void {
  const { foreignRequests, pageProblems } = into
  if (foreignRequests) {
    page.on('request', (request) => {
      const url = request.url()
      if (!url.startsWith('data:') && new URL(url).origin !== origin()) foreignRequests.push(url)
    })
  }
  page.on('pageerror', (error) => pageProblems.push(`page error: ${error.message}`))
  page.on('console', (message) => {
    if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) pageProblems.push(`console: ${message.text()}`)
  })
}

/**
 * Where a browser suite's service keeps its data: a scratch PostgreSQL database when DATABASE_URL is
 * set, else a DATA_DIR copied from an initdb'd one (`prefix` names it). `env` goes to startServer;
 * `remove` drops or deletes it after the suite.
 */
export async function serverDatabase(prefix: string): Promise<{ env: Record<string, string>; remove(): Promise<void> }> {
  if (onPostgres) {
    const handle = await createTestDatabase()
    return { env: { DATABASE_URL: scratchUrl(handle)! }, remove: () => handle.close() }
  }
  const dataDir = await newDataDir(prefix)
  return { env: { DATA_DIR: dataDir }, remove: async () => rmSync(dataDir, { recursive: true, force: true }) }
}

/**
 * Screenshots of the page as it stands, whole, at each width (1440 and 390 px unless told), after the
 * loading indicator has gone; the page must not scroll sideways at any of them. Written to
 * test-results/`folder`/`prefix`-`name`-`width`.png (`prefix` is the folder's name unless told; and to
 * docs/screenshots/ with UPDATE_SCREENSHOTS=1), each named in the test's report to be looked at. The
 * page is left at 1440 x 900.
 */
export async function screenshotAtWidths(page: Page, t: TestContext, folder: string, name: string, { prefix = folder, widths = [1440, 390] }: { prefix?: string; widths?: readonly number[] } = {}): Promise<void> {
  const artefacts = new URL(`../../test-results/${folder}/`, import.meta.url)
  const screenshots = new URL('../../docs/screenshots/', import.meta.url)
  await page.locator('.loading').first().waitFor({ state: 'detached' })
  for (const width of widths) {
    await page.setViewportSize({ width, height: width < 500 ? 844 : 900 })
    await page.evaluate('new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)))')
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')
    assert.ok(overflow <= 0, `${name} at ${width} px: the page scrolls sideways by ${overflow} px`)
    // No hover state left over from the last click.
    await page.mouse.move(0, 0)
    const file = `${prefix}-${name}-${width}.png`
    mkdirSync(artefacts, { recursive: true })
    await page.screenshot({ path: new URL(file, artefacts).pathname, fullPage: true })
    if (process.env.UPDATE_SCREENSHOTS === '1') {
      mkdirSync(screenshots, { recursive: true })
      await page.screenshot({ path: new URL(file, screenshots).pathname, fullPage: true })
    }
    t.diagnostic(`screenshot ${file}`)
  }
  await page.setViewportSize({ width: 1440, height: 900 })
}

/** Signs the console in with an admin key and waits for the overview. */
export async function signInToConsole(page: Page, origin: string, adminKey: string): Promise<void> {
  await page.goto(`${origin}/console`)
  await page.getByLabel('Admin API key').fill(adminKey)
  await page.getByRole('button', { name: 'Sign in' }).click()
  await page.getByRole('heading', { level: 1 }).filter({ hasText: 'Overview' }).waitFor()
}

/** What a console suite's seed is given: the started service and its admin API (the suite's own `server` is not set yet). */
export interface ConsoleSeed {
  server: RunningServer
  admin: AdminClient
}

/** A service process with the console built, seeded, and a page on it already signed in (see openSignedInConsole). */
export interface SignedInConsole<T> {
  server: RunningServer
  browser: Browser
  /** 1440 x 900, en-US, in the suite's time zone, watched by watchPage. */
  page: Page
  database: Awaited<ReturnType<typeof serverDatabase>>
  /** What the seed returned. */
  seeded: T
  /** Script and console errors of the page so far (watchPage). */
  pageProblems: string[]
  /** Closes the browser, stops the service, removes its data and the built web. */
  close(): Promise<void>
}

/**
 * For a console suite's `before`: builds the web, starts the service on a database of its own
 * (`databasePrefix`, see serverDatabase) with the store `storeHash` and its bootstrap `adminKey`
 * (`env` added), seeds it while Chromium launches, and opens a page whose console session is the
 * admin key (in sessionStorage, as signing in leaves it) so no test has to sign in. What it started
 * is closed again when any step fails; else `close()` in the suite's `after`.
 */
export async function openSignedInConsole<T>({ databasePrefix, storeHash, adminKey, timezoneId, env = {}, seed }: {
  databasePrefix: string
  storeHash: string
  adminKey: string
  /** The browser's zone (the store's own zone is the seed's to set). */
  timezoneId: string
  env?: Record<string, string>
  seed: (started: ConsoleSeed) => Promise<T>
}): Promise<SignedInConsole<T>> {
  let web: Awaited<ReturnType<typeof buildWebForTest>> | undefined
  let database: Awaited<ReturnType<typeof serverDatabase>> | undefined
  let server: RunningServer | undefined
  let browser: Browser | undefined
  const close = async () => {
    await browser?.close()
    await server?.stop()
    await database?.remove()
    web?.cleanup()
  }
  try {
    web = await buildWebForTest()
    database = await serverDatabase(databasePrefix)
    server = await startServer({ ...database.env, WEB_DIST_DIR: web.dir, SEED_DEMO_DATA: 'false', BOOTSTRAP_STORE_HASH: storeHash, BOOTSTRAP_ADMIN_API_KEY: adminKey, LOG_LEVEL: 'error', ...env })
    const started = server
    // Settled both ways, so a failed seed still leaves the browser to close (else the process waits on it).
    const [made, launched] = await Promise.allSettled([seed({ server: started, admin: adminClient(() => started.origin, adminKey) }), launchBrowser()])
    if (launched.status === 'fulfilled') browser = launched.value
    if (made.status === 'rejected') throw made.reason
    if (launched.status === 'rejected') throw launched.reason
    const context = await launched.value.newContext({ viewport: { width: 1440, height: 900 }, locale: 'en-US', timezoneId })
    await context.addInitScript((token: string) => sessionStorage.setItem('console.session', JSON.stringify({ token, expiresAt: null, via: 'api_key' })), adminKey)
    const page = await context.newPage()
    const pageProblems: string[] = []
    watchPage(page, () => started.origin, { pageProblems })
    return { server, browser: launched.value, page, database, seeded: made.value, pageProblems, close }
  } catch (error) {
    await close()
    throw error
  }
}
