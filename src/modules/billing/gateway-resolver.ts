import type { Db, StoreRow } from '../../db/database.ts'
import { createPlatformGateway, createTestGateway, type PaymentGateway } from './gateways/index.ts'
import type { GatewayResolver } from './renewal-context.ts'
import type { PlatformClient } from '../platform/index.ts'

/** What the gateways need from the service's settings. */
export interface GatewaySettings {
  /** PLATFORM_API_URL: a store's REST API is `{platformApiUrl}/stores/{hash}/v3`. */
  platformApiUrl: string
  /** PLATFORM_PAYMENTS_URL: a store's payments host is `{platformPaymentsUrl}/stores/{hash}`. */
  platformPaymentsUrl: string
  /**
   * The store's hash and decrypted token from its platform connection (src/modules/platform);
   * absent or undefined: the store has none, and its platform charges fail as gateway_configuration.
   */
  platformAccessOf?: ((storeId: string) => Promise<{ storeHash: string; accessToken: string } | undefined>) | undefined
  platformTimeoutMs: number
  /** The process's HTTP client to the platform; one of its own when absent. */
  platformClient?: PlatformClient | undefined
  /** Simulated processing time of the test gateway (benchmarks). */
  testGatewayLatencyMs: number
}

/**
 * Each store charges through the gateway its `gateway` setting names (live stores always `platform`):
 * the `test` gateway, or the commerce platform with the token of the store's platform connection
 * (docs/contract.md, Billing).
 */
export function createGatewayResolver(db: Db, billing: GatewaySettings): GatewayResolver & { close(): Promise<void> } {
  const test = createTestGateway(db, { latencyMs: billing.testGatewayLatencyMs })
  const apiUrl = billing.platformApiUrl.replace(/\/+$/, '')
  const paymentsUrl = billing.platformPaymentsUrl.replace(/\/+$/, '')
  const platform = createPlatformGateway({
    timeoutMs: billing.platformTimeoutMs,
    async configFor(storeId) {
      const access = await billing.platformAccessOf?.(storeId)
      if (!access) return undefined
      const hash = encodeURIComponent(access.storeHash)
      return { apiBaseUrl: `${apiUrl}/stores/${hash}/v3`, paymentsBaseUrl: `${paymentsUrl}/stores/${hash}`, accessToken: access.accessToken }
    },
  })
  const byName: Record<string, PaymentGateway> = { test, platform }
  return {
    forStore: (store: StoreRow) => (store.gateway === 'platform' ? platform : test),
    byName(name) {
      const gateway = byName[name]
      if (!gateway) throw new Error(`unknown payment gateway ${name}`)
      return gateway
    },
    close: () => platform.close(),
  }
}
