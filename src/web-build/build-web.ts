import { copyFileSync, mkdirSync, readFileSync } from 'node:fs'
import { gzipSync } from 'node:zlib'
import { build } from 'esbuild'

import { WEB_OUT, WEB_SOURCE } from './web-paths.ts'

export { WEB_OUT, WEB_SOURCE }

export interface WebBuild {
  outDir: URL
  widgetBytes: number
  widgetGzipBytes: number
}

/**
 * Bundles the subscriber portal (src/web/portal), the merchant console (src/web/console) and the storefront widget (src/web/widget) with
 * esbuild into dist/web: browser code, TypeScript in, one file each out, no runtime dependencies. The two apps share
 * src/web/shared (client, router, session, shell): each app's styles.css imports shared/base.css, bundled into its one sheet.
 */
export async function buildWeb({ outDir = WEB_OUT, minify = true }: { outDir?: URL; minify?: boolean } = {}): Promise<WebBuild> {
  mkdirSync(outDir, { recursive: true })
  const common = { bundle: true, minify, target: ['es2022'], platform: 'browser' as const, logLevel: 'warning' as const, legalComments: 'none' as const }
  await build({ ...common, entryPoints: [fileURLToPathSafe(new URL('widget/widget.ts', WEB_SOURCE))], outfile: fileURLToPathSafe(new URL('widget.js', outDir)), format: 'iife' })
  // Each app: its script, its page, and one stylesheet (shared/base.css, then its own; the console's with uPlot's).
  for (const name of ['portal', 'console']) {
    const appOut = new URL(`${name}/`, outDir)
    mkdirSync(appOut, { recursive: true })
    await build({ ...common, entryPoints: [fileURLToPathSafe(new URL(`${name}/main.ts`, WEB_SOURCE))], outfile: fileURLToPathSafe(new URL('app.js', appOut)), format: 'esm', sourcemap: true })
    await build({ ...common, entryPoints: [fileURLToPathSafe(new URL(`${name}/styles.css`, WEB_SOURCE))], outfile: fileURLToPathSafe(new URL('styles.css', appOut)) })
    copyFileSync(new URL(`${name}/index.html`, WEB_SOURCE), new URL('index.html', appOut))
  }
  const widget = readFileSync(new URL('widget.js', outDir))
  return { outDir, widgetBytes: widget.length, widgetGzipBytes: gzipSync(widget, { level: 9 }).length }
}

function fileURLToPathSafe(url: URL): string {
  return decodeURIComponent(url.pathname)
}
