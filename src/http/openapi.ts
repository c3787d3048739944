import { everyFieldOptional } from './optional-body.ts'
import helmet from '@fastify/helmet'
import swagger from '@fastify/swagger'
import type { FastifyInstance } from 'fastify'
import { readFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { AppError } from '../lib/errors.ts'
import { HELMET_OPTIONS } from './security-headers.ts'

export const OPENAPI_PATH = '/api/v1/openapi.json'

/** The service's own name and version, as package.json gives them: the document's `info` and the /docs page say the same. */
const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { name: string; version: string }
export const SERVICE_NAME = PACKAGE.name
export const SERVICE_VERSION = PACKAGE.version
export const API_TITLE = 'Subscription Billing API'

const DESCRIPTION = `Recurring billing for a commerce platform: plans, subscriptions, renewals, dunning, a subscriber portal and signed webhooks.

Conventions: ids are opaque prefixed strings; money is integer minor units with an ISO 4217 currency; times are RFC 3339 UTC;
lists answer \`{"data": [...], "next_cursor"}\`; errors are RFC 9457 problem details with a stable \`code\` and the \`request_id\`.
Every POST accepts \`Idempotency-Key\`. No field accepts card numbers (400 \`card_data_rejected\`).`

/** The document is generated from the route schemas, so it cannot drift from what the routes validate. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: API_TITLE, version: SERVICE_VERSION, description: `The API of \`${SERVICE_NAME}\` ${SERVICE_VERSION}. ${DESCRIPTION}`, license: { name: 'MIT' } },
      tags: [
        { name: 'Storefront', description: 'Plan discovery for widgets; no credentials' },
        { name: 'Catalogue (public)', description: 'Product and plan reads; no credentials' },
        { name: 'Catalogue', description: "The merchant's products and plans (admin API key)" },
        { name: 'Store', description: 'Store settings (admin API key)' },
        { name: 'Platform connection', description: "The store's connection to BigCommerce: a store-level API account token, kept encrypted and never shown (admin API key)" },
        { name: 'Subscriptions', description: 'Checkout ingestion and every action on a subscription (admin API key)' },
        { name: 'Change requests', description: 'B2B changes proposed by subscribers, decided by the merchant (admin API key)' },
        { name: 'Events', description: 'The event log: every change, in the order it was recorded (admin API key)' },
        { name: 'Webhooks', description: 'Outbound webhook endpoints, their deliveries, redelivery and replay (admin API key)' },
        { name: 'Billing', description: 'Renewal charge attempts and their outcomes (admin API key)' },
        { name: 'Test clock', description: "A test-mode store's own clock: move it forward and the due work runs (admin API key)" },
        { name: 'Analytics', description: 'MRR, churn, dunning recovery and revenue over a window, per currency (admin API key)' },
        { name: 'Imports', description: 'Subscriptions from a CSV file (Recharge columns or this service\'s export): a dry run, then the import; idempotent by external id (admin API key)' },
        { name: 'Bulk operations', description: 'One action over many subscriptions, run by the worker with progress and per-subscription results (admin API key)' },
        { name: 'Exports', description: 'Subscriptions (the native import format), charges and subscribers as CSV, streamed, with the lists\' filters (admin API key)' },
        { name: 'Portal sign-in', description: 'Magic-link sign-in for subscribers: ask for a link, exchange its token for a session, sign out' },
        { name: 'Portal', description: "The signed-in subscriber's own profile and subscriptions (portal session token)" },
      ],
      components: {
        securitySchemes: {
          adminApiKey: { type: 'http', scheme: 'bearer', description: "An admin API key of one store (sk_test_... or sk_live_...)" },
          portalSession: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: 'The short-lived session token from POST /api/v1/portal/auth/verify' },
        },
      },
    },
    refResolver: {
      // Shared schemas keep their names as components (Plan, not def-0).
      buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`),
    },
    transform: ({ schema, url }) => ({ schema: url.startsWith('/api/v1') && url !== OPENAPI_PATH ? schema : { ...schema, hide: true }, url }),
    // The generator marks every body required; one whose fields are all optional may be left out (optional-body.ts).
    transformObject: (documentObject) => optionalBodiesNotRequired((documentObject as unknown as { openapiObject: OpenApiDocument }).openapiObject) as never,
  })

  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger())

  // The reference page is HTML: it keeps helmet's full set of headers, which API answers do without.
  await app.register(async (docs) => {
    await docs.register(helmet, HELMET_OPTIONS)
    registerDocsPage(docs)
  })
}

/*
 * /docs is Swagger UI (the bundle @fastify/swagger-ui ships, swagger-ui-dist 5.x), driven by a page and a script of
 * our own rather than by that plugin's page. Kept over Scalar or Redoc because it is the one that runs under
 * a strict CSP: its stylesheet is a file, so `style-src 'self'` holds with no 'unsafe-inline' (Redoc and Scalar
 * inject <style> elements), there is no inline script, and nothing is fetched from another origin (Scalar loads
 * fonts from a CDN by default). The plugin's own page could not be used: it fetches /docs/json instead of the
 * versioned document, shows the framework's top bar and an "explore" box, and its CSP is broken
 * (`upgrade-insecure-requests` on plain http, the validator's host). BaseLayout drops the top bar;
 * docs.css makes the page readable on a phone.
 */
const SWAGGER_UI_DIR = join(dirname(createRequire(import.meta.url).resolve('@fastify/swagger-ui')), 'static')
const OWN_DIR = new URL('./docs-page/', import.meta.url)

const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ')

const DOCS_ASSETS: Record<string, { file: string | URL; type: string }> = {
  'swagger-ui.css': { file: join(SWAGGER_UI_DIR, 'swagger-ui.css'), type: 'text/css; charset=utf-8' },
  'swagger-ui-bundle.js': { file: join(SWAGGER_UI_DIR, 'swagger-ui-bundle.js'), type: 'text/javascript; charset=utf-8' },
  'docs.css': { file: new URL('docs.css', OWN_DIR), type: 'text/css; charset=utf-8' },
  'docs.js': { file: new URL('docs.js', OWN_DIR), type: 'text/javascript; charset=utf-8' },
  'favicon-32x32.png': { file: join(SWAGGER_UI_DIR, 'favicon-32x32.png'), type: 'image/png' },
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

export const DOCS_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(`${API_TITLE} ${SERVICE_VERSION} · API reference`)}</title>
<meta name="description" content="${escapeHtml(`API reference of ${SERVICE_NAME} ${SERVICE_VERSION}`)}">
<link rel="icon" type="image/png" href="/docs/assets/favicon-32x32.png">
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
<link rel="stylesheet" href="/docs/assets/docs.css">
<script src="/docs/assets/swagger-ui-bundle.js" defer></script>
<script src="/docs/assets/docs.js" defer></script>
</head>
<body>
<main id="swagger-ui" data-openapi-url="${OPENAPI_PATH}">
<noscript><p>${escapeHtml(`${API_TITLE} ${SERVICE_VERSION}`)}: this page needs JavaScript. The contract itself is <a href="${OPENAPI_PATH}">${OPENAPI_PATH}</a>.</p></noscript>
</main>
</body>
</html>
`

function registerDocsPage(docs: FastifyInstance): void {
  const cache = new Map<string, Buffer>()
  docs.get('/docs', { schema: { hide: true } }, async (_request, reply) =>
    reply.header('content-security-policy', DOCS_CSP).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(DOCS_HTML),
  )
  docs.get<{ Params: { name: string } }>('/docs/assets/:name', { schema: { hide: true } }, async (request, reply) => {
    const asset = Object.hasOwn(DOCS_ASSETS, request.params.name) ? DOCS_ASSETS[request.params.name] : undefined
    if (!asset) throw new AppError('not_found', `no reference page asset ${request.params.name}`)
    let body = cache.get(request.params.name)
    if (!body) {
      body = await readFile(asset.file)
      cache.set(request.params.name, body)
    }
    return reply.header('content-security-policy', DOCS_CSP).header('cache-control', 'no-cache').type(asset.type).send(body)
  })
}

interface OpenApiDocument {
  paths?: Record<string, Record<string, { requestBody?: { required?: boolean; content?: Record<string, { schema?: unknown }> } }>>
  components?: { schemas?: Record<string, unknown> }
}

/** `requestBody.required: false` where the body's fields are all optional, as the routes accept no body there. */
function optionalBodiesNotRequired(doc: OpenApiDocument): OpenApiDocument {
  const resolve = (schema: unknown): unknown => {
    const ref = (schema as { $ref?: unknown } | null)?.$ref
    return typeof ref === 'string' ? doc.components?.schemas?.[ref.replace(/^#\/components\/schemas\//, '')] : schema
  }
  for (const item of Object.values(doc.paths ?? {})) {
    for (const operation of Object.values(item)) {
      const body = operation?.requestBody
      const schema = body?.content?.['application/json']?.schema
      if (body && schema !== undefined && everyFieldOptional(resolve(schema))) body.required = false
    }
  }
  return doc
}
