import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, checkout, checkoutBody } from './fixtures.ts'

/**
 * Variants (docs/contract.md, Renewal pricing): a plan may sell one catalog variant; a checkout item
 * takes the variant the shopper bought, else the plan's; a swap moves to the new plan's variant (or
 * keeps the current one while the product stays the same), or to the variant it names, and a swap to
 * the same plan with another variant changes only the variant. What the platform's renewal order then
 * carries: test/api/billing/platform-renewals.test.ts; what a subscriber may change to in the portal:
 * test/api/portal/portal-variants.test.ts.
 */
describe('variants of plans and subscriptions', () => {
  let t: TestApp
  let shop: StoreWithKey
  let productId: string
  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    productId = (await createProduct(t.app, shop.auth)).id
  })
  after(() => t.close())

  const swap = (id: string, body: Record<string, unknown>) => act(t.app, shop.auth, id, 'swap', body)

  test("a plan sells a variant: kept as its digits, read back, changed later; an item without one takes the plan's", async () => {
    const plan = await createPlan(t.app, shop.auth, productId, { platform_variant_id: 501 })
    assert.equal(plan.platform_variant_id, '501')
    const plain = await createPlan(t.app, shop.auth, productId)
    assert.equal(plain.platform_variant_id, null)
    const [bought] = await checkout(t.app, shop.auth, checkoutBody(plan.id, { items: [{ plan_id: plan.id, quantity: 1, platform_variant_id: '503' }] }))
    assert.equal(bought.platform_variant_id, '503', 'the variant the shopper bought')
    const [fallback] = await checkout(t.app, shop.auth, checkoutBody(plan.id))
    assert.equal(fallback.platform_variant_id, '501', "the plan's")
    const changed = await call(t.app, { method: 'PATCH', url: `/api/v1/admin/plans/${plan.id}`, headers: shop.auth, payload: { platform_variant_id: '502' } })
    assert.equal(changed.statusCode, 200, changed.body)
    assert.equal(changed.json.platform_variant_id, '502')
    const again = await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${fallback.id}`, headers: shop.auth })
    assert.equal(again.json.platform_variant_id, '501', 'a subscription keeps its own variant')
    assertProblem(await call(t.app, { method: 'POST', url: '/api/v1/admin/plans', headers: shop.auth, payload: { product_id: productId, name: 'Bad', amount: 100, currency: 'USD', interval: 'month', platform_variant_id: 'large' } }), 400, 'validation_failed')
    assertProblem(await call(t.app, { method: 'POST', url: '/api/v1/admin/plans', headers: shop.auth, payload: { product_id: productId, name: 'Bad', amount: 100, currency: 'USD', interval: 'month', platform_variant_id: 0 } }), 400, 'validation_failed')
  })

  test('a swap to the same plan with another variant changes only the variant; the same variant again is refused', async () => {
    const plan = await createPlan(t.app, shop.auth, productId, { platform_variant_id: 501 })
    const [sub] = await checkout(t.app, shop.auth, checkoutBody(plan.id))
    const swapped = await swap(sub.id, { plan_id: plan.id, platform_variant_id: 502 })
    assert.equal(swapped.statusCode, 200, swapped.body)
    assert.deepEqual([swapped.json.plan_id, swapped.json.platform_variant_id, swapped.json.amount, swapped.json.next_charge_at], [plan.id, '502', sub.amount, sub.next_charge_at])
    assertProblem(await swap(sub.id, { plan_id: plan.id, platform_variant_id: '502' }), 409, 'invalid_state')
    assertProblem(await swap(sub.id, { plan_id: plan.id }), 409, 'invalid_state')
    const events = (await call(t.app, { method: 'GET', url: `/api/v1/admin/events?event_type=subscription.swapped`, headers: shop.auth })).json.data
    assert.ok(events.some((event: any) => event.data.id === sub.id && event.data.platform_variant_id === '502'), 'subscription.swapped carries the new variant')
  })

  test("a swap to another plan: its variant, else the current one while the product stays, else none; a named one wins", async () => {
    const withVariant = await createPlan(t.app, shop.auth, productId, { platform_variant_id: 501, name: 'Whole' })
    const sameProduct = await createPlan(t.app, shop.auth, productId, { name: 'Same beans, no variant', amount: 1600 })
    const otherProduct = await createPlan(t.app, shop.auth, (await createProduct(t.app, shop.auth, { name: 'Tea' })).id, { name: 'Tea' })
    const [sub] = await checkout(t.app, shop.auth, checkoutBody(sameProduct.id, { items: [{ plan_id: sameProduct.id, quantity: 1, platform_variant_id: 503 }] }))
    assert.equal((await swap(sub.id, { plan_id: withVariant.id })).json.platform_variant_id, '501', "the new plan's")
    assert.equal((await swap(sub.id, { plan_id: sameProduct.id })).json.platform_variant_id, '501', 'the same product: the current one stays')
    assert.equal((await swap(sub.id, { plan_id: otherProduct.id })).json.platform_variant_id, null, 'another product: none')
    assert.equal((await swap(sub.id, { plan_id: withVariant.id, platform_variant_id: 504 })).json.platform_variant_id, '504', 'named')
    assertProblem(await swap(sub.id, { plan_id: sameProduct.id, platform_variant_id: -3 }), 400, 'validation_failed')
  })

  test("in the portal a variant is named only on the current plan and only from the platform's catalogue (none on a test-gateway store); a swap to a plan that sells one moves them to it", async () => {
    const small = await createPlan(t.app, shop.auth, productId, { platform_variant_id: 501, name: '250 g' })
    const large = await createPlan(t.app, shop.auth, productId, { platform_variant_id: 502, name: '1 kg', amount: 4000 })
    const [sub] = await checkout(t.app, shop.auth, checkoutBody(small.id))
    const portal = await signInSubscriber(t.app, t.db, shop.store.id, sub.subscriber_id)
    const portalSwap = (body: Record<string, unknown>) => call(t.app, { method: 'POST', url: `/api/v1/portal/subscriptions/${sub.id}/swap`, headers: portal.auth, payload: body })
    // The platform's catalogue is what offers variants (test/api/portal/portal-variants.test.ts): a test-gateway store has none to offer.
    const notOffered = await portalSwap({ plan_id: small.id, platform_variant_id: 502 })
    assertProblem(notOffered, 400, 'validation_failed', { path: '/body/platform_variant_id' })
    assert.match(notOffered.json.errors[0].message, /is not offered/)
    const otherPlan = await portalSwap({ plan_id: large.id, platform_variant_id: 501 })
    assertProblem(otherPlan, 400, 'validation_failed', { path: '/body/platform_variant_id' })
    assert.match(otherPlan.json.errors[0].message, /can only be changed on the current plan/)
    const moved = await portalSwap({ plan_id: large.id })
    assert.equal(moved.statusCode, 200, moved.body)
    assert.deepEqual([moved.json.platform_variant_id, moved.json.amount], ['502', 4000], "the plan's variant at the plan's price")
  })
})
