import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { sql } from 'kysely'
import { createShopWithPlan } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { assertInvalidField, assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, checkout, checkoutBody, closeTestApp, getSubscription, storedEvents } from './fixtures.ts'

/**
 * Reactivation (docs/contract.md, Reactivation; CONTRACT 17): a cancelled subscription starts again on
 * its plan and instrument, from now (charged at once through the renewal engine) or from a later
 * `next_charge_at` (nothing charged until then); the portal may do it only when the store allows it.
 */
describe('reactivating a cancelled subscription', () => {
  let t: TestApp
  // A checkout pays [Jan 10, Feb 10]; it is cancelled on Jan 15.
  const START = '2026-01-10T09:00:00.000Z'
  const CANCELLED_AT = '2026-01-15T00:00:00.000Z'
  type Shop = StoreWithKey & { planId: string }

  before(async () => {
    t = await buildTestApp()
  })
  after(() => closeTestApp(t))

  async function advance(shop: Shop, to: string): Promise<any> {
    const response = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to } })
    assert.equal(response.statusCode, 200, response.body)
    return response.json.processed
  }

  async function charges(shop: Shop, subscriptionId: string): Promise<any[]> {
    const response = await call(t.app, { method: 'GET', url: `/api/v1/admin/charges?subscription_id=${subscriptionId}&limit=100`, headers: shop.auth })
    assert.equal(response.statusCode, 200, response.body)
    return [...response.json.data].sort((a, b) => a.created_at.localeCompare(b.created_at))
  }

  /** A subscription cancelled at once on Jan 15, with its reason. */
  async function cancelled(overrides: Record<string, unknown> = {}): Promise<{ shop: Shop; sub: any }> {
    const shop = await createShopWithPlan(t, { clockAt: START })
    const [sub] = await checkout(t.app, shop.auth, checkoutBody(shop.planId, overrides))
    await advance(shop, CANCELLED_AT)
    const response = await act(t.app, shop.auth, sub.id, 'cancel', { reason: 'too much coffee' })
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json.status, 'cancelled')
    return { shop, sub }
  }

  const reactivate = (shop: Shop, id: string, payload?: Record<string, unknown>) => act(t.app, shop.auth, id, 'reactivate', payload)

  test('from now: active again on its plan and instrument, a new period charged at once through the renewal engine, the next renewal one period later', async () => {
    const { shop, sub } = await cancelled()
    await advance(shop, '2026-01-20T12:00:00.000Z')

    const response = await reactivate(shop, sub.id)
    assert.equal(response.statusCode, 200, response.body)
    const after = response.json
    assert.equal(after.status, 'active')
    assert.deepEqual([after.cancelled_at, after.cancellation_reason, after.cancel_at_period_end], [null, null, false], 'the cancellation is forgotten')
    assert.deepEqual([after.plan_id, after.payment_instrument_id, after.amount], [sub.plan_id, sub.payment_instrument_id, sub.amount])
    assert.equal(after.current_period_start, '2026-01-20T12:00:00.000Z', 'the new period starts now')
    assert.equal(after.current_period_end, '2026-02-20T12:00:00.000Z')
    assert.equal(after.next_charge_at, '2026-02-20T12:00:00.000Z')
    const [charge] = await charges(shop, sub.id)
    assert.equal(after.latest_charge_id, charge.id)
    assert.deepEqual([charge.status, charge.amount, charge.period_start], ['succeeded', 1500, '2026-01-20T12:00:00.000Z'])

    // The reactivation, then the renewal's own events; named as the admin key's.
    const events = await storedEvents(t.db, sub.id)
    assert.deepEqual(events.slice(-2).map((event) => event.event_type), ['subscription.reactivated', 'subscription.charged'])
    const reactivated = events.at(-2)
    assert.equal(reactivated.data.status, 'active')
    assert.equal(reactivated.actor.type, 'admin_key')
    assert.equal(reactivated.timestamp, '2026-01-20T12:00:00.000Z')

    // It counts again: the subscription history (MRR's source) has an open active span from now.
    const { rows: spans } = await sql<{ status: string; valid_from: Date; valid_to: Date | null }>`
      SELECT status, valid_from, valid_to FROM subscription_history WHERE subscription_id = ${sub.id} ORDER BY valid_from, id`.execute(t.db)
    const open = spans.filter((span) => span.valid_to === null)
    assert.equal(open.length, 1)
    assert.equal(open[0]!.status, 'active', `history: ${JSON.stringify(spans)}`)
    assert.equal(new Date(open[0]!.valid_from).toISOString(), '2026-01-20T12:00:00.000Z')

    // Nothing at the old renewal date; one period after the reactivation, the next renewal.
    assert.equal((await advance(shop, '2026-02-15T00:00:00.000Z')).renewals, 0)
    assert.equal((await advance(shop, '2026-02-20T12:00:00.000Z')).renewals, 1)
    assert.equal((await charges(shop, sub.id)).length, 2)

    // Active now: reactivating again is 409.
    assertProblem(await reactivate(shop, sub.id), 409, 'invalid_state')
  })

  test('from a later next_charge_at: active now, nothing charged until then, then the renewal engine charges it', async () => {
    const { shop, sub } = await cancelled()
    const response = await reactivate(shop, sub.id, { next_charge_at: '2026-02-10T09:00:00.000Z' })
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json.status, 'active')
    assert.equal(response.json.next_charge_at, '2026-02-10T09:00:00.000Z')
    assert.equal(response.json.current_period_end, '2026-02-10T09:00:00.000Z', 'the paid period the subscriber keeps runs until then')
    assert.deepEqual(await charges(shop, sub.id), [], 'nothing charged now')

    assert.equal((await advance(shop, '2026-02-10T08:00:00.000Z')).renewals, 0)
    assert.equal((await advance(shop, '2026-02-10T09:00:00.000Z')).renewals, 1)
    const [charge] = await charges(shop, sub.id)
    assert.deepEqual([charge.status, charge.period_start, charge.period_end], ['succeeded', '2026-02-10T09:00:00.000Z', '2026-03-10T09:00:00.000Z'])
    assert.equal((await getSubscription(t.app, shop.auth, sub.id)).next_charge_at, '2026-03-10T09:00:00.000Z')
  })

  test('a declined card on reactivation enters dunning like any renewal', async () => {
    const { shop, sub } = await cancelled({ payment_instrument_id: 'instr_declined' })
    const response = await reactivate(shop, sub.id)
    assert.equal(response.statusCode, 200, response.body)
    const [charge] = await charges(shop, sub.id)
    assert.deepEqual([charge.status, charge.failure_code], ['failed', 'card_declined'])
    assert.equal(response.json.status, 'active')
    assert.equal(response.json.next_charge_at, '2026-01-16T00:00:00.000Z', 'the first retry follows the store schedule')
  })

  test('400 for a next_charge_at that is not later than now or more than a year ahead; nothing changes', async () => {
    const { shop, sub } = await cancelled()
    assertInvalidField(await reactivate(shop, sub.id, { next_charge_at: CANCELLED_AT }), '/body/next_charge_at')
    assertInvalidField(await reactivate(shop, sub.id, { next_charge_at: '2027-01-15T00:00:01.000Z' }), '/body/next_charge_at')
    assertProblem(await reactivate(shop, sub.id, { next_charge_at: 'tomorrow' }), 400, 'validation_failed')
    assert.equal((await getSubscription(t.app, shop.auth, sub.id)).status, 'cancelled')
  })

  test('409 unless cancelled, when the plan is archived, and while the store\'s billing is stopped', async () => {
    const shop = await createShopWithPlan(t, { clockAt: START })
    const [active] = await checkout(t.app, shop.auth, checkoutBody(shop.planId))
    assertProblem(await reactivate(shop, active.id), 409, 'invalid_state')
    assert.equal((await act(t.app, shop.auth, active.id, 'pause', {})).statusCode, 200)
    assertProblem(await reactivate(shop, active.id), 409, 'invalid_state')
    assertProblem(await reactivate(shop, 'sub_00000000000000000000000000'), 404, 'not_found')

    const { shop: archived, sub } = await cancelled()
    const archive = await call(t.app, { method: 'PATCH', url: `/api/v1/admin/plans/${archived.planId}`, headers: archived.auth, payload: { active: false } })
    assert.equal(archive.statusCode, 200, archive.body)
    const refused = await reactivate(archived, sub.id)
    assertProblem(refused, 409, 'invalid_state')
    assert.match(refused.json.detail, /archived/)

    const { shop: stopped, sub: stoppedSub } = await cancelled()
    await t.db.updateTable('stores').set({ billing_stopped_at: new Date() }).where('id', '=', stopped.store.id).execute()
    t.services.modules.stores.service.auth.forgetStore(stopped.store.id)
    const whileStopped = await reactivate(stopped, stoppedSub.id)
    assertProblem(whileStopped, 409, 'invalid_state')
    assert.match(whileStopped.json.detail, /billing is stopped/)
    assert.deepEqual(await charges(stopped, stoppedSub.id), [])
  })

  test('the portal may reactivate only when the store switched portal_reactivation on; the event names the subscriber', async () => {
    const { shop, sub } = await cancelled()
    const portal = await signInSubscriber(t.app, t.db, shop.store.id, sub.subscriber_id)
    const fromPortal = () => call(t.app, { method: 'POST', url: `/api/v1/portal/subscriptions/${sub.id}/reactivate`, headers: portal.auth })
    const portalStore = async () => (await call(t.app, { method: 'GET', url: '/api/v1/portal/store', headers: portal.auth })).json

    assert.equal((await call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: shop.auth })).json.portal_reactivation, false, 'off by default')
    assert.equal((await portalStore()).reactivation, false)
    assertProblem(await fromPortal(), 403, 'forbidden')
    assert.equal((await getSubscription(t.app, shop.auth, sub.id)).status, 'cancelled', 'nothing changed')

    const on = await call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload: { portal_reactivation: true } })
    assert.equal(on.statusCode, 200, on.body)
    assert.equal(on.json.portal_reactivation, true)
    assert.equal((await portalStore()).reactivation, true)

    // Another subscriber's subscription is not found, setting or not.
    const { shop: otherShop, sub: otherSub } = await cancelled()
    const stranger = await call(t.app, { method: 'POST', url: `/api/v1/portal/subscriptions/${otherSub.id}/reactivate`, headers: portal.auth })
    assertProblem(stranger, 404, 'not_found')
    assert.equal((await getSubscription(t.app, otherShop.auth, otherSub.id)).status, 'cancelled')

    const response = await fromPortal()
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json.status, 'active')
    const reactivated = (await storedEvents(t.db, sub.id)).find((event) => event.event_type === 'subscription.reactivated')
    const subscriber = await t.db.selectFrom('subscribers').select('email').where('id', '=', sub.subscriber_id).executeTakeFirstOrThrow()
    assert.deepEqual(reactivated.actor, { type: 'subscriber', id: sub.subscriber_id, label: subscriber.email })
  })

  test('a subscriber cannot start it after the paid period ends (no service unpaid), nor restart a gift on the giver\'s card; the admin can', async () => {
    const { shop, sub } = await cancelled()
    const on = await call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload: { portal_reactivation: true } })
    assert.equal(on.statusCode, 200, on.body)
    const portal = await signInSubscriber(t.app, t.db, shop.store.id, sub.subscriber_id)
    const fromPortal = (id: string, auth: Record<string, string>, payload?: Record<string, unknown>) =>
      call(t.app, { method: 'POST', url: `/api/v1/portal/subscriptions/${id}/reactivate`, headers: auth, ...(payload ? { payload } : {}) })
    // Paid until Feb 10 (the period charged on Jan 10): a start in June would be four months unpaid.
    assertProblem(await fromPortal(sub.id, portal.auth, { next_charge_at: '2026-06-01T09:00:00.000Z' }), 400, 'validation_failed')
    assert.equal((await getSubscription(t.app, shop.auth, sub.id)).status, 'cancelled', 'nothing changed')
    const atPaidEnd = await fromPortal(sub.id, portal.auth, { next_charge_at: '2026-02-10T09:00:00.000Z' })
    assert.equal(atPaidEnd.statusCode, 200, atPaidEnd.body)
    assert.equal(atPaidEnd.json.next_charge_at, '2026-02-10T09:00:00.000Z')

    // A gift: the recipient signs in, but the giver pays; only the store may start it again.
    const [gift] = await checkout(t.app, shop.auth, checkoutBody(shop.planId, { email: 'giver@example.com', gift: { recipient_email: 'recipient@example.com' } }))
    assert.equal((await act(t.app, shop.auth, gift.id, 'cancel', {})).statusCode, 200)
    const recipient = await signInSubscriber(t.app, t.db, shop.store.id, gift.subscriber_id)
    assertProblem(await fromPortal(gift.id, recipient.auth), 403, 'forbidden')
    assert.equal((await getSubscription(t.app, shop.auth, gift.id)).status, 'cancelled')
    const byAdmin = await reactivate(shop, gift.id, { next_charge_at: '2026-03-01T09:00:00.000Z' })
    assert.equal(byAdmin.statusCode, 200, byAdmin.body)
  })
})
