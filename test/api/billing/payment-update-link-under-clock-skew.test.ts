import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { fixedClock } from '../../../src/lib/clock.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { buildTestApp, call, createStoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { checkout, checkoutBody, closeTestApp } from '../subscriptions/fixtures.ts'

/**
 * The payment-update link's limit (one per subscription per 10 minutes, docs/contract.md) when this
 * process's clock reads earlier than the last link's time: another API process whose clock is ahead,
 * or a clock stepped back. Before: a link "from the future" held nothing back, so each millisecond of
 * skew sent another email.
 */
describe('the payment-update link limit under clock skew', () => {
  const clock = fixedClock('2026-03-01T12:00:00.500Z')
  let t: TestApp
  before(async () => {
    t = await buildTestApp({ clock })
  })
  after(() => closeTestApp(t))

  test('a clock 1-3 ms behind the last link is refused 429 with a whole interval to wait, and sends nothing', async () => {
    const shop = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth)
    const plan = await createPlan(t.app, shop.auth, product.id, { name: 'Monthly', amount: 1500, interval: 'month' })
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(plan.id))
    const send = () => call(t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${subscription.id}/payment-update-link`, headers: shop.auth })
    assert.equal((await send()).statusCode, 202)
    for (const at of ['2026-03-01T12:00:00.499Z', '2026-03-01T12:00:00.498Z', '2026-03-01T12:00:00.497Z']) {
      clock.set(at)
      const refused = await send()
      assert.equal(refused.statusCode, 429, `at ${at}: ${refused.body}`)
      assert.equal(refused.headers['retry-after'], '600')
      // A store on real time: waiting helps, and the detail says how long.
      assert.match(refused.json.detail, /try again in 10 minutes$/)
    }
    const links = await t.db.selectFrom('notifications').select('id').where('subscription_id', '=', subscription.id).where('template', '=', 'payment_update_link').execute()
    assert.equal(links.length, 1, 'one link email')
  })
})
