import { pathToFileURL } from 'node:url'
import responseValidation from '@fastify/response-validation'
import type { Ajv } from 'ajv'
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import Fastify, { type FastifyServerOptions } from 'fastify'
import type { Config } from './config.ts'
import type { DatabaseHandle } from './db/connect.ts'
import { createAdminAuthenticator, registerAdminContext } from './http/admin-auth.ts'
import { registerPortalContext } from './http/actors.ts'
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
import { acceptMissingOptionalBodies } from './http/optional-body.ts'
import { declareAdminScopes } from './http/admin-scopes.ts'
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
import type { App } from './http/types.ts'
import { registerVersioning } from './http/versioning.ts'
import { createServices, type Services } from './services.ts'
import { systemClock, type Clock } from './lib/clock.ts'
import { eventSchemas } from './event-catalogue.ts'
import type { Module, RouteScope } from './modules/module.ts'
import { looksLikeJwt } from './modules/console-auth/index.ts'
import { registerWebAssets } from './http/web-assets.ts'

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

/** Every schema other schemas refer to by name (each becomes a named OpenAPI component), once each. */
function sharedSchemas(modules: readonly Module[]): object[] {
  const byId = new Map<string, object>()
  for (const schema of [Problem, ...modules.flatMap((module) => module.schemas ?? []), ...eventSchemas]) byId.set((schema as { $id: string }).$id, schema)
  return [...byId.values()]
}

/** Registers every module's routes of one scope, in the order the composition root built the modules. */
async function registerScope(scope: App, modules: readonly Module[], name: RouteScope): Promise<void> {
  for (const module of modules) {
    const routes = module.routes?.[name]
    if (routes) await scope.register(routes)
  }
}

/** Called by Fastify with every shared schema; bodies and parameters get differently configured Ajv instances. */
function buildValidatorFactory(externalSchemas: Record<string, object>) {
  const shared = Object.values(externalSchemas)
  // Each compiled when its route is first called (src/http/ajv.ts, compileOnFirstUse), and each Ajv made
  // then too: a process that never reads a body (a worker answering health checks) never pays for one.
  let body: Ajv | undefined
  let parameters: Ajv | undefined
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) =>
    compileOnFirstUse(() =>
      httpPart === 'body' ? (body ??= createAjv('body', shared)).compile(schema) : refuseNonFiniteNumbers((parameters ??= createAjv('parameters', shared)).compile(schema)),
    )
}

/** Assembles the service: plugins, contract plumbing and every module. Never listens. */
export async function buildApp({ database, config, services: given, clock = systemClock, logger }: BuildAppOptions): Promise<App> {
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
  const { db } = database
  const { stores, portalAuth, consoleAuth } = services.modules
  const modules = services.list
  const SHARED_SCHEMAS = sharedSchemas(modules)

  for (const schema of SHARED_SCHEMAS) app.addSchema(schema)
  // JSON is the only body this API reads; anything else is 415 before it is parsed.
  app.removeContentTypeParser('text/plain')
  registerJsonBodyParser(app)
  acceptMissingOptionalBodies(app)

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

  await app.register(async (portal) => {
    // Sign-in itself: each route says what it needs.
    await registerScope(portal, modules, 'portalSignIn')
    // Everything else acts as the subscriber of the verified session, and only them.
    await portal.register(async (signedIn) => {
      requireSecurityScheme(signedIn, 'portalSession')
      signedIn.addHook('onRequest', portalAuth.service.authenticatePortal)
      await registerScope(signedIn, modules, 'portal')
    })
  }, { prefix: '/api/v1/portal' })

  registerWebAssets(app, config.webDistDir ? { outDir: pathToFileURL(config.webDistDir.endsWith('/') ? config.webDistDir : `${config.webDistDir}/`) } : {})

  await app.register(async (publicApi) => {
    // Any origin may read (src/http/public-cors.ts).
    await registerPublicCors(publicApi)
    await registerScope(publicApi, modules, 'storefront')
  }, { prefix: '/api/v1' })

  // Called by BigCommerce, outside the versioned API: the app's callbacks and its order webhooks.
  await registerScope(app, modules, 'platform')

  const authenticateAdmin = createAdminAuthenticator({
    findActiveKey: (keyHash) => stores.service.auth.adminKey(keyHash),
    recordUse: (keyId, store) => stores.service.touchKey(keyId, store),
  }, {
    looksLikeSession: looksLikeJwt,
    verify: (token) => consoleAuth.service.verify(token),
    findStore: (storeId, jti) => stores.service.auth.consoleStore(storeId, jti),
  })
  await app.register(async (admin) => {
    requireSecurityScheme(admin, 'adminApiKey')
    declareAdminScopes(admin)
    admin.addHook('onRequest', authenticateAdmin)
    await registerScope(admin, modules, 'admin')
  }, { prefix: '/api/v1/admin' })

  return app
}
