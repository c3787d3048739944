import { pathToFileURL } from 'node:url'
import responseValidation from '@fastify/response-validation'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyServerOptions } from 'fastify'
import type { Config } from './config.ts'
import type { DatabaseHandle } from './db/connect.ts'
import { createAdminAuthenticator, registerAdminContext } from './http/admin-auth.ts'
import { createConsoleSessions, looksLikeJwt, resolveConsoleSessionSecret } from './modules/console-auth/console-sessions.ts'
import { compileOnFirstUse, createAjv, refuseNonFiniteNumbers } from './http/ajv.ts'
import { registerCardDataGuard } from './http/card-guard.ts'
import { registerContractDefaults, requireSecurityScheme } from './http/contract-defaults.ts'
import { frameworkErrorHandler, registerErrorHandling } from './http/error-handler.ts'
import SerializerSelector from '@fastify/fast-json-stringify-compiler'
import { serializeOnFirstUse } from './http/serializers.ts'
import { registerGracefulStop } from './http/graceful-stop.ts'
import { registerHealth } from './http/health.ts'
import { registerIdempotency } from './http/idempotency.ts'
import { registerJsonBodyParser } from './http/json-body.ts'
import { lazyRequestLogger, loggerOptions } from './http/logging.ts'
import { registerMetrics } from './http/metrics.ts'
import { registerOpenApi } from './http/openapi.ts'
import { registerPublicCors } from './http/public-cors.ts'
import { registerRateLimit } from './http/rate-limit.ts'
import { trustProxyOption } from './http/rate-limit-key.ts'
import { requestIdFor } from './http/request-id.ts'
import { Problem } from './http/schemas.ts'
import { apiSecurityHeaders, registerResponseHeaders } from './http/security-headers.ts'
import { registerTextGuard } from './http/text-guard.ts'
import type { App, AppDeps } from './http/types.ts'
import { registerVersioning } from './http/versioning.ts'
import { createServices, type Services } from './services.ts'
import { systemClock, type Clock } from './lib/clock.ts'
import { catalogAdminRoutes, catalogSchemas, publicCatalogRoutes } from './modules/catalog/index.ts'
import { eventSchemas } from './event-catalogue.ts'
import { eventRoutes } from './modules/events/index.ts'
import { subscriptionAdminRoutes, subscriptionSchemas } from './modules/subscriptions/index.ts'
import { apiKeyRoutes, Store, StorefrontStore, storeRoutes, storefrontStoreRoutes, touchKey } from './modules/stores/index.ts'
import { registerWebAssets } from './http/web-assets.ts'
import { webhookAdminRoutes, webhookSchemas } from './modules/webhooks/index.ts'
import { chargeAdminRoutes, testClockRoutes, testClockSchemas } from './modules/billing/index.ts'
import { portalRoutes } from './modules/portal/index.ts'
import { createRetentionService, retentionPortalRoutes } from './modules/retention/index.ts'
import { Notification, notificationAdminRoutes } from './modules/notifications/index.ts'
import { analyticsRoutes } from './modules/analytics/index.ts'
import { Discount, discountAdminRoutes, discountPortalRoutes } from './modules/discounts/index.ts'
import { onetimeAdminRoutes, onetimePortalRoutes } from './modules/onetimes/index.ts'
import { analyticsTimeseriesRoutes } from './modules/analytics/analytics-timeseries.routes.ts'
import { PaymentInstrument, PlatformConnection, platformAppRoutes, platformConnectionRoutes, platformWebhookRoutes } from './modules/platform/index.ts'
import {
  createPortalAuthenticator,
  createPortalSessions,
  portalAuthRoutes,
  portalAuthSchemas,
  registerPortalContext,
  resolveSessionSecret,
} from './modules/portal-auth/index.ts'

export const BODY_LIMIT_BYTES = 1024 * 1024

export interface BuildAppOptions {
  database: DatabaseHandle
  config: Readonly<Config>
  /** The services of the composition root; built here (with the app's logger) when not given. */
  services?: Services
  clock?: Clock
  /** Overrides for Fastify's logger, e.g. a stream a test reads. */
  logger?: FastifyServerOptions['logger']
}

/** Every schema other schemas refer to by name; each becomes a named OpenAPI component. */
const SHARED_SCHEMAS = [Problem, Store, ...catalogSchemas, ...eventSchemas, ...subscriptionSchemas, ...portalAuthSchemas, ...testClockSchemas, ...webhookSchemas, StorefrontStore, PlatformConnection, PaymentInstrument, Notification, Discount]

/** Called by Fastify with every shared schema; bodies and parameters get differently configured Ajv instances. */
function buildValidatorFactory(externalSchemas: Record<string, object>) {
  const shared = Object.values(externalSchemas)
  const body = createAjv('body', shared)
  const parameters = createAjv('parameters', shared)
  // Each compiled when its route is first called (src/http/ajv.ts, compileOnFirstUse).
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) =>
    compileOnFirstUse(() => (httpPart === 'body' ? body.compile(schema) : refuseNonFiniteNumbers(parameters.compile(schema))))
}

/** Assembles the service: plugins, contract plumbing and every module. Never listens. */
export async function buildApp({ database, config, services: given, clock = systemClock, logger }: BuildAppOptions): Promise<App> {
  const { db } = database
  const app = Fastify({
    logger: logger ?? loggerOptions(config.logLevel),
    // Each request's child logger is made when it first writes (src/http/logging.ts).
    childLoggerFactory: lazyRequestLogger,
    genReqId: requestIdFor,
    requestIdHeader: false,
    bodyLimit: BODY_LIMIT_BYTES,
    // Whose address a request comes from (request.ip: rate limits, idempotency scopes): the socket's,
    // or with TRUST_PROXY the client's as the trusted proxies forwarded it.
    trustProxy: trustProxyOption(config.trustProxy),
    // Requests arriving while the app closes are refused by registerGracefulStop, as problem+json.
    return503OnClosing: false,
    routerOptions: { ignoreTrailingSlash: true },
    schemaController: { compilersFactory: { buildValidator: buildValidatorFactory as any, buildSerializer: serializeOnFirstUse(SerializerSelector()) } },
    // What the router refuses before any hook runs is a problem+json like every other failure.
    frameworkErrors: frameworkErrorHandler(await apiSecurityHeaders()),
  }).withTypeProvider<TypeBoxTypeProvider>()

  const services = given ?? createServices({ database, config, clock, log: app.log })
  if (!given) app.addHook('onClose', () => services.close())
  const deps: AppDeps = { db, engine: database.engine, clock: services.clock }

  for (const schema of SHARED_SCHEMAS) app.addSchema(schema)
  // JSON is the only body this API reads; anything else is 415 before it is parsed.
  app.removeContentTypeParser('text/plain')
  registerJsonBodyParser(app)

  // Security headers (helmet's, computed once) and X-Request-Id, in one synchronous hook.
  await registerResponseHeaders(app)
  registerErrorHandling(app)
  registerGracefulStop(app)
  registerVersioning(app)
  registerAdminContext(app)
  registerPortalContext(app)
  // The per-address limit on every route and on unknown paths (src/http/rate-limit.ts).
  await registerRateLimit(app, config.rateLimit)
  registerMetrics(app, { setAside: services.setAsideCounts }, { token: config.metricsToken })
  registerHealth(app, db)
  await registerOpenApi(app)
  registerContractDefaults(app)
  if (config.responseValidation) {
    await app.register(responseValidation, { ajv: createAjv('response', SHARED_SCHEMAS) })
  }
  registerCardDataGuard(app)
  registerTextGuard(app)
  registerIdempotency(app, {
    db,
    scopeOf: (request) =>
      request.admin ? `store:${request.admin.store.id}` : request.portal ? `subscriber:${request.portal.subscriberId}` : `ip:${request.ip}`,
  })

  const { publicCatalog, catalog, subscriptions, checkouts, changeRequests, renewals, testClock, webhooks } = services

  const sessions = createPortalSessions({
    // An in-memory database keeps its generated secret in the database too, never in DATA_DIR.
    secret: () => resolveSessionSecret({
      configured: config.jwtSecret,
      engine: database.engine,
      dataDir: database.location === 'memory' ? 'memory://' : config.dataDir,
      db,
    }),
    issuer: config.jwtIssuer,
    clock: services.clock,
  })
  // The store and the session's or key's standing, kept in process for under a second (src/modules/stores/auth-cache.ts).
  const { authCache } = services
  const authenticatePortal = createPortalAuthenticator({ authCache, sessions })
  // The merchant console's sessions from the platform's load callback: a key of their own, never the portal's.
  const consoleSessions = createConsoleSessions({
    secret: () => resolveConsoleSessionSecret({ engine: database.engine, dataDir: database.location === 'memory' ? 'memory://' : config.dataDir, db }),
    issuer: config.jwtIssuer,
    clock: services.clock,
  })

  await app.register(async (portal) => {
    await portal.register(portalAuthRoutes, { ...deps, magicLinkLimits: config.magicLinkLimits, sessions, authenticatePortal, authCache })
    await portal.register(portalRoutes, { db, clock: services.clock, subscriptions, changeRequests, catalog, instruments: services.storedInstruments, authenticatePortal })
    await portal.register(retentionPortalRoutes, { retention: createRetentionService({ subscriptions, applyDiscount: services.discounts.applyToSubscription }), authenticatePortal })
    await portal.register(discountPortalRoutes, { discounts: services.discounts, authenticatePortal })
    await portal.register(onetimePortalRoutes, { onetimes: services.onetimes, authenticatePortal })
  }, { prefix: '/api/v1/portal' })

  registerWebAssets(app, config.webDistDir ? { outDir: pathToFileURL(config.webDistDir.endsWith('/') ? config.webDistDir : `${config.webDistDir}/`) } : {})

  await app.register(async (publicApi) => {
    // Any origin may read (src/http/public-cors.ts).
    await registerPublicCors(publicApi)
    await publicApi.register(publicCatalogRoutes, { publicCatalog })
    await publicApi.register(storefrontStoreRoutes, { db })
  }, { prefix: '/api/v1' })

  // The BigCommerce app's callbacks: called by the platform, outside the versioned API.
  await app.register(platformAppRoutes, {
    db,
    clock: services.clock,
    connections: services.platformConnections,
    consoleSessions,
    settings: { ...config.platform, publicUrl: config.publicUrl, timeoutMs: config.billing.platformTimeoutMs },
  })

  // BigCommerce's order webhooks: the platform calls them too, for API-account stores as well as app installs.
  await app.register(platformWebhookRoutes, { orderWebhooks: services.orderWebhooks, rateLimit: config.rateLimit })

  const authenticateAdmin = createAdminAuthenticator({
    findActiveKey: (keyHash) => authCache.adminKey(keyHash),
    recordUse: (keyId, at) => touchKey(db, keyId, at),
  }, {
    looksLikeSession: looksLikeJwt,
    verify: (token) => consoleSessions.verify(token),
    findStore: (storeId) => authCache.store(storeId),
  })
  await app.register(async (admin) => {
    requireSecurityScheme(admin, 'adminApiKey')
    admin.addHook('onRequest', authenticateAdmin)
    await admin.register(storeRoutes, { ...deps, authCache })
    await admin.register(apiKeyRoutes, { ...deps, authCache })
    await admin.register(platformConnectionRoutes, { connections: services.platformConnections })
    await admin.register(catalogAdminRoutes, { catalog })
    await admin.register(subscriptionAdminRoutes, { subscriptions, checkouts, changeRequests })
    await admin.register(eventRoutes, { db })
    await admin.register(webhookAdminRoutes, { webhooks })
    await admin.register(chargeAdminRoutes, { db, renewals })
    await admin.register(testClockRoutes, { testClock })
    await admin.register(notificationAdminRoutes, { db })
    await admin.register(analyticsRoutes, { db, clock: services.clock })
    await admin.register(discountAdminRoutes, { discounts: services.discounts })
    await admin.register(onetimeAdminRoutes, { onetimes: services.onetimes })
    await admin.register(analyticsTimeseriesRoutes, { db, clock: services.clock })
  }, { prefix: '/api/v1/admin' })

  return app
}
