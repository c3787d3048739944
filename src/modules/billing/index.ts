import type { Db } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import type { EventLog } from '../events/index.ts'
import type { Module } from '../module.ts'
import type { PlatformService } from '../platform/index.ts'
import type { DueCounts, SubscriptionService, SubscriptionWrites } from '../subscriptions/index.ts'
import { chargeAdminRoutes } from './charges.routes.ts'
import { countBillingSetAside } from './charges.repository.ts'
import { createChargesService, type ChargesService } from './charges.service.ts'
import { Charge, Refund, UpcomingRenewal } from './charge.schemas.ts'
import { createGatewayResolver } from './gateway-resolver.ts'
import { paymentRecoveryRoutes } from './payment-recovery.routes.ts'
import { AttentionItem } from './payment-recovery.schemas.ts'
import { createPaymentRecovery, type PaymentRecovery } from './payment-recovery.service.ts'
import type { BillingLog } from './renewal-context.ts'
import { createRenewalEngine, type RenewalEngine } from './renewal-engine.ts'
import { renewalJobs } from './renewal.jobs.ts'
import { createRenewalLoop } from './renewal-loop.ts'
import { createTestClock, type TestClock } from './test-clock.ts'
import { testClockRoutes, testClockSchemas } from './test-clock.routes.ts'
import { createUpcomingRenewals, type UpcomingRenewals } from './upcoming-renewal.ts'

const RECONCILE_EVERY_MS = 5_000

export interface BillingModuleDeps {
  db: Db
  /** The service clock; a test-mode store's own clock is read from its row. */
  clock: Clock
  events: EventLog
  writes: SubscriptionWrites
  /** The subscriptions module's due lifecycle work, run by the test clock between renewals. */
  processDueWork: (options: { storeId: string; catchUpFrom?: Date }) => Promise<DueCounts>
  /** Retry now asks the subscriptions module to bring the retry forward; the engine then charges it. */
  subscriptions: Pick<SubscriptionService, 'retryCharge'>
  /** Told once the test clock has moved a store's row, so caches of it forget it. */
  onStoreChanged?: (storeId: string) => void
  platform: Pick<PlatformService, 'client' | 'connections' | 'budget'>
  settings: BillingSettings
  log: BillingLog
}

/** What billing needs from the configuration. */
export interface BillingSettings {
  /** PLATFORM_API_URL: the REST host; a store's API is `{platformApiUrl}/stores/{hash}/v3`. */
  platformApiUrl: string
  /** PLATFORM_PAYMENTS_URL: the payments host; a store's payments are at `{platformPaymentsUrl}/stores/{hash}/payments`. */
  platformPaymentsUrl: string
  platformTimeoutMs: number
  /** Simulated processing time of the test gateway, for benchmarks. */
  testGatewayLatencyMs: number
  /** How long a worker owns a charge's gateway call before the reconciler may take it over. */
  chargeLeaseMs: number
  /** Gateway calls in flight at once per worker. */
  concurrency: number
  batchSize: number
  /** How long a charge's outcome may stay unknown before it requires review. */
  unknownGraceMs: number
}

export interface BillingService {
  /** Charges renewals exactly once, retries failures (dunning), refunds, and settles what a person reviewed. */
  renewals: RenewalEngine
  charges: ChargesService
  /** The next renewal as it stands, priced as the renewal engine prices it (admin and portal `.../upcoming`). */
  upcoming: UpcomingRenewals
  testClock: TestClock
  /** Retry now and the attention list (docs/contract.md, Payment recovery). */
  recovery: PaymentRecovery
  /** Charges and refunds set aside for a person, by kind. */
  setAsideCounts(): Promise<{ charge_review: number; refund_review: number }>
}

/** Renewals, dunning, refunds and the test clock: where money moves, through the store's gateway. */
export function createBillingModule({ db, clock, events, writes, subscriptions, processDueWork, onStoreChanged, platform, settings, log }: BillingModuleDeps): Module<BillingService> {
  const gateways = createGatewayResolver(db, { ...settings, platformAccessOf: platform.connections.accessOf, platformClient: platform.client })
  const renewals = createRenewalEngine({
    db,
    clock,
    writes,
    events,
    gateways,
    leaseMs: settings.chargeLeaseMs,
    concurrency: settings.concurrency,
    batchSize: settings.batchSize,
    unknownGraceMs: settings.unknownGraceMs,
    budget: platform.budget,
    log,
  })
  const charges = createChargesService({ db })
  const testClock = createTestClock({ db, clock, renewals, processDueWork, ...(onStoreChanged ? { onStoreChanged } : {}) })
  const upcoming = createUpcomingRenewals({ db })
  const recovery = createPaymentRecovery({ db, charges, subscriptions })
  const service: BillingService = { renewals, charges, upcoming, testClock, recovery, setAsideCounts: () => countBillingSetAside(db) }
  // No more often than a charge's lease can end: a charge whose worker died is taken over as its lease runs out.
  const reconcileEveryMs = Math.max(500, Math.min(RECONCILE_EVERY_MS, settings.chargeLeaseMs))
  return {
    name: 'billing',
    service,
    routes: {
      admin: async (app) => {
        await chargeAdminRoutes(app, { charges, renewals, upcoming })
        await testClockRoutes(app, { testClock })
        await paymentRecoveryRoutes(app, recovery)
      },
    },
    jobs: renewalJobs(renewals, { reconcileEveryMs }),
    loops: [{
      name: 'renewals',
      start: () => createRenewalLoop({ db, engine: renewals, concurrency: settings.concurrency, log }).start(),
    }],
    schemas: [Refund, Charge, UpcomingRenewal, AttentionItem, ...testClockSchemas],
    close: () => gateways.close(),
  }
}

export { Charge, ChargeListQuery, CHARGE_STATUSES, Refund, REFUND_STATUSES, UpcomingRenewal, type ChargeView, type RefundView, type UpcomingRenewalView } from './charge.schemas.ts'
export { UPCOMING_RENEWAL_DESCRIPTION } from './charges.routes.ts'
export type { UpcomingRenewals } from './upcoming-renewal.ts'
export { presentCharge } from './charge.presenter.ts'
export type { ChargesService } from './charges.service.ts'
export type { TestClock } from './test-clock.ts'
export * from './gateways/index.ts'
export { createRenewalEngine, type GatewayResolver, type RenewalCounts, type RenewalEngine, type RenewalEngineOptions } from './renewal-engine.ts'
export { createGatewayResolver, type GatewaySettings } from './gateway-resolver.ts'
export { afterFailure, afterSuccess, discountCycleUsed, planRenewal, type Renewal, type RenewalAddOn } from './renewal-plan.ts'
export { estimatedPlatformTax, upcomingRenewal, upcomingRenewalAt, type Upcoming } from './upcoming-renewal.ts'
export { loadRenewalInputs } from './renewal-inputs.ts'
export { latestTaxBases } from './charges.repository.ts'
export { Reconcile } from './renewal.jobs.ts'
export { createRenewalLoop } from './renewal-loop.ts'
export { chargeMetrics, type ChargeWindowFigures } from './charge-metrics.repository.ts'
