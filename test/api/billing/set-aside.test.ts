import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { createShopWithPlan } from '../../helpers/catalog.ts'
import { buildTestApp, call, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, checkout, checkoutBody, closeTestApp, getSubscription } from '../subscriptions/fixtures.ts'

/**
 * One bad row never stops billing: a renewal, a settlement or a piece of due work that fails on one
 * subscription's own data sets that subscription aside, with its reason, and everything else goes on.
 * The bad row is forced with a CHECK constraint naming it, the way a real one would fail in the database.
 */
const T0 = '2026-01-10T09:00:00.000Z'
const FEB10 = '2026-02-10T09:00:00.000Z'
const plus = (iso: string, ms: number) => new Date(new Date(iso).getTime() + ms).toISOString()

describe('one bad row never stops billing', () => {
  let t: TestApp

  before(async () => {
    t = await buildTestApp()
  })
  after(() => closeTestApp(t))

  const shopAt = (at: string) => createShopWithPlan(t, { clockAt: at })

  async function advance(shop: StoreWithKey, to: string) {
    const response = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to } })
    assert.equal(response.statusCode, 200, response.body)
    return response.json
  }

  async function setAsideGauge(kind: string): Promise<number> {
    const response = await call(t.app, { method: 'GET', url: '/metrics' })
    const line = response.body.split('\n').find((row) => row.startsWith(`set_aside_items{kind="${kind}"}`))
    assert.ok(line, `/metrics has set_aside_items{kind="${kind}"}`)
    return Number(line.split(' ')[1])
  }

  test('among 1,000 due renewals, one whose charge the database refuses is set aside; the other 999 renew exactly once', async () => {
    const shop = await shopAt(T0)
    const ids: string[] = []
    for (let order = 0; order < 40; order++) {
      const items = Array.from({ length: 25 }, () => ({ plan_id: shop.planId, quantity: 1 }))
      for (const subscription of await checkout(t.app, shop.auth, checkoutBody(shop.planId, { items }))) ids.push(subscription.id)
    }
    assert.equal(ids.length, 1_000)
    // The gauge is database-wide: what other tests set aside is already in it.
    const asideBefore = await setAsideGauge('renewal')
    // Due in the middle of the batch, not first or last.
    const poison = ids[437]!
    await sql`ALTER TABLE charges ADD CONSTRAINT poison_charge CHECK (subscription_id <> ${sql.lit(poison)})`.execute(t.db)
    try {
      const result = await advance(shop, plus(FEB10, 60_000))
      assert.equal(result.processed.renewals, 999, 'every other renewal ran')

      const charges = await t.db.selectFrom('charges').select(['subscription_id', 'status']).where('store_id', '=', shop.store.id).execute()
      assert.equal(charges.length, 999, 'one charge per renewed subscription')
      assert.ok(charges.every((charge) => charge.status === 'succeeded'))
      assert.equal(new Set(charges.map((charge) => charge.subscription_id)).size, 999, 'no subscription charged twice')
      assert.ok(!charges.some((charge) => charge.subscription_id === poison), 'the bad row has no charge')
      const ledger = await t.db.selectFrom('test_gateway_charges').select('subscription_id').where('store_id', '=', shop.store.id).execute()
      assert.equal(ledger.length, 999, 'the gateway was asked once per renewed subscription')

      const aside = await getSubscription(t.app, shop.auth, poison)
      assert.equal(aside.billing_issue.code, 'renewal_failed')
      assert.match(aside.billing_issue.message, /poison_charge/, 'the reason names what failed')
      assert.equal(aside.next_charge_at, FEB10, 'its renewal is still owed')
      assert.equal(await setAsideGauge('renewal'), asideBefore + 1, '/metrics counts it')
      const logged = t.logs.filter((line) => line.includes(poison) && line.includes('renewal set aside'))
      assert.equal(logged.length, 1, 'said once in the log')

      const again = await advance(shop, plus(FEB10, 120_000))
      assert.equal(again.processed.renewals, 0, 'a set-aside renewal is not retried on every pass')
    } finally {
      await sql`ALTER TABLE charges DROP CONSTRAINT IF EXISTS poison_charge`.execute(t.db)
    }

    // Fixed, and the subscription changed by the merchant: it bills again.
    const changed = await act(t.app, shop.auth, poison, 'quantity', { quantity: 2 })
    assert.equal(changed.statusCode, 200, changed.body)
    assert.equal(changed.json.billing_issue, null, 'a change to the subscription clears the issue')
    const result = await advance(shop, plus(FEB10, 180_000))
    assert.equal(result.processed.renewals, 1)
    const own = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', poison).execute()
    assert.deepEqual(own.map((charge) => [charge.status, charge.amount]), [['succeeded', 3000]])
    assert.equal(await setAsideGauge('renewal'), asideBefore)
  })

  test('a charge whose settlement the database refuses waits for review; the rest of its batch settles', async () => {
    const shop = await shopAt(T0)
    const subscriptions = await checkout(t.app, shop.auth, checkoutBody(shop.planId, { items: Array.from({ length: 5 }, () => ({ plan_id: shop.planId, quantity: 1 })) }))
    const poison = subscriptions[2].id
    const reviewBefore = await setAsideGauge('charge_review')
    // The period may not advance for this one row: the settlement fails after the gateway took the money.
    await sql`ALTER TABLE subscriptions ADD CONSTRAINT poison_settle CHECK (id <> ${sql.lit(poison)} OR period_index < 1)`.execute(t.db)
    let chargeId: string
    try {
      const result = await advance(shop, plus(FEB10, 60_000))
      assert.equal(result.processed.renewals, 5)
      const charges = await t.db.selectFrom('charges').selectAll().where('store_id', '=', shop.store.id).execute()
      const stuck = charges.find((charge) => charge.subscription_id === poison)!
      chargeId = stuck.id
      assert.equal(stuck.status, 'requires_review')
      assert.equal(stuck.review?.code, 'settlement_failed')
      assert.ok(charges.filter((charge) => charge.id !== stuck.id).every((charge) => charge.status === 'succeeded'), 'the other four settled')
      const listed = await call(t.app, { method: 'GET', url: '/api/v1/admin/charges?status=requires_review', headers: shop.auth })
      assert.deepEqual(listed.json.data.map((charge: any) => charge.id), [stuck.id], 'listed for the merchant')
      const aside = await getSubscription(t.app, shop.auth, poison)
      assert.equal(aside.billing_issue.code, 'charge_requires_review')
      assert.equal(aside.latest_charge_id, stuck.id)
      assert.equal(await setAsideGauge('charge_review'), reviewBefore + 1)
    } finally {
      await sql`ALTER TABLE subscriptions DROP CONSTRAINT IF EXISTS poison_settle`.execute(t.db)
    }
    // The gateway did take the money: the merchant resolves it as succeeded and the period is paid once.
    const resolved = await call(t.app, { method: 'POST', url: `/api/v1/admin/charges/${chargeId!}/resolve`, headers: shop.auth, payload: { outcome: 'succeeded' } })
    assert.equal(resolved.statusCode, 200, resolved.body)
    assert.equal(resolved.json.status, 'succeeded')
    const after = await getSubscription(t.app, shop.auth, poison)
    assert.equal(after.billing_issue, null)
    assert.equal(after.current_period_start, FEB10, 'the period it paid is current')
  })

  test('due work that fails on one subscription is set aside; the rest of the due work runs', async () => {
    const shop = await shopAt(T0)
    const later = plus(T0, 2 * 86_400_000)
    const pending = await checkout(t.app, shop.auth, checkoutBody(shop.planId, { start_at: later, items: Array.from({ length: 4 }, () => ({ plan_id: shop.planId, quantity: 1 })) }))
    const poison = pending[0].id
    await sql`ALTER TABLE subscriptions ADD CONSTRAINT poison_activate CHECK (id <> ${sql.lit(poison)} OR status <> 'active')`.execute(t.db)
    try {
      const result = await advance(shop, plus(later, 60_000))
      assert.equal(result.processed.activations, 3, 'the other activations ran')
      const aside = await getSubscription(t.app, shop.auth, poison)
      assert.equal(aside.status, 'pending')
      assert.equal(aside.billing_issue.code, 'renewal_failed')
    } finally {
      await sql`ALTER TABLE subscriptions DROP CONSTRAINT IF EXISTS poison_activate`.execute(t.db)
    }
  })
})
