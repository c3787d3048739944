import type { Db, StoreRow } from '../../db/database.ts'
import { findStoreById } from '../stores/index.ts'
import { createPlatformGateway, createTestGateway, type PaymentGateway } from './gateways/index.ts'
import type { GatewayResolver } from './renewal-context.ts'

/** What the gateways need from the service's settings. */
export interface GatewaySettings {
  /** Live stores' platform API access, by store hash. */
  platformCredentials: Readonly<Record<string, { api_base_url: string; payments_base_url?: string | undefined; access_token: string }>>
  platformTimeoutMs: number
  /** Simulated processing time of the test gateway (benchmarks). */
  testGatewayLatencyMs: number
}

/**
 * Test-mode stores charge through the `test` gateway, live stores through the commerce platform
 * with the credentials configured for their store hash (docs/contract.md, Billing).
 */
export function createGatewayResolver(db: Db, billing: GatewaySettings): GatewayResolver & { close(): Promise<void> } {
  const test = createTestGateway(db, { latencyMs: billing.testGatewayLatencyMs })
  const storeHashes = new Map<string, string>()
  const platform = createPlatformGateway({
    timeoutMs: billing.platformTimeoutMs,
    async configFor(storeId) {
      let hash = storeHashes.get(storeId)
      if (hash === undefined) {
        const row = await findStoreById(db, storeId)
        if (!row) return undefined
        hash = row.store_hash
        storeHashes.set(storeId, hash)
      }
      const credentials = billing.platformCredentials[hash]
      if (!credentials) return undefined
      return { apiBaseUrl: credentials.api_base_url, paymentsBaseUrl: credentials.payments_base_url, accessToken: credentials.access_token }
    },
  })
  const byName: Record<string, PaymentGateway> = { test, platform }
  return {
    forStore: (store: StoreRow) => (store.mode === 'test' ? test : platform),
    byName(name) {
      const gateway = byName[name]
      if (!gateway) throw new Error(`unknown payment gateway ${name}`)
      return gateway
    },
    close: () => platform.close(),
  }
}
