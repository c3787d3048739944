import { pino } from 'pino'
import type { Db } from '../../src/db/database.ts'
import { systemClock, type Clock } from '../../src/lib/clock.ts'
import type { Mailer } from '../../src/lib/mailer.ts'
import { createRenewalEngine, type RenewalEngineOptions } from '../../src/modules/billing/index.ts'
import { createCatalogModule } from '../../src/modules/catalog/index.ts'
import { createDiscountsModule, discountColumns, redeemDiscount } from '../../src/modules/discounts/index.ts'
import { createEventsModule } from '../../src/modules/events/index.ts'
import { createNotificationsModule } from '../../src/modules/notifications/index.ts'
import { createOnetimesModule } from '../../src/modules/onetimes/index.ts'
import type { StoredInstruments } from '../../src/modules/platform/index.ts'
import { createSubscriptionsModule } from '../../src/modules/subscriptions/index.ts'
import { createWebhooksModule } from '../../src/modules/webhooks/index.ts'

/** Logs nothing: modules built outside an app have nobody reading their logs. */
const silent = pino({ level: 'silent' })

/** A mailer that must not be reached: a test that sends mail builds the worker with a mailer of its own. */
const noMail: Mailer = {
  send: async () => {
    throw new Error('no mailer in modules built by testModules')
  },
  close() {},
}

export interface TestModulesOptions {
  clock?: Clock
  instruments?: StoredInstruments
  /** The webhooks module's delivery settings (its service only is used here). */
  allowPrivateNetworks?: boolean
}

/**
 * The domain modules on `db`, wired as the composition root wires them (src/services.ts), for tests
 * that drive services below HTTP: events are recorded with their reactions (emails queued), subscription
 * rows change through the subscriptions module, discount codes are redeemed at checkout.
 */
export function testModules(db: Db, { clock = systemClock, instruments, allowPrivateNetworks = true }: TestModulesOptions = {}) {
  const events = createEventsModule({ db })
  const log = events.service.log
  createNotificationsModule({ db, clock, events: log, mailer: noMail, portalUrl: () => 'http://127.0.0.1/portal', log: silent })
  const catalog = createCatalogModule({ db, clock, storefrontCacheTtlMs: 0 })
  const subscriptions = createSubscriptionsModule({
    db,
    clock,
    events: log,
    instruments,
    redeemDiscount: async (trx, store, code, target, now) => discountColumns(await redeemDiscount(trx, store, code, target, now)),
  })
  const { writes } = subscriptions.service
  const discounts = createDiscountsModule({ db, clock, writes })
  const onetimes = createOnetimesModule({ db, clock, events: log })
  const webhooks = createWebhooksModule({
    db,
    events: log,
    clock: systemClock,
    settings: { allowPrivateNetworks, retrySchedule: undefined, timeoutMs: 5_000, disableAfterMs: 5 * 24 * 3_600_000, concurrency: 8, batchSize: 200 },
    log: silent,
  })
  return {
    events: log,
    writes,
    catalog: catalog.service,
    subscriptions: subscriptions.service.subscriptions,
    checkouts: subscriptions.service.checkouts,
    changeRequests: subscriptions.service.changeRequests,
    processDueWork: subscriptions.service.processDueWork,
    discounts: discounts.service,
    onetimes: onetimes.service,
    webhooks: webhooks.service,
    /** A renewal engine on these modules, with the gateways and settings the test gives. */
    renewalEngine: (options: Omit<RenewalEngineOptions, 'db' | 'writes' | 'events' | 'clock'> & { clock?: Clock }) =>
      createRenewalEngine({ clock, ...options, db, writes, events: log }),
  }
}
