import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { fixedClock, systemClock } from '../../src/lib/clock.ts'
import { createGatewayResolver, type RenewalEngine, type RenewalEngineOptions } from '../../src/modules/billing/index.ts'
import { createPlatformClient, createPlatformConnections, createTokenVault, type PlatformClient, type PlatformConnections } from '../../src/modules/platform/index.ts'
import { startBigCommerceSimulator, type BigCommerceSimulator } from './bigcommerce-simulator.ts'
import { testModules } from './modules.ts'
import { buildTestApp, call, createStoreWithKey, testConfig, type StoreWithKey, type TestApp } from './test-app.ts'

/**
 * The service against the BigCommerce simulator, as the platform tests need it: the app pointed at
 * the simulator, and a renewal engine wired as the worker wires it (the store's token read from its
 * connection, the platform client), run at any time (`engineAt`). `beforeCall` runs just before each
 * call the engine's client sends, so a case can change the platform between two calls.
 */
export interface PlatformHarness {
  sim: BigCommerceSimulator
  t: TestApp
  client: PlatformClient
  /** The stores' connections (their tokens), for a case that wires gateways of its own. */
  connections: PlatformConnections
  /** The engine at a fixed time; `options` override the engine's own (concurrency, the lease clock). */
  engineAt(at: string, options?: Partial<Pick<RenewalEngineOptions, 'concurrency' | 'leaseClock'>>): RenewalEngine
  beforeCall: ((path: string, method: string) => void) | undefined
  /** A live store on the simulator, connected with its own token (`scopes` limits the token). */
  connectedStore(hash: string, options?: { scopes?: string[] }): Promise<StoreWithKey>
  close(): Promise<void>
}

export async function startPlatformHarness(): Promise<PlatformHarness> {
  const tokenKey = randomBytes(32)
  const sim = await startBigCommerceSimulator()
  const env = { PLATFORM_API_URL: sim.apiUrl, PLATFORM_PAYMENTS_URL: sim.paymentsUrl, PLATFORM_LOGIN_URL: sim.loginUrl, PLATFORM_TOKEN_KEY: tokenKey.toString('hex'), PLATFORM_API_TIMEOUT_MS: '2000' }
  const t = await buildTestApp({ env })
  const connections = createPlatformConnections({ db: t.db, vault: createTokenVault(async () => tokenKey), clock: systemClock })
  const client = createPlatformClient({ apiUrl: sim.apiUrl, paymentsUrl: sim.paymentsUrl, timeoutMs: 2_000 })
  const harness: PlatformHarness = {
    sim,
    t,
    client,
    connections,
    beforeCall: undefined,
    engineAt: (at, options = {}) => testModules(t.db).renewalEngine({ clock: fixedClock(at), gateways, ...options }),
    async connectedStore(hash, options = {}) {
      const token = `${hash}-token-SECRET`
      sim.addStore({ hash, accessToken: token, ...(options.scopes ? { scopes: options.scopes } : {}) })
      const shop = await createStoreWithKey(t.db, { mode: 'live', storeHash: hash })
      const connected = await call(t.app, { method: 'PUT', url: '/api/v1/admin/platform-connection', headers: shop.auth, payload: { access_token: token } })
      assert.equal(connected.statusCode, 200, connected.body)
      return shop
    },
    async close() {
      await gateways.close()
      await client.close()
      await t.close()
      await sim.close()
    },
  }
  const hooked: PlatformClient = {
    ...client,
    call: (access, request) => {
      harness.beforeCall?.(request.path, request.method)
      return client.call(access, request)
    },
  }
  const gateways = createGatewayResolver(t.db, { ...testConfig(env).billing, platformAccessOf: connections.accessOf, platformClient: hooked })
  return harness
}
