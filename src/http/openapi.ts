import helmet from '@fastify/helmet'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import type { FastifyInstance } from 'fastify'
import { HELMET_OPTIONS } from './security-headers.ts'
import { API_VERSION } from './versioning.ts'

export const OPENAPI_PATH = '/api/v1/openapi.json'

const DESCRIPTION = `Recurring billing for a commerce platform: plans, subscriptions, renewals, dunning, a subscriber portal and signed webhooks.

Conventions: ids are opaque prefixed strings; money is integer minor units with an ISO 4217 currency; times are RFC 3339 UTC;
lists answer \`{"data": [...], "next_cursor"}\`; errors are RFC 9457 problem details with a stable \`code\` and the \`request_id\`.
Every POST accepts \`Idempotency-Key\`. No field accepts card numbers (400 \`card_data_rejected\`).`

/** The document is generated from the route schemas, so it cannot drift from what the routes validate. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.0.3',
      info: { title: 'Subscription Billing API', version: `${API_VERSION}.0.0`, description: DESCRIPTION, license: { name: 'MIT' } },
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
  })

  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => app.swagger())

  // The reference page is HTML: it keeps helmet's full set of headers, which API answers do without.
  await app.register(async (docs) => {
    await docs.register(helmet, HELMET_OPTIONS)
    await docs.register(swaggerUi, {
      routePrefix: '/docs',
      uiConfig: { deepLinking: true, docExpansion: 'list' },
      // The reference page is served from this process: no third-party requests.
      staticCSP: true,
    })
  })
}
