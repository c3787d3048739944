import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { fixedClock } from '../../../src/lib/clock.ts'
import { createGatewayResolver } from '../../../src/modules/billing/gateway-resolver.ts'
import type { GatewayResolver } from '../../../src/modules/billing/renewal-context.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { testModules } from '../../helpers/modules.ts'
import { buildTestApp, call, createStoreWithKey, testConfig, type TestApp } from '../../helpers/test-app.ts'
import { checkout, checkoutBody, closeTestApp } from '../subscriptions/fixtures.ts'

/**
 * The cutover switch (docs/contract.md, Cutover switch) against a charge already claimed when billing is
 * switched off. Before: a renewal claimed while billing was on, whose payment the gateway refused unsent
 * (a 429), was taken over by the reconciler hours after the merchant switched billing off and paid then,
 * while the old system was billing the same subscriber again. Now a charge that was never sent is not
 * sent while its store does not bill: it ends `billing_disabled` (no dunning, no email), the renewal stays
 * due, and once billing is on it is charged once, under the same attempt and key.
 */

const HOUR = 3_600_000

describe('a charge claimed before billing was switched off is never sent while it is off', () => {
  let t: TestApp
  before(async () => {
    t = await buildTestApp()
  })
  after(() => closeTestApp(t))

  test('refused unsent, then billing off: the reconciler sends nothing (billing_disabled); billing on: charged once, attempt 1 under its first key', async () => {
    const shop = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, product.id, { name: 'Monthly', amount: 1500, interval: 'month' })
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(plan.id))
    const due = Date.parse(subscription.next_charge_at)
    const { billing } = testConfig()
    const real = createGatewayResolver(t.db, billing)
    // The gateway refuses the first send before processing it (a 429): the charge stays pending, unsent.
    const refusing = { ...real.byName('test'), charge: async () => ({ status: 'unknown' as const, notSent: true, reason: '429: refused before it was processed' }) }
    const refusingResolver = { forStore: () => refusing, byName: () => refusing } as unknown as GatewayResolver
    const engineAt = (at: number, gateways: GatewayResolver) => {
      const clock = fixedClock(new Date(at))
      return testModules(t.db, { clock }).renewalEngine({ gateways, leaseMs: billing.chargeLeaseMs, concurrency: 1, batchSize: 10, unknownGraceMs: 24 * HOUR, leaseClock: clock })
    }
    const ledger = async () => (await t.db.selectFrom('test_gateway_charges').select('idempotency_key').where('store_id', '=', shop.store.id).execute()).map((row) => row.idempotency_key)
    const charges = () => t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscription.id).orderBy('created_at').orderBy('id').execute()

    await engineAt(due + 60_000, refusingResolver).runDue({ storeId: shop.store.id })
    const [claimed] = await charges()
    assert.equal(claimed!.status, 'pending')
    assert.equal(claimed!.submitted_at, null)

    const off = await call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload: { billing_enabled: false } })
    assert.equal(off.statusCode, 200, off.body)
    // Hours later the reconciler takes the charge over (its lease has long run out).
    await engineAt(due + 3 * HOUR, real).reconcile()
    assert.deepEqual(await ledger(), [], 'nothing reached the gateway while billing was off')
    const [ended] = await charges()
    assert.deepEqual([ended!.status, ended!.failure_code], ['failed', 'billing_disabled'])
    const held = await t.db.selectFrom('subscriptions').selectAll().where('id', '=', subscription.id).executeTakeFirstOrThrow()
    assert.equal(held.pending_charge_id, null)
    assert.equal(held.status, 'active', 'no dunning')
    assert.equal(held.dunning_attempts, 0)
    assert.equal(held.next_charge_at?.getTime(), due, 'the renewal stays due')
    const emails = await t.db.selectFrom('notifications').select('template').where('store_id', '=', shop.store.id).where('template', '=', 'payment_failed').execute()
    assert.deepEqual(emails, [], 'no payment-failed email: no money moved and no card is at fault')
    // Nothing more while it stays off.
    assert.equal((await engineAt(due + 4 * HOUR, real).runDue({ storeId: shop.store.id })).claimed, 0)
    assert.equal((await charges()).length, 1)

    const on = await call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload: { billing_enabled: true } })
    assert.equal(on.statusCode, 200, on.body)
    await engineAt(due + 5 * HOUR, real).runDue({ storeId: shop.store.id })
    await engineAt(due + 5 * HOUR + 60_000, real).runDue({ storeId: shop.store.id })
    const all = await charges()
    assert.deepEqual(all.map((charge) => [charge.status, charge.attempt]), [['failed', 1], ['succeeded', 1]])
    assert.equal(all[1]!.idempotency_key, claimed!.idempotency_key, 'the attempt is sent under its first key')
    assert.deepEqual(await ledger(), [claimed!.idempotency_key], 'charged once')
    const paid = await t.db.selectFrom('subscriptions').select(['next_charge_at', 'period_index']).where('id', '=', subscription.id).executeTakeFirstOrThrow()
    assert.ok(paid.next_charge_at!.getTime() > due, 'the period is paid and the next renewal is scheduled')
  })
})
