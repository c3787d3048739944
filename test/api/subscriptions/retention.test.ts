import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createShopWithPlan } from '../../helpers/catalog.ts'
import { signInSubscriber, type PortalSignIn } from '../../helpers/portal.ts'
import { assertInvalidField, assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, checkout, checkoutBody, closeTestApp, getSubscription, storedEvents } from './fixtures.ts'

/** Cancellation reasons and retention offers (docs/contract.md, Cancellation reasons and retention). */
describe('cancellation reasons and retention offers', () => {
  let t: TestApp
  const START = '2026-01-10T09:00:00.000Z'
  type Shop = StoreWithKey & { planId: string }

  const REASONS = [
    { code: 'too_expensive', label: 'It costs too much' },
    { code: 'too-much-product', label: 'I have too much left' },
  ]
  const OFFERS = [{ type: 'pause', days: 30 }, { type: 'skip' }, { type: 'discount', code: 'STAY20' }]

  before(async () => {
    t = await buildTestApp()
  })
  after(() => closeTestApp(t))

  const getStore = (shop: Shop) => call(t.app, { method: 'GET', url: '/api/v1/admin/store', headers: shop.auth })
  const patchStore = (shop: Shop, payload: object) => call(t.app, { method: 'PATCH', url: '/api/v1/admin/store', headers: shop.auth, payload })
  const offers = (portal: PortalSignIn, id: string) => call(t.app, { method: 'GET', url: `/api/v1/portal/subscriptions/${id}/retention-offers`, headers: portal.auth })
  const accept = (portal: PortalSignIn, id: string, type: string) =>
    call(t.app, { method: 'POST', url: `/api/v1/portal/subscriptions/${id}/retention-offers/${type}/accept`, headers: portal.auth })
  const portalCancel = (portal: PortalSignIn, id: string, payload: object) =>
    call(t.app, { method: 'POST', url: `/api/v1/portal/subscriptions/${id}/cancel`, headers: portal.auth, payload })

  async function advance(shop: Shop, to: string): Promise<any> {
    const response = await call(t.app, { method: 'POST', url: '/api/v1/admin/test-clock/advance', headers: shop.auth, payload: { to } })
    assert.equal(response.statusCode, 200, response.body)
    return response.json.processed
  }

  async function configuredShop(): Promise<Shop> {
    const shop = await createShopWithPlan(t, { clockAt: START })
    const response = await patchStore(shop, { cancellation_reasons: REASONS, retention_offers: OFFERS })
    assert.equal(response.statusCode, 200, response.body)
    return shop
  }

  async function subscriberOf(shop: Shop): Promise<{ sub: any; portal: PortalSignIn }> {
    const [sub] = await checkout(t.app, shop.auth, checkoutBody(shop.planId))
    return { sub, portal: await signInSubscriber(t.app, t.db, shop.store.id, sub.subscriber_id) }
  }

  /** Whether this build applies discount codes (the discounts module): the discount offer is shown only then. */
  async function discountsAvailable(shop: Shop): Promise<boolean> {
    const response = await call(t.app, { method: 'GET', url: '/api/v1/admin/discounts', headers: shop.auth })
    return response.statusCode === 200
  }

  const saves = (subscriptionId: string) =>
    t.db.selectFrom('retention_saves').selectAll().where('subscription_id', '=', subscriptionId).orderBy('occurred_at').execute()

  test('the store keeps its cancellation reasons and retention offers; the Store view shows them', async () => {
    const shop = await configuredShop()
    const store = await getStore(shop)
    assert.deepEqual(store.json.cancellation_reasons, REASONS)
    assert.deepEqual(store.json.retention_offers, OFFERS)
    // Setting one list leaves the other as it was; [] clears it.
    const cleared = await patchStore(shop, { retention_offers: [] })
    assert.equal(cleared.statusCode, 200, cleared.body)
    assert.deepEqual(cleared.json.retention_offers, [])
    assert.deepEqual(cleared.json.cancellation_reasons, REASONS)
  })

  test('bad reasons and offers are 400 naming the place, and change nothing', async () => {
    const shop = await configuredShop()
    const before = await getStore(shop)
    const tooMany = Array.from({ length: 21 }, (_, i) => ({ code: `r${i}`, label: `Reason ${i}` }))
    for (const [what, body, path] of [
      ['a repeated code', { cancellation_reasons: [REASONS[0], { code: 'too_expensive', label: 'Again' }] }, '/body/cancellation_reasons/1/code'],
      ['more than 20 reasons', { cancellation_reasons: tooMany }, '/body/cancellation_reasons'],
      ['a code with spaces', { cancellation_reasons: [{ code: 'too expensive', label: 'x' }] }, '/body/cancellation_reasons/0/code'],
      ['an empty label', { cancellation_reasons: [{ code: 'x', label: '' }] }, '/body/cancellation_reasons/0/label'],
      ['two pause offers', { retention_offers: [{ type: 'pause', days: 10 }, { type: 'pause', days: 20 }] }, '/body/retention_offers/1/type'],
      ['a pause of 0 days', { retention_offers: [{ type: 'pause', days: 0 }] }, '/body/retention_offers/0'],
      ['a pause without days', { retention_offers: [{ type: 'pause' }] }, '/body/retention_offers/0'],
      ['an unknown offer', { retention_offers: [{ type: 'refund' }] }, '/body/retention_offers/0'],
      ['a discount without code', { retention_offers: [{ type: 'discount' }] }, '/body/retention_offers/0'],
    ] as const) {
      const response = await patchStore(shop, body)
      assertProblem(response, 400, 'validation_failed', { what })
      assert.ok(response.json.errors.some((error: { path: string }) => error.path.startsWith(path)), `${what}: ${JSON.stringify(response.json.errors)}`)
    }
    assert.deepEqual((await getStore(shop)).json, before.json)
  })

  test('cancel takes a reason_code beside the free-text reason; the subscription shows both; an unknown code is 400 and writes nothing', async () => {
    const shop = await configuredShop()
    const { sub, portal } = await subscriberOf(shop)
    const unknown = await portalCancel(portal, sub.id, { reason_code: 'no_reason_like_this', reason: 'x' })
    assertInvalidField(unknown, '/body/reason_code')
    const unchanged = await getSubscription(t.app, shop.auth, sub.id)
    assert.equal(unchanged.version, sub.version)
    assert.equal(unchanged.status, 'active')
    assertInvalidField(await act(t.app, shop.auth, sub.id, 'cancel', { reason_code: '' }), '/body/reason_code')

    const cancelled = await portalCancel(portal, sub.id, { reason_code: 'too_expensive', reason: 'Found it cheaper' })
    assert.equal(cancelled.statusCode, 200, cancelled.body)
    assert.equal(cancelled.json.status, 'cancelled')
    assert.equal(cancelled.json.cancellation_reason_code, 'too_expensive')
    assert.equal(cancelled.json.cancellation_reason, 'Found it cheaper')
    const event = (await storedEvents(t.db, sub.id)).at(-1)
    assert.equal(event.event_type, 'subscription.cancelled')
    assert.equal(event.data.cancellation_reason_code, 'too_expensive')

    // At period end too, by the merchant; with no code, it stays null.
    const [other] = await checkout(t.app, shop.auth, checkoutBody(shop.planId))
    assert.equal(other.cancellation_reason_code, null)
    const ending = await act(t.app, shop.auth, other.id, 'cancel', { at_period_end: true, reason_code: 'too-much-product' })
    assert.equal(ending.statusCode, 200, ending.body)
    assert.equal(ending.json.cancellation_reason_code, 'too-much-product')
    // A store without reasons knows no code.
    const plain = await createShopWithPlan(t, { clockAt: START })
    const [third] = await checkout(t.app, plain.auth, checkoutBody(plain.planId))
    assertInvalidField(await act(t.app, plain.auth, third.id, 'cancel', { reason_code: 'too_expensive' }), '/body/reason_code')
  })

  test('the offers listed are those that apply to the subscription now', async () => {
    const shop = await configuredShop()
    const { sub, portal } = await subscriberOf(shop)
    const listed = await offers(portal, sub.id)
    assert.equal(listed.statusCode, 200, listed.body)
    // The discount offer is shown only where discount codes can be applied (the discounts module).
    const discount = (await discountsAvailable(shop)) ? [{ type: 'discount', code: 'STAY20' }] : []
    assert.deepEqual(listed.json, { data: [{ type: 'pause', days: 30 }, { type: 'skip' }, ...discount] })

    assert.equal((await act(t.app, shop.auth, sub.id, 'skip')).statusCode, 200)
    assert.deepEqual((await offers(portal, sub.id)).json, { data: [{ type: 'pause', days: 30 }, ...discount] }, 'no skip of a renewal already skipped')
    assert.equal((await act(t.app, shop.auth, sub.id, 'pause')).statusCode, 200)
    assert.deepEqual((await offers(portal, sub.id)).json, { data: discount }, 'neither pause nor skip for a paused subscription')

    const { sub: ending, portal: endingPortal } = await subscriberOf(shop)
    assert.equal((await act(t.app, shop.auth, ending.id, 'cancel', { at_period_end: true })).statusCode, 200)
    assert.deepEqual((await offers(endingPortal, ending.id)).json, { data: [] })

    // Another subscriber's subscription is not found.
    assertProblem(await offers(endingPortal, sub.id), 404, 'not_found')
    assertProblem(await accept(endingPortal, sub.id, 'skip'), 404, 'not_found')
  })

  test('a retention skip instead of a cancel: the renewal is skipped, nothing charged, the subscription stays, and the save is recorded', async () => {
    const shop = await configuredShop()
    const { sub, portal } = await subscriberOf(shop)
    const response = await accept(portal, sub.id, 'skip')
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json.status, 'active')
    assert.equal(response.json.skip_next, true)

    const types = (await storedEvents(t.db, sub.id)).map((event) => event.event_type)
    assert.deepEqual(types.slice(-2), ['subscription.skipped', 'subscription.retention_accepted'])
    const [save, ...more] = await saves(sub.id)
    assert.equal(more.length, 0)
    assert.equal(save!.store_id, shop.store.id)
    assert.equal(save!.offer_type, 'skip')
    assert.deepEqual(save!.offer, { type: 'skip' })
    assert.equal(save!.actor, 'subscriber')
    assert.equal(save!.occurred_at.toISOString(), START, 'on the store clock')

    // Taking it again does not apply any more; nothing more is recorded.
    assertProblem(await accept(portal, sub.id, 'skip'), 409, 'invalid_state')
    assert.equal((await saves(sub.id)).length, 1)

    // The skipped renewal passes without a charge; the next one is charged.
    assert.equal((await advance(shop, '2026-02-10T09:00:00.000Z')).renewals, 1)
    const after = await getSubscription(t.app, shop.auth, sub.id)
    assert.equal(after.status, 'active')
    assert.equal(after.skip_next, false)
    assert.equal(after.next_charge_at, '2026-03-10T09:00:00.000Z')
    const listed = await call(t.app, { method: 'GET', url: `/api/v1/admin/charges?subscription_id=${sub.id}`, headers: shop.auth })
    assert.deepEqual(listed.json.data, [])
  })

  test('a retention pause pauses for the offered days and resumes by itself', async () => {
    const shop = await configuredShop()
    const { sub, portal } = await subscriberOf(shop)
    const response = await accept(portal, sub.id, 'pause')
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json.status, 'paused')
    assert.equal(response.json.resume_at, '2026-02-09T09:00:00.000Z')
    const [save] = await saves(sub.id)
    assert.deepEqual(save!.offer, { type: 'pause', days: 30 })
    assert.equal((await advance(shop, '2026-02-09T09:00:00.000Z')).resumptions, 1)
    assert.equal((await getSubscription(t.app, shop.auth, sub.id)).status, 'active')
  })

  test('an offer the store does not make is 404 and an unknown type 404, nothing recorded', async () => {
    const shop = await createShopWithPlan(t, { clockAt: START })
    assert.equal((await patchStore(shop, { retention_offers: [{ type: 'skip' }] })).statusCode, 200)
    const { sub, portal } = await subscriberOf(shop)
    assertProblem(await accept(portal, sub.id, 'pause'), 404, 'not_found')
    assertProblem(await accept(portal, sub.id, 'discount'), 404, 'not_found')
    assertProblem(await accept(portal, sub.id, 'refund'), 404, 'not_found')
    assert.equal((await saves(sub.id)).length, 0)
    assert.equal((await getSubscription(t.app, shop.auth, sub.id)).version, sub.version)
  })

  test('the discount offer applies its code through the discounts module, marked as a save (409 where codes cannot be applied)', async () => {
    const shop = await createShopWithPlan(t, { clockAt: START })
    assert.equal((await patchStore(shop, { retention_offers: [{ type: 'discount', code: 'STAY20' }] })).statusCode, 200)
    const { sub, portal } = await subscriberOf(shop)
    if (!(await discountsAvailable(shop))) {
      const refused = await accept(portal, sub.id, 'discount')
      assertProblem(refused, 409, 'invalid_state')
      assert.match(refused.json.detail, /discount/)
      assert.equal((await saves(sub.id)).length, 0)
      return
    }
    // The code does not exist yet: the discounts module's own refusal, nothing recorded.
    const unknown = await accept(portal, sub.id, 'discount')
    assert.ok(unknown.statusCode >= 400 && unknown.statusCode < 500, unknown.body)
    assert.equal(unknown.json.code, 'discount_not_found')
    assert.equal((await saves(sub.id)).length, 0)

    const created = await call(t.app, {
      method: 'POST',
      url: '/api/v1/admin/discounts',
      headers: shop.auth,
      payload: { code: 'stay20', type: 'percentage', value: 20, duration: 'repeating', duration_in_cycles: 2 },
    })
    assert.equal(created.statusCode, 201, created.body)
    const response = await accept(portal, sub.id, 'discount')
    assert.equal(response.statusCode, 200, response.body)
    assert.equal(response.json.discount.code, 'stay20')
    const types = (await storedEvents(t.db, sub.id)).map((event) => event.event_type)
    assert.deepEqual(types.slice(-2), ['subscription.discount_applied', 'subscription.retention_accepted'])
    const [save] = await saves(sub.id)
    assert.deepEqual(save!.offer, { type: 'discount', code: 'STAY20' })
    // Taken: it no longer applies.
    assert.deepEqual((await offers(portal, sub.id)).json, { data: [] })
    assertProblem(await accept(portal, sub.id, 'discount'), 409, 'invalid_state')
    // The renewal is charged with it.
    assert.equal((await advance(shop, '2026-02-10T09:00:00.000Z')).renewals, 1)
    const charged = await call(t.app, { method: 'GET', url: `/api/v1/admin/charges?subscription_id=${sub.id}`, headers: shop.auth })
    assert.equal(charged.json.data[0].amount, 1200)
  })
})
