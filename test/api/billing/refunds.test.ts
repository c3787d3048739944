import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createTestGateway } from '../../../src/modules/billing/index.ts'
import { createShopWithPlan } from '../../helpers/catalog.ts'
import { buildTestApp, call, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { waitUntil } from '../../helpers/wait.ts'
import { startWebhookReceiver } from '../../helpers/webhook-receiver.ts'
import { act, checkout, checkoutBody, closeTestApp, getSubscription } from '../subscriptions/fixtures.ts'
import { createEndpoint, dispatcherClock, drive, testDispatcher } from '../webhooks/fixtures.ts'

/**
 * Refunds: through the gateway the charge went through, never more than is left, exactly once per
 * request; `amount_refunded` on the charge and `charge.refunded` to webhook endpoints. A renewal that
 * succeeds after its subscription was cancelled is refunded without anyone asking.
 */
const T0 = '2026-01-10T09:00:00.000Z'
const FEB10 = '2026-02-10T09:00:00.000Z'
// One test's gateway takes this long per charge, long enough to cancel while a renewal is in flight.
const LATENCY_MS = 400
const ENV = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' }

describe('refunds', () => {
  let t: TestApp

  before(async () => {
    t = await buildTestApp({ env: ENV })
  })
  after(() => closeTestApp(t))

  const refund = (shop: StoreWithKey, chargeId: string, payload: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
    call(t.app, { method: 'POST', url: `/api/v1/admin/charges/${chargeId}/refund`, headers: { ...shop.auth, ...headers }, payload })

  const shopAt = () => createShopWithPlan(t, { clockAt: T0 })

  /** A subscription renewed once on Feb 10 with `instrument`; answers its renewal charge. */
  async function renewed(shop: StoreWithKey & { planId: string }, instrument = 'pi_visa_ok'): Promise<any> {
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(shop.planId, { payment_instrument_id: instrument }))
    const advanced = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: FEB10 } })
    assert.equal(advanced.statusCode, 200, advanced.body)
    const charges = await call(t.app, { method: 'GET', url: `/api/v1/admin/charges?subscription_id=${subscription.id}`, headers: shop.auth })
    assert.equal(charges.json.data.length, 1)
    return charges.json.data[0]
  }

  const ledgerRefunded = (charge: any) =>
    t.db.selectFrom('charges').select('idempotency_key').where('id', '=', charge.id).executeTakeFirstOrThrow().then((row) => createTestGateway(t.db).refundedFor(row.idempotency_key))

  test('a full refund gives everything back once; a second is refused', async () => {
    const shop = await shopAt()
    const charge = await renewed(shop)
    assert.equal(charge.status, 'succeeded')
    assert.equal(charge.amount_refunded, 0)

    const first = await refund(shop, charge.id, { reason: 'customer asked' })
    assert.equal(first.statusCode, 200, first.body)
    assert.equal(first.json.amount_refunded, 1500)
    assert.equal(first.json.status, 'succeeded', 'the charge itself stays succeeded')
    assert.equal(await ledgerRefunded(charge), 1500, 'the gateway refunded it')

    const second = await refund(shop, charge.id)
    assert.equal(second.statusCode, 409)
    assert.equal(second.json.code, 'invalid_state')
    assert.equal(await ledgerRefunded(charge), 1500, 'nothing more moved')

    const events = await t.db.selectFrom('events').select(['event_type', 'payload']).where('entity_id', '=', charge.id).orderBy('position').execute()
    assert.deepEqual(events.map((event) => event.event_type), ['charge.succeeded', 'charge.refunded'])
    assert.equal(JSON.parse(events[1]!.payload).data.amount_refunded, 1500)
  })

  test('partial refunds add up to the charge and never past it', async () => {
    const shop = await shopAt()
    const charge = await renewed(shop)
    const part = await refund(shop, charge.id, { amount: 500 })
    assert.equal(part.statusCode, 200, part.body)
    assert.equal(part.json.amount_refunded, 500)

    const over = await refund(shop, charge.id, { amount: 1001 })
    assert.equal(over.statusCode, 400, 'more than is left')
    assert.equal(over.json.errors[0].path, '/body/amount')
    assert.match(over.json.detail, /1000/)
    assert.equal(await ledgerRefunded(charge), 500, 'the refused refund moved nothing')

    const rest = await refund(shop, charge.id)
    assert.equal(rest.statusCode, 200, rest.body)
    assert.equal(rest.json.amount_refunded, 1500, 'with no amount, all that is left')
    assert.equal((await refund(shop, charge.id, { amount: 1 })).statusCode, 409)
    const rows = await t.db.selectFrom('refunds').select(['amount', 'status']).where('charge_id', '=', charge.id).orderBy('created_at').execute()
    assert.deepEqual(rows.map((row) => [Number(row.amount), row.status]), [[500, 'succeeded'], [1000, 'succeeded']])
  })

  test('the same Idempotency-Key replays the refund instead of refunding twice', async () => {
    const shop = await shopAt()
    const charge = await renewed(shop)
    const headers = { 'idempotency-key': `refund-${charge.id}` }
    const first = await refund(shop, charge.id, { amount: 300 }, headers)
    const again = await refund(shop, charge.id, { amount: 300 }, headers)
    assert.equal(first.statusCode, 200)
    assert.equal(again.statusCode, 200)
    assert.equal(again.headers['idempotent-replayed'], 'true')
    assert.equal(await ledgerRefunded(charge), 300)
  })

  test('failed, pending and foreign charges, and bad bodies, are refused with nothing moved', async () => {
    const shop = await shopAt()
    const declined = await renewed(shop, 'pi_visa_declined')
    assert.equal(declined.status, 'failed')
    const failed = await refund(shop, declined.id)
    assert.equal(failed.statusCode, 409)
    assert.equal(failed.json.code, 'invalid_state')

    const other = await shopAt()
    const unknown = await renewed(other, 'pi_visa_unknown')
    assert.equal(unknown.status, 'pending')
    assert.equal((await refund(other, unknown.id)).statusCode, 409, 'a pending charge has nothing to refund yet')
    assert.equal((await refund(shop, unknown.id)).statusCode, 404, "another store's charge is not found")

    const third = await shopAt()
    const paid = await renewed(third)
    for (const body of [{ amount: 0 }, { amount: -5 }, { amount: 1.5 }, { amount: 1e12 }, { amount: '100' }, { surprise: true }]) {
      const response = await refund(third, paid.id, body)
      assert.equal(response.statusCode, 400, JSON.stringify(body))
    }
    assert.equal(await ledgerRefunded(paid), 0)
    assert.equal((await t.db.selectFrom('refunds').select('id').where('charge_id', '=', paid.id).execute()).length, 0, 'no refund recorded')
  })

  test('a renewal that succeeds after its subscription was cancelled is refunded automatically, and charge.refunded is delivered', async () => {
    const shop = await shopAt()
    const receiver = await startWebhookReceiver()
    const endpoint = await createEndpoint(t.app, shop.auth, { url: receiver.url, event_types: ['charge.succeeded', 'charge.refunded'] })
    const dispatcher = testDispatcher(t.db, { clock: dispatcherClock() })
    // The service again on the same database, its test gateway slow: the others' renewals need not wait.
    const slow = await buildTestApp({ database: t.database, env: { ...ENV, TEST_GATEWAY_LATENCY_MS: String(LATENCY_MS) } })
    try {
      const [subscription] = await checkout(t.app, shop.auth, checkoutBody(shop.planId))
      // The renewal is in flight at the gateway when the subscriber cancels.
      const advancing = call(slow.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to: FEB10 } })
      await waitUntil('the renewal charge pending at the gateway', async () => (await t.db.selectFrom('charges').select('id').where('subscription_id', '=', subscription.id).where('status', '=', 'pending').execute()).length > 0)
      const cancelled = await act(t.app, shop.auth, subscription.id, 'cancel', { reason: 'changed my mind' })
      assert.equal(cancelled.statusCode, 200, cancelled.body)
      assert.equal((await advancing).statusCode, 200)

      const [charge] = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', subscription.id).execute()
      assert.equal(charge!.status, 'succeeded', 'the gateway took the money')
      assert.equal(Number(charge!.amount_refunded), 1500, 'and it went back')
      assert.equal(await ledgerRefunded(charge), 1500)
      const [auto] = await t.db.selectFrom('refunds').selectAll().where('charge_id', '=', charge!.id).execute()
      assert.equal(auto!.automatic, true)
      assert.match(auto!.reason!, /cancelled/)
      const after = await getSubscription(t.app, shop.auth, subscription.id)
      assert.equal(after.status, 'cancelled')
      assert.equal(after.current_period_start, T0, 'no period was paid for')

      await drive(dispatcher, { until: () => receiver.accepted().length >= 2 })
      const delivered = receiver.verifyAll(endpoint.secret)
      assert.deepEqual(delivered.map((event: any) => event.event_type), ['charge.succeeded', 'charge.refunded'])
      assert.equal(delivered[1].data.id, charge!.id)
      assert.equal(delivered[1].data.amount_refunded, 1500)
    } finally {
      await slow.close()
      await dispatcher.close()
      await receiver.close()
    }
  })
})
