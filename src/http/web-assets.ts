import { readFile } from 'node:fs/promises'
import type { FastifyReply } from 'fastify'
import { WEB_OUT } from '../web-build/web-paths.ts'
import { AppError } from '../lib/errors.ts'
import type { App } from './types.ts'

/**
 * The subscriber portal's pages, the merchant console's and the storefront widget's script, built from src/web by
 * `npm run build:web` (run by `npm start`). Outside /api/v1: not part of the versioned contract.
 * Served by hand rather than by a static-file plugin: there are a handful of files, each with its own
 * headers (the portal's CSP and no-referrer, the widget's CORS), and nothing else may be served.
 */

// The portal loads nothing from anywhere else and talks only to this origin's API.
const PORTAL_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ')

// The console's: the portal's, except that BigCommerce's control panel may frame it (the app's load
// callback, src/modules/platform/platform-app.routes.ts, leads there and allows the same origins).
export const CONSOLE_FRAME_ANCESTORS = 'https://*.bigcommerce.com https://*.mybigcommerce.com'
const CONSOLE_CSP = PORTAL_CSP.replace("frame-ancestors 'none'", `frame-ancestors ${CONSOLE_FRAME_ANCESTORS}`)

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
}

const PORTAL_ASSETS = new Set(['app.js', 'app.js.map', 'styles.css'])
// The merchant console's: the same CSP (its charts draw on <canvas>, styled through the CSSOM, which
// style-src 'self' allows); the admin key it holds is sent to this origin only.
const CONSOLE_ASSETS = new Set(['app.js', 'app.js.map', 'styles.css'])

export function registerWebAssets(app: App, { outDir = WEB_OUT }: { outDir?: URL } = {}): void {
  const cache = new Map<string, Buffer>()
  async function asset(path: string): Promise<Buffer> {
    let body = cache.get(path)
    if (!body) {
      try {
        body = await readFile(new URL(path, outDir))
      } catch {
        throw new AppError('not_found', `${path} is not built: run npm run build:web (npm start does)`)
      }
      cache.set(path, body)
    }
    return body
  }
  const send = async (reply: FastifyReply, path: string) => reply.type(TYPES[path.slice(path.lastIndexOf('.'))] ?? 'application/octet-stream').send(await asset(path))

  const page = async (_request: unknown, reply: FastifyReply) => {
    // The sign-in link carries its token in the address: it must not leak through Referer.
    reply.header('content-security-policy', PORTAL_CSP).header('referrer-policy', 'no-referrer').header('cache-control', 'no-store').header('x-frame-options', 'DENY')
    return send(reply, 'portal/index.html')
  }
  app.get('/portal', { schema: { hide: true } }, page)
  app.get('/portal/*', { schema: { hide: true } }, async (request, reply) => {
    const rest = (request.params as { '*': string })['*']
    if (rest.startsWith('assets/')) {
      const name = rest.slice('assets/'.length)
      if (!PORTAL_ASSETS.has(name)) throw new AppError('not_found', `no portal asset ${name}`)
      reply.header('cache-control', 'no-cache')
      return send(reply, `portal/${name}`)
    }
    return page(request, reply)
  })

  const consolePage = async (_request: unknown, reply: FastifyReply) => {
    // Framed by BigCommerce's control panel when opened from the app (the load callback's origins), by nothing else.
    reply.removeHeader('x-frame-options')
    reply.header('content-security-policy', CONSOLE_CSP).header('referrer-policy', 'no-referrer').header('cache-control', 'no-store')
    return send(reply, 'console/index.html')
  }
  app.get('/console', { schema: { hide: true } }, consolePage)
  app.get('/console/*', { schema: { hide: true } }, async (request, reply) => {
    const rest = (request.params as { '*': string })['*']
    if (rest.startsWith('assets/')) {
      const name = rest.slice('assets/'.length)
      if (!CONSOLE_ASSETS.has(name)) throw new AppError('not_found', `no console asset ${name}`)
      reply.header('cache-control', 'no-cache')
      return send(reply, `console/${name}`)
    }
    return consolePage(request, reply)
  })

  app.get('/widget.js', { schema: { hide: true } }, async (_request, reply) => {
    // Storefronts on any origin load it with a <script> tag.
    reply.header('access-control-allow-origin', '*').header('cross-origin-resource-policy', 'cross-origin').header('cache-control', 'public, max-age=300')
    return send(reply, 'widget.js')
  })
}
