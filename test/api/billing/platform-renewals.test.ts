import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { after, before, beforeEach, describe, test } from 'node:test'
import { fixedClock } from '../../../src/lib/clock.ts'
import { randomBytes } from 'node:crypto'
import { createGatewayResolver, createRenewalEngine, type RenewalEngine } from '../../../src/modules/billing/index.ts'
import { createPlatformConnections, createTokenVault } from '../../../src/modules/platform/index.ts'
import { systemClock } from '../../../src/lib/clock.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, createStoreWithKey, testConfig, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { checkout, checkoutBody } from '../subscriptions/fixtures.ts'

const TOKEN = 'platform-store-token-SECRET-4411'
const PAT = 'pat-SECRET-8812'

interface Seen { method: string; url: string; headers: IncomingMessage['headers']; body: any }

/** Plays the commerce platform for a live store: orders, payment access tokens, payments, at the platform's paths. */
function startPlatform(hash: () => string) {
  const seen: Seen[] = []
  let nextOrder = 500
  const orders = new Map<string, number>()
  let decline = false
  const server = createServer(async (req, res) => {
    let raw = ''
    for await (const chunk of req) raw += chunk
    const body = raw ? JSON.parse(raw) : undefined
    seen.push({ method: req.method!, url: req.url!, headers: req.headers, body })
    const reply = (status: number, payload: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' })
      res.end(JSON.stringify(payload))
    }
    const api = `/stores/${hash()}/v3`
    if (req.method === 'POST' && req.url === `${api}/orders`) {
      if (req.headers['x-auth-token'] !== TOKEN) return reply(401, { title: 'Unauthorized' })
      // The platform honours the idempotency key: the same key answers the same order.
      const key = String(req.headers['idempotency-key'])
      if (!orders.has(key)) orders.set(key, nextOrder++)
      return reply(201, { data: { id: orders.get(key) } })
    }
    if (req.method === 'POST' && req.url === `${api}/payments/access_tokens`) return reply(201, { data: { id: PAT } })
    if (req.method === 'POST' && req.url === `/payments-host/stores/${hash()}/payments`) {
      if (decline) return reply(422, { title: 'Card declined', errors: [{ code: 'card_declined' }] })
      return reply(201, { data: { id: `txn_${seen.length}`, status: 'success' } })
    }
    reply(404, { title: 'Not found' })
  })
  return { server, seen, setDecline: (value: boolean) => { decline = value } }
}

describe('renewals of a live store through the platform gateway', () => {
  let t: TestApp
  let shop: StoreWithKey
  const platform = startPlatform(() => shop.store.store_hash)
  let planId: string
  let platformProductId: string
  let engineAt: (at: string) => RenewalEngine

  before(async () => {
    platform.server.listen(0, '127.0.0.1')
    await once(platform.server, 'listening')
    const origin = `http://127.0.0.1:${(platform.server.address() as AddressInfo).port}`
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db, { mode: 'live' })
    const config = testConfig({ PLATFORM_API_URL: origin, PLATFORM_PAYMENTS_URL: `${origin}/payments-host`, PLATFORM_API_TIMEOUT_MS: '2000' })
    // The store's token comes from its platform connection, decrypted for each charge.
    const key = randomBytes(32)
    const connections = createPlatformConnections({ db: t.db, vault: createTokenVault(async () => key), clock: systemClock })
    await connections.connect(shop.store.id, { accessToken: TOKEN, source: 'api_account' })
    const product = await createProduct(t.app, shop.auth, { platform_product_id: '77' })
    platformProductId = product.platform_product_id
    planId = (await createPlan(t.app, shop.auth, product.id, { amount: 1250 })).id
    engineAt = (at) => createRenewalEngine({ db: t.db, clock: fixedClock(at), gateways: createGatewayResolver(t.db, { ...config.billing, platformAccessOf: connections.accessOf }) })
  })
  beforeEach(() => {
    platform.seen.length = 0
    platform.setDecline(false)
  })
  after(async () => {
    await t.close()
    platform.server.closeAllConnections()
    platform.server.close()
  })

  test('a renewal raises its order, then pays it with the stored instrument; the order id is kept on the charge', async () => {
    const body = checkoutBody(planId, { payment_instrument_id: 'vault_tok_1', items: [{ plan_id: planId, quantity: 2 }] })
    const [subscription] = await checkout(t.app, shop.auth, body)
    const counts = await engineAt(subscription.next_charge_at).runDue({ storeId: shop.store.id })
    assert.equal(counts.renewals, 1)

    const hash = shop.store.store_hash
    assert.deepEqual(platform.seen.map((request) => `${request.method} ${request.url}`), [`POST /stores/${hash}/v3/orders`, `POST /stores/${hash}/v3/payments/access_tokens`, `POST /payments-host/stores/${hash}/payments`])
    const [order, token, payment] = platform.seen as [Seen, Seen, Seen]
    const charge = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscription.id).executeTakeFirstOrThrow()
    assert.equal(order.headers['idempotency-key'], `${charge.idempotency_key}:order`)
    assert.deepEqual(order.body.products, [{ product_id: Number(platformProductId), quantity: 2 }])
    assert.equal(order.body.total_minor_units, 2500, 'amount x quantity, in minor units')
    assert.equal(order.body.customer_email, body.email)
    assert.equal(token.body.order.id, 500, 'the payment access token is for the order just raised')
    assert.equal(payment.body.payment.instrument.token, 'vault_tok_1')
    assert.equal(payment.headers['idempotency-key'], charge.idempotency_key)
    assert.deepEqual([charge.status, charge.platform_order_id, charge.gateway], ['succeeded', '500', 'platform'])
  })

  test('a declined payment fails the charge with its code and schedules the first dunning retry', async () => {
    platform.setDecline(true)
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(planId, { payment_instrument_id: 'vault_tok_2' }))
    await engineAt(subscription.next_charge_at).runDue({ storeId: shop.store.id })
    const charge = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscription.id).executeTakeFirstOrThrow()
    assert.equal(charge.status, 'failed')
    assert.equal(charge.failure_code, 'card_declined')
    assert.ok(charge.next_retry_at && charge.next_retry_at > charge.created_at)
    assert.ok(!JSON.stringify(charge).includes(TOKEN) && !JSON.stringify(charge).includes(PAT), 'no credential is stored')
  })

  test('a live store without a platform connection fails the charge as gateway_configuration, without any request', async () => {
    const other = await createStoreWithKey(t.db, { mode: 'live' })
    const product = await createProduct(t.app, other.auth)
    const plan = await createPlan(t.app, other.auth, product.id)
    const [subscription] = await checkout(t.app, other.auth, checkoutBody(plan.id))
    await engineAt(subscription.next_charge_at).runDue({ storeId: other.store.id })
    const charge = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscription.id).executeTakeFirstOrThrow()
    assert.deepEqual([charge.status, charge.failure_code], ['failed', 'gateway_configuration'])
    assert.equal(platform.seen.length, 0)
  })
})
