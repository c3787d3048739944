import { Type } from 'typebox'
import type { FastifyReply } from 'fastify'
import type { App } from '../../http/types.ts'
import type { PlatformAppService } from './platform-app.service.ts'

/**
 * The BigCommerce app's callbacks, outside /api/v1 and outside the API document: the platform,
 * not an API client, calls them (docs/platform-api.md section 1, docs/bigcommerce.md).
 *   GET /platform/auth       the merchant's browser, at install: the code becomes the store's token
 *   GET /platform/load       the merchant opens the app in the control panel
 *   GET /platform/uninstall  BigCommerce's server: the token is deleted, the store's billing stops
 */

// As strict as the portal's (src/http/web-assets.ts), except that the control panel shows the app's
// pages in a frame: only BigCommerce's own origins may frame them (inferred from the control panel's hosts).
const APP_PAGE_CSP = [
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  "base-uri 'none'",
  "form-action 'none'",
  'frame-ancestors https://*.bigcommerce.com https://*.mybigcommerce.com',
].join('; ')

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => ESCAPES[char]!)

function page(reply: FastifyReply, title: string, message: string): FastifyReply {
  reply.removeHeader('x-frame-options')
  return reply
    .header('content-security-policy', APP_PAGE_CSP)
    .header('referrer-policy', 'no-referrer')
    .header('cache-control', 'no-store')
    .type('text/html; charset=utf-8')
    .send(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title>
<style>body{font-family:system-ui,sans-serif;margin:2rem;color:#222}</style></head>
<body><h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p></body></html>
`)
}

const SignedPayloadQuery = Type.Object({ signed_payload_jwt: Type.String({ minLength: 1, maxLength: 8192 }) })

export async function platformAppRoutes(app: App, platformApp: PlatformAppService): Promise<void> {
  // Not configured is 503 before the query is even looked at: the operator learns what to set.
  app.addHook('onRequest', async () => platformApp.assertConfigured())

  app.get('/platform/auth', {
    schema: {
      hide: true,
      querystring: Type.Object({
        code: Type.String({ minLength: 1, maxLength: 1024 }),
        scope: Type.String({ maxLength: 4096 }),
        context: Type.String({ minLength: 1, maxLength: 200 }),
        account_uuid: Type.Optional(Type.String({ maxLength: 200 })),
      }),
    },
  }, async (request, reply) => {
    const { code, scope, context } = request.query
    const { store, scopes, missing } = await platformApp.install({ code, scope, context })
    request.log.info({ storeId: store.id, storeHash: store.store_hash, scopes }, 'store connected to BigCommerce by the app install')
    if (missing.length > 0) request.log.warn({ storeId: store.id, missing }, 'the app was granted fewer scopes than renewals need: add them to the app profile')
    return page(reply, 'Subscription Billing is connected', `Store ${store.store_hash} is connected; its renewals are charged through BigCommerce.`)
  })

  app.get('/platform/load', { schema: { hide: true, querystring: SignedPayloadQuery } }, async (request, reply) => {
    const { storeHash, storeId, connected, consoleSession: token } = await platformApp.load(request.query.signed_payload_jwt)
    if (!connected) return page(reply, 'Subscription Billing', `Store ${storeHash} is not connected: install the app again from the control panel.`)
    if (!token) return page(reply, 'Subscription Billing', `Store ${storeHash} is connected.`)
    // Into the console, signed in as this store: a one-hour console session in the address's fragment,
    // which the browser never sends to any server (a query string would be logged); the console moves
    // it to sessionStorage and takes it out of the address at once. 303: the next request is a GET.
    request.log.info({ storeId, storeHash }, 'console session issued by the load callback')
    reply.removeHeader('x-frame-options')
    return reply
      .code(303)
      .header('location', `/console#console_session=${token}`)
      .header('content-security-policy', APP_PAGE_CSP)
      .header('referrer-policy', 'no-referrer')
      .header('cache-control', 'no-store')
      .send()
  })

  app.get('/platform/uninstall', { schema: { hide: true, querystring: SignedPayloadQuery } }, async (request, reply) => {
    const { storeHash, storeId } = await platformApp.uninstall(request.query.signed_payload_jwt)
    if (storeId) request.log.info({ storeId, storeHash }, 'BigCommerce app uninstalled: token deleted, billing stopped, data kept')
    return reply.code(204).send()
  })
}
