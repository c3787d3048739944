import type { Db } from '../../src/db/database.ts'
import type { Clock } from '../../src/lib/clock.ts'
import { createGatewayResolver, type RenewalEngine } from '../../src/modules/billing/index.ts'
import { testModules } from './modules.ts'
import { testConfig } from './test-app.ts'

/**
 * A renewal engine with the service's own gateways and billing settings, as the worker builds it (test stores use the test gateway's ledger);
 * `leaseClock` (a fixedClock the test moves) for leases, rechecks and the unknown-outcome grace instead of real time.
 */
export function createTestRenewals(db: Db, clock: Clock, env: Record<string, string> = {}, leaseClock?: Clock): RenewalEngine {
  const { billing } = testConfig(env)
  return testModules(db, { clock }).renewalEngine({
    gateways: createGatewayResolver(db, billing),
    leaseMs: billing.chargeLeaseMs,
    concurrency: billing.concurrency,
    batchSize: billing.batchSize,
    unknownGraceMs: billing.unknownGraceMs,
    ...(leaseClock ? { leaseClock } : {}),
  })
}
