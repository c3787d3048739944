import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { fixedClock } from '../../../src/lib/clock.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { checkout, checkoutBody, closeTestApp } from '../subscriptions/fixtures.ts'

/**
 * 409 `billing_disabled` says the store's billing is switched off right now (the cutover switch), not
 * that the request is wrong: like a 429 it is not kept against an `Idempotency-Key` (docs/contract.md,
 * Idempotency). Before, the refusal was stored and replayed for 24 hours after billing came back on,
 * so the merchant's retry of order now with the same key was refused again without running.
 */
describe('a billing_disabled refusal is not replayed for its Idempotency-Key', () => {
  const clock = fixedClock('2026-01-10T09:00:00.000Z')
  let t: TestApp
  before(async () => {
    t = await buildTestApp({ clock })
  })
  after(() => closeTestApp(t))

  test('order now with a key while off: 409; billing on; the same key runs the order (200, not replayed), and from then on replays that', async () => {
    const shop = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, product.id, { name: 'Monthly', amount: 1500, interval: 'month' })
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(plan.id))
    // A day on, so order now is not refused for a period that began this very instant.
    clock.advance(24 * 3_600_000)
    const patchStore = (billing_enabled: boolean) => call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload: { billing_enabled } })
    const orderNow = () =>
      call(t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${subscription.id}/charge-now`, headers: { ...shop.auth, 'idempotency-key': `order-now-${subscription.id}` } })

    assert.equal((await patchStore(false)).statusCode, 200)
    const refused = await orderNow()
    assertProblem(refused, 409, 'billing_disabled')
    assert.equal(refused.headers['idempotent-replayed'], undefined)

    assert.equal((await patchStore(true)).statusCode, 200)
    const ordered = await orderNow()
    assert.equal(ordered.statusCode, 200, ordered.body)
    assert.equal(ordered.headers['idempotent-replayed'], undefined, 'it ran')
    assert.ok(ordered.json.latest_charge_id)

    // The answer that ran is kept as any other: the same key replays it and charges nothing more.
    const replayed = await orderNow()
    assert.equal(replayed.statusCode, 200)
    assert.equal(replayed.headers['idempotent-replayed'], 'true')
    assert.equal(replayed.body, ordered.body)
    const charges = await t.db.selectFrom('charges').select('id').where('subscription_id', '=', subscription.id).execute()
    assert.equal(charges.length, 1)
  })
})
