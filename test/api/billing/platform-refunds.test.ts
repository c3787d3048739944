import assert from 'node:assert/strict'
import { once } from 'node:events'
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { setTimeout as sleep } from 'node:timers/promises'
import { after, before, describe, test } from 'node:test'
import type { DatabaseHandle } from '../../../src/db/connect.ts'
import type { Db, StoreRow } from '../../../src/db/database.ts'
import { fixedClock, systemClock } from '../../../src/lib/clock.ts'
import { createRenewalEngine, type GatewayResolver } from '../../../src/modules/billing/index.ts'
import { createPlatformGateway, type PlatformGateway } from '../../../src/modules/billing/gateways/platform-gateway.ts'
import { createCatalogService } from '../../../src/modules/catalog/index.ts'
import { ensureBootstrapStore } from '../../../src/modules/stores/index.ts'
import { createCheckoutService } from '../../../src/modules/subscriptions/index.ts'
import { createTestDatabase } from '../../helpers/database.ts'
import { SHIPPING_ADDRESS } from '../../helpers/subscriptions.ts'

/**
 * Refunds on the platform, which takes no idempotency key: a refund sent whose answer was lost is
 * never sent again (it waits for a person, its amount still reserved), and a refund slower than its
 * lease is not taken over while its worker lives.
 */
const TOKEN = 'tok-review'
type Mode = 'answer' | 'lose-answer' | 'slow'

function startPlatform() {
  const refunds: number[] = [] // minor units the "platform" gave back
  let mode: Mode = 'answer'
  let slowMs = 0
  const json = (res: ServerResponse, status: number, body: string) => {
    res.writeHead(status, { 'content-type': 'application/json' })
    res.end(body)
  }
  const server = createServer(async (req, res) => {
    let raw = ''
    for await (const chunk of req) raw += chunk
    const body = JSON.parse(raw || '{}')
    const amount = Math.round(Number(body.items?.[0]?.amount) * 100)
    const left = 1500 - refunds.reduce((a, b) => a + b, 0)
    const dec = (n: number) => (n / 100).toFixed(2)
    if (req.url?.endsWith('/refund_quotes')) {
      if (amount > left) return json(res, 422, JSON.stringify({ status: 422, title: 'more than is refundable' }))
      return json(res, 201, `{"data":{"order_id":100,"refund_methods":[[{"provider_id":"stripe","amount":${dec(amount)},"offline":false,"offline_provider":false}]]}}`)
    }
    if (req.url?.endsWith('/refunds')) {
      if (mode === 'slow') await sleep(slowMs)
      if (amount > left) return json(res, 422, JSON.stringify({ data: [{ status: 422, title: 'more than is refundable' }] }))
      refunds.push(amount)
      if (mode === 'lose-answer') {
        // The refund is made; the answer never arrives (connection reset after the request went out).
        req.socket.destroy()
        return
      }
      return json(res, 201, `{"data":{"id":${refunds.length},"order_id":100,"payments":[{"id":1,"provider_id":"stripe","amount":${dec(amount)},"offline":false,"is_declined":false}]}}`)
    }
    json(res, 404, '{}')
  })
  return {
    server,
    refunds,
    setMode(next: Mode, ms = 0) {
      mode = next
      slowMs = ms
    },
  }
}

let seeded = 0
async function seed(db: Db): Promise<{ store: StoreRow; chargeId: string }> {
  seeded++
  const clock = fixedClock(new Date(Date.now() - 5 * 86_400_000))
  const store = await ensureBootstrapStore(db, { storeHash: `review-refund-${seeded}`, adminApiKey: `sk_test_review_refund_${seeded}_0123456789abcdef`, mode: 'live' })
  const catalog = createCatalogService({ db, clock, onChange: () => {} })
  const product = await catalog.createProduct(store, { platform_product_id: '77', name: 'Beans' })
  const plan = await catalog.createPlan(store, { product_id: product.id, name: 'Monthly', amount: 1500, currency: 'USD', interval: 'month' })
  const outcome = await createCheckoutService({ db, clock }).checkout(store, {
    platform_order_id: 'order-1',
    email: 'a@example.com',
    name: 'A',
    shipping_address: SHIPPING_ADDRESS,
    payment_instrument_id: 'vault_tok_1',
    items: [{ plan_id: plan.id, quantity: 1 }],
  })
  const subscriptionId = outcome.data[0]!.id
  const chargeId = `ch_review${Math.random().toString(36).slice(2, 10)}`
  const now = new Date()
  await db
    .insertInto('charges')
    .values({
      id: chargeId, store_id: store.id, subscription_id: subscriptionId, amount: 1500, currency: 'USD', status: 'succeeded', attempt: 1,
      payment_instrument_id: 'vault_tok_1', idempotency_key: `${subscriptionId}:${now.toISOString()}:1`, failure_code: null, failure_message: null,
      next_retry_at: null, period_start: now, period_end: now, created_at: now, settled_at: now, gateway: 'platform', gateway_charge_id: 'txn_1',
      platform_order_id: '100', lease_until: null, lease_token: null, submitted_at: now, unknown_since: null, review: null, amount_refunded: 0,
    } as any)
    .execute()
  return { store, chargeId }
}

describe('platform refunds are sent once', () => {
  let handle: DatabaseHandle
  let platform: ReturnType<typeof startPlatform>
  let gateway: PlatformGateway
  let resolver: GatewayResolver
  const LEASE_MS = 300

  before(async () => {
    handle = await createTestDatabase()
    platform = startPlatform()
    platform.server.listen(0, '127.0.0.1')
    await once(platform.server, 'listening')
    const base = `http://127.0.0.1:${(platform.server.address() as AddressInfo).port}/stores/abc/v3`
    gateway = createPlatformGateway({ timeoutMs: 5_000, configFor: () => ({ apiBaseUrl: base, accessToken: TOKEN }) })
    resolver = { forStore: () => gateway, byName: () => gateway }
  })
  after(async () => {
    await gateway.close()
    platform.server.close()
    await handle.close()
  })

  test('a partial refund whose answer is lost is not sent again: it waits for review, its amount reserved', async () => {
    platform.refunds.length = 0
    const { store, chargeId } = await seed(handle.db)
    const engine = createRenewalEngine({ db: handle.db, clock: systemClock, gateways: resolver, leaseMs: LEASE_MS })
    platform.setMode('lose-answer')
    const first = await engine.refund(store, chargeId, { amount: 500 })
    assert.equal(first.completed, false, '202: the answer was lost')
    platform.setMode('answer')
    await sleep(LEASE_MS + 50)
    await engine.reconcile()
    const charge = await handle.db.selectFrom('charges').select('amount_refunded').where('id', '=', chargeId).executeTakeFirstOrThrow()
        assert.deepEqual(platform.refunds, [500], 'the platform gave back 500 once')
    assert.equal(Number(charge.amount_refunded), 0, 'not counted as refunded until someone knows')
    const [row] = await handle.db.selectFrom('refunds').selectAll().where('charge_id', '=', chargeId).execute()
    assert.equal(row!.status, 'pending')
    assert.equal(row!.review?.code, 'outcome_unknown')
    assert.ok(row!.submitted_at, 'recorded as sent before it was sent')
    const rest = await engine.refund(store, chargeId, { amount: 1001 }).catch((error: { code?: string }) => error)
    assert.equal((rest as { code?: string }).code, 'validation_failed', 'the 500 in doubt is still reserved: 1000 is all that is left')
  })

  test('a refund slower than its lease is not sent again by another worker\'s refund pass', async () => {
    platform.refunds.length = 0
    const { store, chargeId } = await seed(handle.db)
    const a = createRenewalEngine({ db: handle.db, clock: systemClock, gateways: resolver, leaseMs: LEASE_MS })
    const b = createRenewalEngine({ db: handle.db, clock: systemClock, gateways: resolver, leaseMs: LEASE_MS })
    platform.setMode('slow', 3 * LEASE_MS)
    const inFlight = a.refund(store, chargeId, { amount: 400 })
    await sleep(LEASE_MS + 100)
    await b.reconcile() // another worker's reconcile job: processPending takes the refund whose lease ran out
    const result = await inFlight
    const charge = await handle.db.selectFrom('charges').select('amount_refunded').where('id', '=', chargeId).executeTakeFirstOrThrow()
    assert.deepEqual(platform.refunds, [400], 'the platform gave back 400 once')
  })
  test('the refund pass holds one refund at a time, renewed while the platform answers: a second worker never sends the same one', async () => {
    platform.refunds.length = 0
    const { store, chargeId } = await seed(handle.db)
    const charge = await handle.db.selectFrom('charges').selectAll().where('id', '=', chargeId).executeTakeFirstOrThrow()
    // Three pending refunds of 100 (as automatic or 202'd refunds would be), nobody holding them.
    for (let i = 1; i <= 3; i++) {
      await handle.db.insertInto('refunds').values({ id: `re_rv${i}_${chargeId}`, store_id: store.id, charge_id: chargeId, amount: 100, currency: 'USD', reason: null, status: 'pending', idempotency_key: `${charge.idempotency_key}:refund:${i}`, created_at: new Date(Date.now() + i) } as any).execute()
    }
    const a = createRenewalEngine({ db: handle.db, clock: systemClock, gateways: resolver, leaseMs: LEASE_MS })
    const b = createRenewalEngine({ db: handle.db, clock: systemClock, gateways: resolver, leaseMs: LEASE_MS })
    platform.setMode('slow', 200) // each refund well inside the lease
    const first = a.reconcile()
    await sleep(LEASE_MS + 50)
    const second = b.reconcile()
    await Promise.all([first, second])
    const after = await handle.db.selectFrom('charges').select('amount_refunded').where('id', '=', chargeId).executeTakeFirstOrThrow()
    assert.equal(platform.refunds.reduce((x, y) => x + y, 0), 300, 'three refunds of 100, each once')
  })
})
