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
 * esbuild into dist/web: browser code, TypeScript in, one file each out, no runtime dependencies.
 */
export async function buildWeb({ outDir = WEB_OUT, minify = true }: { outDir?: URL; minify?: boolean } = {}): Promise<WebBuild> {
  const portalOut = new URL('portal/', outDir)
  mkdirSync(portalOut, { recursive: true })
  const common = { bundle: true, minify, target: ['es2022'], platform: 'browser' as const, logLevel: 'warning' as const, legalComments: 'none' as const }
  await build({ ...common, entryPoints: [fileURLToPathSafe(new URL('portal/main.ts', WEB_SOURCE))], outfile: fileURLToPathSafe(new URL('app.js', portalOut)), format: 'esm', sourcemap: true })
  await build({ ...common, entryPoints: [fileURLToPathSafe(new URL('widget/widget.ts', WEB_SOURCE))], outfile: fileURLToPathSafe(new URL('widget.js', outDir)), format: 'iife' })
  for (const file of ['index.html', 'styles.css']) copyFileSync(new URL(`portal/${file}`, WEB_SOURCE), new URL(file, portalOut))
  // The merchant console (src/web/console): its script and its styles, uPlot's stylesheet bundled in.
  const consoleOut = new URL('console/', outDir)
  mkdirSync(consoleOut, { recursive: true })
  await build({ ...common, entryPoints: [fileURLToPathSafe(new URL('console/main.ts', WEB_SOURCE))], outfile: fileURLToPathSafe(new URL('app.js', consoleOut)), format: 'esm', sourcemap: true })
  await build({ ...common, entryPoints: [fileURLToPathSafe(new URL('console/styles.css', WEB_SOURCE))], outfile: fileURLToPathSafe(new URL('styles.css', consoleOut)) })
  copyFileSync(new URL('console/index.html', WEB_SOURCE), new URL('index.html', consoleOut))
  const widget = readFileSync(new URL('widget.js', outDir))
  return { outDir, widgetBytes: widget.length, widgetGzipBytes: gzipSync(widget, { level: 9 }).length }
}

function fileURLToPathSafe(url: URL): string {
  return decodeURIComponent(url.pathname)
}
