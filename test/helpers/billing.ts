import type { Db } from '../../src/db/database.ts'
import type { Clock } from '../../src/lib/clock.ts'
import { createGatewayResolver, createRenewalEngine, type RenewalEngine } from '../../src/modules/billing/index.ts'
import { testConfig } from './test-app.ts'

/** A renewal engine with the service's own gateways (test stores use the test gateway's ledger). */
export function createTestRenewals(db: Db, clock: Clock, env: Record<string, string> = {}): RenewalEngine {
  return createRenewalEngine({ db, clock, gateways: createGatewayResolver(db, testConfig(env).billing) })
}
