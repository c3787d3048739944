import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import assert from 'node:assert/strict'
import { chromium, type Browser, type Page } from 'playwright-core'
import { buildWeb } from '../../src/web-build/build-web.ts'

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
