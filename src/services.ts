import type { FastifyBaseLogger } from 'fastify'
import type { Config } from './config.ts'
import type { DatabaseHandle } from './db/connect.ts'
import type { Clock } from './lib/clock.ts'
import { systemClock } from './lib/clock.ts'
import { countFailedJobs } from './jobs/runner.ts'
import { countBillingSetAside, createGatewayResolver, createRenewalEngine, createTestClock } from './modules/billing/index.ts'
import { createOrderWebhooks, createPlatformClient, createPlatformConnections, createStoredInstruments, createTokenVault, resolveTokenKey } from './modules/platform/index.ts'
import { createCatalogService, createPublicCatalog } from './modules/catalog/index.ts'
import { countRenewalsSetAside, createChangeRequestService, createCheckoutService, createSubscriptionService } from './modules/subscriptions/index.ts'
import { createWebhookService } from './modules/webhooks/index.ts'
import { createDiscountService, discountColumns, redeemDiscount } from './modules/discounts/index.ts'
import { createOnetimeService } from './modules/onetimes/index.ts'
import { createAuthCache } from './modules/stores/index.ts'

/**
 * The composition root: every service is built here, once per process, from the configuration. The
 * HTTP app (`app.ts`) and the worker (`worker.ts`) both take the result; modules below receive only
 * the settings they declare, never the configuration itself.
 */
export interface ServicesOptions {
  database: DatabaseHandle
  config: Readonly<Config>
  /** Overrides the service clock (tests); a test-mode store's own clock is read from its row. */
  clock?: Clock
  log: FastifyBaseLogger
}

export function createServices({ database, config, clock = systemClock, log }: ServicesOptions) {
  const { db } = database
  // Stores' platform tokens, encrypted at rest; the key is PLATFORM_TOKEN_KEY or one generated once and
  // kept as the portal's session secret is (an in-memory database keeps it in the database too).
  const tokenVault = createTokenVault(() => resolveTokenKey({
    configured: config.platform.tokenKey,
    engine: database.engine,
    dataDir: database.location === 'memory' ? 'memory://' : config.dataDir,
    db,
  }))
  // What authenticates requests, kept in process for under a second; whatever changes it here forgets it at once.
  const authCache = createAuthCache({ db })
  const platformConnections = createPlatformConnections({ db, vault: tokenVault, clock: systemClock, onStoreChanged: authCache.forgetStore })
  // One keep-alive pool to BigCommerce for the whole process: renewals, instruments, order webhooks.
  const platformClient = createPlatformClient({
    apiUrl: config.billing.platformApiUrl,
    paymentsUrl: config.billing.platformPaymentsUrl,
    timeoutMs: config.billing.platformTimeoutMs,
  })
  // Customers' stored instruments, read live: checkout and instrument changes on platform stores, the portal's list.
  const storedInstruments = createStoredInstruments({ client: platformClient, accessOf: platformConnections.accessOf })
  const gateways = createGatewayResolver(db, { ...config.billing, platformAccessOf: platformConnections.accessOf, platformClient })
  const { chargeLeaseMs: leaseMs, concurrency, batchSize, unknownGraceMs } = config.billing
  const renewals = createRenewalEngine({ db, clock, gateways, leaseMs, concurrency, batchSize, unknownGraceMs, log })
  const publicCatalog = createPublicCatalog({ db, cacheTtlMs: config.storefrontCacheTtlMs })
  // Items' discount codes are redeemed by the discounts module, in the checkout's transaction.
  const checkouts = createCheckoutService({
    db,
    clock,
    instruments: storedInstruments,
    redeemDiscount: async (trx, store, code, target, now) => discountColumns(await redeemDiscount(trx, store, code, target, now)),
  })
  // Storefront orders start subscriptions: hooks registered on connection, callbacks, the order job.
  const orderWebhooks = createOrderWebhooks({
    db,
    clock: systemClock,
    client: platformClient,
    connections: platformConnections,
    vault: tokenVault,
    checkouts,
    publicUrl: config.publicUrl,
    appClientSecret: config.platform.app?.clientSecret,
    log,
  })
  return {
    db,
    database,
    config,
    clock,
    log,
    gateways,
    platformConnections,
    platformClient,
    storedInstruments,
    renewals,
    authCache,
    testClock: createTestClock({ db, clock, renewals, onStoreChanged: authCache.forgetStore }),
    publicCatalog,
    catalog: createCatalogService({ db, clock, onChange: () => publicCatalog.invalidate() }),
    subscriptions: createSubscriptionService({
      db,
      clock,
      instruments: storedInstruments,
      // Order now runs the engine for that one subscription; a failure is logged and the worker charges it.
      renewNow: (storeId, id) => renewals.runDue({ storeId, id, limit: 1 }).catch((error: unknown) => log.error({ err: error, subscriptionId: id }, 'order now: the renewal could not be run; the worker will charge it')),
    }),
    checkouts,
    orderWebhooks,
    discounts: createDiscountService({ db, clock }),
    onetimes: createOnetimeService({ db, clock }),
    changeRequests: createChangeRequestService({ db, clock }),
    // Webhook times are real times: retries and signatures follow the wall clock, not a store's test clock.
    webhooks: createWebhookService({ db, clock: systemClock, allowPrivateNetworks: config.webhookAllowPrivateNetworks }),
    /** Work set aside for a person, by kind, counted from the database (every process sees the same). */
    async setAsideCounts(): Promise<Record<string, number>> {
      const [renewal, billing, job] = await Promise.all([countRenewalsSetAside(db), countBillingSetAside(db), countFailedJobs(db)])
      return { renewal, ...billing, job }
    },
    /** Releases what the services hold outside the database (the platform gateway's connection pool). */
    close: async () => {
      await gateways.close()
      await platformClient.close()
    },
  }
}

export type Services = ReturnType<typeof createServices>
