import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { fixedClock, systemClock } from '../../../src/lib/clock.ts'
import { createTestRenewals } from '../../helpers/billing.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { checkout, checkoutBody, closeTestApp, getSubscription } from '../subscriptions/fixtures.ts'

/**
 * A charge whose outcome the gateway never tells (instrument `_unknown`: no answer, no trace, no money)
 * is looked up again and again under its own key, never charged under a new one; after the grace
 * period it requires review, its subscription shows why, and an admin resolves it.
 */
const T0 = '2026-01-10T09:00:00.000Z'
const FEB10 = '2026-02-10T09:00:00.000Z'
const GRACE_MS = 1_500
// Short leases and rechecks; the platform timeout only has to fit the lease (configuration checks it).
const ENV = { BILLING_UNKNOWN_GRACE_MS: String(GRACE_MS), BILLING_CHARGE_LEASE_MS: '400', PLATFORM_API_TIMEOUT_MS: '100' }

describe('unknown outcomes: looked up, never charged again, then reviewed', () => {
  let t: TestApp

  before(async () => {
    t = await buildTestApp({ env: ENV })
  })
  after(() => closeTestApp(t))

  async function shopWithUnknownRenewal(): Promise<{ shop: StoreWithKey; subscriptionId: string; chargeId: string }> {
    const shop = await createStoreWithKey(t.db)
    await t.db.updateTable('stores').set({ test_clock_now: new Date(T0) }).where('id', '=', shop.store.id).execute()
    const product = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, product.id, { amount: 1500 })
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(plan.id, { payment_instrument_id: 'pi_visa_unknown' }))
    const advanced = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: FEB10 } })
    assert.equal(advanced.statusCode, 200, advanced.body)
    const charges = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscription.id).execute()
    assert.equal(charges.length, 1)
    assert.equal(charges[0]!.status, 'pending', 'no answer: the charge stays pending')
    return { shop, subscriptionId: subscription.id, chargeId: charges[0]!.id }
  }

  async function shopWithPaidRenewal() {
    const shop = await createStoreWithKey(t.db)
    await t.db.updateTable('stores').set({ test_clock_now: new Date(T0) }).where('id', '=', shop.store.id).execute()
    const product = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, product.id, { amount: 1500 })
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(plan.id))
    await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: FEB10 } })
    return t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscription.id).where('status', '=', 'succeeded').executeTakeFirstOrThrow()
  }

  /**
   * The worker's reconciler, as the job runner would run it, a pass every 100 ms for `ms`: on a lease
   * clock the test moves, starting when the charge's outcome became unknown.
   */
  async function reconcileFor(chargeId: string, ms: number): Promise<void> {
    const { unknown_since: since } = await t.db.selectFrom('charges').select('unknown_since').where('id', '=', chargeId).executeTakeFirstOrThrow()
    assert.ok(since, 'the unknown outcome is noted when the renewal runs')
    const leaseClock = fixedClock(since)
    const engine = createTestRenewals(t.db, systemClock, ENV, leaseClock)
    for (let passed = 0; passed < ms; passed += 100) {
      await engine.reconcile()
      leaseClock.advance(100)
    }
  }

  test('during the grace period the charge is only asked about again under its key: no new charge, no money', async () => {
    const { shop, subscriptionId, chargeId } = await shopWithUnknownRenewal()
    await reconcileFor(chargeId, 900)
    const charges = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscriptionId).execute()
    assert.deepEqual(charges.map((charge) => [charge.id, charge.status]), [[chargeId, 'pending']], 'still the one charge, still pending')
    assert.ok(charges[0]!.unknown_since, 'the unknown outcome is noted')
    assert.equal(await t.db.selectFrom('test_gateway_charges').select('idempotency_key').where('subscription_id', '=', subscriptionId).execute().then((rows) => rows.length), 0, 'no money moved')
    const subscription = await getSubscription(t.app, shop.auth, subscriptionId)
    assert.equal(subscription.billing_issue, null, 'nothing to review yet')
    // The next renewal cannot start while this one is unknown.
    const advanced = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: '2026-03-10T09:01:00.000Z' } })
    assert.equal(advanced.json.processed.renewals, 0)
  })

  test('after the grace period it requires review, is listed, shows on the subscription, and resolves', async () => {
    const { shop, subscriptionId, chargeId } = await shopWithUnknownRenewal()
    await reconcileFor(chargeId, GRACE_MS + 1_000)
    const charge = await call(t.app, { method: 'GET', url: `/api/v1/admin/charges/${chargeId}`, headers: shop.auth })
    assert.equal(charge.json.status, 'requires_review')
    assert.equal(charge.json.review.code, 'outcome_unknown')
    const listed = await call(t.app, { method: 'GET', url: '/api/v1/admin/charges?status=requires_review', headers: shop.auth })
    assert.deepEqual(listed.json.data.map((row: any) => row.id), [chargeId])
    const subscription = await getSubscription(t.app, shop.auth, subscriptionId)
    assert.equal(subscription.billing_issue.code, 'charge_requires_review')
    assert.match(subscription.billing_issue.message, new RegExp(chargeId))
    // On the store's clock, as every time its pages show (it was the real time of the reconciler's pass).
    assert.equal(charge.json.review.since, FEB10)
    assert.equal(subscription.billing_issue.since, FEB10)
    assert.equal((await t.db.selectFrom('charges').select('id').where('subscription_id', '=', subscriptionId).execute()).length, 1, 'never a second charge')

    // Only a charge under review resolves; a bad outcome is a 400.
    const bad = await call(t.app, { method: 'POST', url: `/api/v1/admin/charges/${chargeId}/resolve`, headers: shop.auth, payload: { outcome: 'maybe' } })
    assert.equal(bad.statusCode, 400)
    const failed = await call(t.app, { method: 'POST', url: `/api/v1/admin/charges/${chargeId}/resolve`, headers: shop.auth, payload: { outcome: 'failed' } })
    assert.equal(failed.statusCode, 200, failed.body)
    assert.equal(failed.json.status, 'failed')
    assert.ok(failed.json.next_retry_at, 'dunning goes on from here')
    const after = await getSubscription(t.app, shop.auth, subscriptionId)
    assert.equal(after.billing_issue, null)
    assert.equal(after.status, 'active')
    assert.equal(after.next_charge_at, failed.json.next_retry_at)
    const again = await call(t.app, { method: 'POST', url: `/api/v1/admin/charges/${chargeId}/resolve`, headers: shop.auth, payload: { outcome: 'succeeded' } })
    assert.equal(again.statusCode, 409, 'a settled charge is not resolved again')
    assert.equal(again.json.code, 'invalid_state')
    const events = await t.db.selectFrom('events').select('event_type').where('entity_id', '=', chargeId).execute()
    assert.deepEqual(events.map((event) => event.event_type), ['charge.failed'])
  })

  test('resolved as succeeded, the period is paid', async () => {
    const { shop, subscriptionId, chargeId } = await shopWithUnknownRenewal()
    await reconcileFor(chargeId, GRACE_MS + 1_000)
    const resolved = await call(t.app, { method: 'POST', url: `/api/v1/admin/charges/${chargeId}/resolve`, headers: shop.auth, payload: { outcome: 'succeeded' } })
    assert.equal(resolved.statusCode, 200, resolved.body)
    assert.equal(resolved.json.status, 'succeeded')
    const subscription = await getSubscription(t.app, shop.auth, subscriptionId)
    assert.equal(subscription.current_period_start, FEB10)
    assert.equal(subscription.next_charge_at, '2026-03-10T09:00:00.000Z')
    assert.equal(subscription.billing_issue, null)
  })

  test('a charge unknown for weeks (past 2^31 ms) is looked up again without stopping the reconciler or the refunds after it', async () => {
    const longGrace = createTestRenewals(t.db, systemClock, { ...ENV, BILLING_UNKNOWN_GRACE_MS: String(29 * 86_400_000) })
    const { chargeId } = await shopWithUnknownRenewal()
    await sql`UPDATE charges SET unknown_since = now() - interval '25 days', lease_until = now() - interval '1 second', lease_token = NULL WHERE id = ${chargeId}`.execute(t.db)
    // A refund waiting for the refund pass, which runs after the charges.
    const paid = await shopWithPaidRenewal()
    await t.db.insertInto('refunds').values({ id: 're_01JTESTREFUND0000000000000', store_id: paid.store_id, charge_id: paid.id, amount: 100, currency: 'USD', reason: 'test', status: 'pending', idempotency_key: `${paid.idempotency_key}:refund:test`, created_at: new Date() }).execute()
    await longGrace.reconcile()
    const charge = await t.db.selectFrom('charges').selectAll().where('id', '=', chargeId).executeTakeFirstOrThrow()
    assert.equal(charge.status, 'pending', 'still within the grace period')
    assert.ok(charge.lease_until! > new Date(Date.now() + 59 * 60_000), 'looked at again in about an hour')
    const refund = await t.db.selectFrom('refunds').select('status').where('id', '=', 're_01JTESTREFUND0000000000000').executeTakeFirstOrThrow()
    assert.equal(refund.status, 'succeeded')
  })

  test('resolve of a charge of another store is 404, of a pending one 409', async () => {
    const { shop, chargeId } = await shopWithUnknownRenewal()
    const other = await createStoreWithKey(t.db)
    const foreign = await call(t.app, { method: 'POST', url: `/api/v1/admin/charges/${chargeId}/resolve`, headers: other.auth, payload: { outcome: 'succeeded' } })
    assert.equal(foreign.statusCode, 404)
    const pending = await call(t.app, { method: 'POST', url: `/api/v1/admin/charges/${chargeId}/resolve`, headers: shop.auth, payload: { outcome: 'succeeded' } })
    assert.equal(pending.statusCode, 409)
  })
})
