import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createShopWithPlan } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { buildTestApp, call, type TestApp } from '../../helpers/test-app.ts'
import { checkout, checkoutBody, closeTestApp } from '../subscriptions/fixtures.ts'

/**
 * A charge says how much of it was refunded (CONTRACT 17): `refund_status` goes none -> partial ->
 * full across two refunds, each refund's amount and reason are on the charge (`refunds`) and in the
 * `charge.refunded` event that the console's timeline shows; the subscriber's portal sees the status
 * and the amount, not the merchant's reasons.
 */
const T0 = '2026-01-10T09:00:00.000Z'
const FEB10 = '2026-02-10T09:00:00.000Z'

describe('refund status and reasons', () => {
  let t: TestApp

  before(async () => {
    t = await buildTestApp()
  })
  after(() => closeTestApp(t))

  test('none, then partial, then full across two refunds; each reason on the charge and in its charge.refunded event; the portal sees the status without the reasons', async () => {
    const shop = await createShopWithPlan(t, { clockAt: T0 })
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(shop.planId, { payment_instrument_id: 'pi_visa_ok' }))
    const advanced = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: FEB10 } })
    assert.equal(advanced.statusCode, 200, advanced.body)
    const listed = await call(t.app, { method: 'GET', url: `/api/v1/admin/charges?subscription_id=${subscription.id}`, headers: shop.auth })
    const charge = listed.json.data[0]
    assert.equal(charge.status, 'succeeded')
    assert.equal(charge.amount, 1500)
    assert.equal(charge.refund_status, 'none')
    assert.deepEqual(charge.refunds, [])

    const getCharge = async () => {
      const response = await call(t.app, { method: 'GET', url: `/api/v1/admin/charges/${charge.id}`, headers: shop.auth })
      assert.equal(response.statusCode, 200, response.body)
      return response.json
    }
    const refund = (payload: Record<string, unknown>) => call(t.app, { method: 'POST', url: `/api/v1/admin/charges/${charge.id}/refund`, headers: shop.auth, payload })

    const first = await refund({ amount: 400, reason: 'Bag arrived torn' })
    assert.equal(first.statusCode, 200, first.body)
    assert.equal(first.json.refund_status, 'partial', 'the refund answer says it')
    assert.equal(first.json.amount_refunded, 400)
    const partial = await getCharge()
    assert.equal(partial.refund_status, 'partial')
    assert.equal(partial.status, 'succeeded', 'the charge itself stays succeeded')
    assert.deepEqual(
      partial.refunds.map((r: any) => [r.amount, r.reason, r.status, r.automatic]),
      [[400, 'Bag arrived torn', 'succeeded', false]],
    )
    assert.match(partial.refunds[0].id, /^re_/)
    // A test store's refund is dated on its own clock, as its charges are (one clock on every page).
    assert.equal(partial.refunds[0].settled_at, FEB10, 'when the money went back, on the store clock')
    assert.equal(partial.refunds[0].created_at, FEB10)

    const second = await refund({ reason: 'Customer moved away' })
    assert.equal(second.statusCode, 200, second.body)
    const full = await getCharge()
    assert.equal(full.refund_status, 'full')
    assert.equal(full.amount_refunded, 1500)
    assert.deepEqual(
      full.refunds.map((r: any) => [r.amount, r.reason, r.status]),
      [[400, 'Bag arrived torn', 'succeeded'], [1100, 'Customer moved away', 'succeeded']],
      'oldest first, each with its own reason',
    )
    // The list shows the same as the one charge.
    const again = await call(t.app, { method: 'GET', url: `/api/v1/admin/charges?subscription_id=${subscription.id}`, headers: shop.auth })
    assert.deepEqual(again.json.data[0], full)

    // The timeline: one charge.refunded per refund, each carrying the charge as it was, its refund (the latest that succeeded) with its reason.
    const events = await call(t.app, { method: 'GET', url: `/api/v1/admin/events?entity_id=${charge.id}&event_type=charge.refunded`, headers: shop.auth })
    assert.equal(events.statusCode, 200, events.body)
    const refunded = [...events.json.data].reverse() // oldest first
    assert.equal(refunded.length, 2)
    const latest = (event: any) => event.data.refunds.filter((r: any) => r.status === 'succeeded').at(-1)
    assert.deepEqual([refunded[0].data.refund_status, latest(refunded[0]).amount, latest(refunded[0]).reason], ['partial', 400, 'Bag arrived torn'])
    assert.deepEqual([refunded[1].data.refund_status, latest(refunded[1]).amount, latest(refunded[1]).reason], ['full', 1100, 'Customer moved away'])
    assert.equal(refunded[1].data.refunds.length, 2)

    // The portal: refunded in full, and the merchant's notes stay with the merchant.
    const portal = await signInSubscriber(t.app, t.db, shop.store.id, subscription.subscriber_id)
    const mine = await call(t.app, { method: 'GET', url: `/api/v1/portal/subscriptions/${subscription.id}/charges`, headers: portal.auth })
    assert.equal(mine.statusCode, 200, mine.body)
    const seen = mine.json.data.find((c: any) => c.id === charge.id)
    assert.equal(seen.refund_status, 'full')
    assert.equal(seen.amount_refunded, 1500)
    assert.equal(seen.refunds, undefined)
    assert.doesNotMatch(mine.body, /Bag arrived torn|Customer moved away/)
  })

  test('a charge that never succeeded has nothing refunded: refund_status none', async () => {
    const shop = await createShopWithPlan(t, { clockAt: T0 })
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(shop.planId, { payment_instrument_id: 'pi_visa_declined' }))
    await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: FEB10 } })
    const listed = await call(t.app, { method: 'GET', url: `/api/v1/admin/charges?subscription_id=${subscription.id}`, headers: shop.auth })
    const failed = listed.json.data[0]
    assert.equal(failed.status, 'failed')
    assert.equal(failed.refund_status, 'none')
    assert.deepEqual(failed.refunds, [])
  })
})
