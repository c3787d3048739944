import { DUE_WORK } from './http/actors.ts'
import { AppError } from './lib/errors.ts'
import type { FastifyBaseLogger } from 'fastify'
import type { Config } from './config.ts'
import type { DatabaseHandle } from './db/connect.ts'
import { countFailedJobs } from './jobs/runner.ts'
import type { Clock } from './lib/clock.ts'
import { systemClock } from './lib/clock.ts'
import type { Mail, Mailer } from './lib/mailer.ts'
import type { Module } from './modules/module.ts'
import { createAnalyticsModule } from './modules/analytics/index.ts'
import { createBillingModule, upcomingRenewalAt } from './modules/billing/index.ts'
import { createCatalogModule } from './modules/catalog/index.ts'
import { createConsoleAuthModule } from './modules/console-auth/index.ts'
import { createCustomersModule } from './modules/customers/index.ts'
import { createDiscountsModule, discountColumns, redeemDiscount } from './modules/discounts/index.ts'
import { createEventsModule } from './modules/events/index.ts'
import { createExportsModule } from './modules/exports/index.ts'
import { createImportsModule } from './modules/imports/index.ts'
import { createBulkOperationsModule } from './modules/bulk-operations/index.ts'
import { createNotificationsModule } from './modules/notifications/index.ts'
import { createOnetimesModule } from './modules/onetimes/index.ts'
import { createPlatformModule } from './modules/platform/index.ts'
import { createPortalModule } from './modules/portal/index.ts'
import { createPortalAuthModule } from './modules/portal-auth/index.ts'
import { createPriceChangesModule } from './modules/price-changes/index.ts'
import { createRetentionModule } from './modules/retention/index.ts'
import { createStoresModule } from './modules/stores/index.ts'
import { createStorefrontOrdersModule } from './modules/storefront-orders/index.ts'
import { countRenewalsSetAside, createSubscriptionsModule } from './modules/subscriptions/index.ts'
import { createWebhooksModule } from './modules/webhooks/index.ts'

/**
 * The composition root: every module is built here, once per process, from the configuration, in
 * the order they depend on each other (docs/architecture.md). The HTTP app (`app.ts`) registers
 * every module's routes and the worker (`worker.ts`) runs every module's jobs; modules below receive
 * only the settings they declare, never the configuration itself.
 */
export interface ServicesOptions {
  database: DatabaseHandle
  config: Readonly<Config>
  /** Overrides the service clock (tests); a test-mode store's own clock is read from its row. */
  clock?: Clock
  log: FastifyBaseLogger
  /** Sends subscriber email; only a process that runs the worker needs one (others refuse to send). */
  mailer?: Mailer
  /** Where sign-in links point; a function because the listening address is known only after start. */
  portalUrl?: () => string
}

/** The mailer of a process that sends no mail (ROLE=api): a job that would send is retried by a worker. */
const NO_MAILER: Mailer = {
  send: async (_mail: Mail) => {
    throw new Error('this process does not send mail (it runs no worker)')
  },
  close() {},
}

export function createServices({ database, config, clock = systemClock, log, mailer = NO_MAILER, portalUrl }: ServicesOptions) {
  const { db } = database
  // An in-memory database keeps generated keys in the database too, never in DATA_DIR.
  const keyStore = { engine: database.engine, dataDir: database.location === 'memory' ? 'memory://' : config.dataDir }
  const linksTo = portalUrl ?? (() => config.portalUrl ?? `${config.publicUrl ?? 'http://localhost'}/portal`)

  const stores = createStoresModule({
    db,
    clock,
    // Who changed a setting (the billing switch above all) is an event: the log is built next, and only called later.
    recordChange: (trx, change) =>
      events.service.log.record(trx, { storeId: change.storeId, eventType: 'store.updated', occurredAt: change.occurredAt, data: { ...change.store, changes: change.changes }, actor: change.actor }),
  })
  // Whatever changes a store's row elsewhere tells the authentication cache once it has committed.
  const forgetStore = stores.service.auth.forgetStore
  const events = createEventsModule({ db })
  const catalog = createCatalogModule({ db, clock, storefrontCacheTtlMs: config.storefrontCacheTtlMs })
  const consoleAuth = createConsoleAuthModule({ db, clock, issuer: config.jwtIssuer, keyStore, forgetStore })
  const platform = createPlatformModule({
    db,
    // Connection times are real times, whatever a store's test clock says.
    clock: systemClock,
    keyStore,
    settings: {
      apiUrl: config.billing.platformApiUrl,
      paymentsUrl: config.billing.platformPaymentsUrl,
      timeoutMs: config.billing.platformTimeoutMs,
      tokenKey: config.platform.tokenKey,
      app: { loginUrl: config.platform.loginUrl, app: config.platform.app, publicUrl: config.publicUrl },
    },
    issueConsoleSession: (storeId) => consoleAuth.service.prepare(storeId),
    // Uninstalling the app or removing the connection ends the store's console sessions with it.
    onDisconnect: (trx, storeId, at) => consoleAuth.service.endForStore(trx, storeId, at),
    onStoreChanged: forgetStore,
  })
  // Subscriptions ask two later modules through functions given here, so neither module imports the
  // other: order now runs billing's renewal engine, and a checkout's discount codes are redeemed by discounts.
  const subscriptions = createSubscriptionsModule({
    db,
    clock,
    events: events.service.log,
    instruments: platform.service.instruments,
    variants: platform.service.variants,
    // Order now runs the engine for that one subscription; a failure is logged and the worker charges it.
    renewNow: (storeId, id) => billing.service.renewals.runDue({ storeId, id, limit: 1 }).catch((error: unknown) => log.error({ err: error, subscriptionId: id }, 'order now: the renewal could not be run; the worker will charge it')),
    redeemDiscount: async (trx, store, code, target, now) => discountColumns(await redeemDiscount(trx, store, code, target, now)),
    log,
  })
  const { writes } = subscriptions.service
  const discounts = createDiscountsModule({ db, clock, writes })
  // An add-on names the renewal that will charge it: billing's preview finds it (past a skipped one).
  const onetimes = createOnetimesModule({ db, clock, events: events.service.log, renewalAt: upcomingRenewalAt })
  const billing = createBillingModule({
    db,
    clock,
    events: events.service.log,
    writes,
    subscriptions: subscriptions.service.subscriptions,
    processDueWork: (options) => subscriptions.service.processDueWork(options),
    onStoreChanged: forgetStore,
    platform: platform.service,
    settings: config.billing,
    log,
  })
  // A plan's new price shows on storefronts at once: the catalogue's cached answers are cleared.
  const priceChanges = createPriceChangesModule({ db, clock, writes, onPlanChanged: () => catalog.service.storefront.invalidate(), log })
  const portalAuth = createPortalAuthModule({
    db,
    clock,
    issuer: config.jwtIssuer,
    jwtSecret: config.jwtSecret,
    keyStore,
    authCache: stores.service.auth,
    magicLinkLimits: config.magicLinkLimits,
    mailer,
    portalUrl: linksTo,
    log,
  })
  const notifications = createNotificationsModule({
    db,
    clock,
    events: events.service.log,
    mailer,
    portalUrl: linksTo,
    log,
    // Nothing due to renew any more (cancelled, paused since): the email keeps the amount its event recorded.
    upcoming: (store, id) => billing.service.upcoming.get(store, id, DUE_WORK).catch((error: unknown) => (error instanceof AppError ? undefined : Promise.reject(error))),
  })
  const retention = createRetentionModule({ subscriptions: subscriptions.service.subscriptions, applyDiscount: discounts.service.applyToSubscription })
  const webhooks = createWebhooksModule({
    db,
    events: events.service.log,
    // Webhook times are real times: retries and signatures follow the wall clock, not a store's test clock.
    clock: systemClock,
    settings: { ...config.webhooks, allowPrivateNetworks: config.webhookAllowPrivateNetworks },
    log,
  })
  const analytics = createAnalyticsModule({ db, clock })
  // The merchant's page on one subscriber reads three modules' services.
  const customers = createCustomersModule({ subscriptions: subscriptions.service.subscriptions, charges: billing.service.charges, notifications: notifications.service })
  // CSV exports read the lists through the services that own them (subscriptions and subscribers, charges).
  // Imports write subscriptions as a checkout would, matched to the platform's customers and cards.
  const imports = createImportsModule({ db, clock, events: events.service.log, customers: platform.service.customers, instruments: platform.service.instruments, variants: platform.service.variants })
  // Bulk operations run the single actions, one subscription at a time, as the caller.
  const subscriptionActions = subscriptions.service.subscriptions
  const bulkOperations = createBulkOperationsModule({
    db,
    clock,
    subscriptions: subscriptionActions,
    actions: {
      swap: (...args) => subscriptionActions.swap(...args),
      pause: (...args) => subscriptionActions.pause(...args),
      resume: (...args) => subscriptionActions.resume(...args),
      cancel: (...args) => subscriptionActions.cancel(...args),
      reschedule: (...args) => subscriptionActions.reschedule(...args),
      applyDiscount: (store, id, actor, code) => discounts.service.applyToSubscription(store, id, actor, code),
      changePrice: (store, id, actor, input) => priceChanges.service.changeSubscriptionPrice(store, id, actor, input),
    },
  })
  const exports = createExportsModule({ clock, subscriptions: subscriptions.service.subscriptions, charges: billing.service.charges })
  const portal = createPortalModule({
    clock,
    subscriptions: subscriptions.service.subscriptions,
    changeRequests: subscriptions.service.changeRequests,
    charges: billing.service.charges,
    upcoming: billing.service.upcoming,
    catalog: catalog.service,
    instruments: platform.service.instruments,
  })
  const storefrontOrders = createStorefrontOrdersModule({
    db,
    clock: systemClock,
    platform: platform.service,
    checkouts: subscriptions.service.checkouts,
    publicUrl: config.publicUrl,
    appClientSecret: config.platform.app?.clientSecret,
    rateLimit: config.rateLimit,
    log,
  })

  const modules = { stores, events, catalog, consoleAuth, platform, subscriptions, discounts, onetimes, billing, priceChanges, portalAuth, notifications, retention, webhooks, analytics, customers, imports, bulkOperations, exports, portal, storefrontOrders }
  /** Every module once, in the order they were built: the app registers their routes in this order. */
  const list: readonly Module[] = Object.values(modules)

  return {
    db,
    database,
    config,
    clock,
    log,
    mailer,
    modules,
    list,
    /** Work set aside for a person, by kind, counted from the database (every process sees the same). */
    async setAsideCounts(): Promise<Record<string, number>> {
      const [renewal, billingSetAside, job] = await Promise.all([countRenewalsSetAside(db), billing.service.setAsideCounts(), countFailedJobs(db)])
      return { renewal, ...billingSetAside, job }
    },
    /** Releases what the modules hold outside the database (connection pools, listeners), last built first. */
    async close(): Promise<void> {
      for (const module of [...list].reverse()) await module.close?.()
      mailer.close()
    },
  }
}

export type Services = ReturnType<typeof createServices>
