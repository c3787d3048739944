import type { Db, StoreRow } from '../../db/database.ts'
import { createPlatformGateway, createTestGateway, type PaymentGateway } from './gateways/index.ts'
import type { GatewayResolver } from './renewal-context.ts'
import { createPlatformClient, type PlatformClient } from '../platform/index.ts'

/** What the gateways need from the service's settings. */
export interface GatewaySettings {
  /** PLATFORM_API_URL: a store's REST API is `{platformApiUrl}/stores/{hash}/v2` and `/v3`. */
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
  const ownClient = billing.platformClient
    ? undefined
    : createPlatformClient({ apiUrl: billing.platformApiUrl, paymentsUrl: billing.platformPaymentsUrl, timeoutMs: billing.platformTimeoutMs })
  const platform = createPlatformGateway({
    client: billing.platformClient ?? ownClient!,
    accessOf: async (storeId) => (await billing.platformAccessOf?.(storeId)) ?? undefined,
  })
  const byName: Record<string, PaymentGateway> = { test, platform }
  return {
    forStore: (store: StoreRow) => (store.gateway === 'platform' ? platform : test),
    byName(name) {
      const gateway = byName[name]
      if (!gateway) throw new Error(`unknown payment gateway ${name}`)
      return gateway
    },
    close: async () => {
      await ownClient?.close()
    },
  }
}
