import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { chromium, type Browser } from 'playwright-core'
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
