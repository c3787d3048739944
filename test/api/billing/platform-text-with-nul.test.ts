/**
 * A defect a review found (now fixed; this test keeps it fixed), as the review described it:
 *
 * Review of issue 14 (a lying platform). The platform gateway copies the platform's own error text
 * (`title`, `detail`, ... through `problemText`/`replyReason`) into charge outcomes unfiltered. Text
 * with U+0000 (a JSON `\u0000`, which JSON.parse accepts) cannot be stored by PostgreSQL (text:
 * "invalid byte sequence 0x00"; jsonb: "unsupported Unicode escape sequence"). A payment answered
 * 500 whose transactions read answers 500 with such a title stays unknown; after the grace period the
 * engine tries to hand it to a person and cannot: the review (jsonb) is refused, the charge stays
 * `pending` for ever, re-read every pass, and nobody is ever told (no `requires_review`, no
 * billing issue on the subscription).
 */
import assert from 'node:assert/strict'
import { randomBytes } from 'node:crypto'
import { after, before, describe, test } from 'node:test'
import { fixedClock, systemClock } from '../../../src/lib/clock.ts'
import { createGatewayResolver } from '../../../src/modules/billing/index.ts'
import { createPlatformClient, createPlatformConnections, createTokenVault, type PlatformClient } from '../../../src/modules/platform/index.ts'
import { startBigCommerceSimulator, type BigCommerceSimulator } from '../../helpers/bigcommerce-simulator.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, testConfig, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { ADDRESS, checkout, checkoutBody } from '../subscriptions/fixtures.ts'
import { testModules } from '../../helpers/modules.ts'

const STORE_HASH = `nulrev${process.pid}`
const ACCESS_TOKEN = 'platform-store-token-SECRET-9090'
const TOKEN_KEY = randomBytes(32)

/** The platform as a liar would answer: the payment and the transactions read answer 500 with a NUL in the title. */
function lyingClient(inner: PlatformClient): PlatformClient {
  const nul = (title: string) => ({ sent: true as const, rateLimitedFor: 0, answer: { statusCode: 500, headers: {}, body: { status: 500, title, code: 10000 } } })
  return {
    async call(access, request) {
      if (request.host === 'payments') return nul('gateway\u0000unavailable')
      if (request.method === 'GET' && /\/transactions$/.test(request.path)) return nul('transactions\u0000unavailable')
      return inner.call(access, request)
    },
    longestCallMs: inner.longestCallMs,
    close: () => inner.close(),
  }
}

describe('platform text with U+0000 in a charge outcome still hands the charge to a person', () => {
  let sim: BigCommerceSimulator
  let t: TestApp
  let shop: StoreWithKey
  let client: PlatformClient
  let closeResolver: () => Promise<void>
  let planId: string
  let card: string
  let gateways: ReturnType<typeof createGatewayResolver>

  before(async () => {
    sim = await startBigCommerceSimulator()
    sim.addStore({ hash: STORE_HASH, accessToken: ACCESS_TOKEN })
    sim.addProduct(STORE_HASH, { id: 77, name: 'Beans', price: 9.99 })
    card = sim.addCustomer(STORE_HASH, { id: 11, email: 'ada@example.com', instruments: [{}] }).instruments[0]!.token
    const env = { PLATFORM_API_URL: sim.apiUrl, PLATFORM_PAYMENTS_URL: sim.paymentsUrl, PLATFORM_LOGIN_URL: sim.loginUrl, PLATFORM_TOKEN_KEY: TOKEN_KEY.toString('hex'), PLATFORM_API_TIMEOUT_MS: '2000' }
    t = await buildTestApp({ env })
    shop = await createStoreWithKey(t.db, { mode: 'live', storeHash: STORE_HASH })
    assert.equal((await call(t.app, { method: 'PUT', url: '/api/v1/admin/platform-connection', headers: shop.auth, payload: { access_token: ACCESS_TOKEN } })).statusCode, 200)
    const product = await createProduct(t.app, shop.auth, { platform_product_id: '77' })
    planId = (await createPlan(t.app, shop.auth, product.id, { amount: 1250 })).id
    const connections = createPlatformConnections({ db: t.db, vault: createTokenVault(async () => TOKEN_KEY), clock: systemClock })
    client = lyingClient(createPlatformClient({ apiUrl: sim.apiUrl, paymentsUrl: sim.paymentsUrl, timeoutMs: 2_000 }))
    gateways = createGatewayResolver(t.db, { ...testConfig(env).billing, platformAccessOf: connections.accessOf, platformClient: client })
    closeResolver = gateways.close
  })
  after(async () => {
    await closeResolver?.()
    await client?.close()
    await t?.close()
    await sim?.close()
  })

  test('a charge whose outcome stays unknown past the grace period requires review, NUL or not', async () => {
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(planId, { payment_instrument_id: card, platform_customer_id: 11, billing_address: ADDRESS }))
    // Leases, rechecks and the grace period on a clock the test moves: six passes, each after the last one's lease ran out.
    const leaseClock = fixedClock(new Date())
    const engine = testModules(t.db).renewalEngine({ clock: fixedClock(subscription.next_charge_at), gateways, leaseMs: 300, unknownGraceMs: 200, leaseClock })
    await engine.runDue({ storeId: shop.store.id }).catch(() => undefined)
    const errors: string[] = []
    for (let i = 0; i < 6; i++) {
      leaseClock.advance(400)
      await engine.reconcile().catch((error: unknown) => errors.push(String(error).slice(0, 160)))
    }
    const charge = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscription.id).executeTakeFirstOrThrow()
    assert.equal(charge.status, 'requires_review', `still ${charge.status} after the grace period; the reconciler failed with: ${errors[0] ?? '(nothing)'}`)
  })
})
