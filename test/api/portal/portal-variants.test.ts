import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import type { RenewalEngine } from '../../../src/modules/billing/index.ts'
import type { BigCommerceSimulator } from '../../helpers/bigcommerce-simulator.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { startPlatformHarness, type PlatformHarness } from '../../helpers/platform-harness.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { call, createStoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { OTHER_ADDRESS, checkout, checkoutBody } from '../subscriptions/fixtures.ts'

/**
 * The portal offers the variants of a subscription's product (docs/contract.md, Renewal pricing,
 * "Variants in the portal"), through the BigCommerce simulator: `GET .../variants` lists what the
 * store's catalogue lists now (labels from the options, purchasable, current), and a subscriber's swap
 * on the current plan changes only the variant, to a purchasable one the platform lists, checked
 * live before anything changes. The next renewal's order carries the new variant at the
 * subscription's own price.
 */

const CUSTOMER_ID = 12
const OTHER_CUSTOMER_ID = 13
// Beans by grind and size; espresso grind is no longer sold; a sampler has no options.
const BEANS = 90
const WHOLE = 901
const GROUND = 902
const ESPRESSO = 903
const SAMPLER = 904
// A mug without variants (its base variant only), and tea whose variants belong to another product.
const MUG = 91
const TEA = 92
const TEA_LOOSE = 921
const TEA_BAGS = 922
// Many variants: more than one page of 250.
const SOCKS = 93
const SOCK_VARIANTS = Array.from({ length: 260 }, (_, index) => 5000 + index)

const option = (id: number, optionId: number, name: string, label: string) => ({ id, label, option_id: optionId, option_display_name: name })

describe('the portal offers the product\'s variants', () => {
  let h: PlatformHarness
  let sim: BigCommerceSimulator
  let t: TestApp
  let engineAt: (at: string) => RenewalEngine
  let seq = 0

  before(async () => {
    h = await startPlatformHarness()
    ;({ sim, t } = h)
    engineAt = h.engineAt
  })
  after(() => h?.close())

  /** A live store of its own on the simulator with the beans, the mug, the tea and the socks, and one customer's card. */
  async function liveStore() {
    const hash = `variants${process.pid}x${++seq}`
    const shop = await h.connectedStore(hash)
    sim.addProduct(hash, {
      id: BEANS,
      name: 'Beans',
      price: 9.99,
      type: 'physical',
      variants: [
        { id: WHOLE, sku: 'BEANS-WHOLE-1KG', option_values: [option(1, 10, 'Grind', 'Whole'), option(3, 11, 'Size', '1 kg')] },
        // Dearer in the catalogue: the subscription's price is what renewals are ordered at.
        { id: GROUND, sku: 'BEANS-GROUND-1KG', price: 14.99, option_values: [option(2, 10, 'Grind', 'Ground'), option(3, 11, 'Size', '1 kg')] },
        { id: ESPRESSO, sku: 'BEANS-ESPRESSO-1KG', purchasing_disabled: true, option_values: [option(4, 10, 'Grind', 'Espresso'), option(3, 11, 'Size', '1 kg')] },
        { id: SAMPLER, sku: 'BEANS-SAMPLER' },
      ],
    })
    sim.addProduct(hash, { id: MUG, name: 'Mug', price: 5, type: 'physical' })
    sim.addProduct(hash, { id: TEA, name: 'Tea', price: 6, type: 'physical', variants: [{ id: TEA_LOOSE, option_values: [option(5, 12, 'Form', 'Loose')] }, { id: TEA_BAGS, option_values: [option(6, 12, 'Form', 'Bags')] }] })
    sim.addProduct(hash, { id: SOCKS, name: 'Socks', price: 4, type: 'physical', variant_ids: SOCK_VARIANTS })
    const [card] = sim.addCustomer(hash, { id: CUSTOMER_ID, email: 'ada@example.com', instruments: [{}] }).instruments.map((instrument) => instrument.token)
    // Another subscriber is another platform customer, with a card of their own.
    const [otherCard] = sim.addCustomer(hash, { id: OTHER_CUSTOMER_ID, email: 'grace@example.com', instruments: [{}] }).instruments.map((instrument) => instrument.token)
    const planOf = async (platformProductId: number, name: string) => {
      const product = await createProduct(t.app, shop.auth, { platform_product_id: String(platformProductId), name })
      return { product: product.id as string, plan: (await createPlan(t.app, shop.auth, product.id, { amount: 1250 })).id as string }
    }
    const beans = await planOf(BEANS, 'Beans')
    const plans = {
      beans: beans.plan,
      mug: (await planOf(MUG, 'Mug')).plan,
      socks: (await planOf(SOCKS, 'Socks')).plan,
      // Another plan of the same beans, dearer.
      dearerBeans: (await createPlan(t.app, shop.auth, beans.product, { amount: 2000, name: 'Beans, large' })).id as string,
    }
    return { hash, shop, plans, card: card!, otherCard: otherCard! }
  }

  async function subscribe(s: Awaited<ReturnType<typeof liveStore>>, planId: string, variant?: number, who: 'ada' | 'another customer' = 'ada') {
    const body = checkoutBody(planId, {
      payment_instrument_id: who === 'ada' ? s.card : s.otherCard,
      platform_customer_id: who === 'ada' ? CUSTOMER_ID : OTHER_CUSTOMER_ID,
      // In Virginia: the platform's checkout needs a state to ship to in the US.
      shipping_address: OTHER_ADDRESS,
      billing_address: OTHER_ADDRESS,
      items: [{ plan_id: planId, quantity: 1, ...(variant === undefined ? {} : { platform_variant_id: variant }) }],
    })
    const [subscription] = await checkout(t.app, s.shop.auth, body)
    const portal = await signInSubscriber(t.app, t.db, s.shop.store.id, subscription.subscriber_id)
    return { ...(subscription as { id: string; subscriber_id: string; plan_id: string; next_charge_at: string }), portal }
  }

  const variantsOf = (portal: { auth: Record<string, string> }, id: string) => call(t.app, { method: 'GET', url: `/api/v1/portal/subscriptions/${id}/variants`, headers: portal.auth })
  const portalSwap = (portal: { auth: Record<string, string> }, id: string, body: Record<string, unknown>) =>
    call(t.app, { method: 'POST', url: `/api/v1/portal/subscriptions/${id}/swap`, headers: portal.auth, payload: body })
  const variantReads = (hash: string, since: number) => sim.requests.slice(since).filter((r) => r.url.includes(`/stores/${hash}/`) && r.operation === 'getProductVariants')
  const variantRow = async (id: string) => (await t.db.selectFrom('subscriptions').select(['platform_variant_id', 'plan_id', 'amount']).where('id', '=', id).executeTakeFirstOrThrow())

  test('the list: every variant the catalogue lists, its options as words (the sku without options), purchasable, the current one marked', async () => {
    const s = await liveStore()
    const sub = await subscribe(s, s.plans.beans, WHOLE)
    const since = sim.requests.length
    const listed = await variantsOf(sub.portal, sub.id)
    assert.equal(listed.statusCode, 200, listed.body)
    assert.deepEqual(listed.json, {
      object: 'list',
      data: [
        { platform_variant_id: String(WHOLE), sku: 'BEANS-WHOLE-1KG', label: 'Grind: Whole, Size: 1 kg', purchasable: true, current: true },
        { platform_variant_id: String(GROUND), sku: 'BEANS-GROUND-1KG', label: 'Grind: Ground, Size: 1 kg', purchasable: true, current: false },
        { platform_variant_id: String(ESPRESSO), sku: 'BEANS-ESPRESSO-1KG', label: 'Grind: Espresso, Size: 1 kg', purchasable: false, current: false },
        { platform_variant_id: String(SAMPLER), sku: 'BEANS-SAMPLER', label: 'BEANS-SAMPLER', purchasable: true, current: false },
      ],
    })
    const reads = variantReads(s.hash, since)
    assert.equal(reads.length, 1)
    assert.match(reads[0]!.url, new RegExp(`/v3/catalog/products/${BEANS}/variants\\?page=1&limit=250$`))

    // Another subscriber's subscription is not found, like every portal route.
    const other = await subscribe(s, s.plans.beans, GROUND, 'another customer')
    assertProblem(await variantsOf(other.portal, sub.id), 404, 'not_found')
    assert.deepEqual(sim.violations, [])
  })

  test('nothing to choose: a product with only its base variant, a store on the test gateway; a product with many variants is read page by page', async () => {
    const s = await liveStore()
    const mug = await subscribe(s, s.plans.mug)
    const base = await variantsOf(mug.portal, mug.id)
    assert.equal(base.statusCode, 200, base.body)
    assert.deepEqual(base.json, { object: 'list', data: [] }, 'the base variant alone is nothing to choose')

    const socks = await subscribe(s, s.plans.socks)
    const since = sim.requests.length
    const many = await variantsOf(socks.portal, socks.id)
    assert.equal(many.statusCode, 200, many.body)
    assert.deepEqual(many.json.data.map((variant: { platform_variant_id: string }) => Number(variant.platform_variant_id)), SOCK_VARIANTS)
    assert.equal(many.json.data[0].label, `SKU-${SOCKS}-${SOCK_VARIANTS[0]}`, 'no options: the sku')
    assert.deepEqual(variantReads(s.hash, since).map((r) => new URL(r.url, sim.origin).searchParams.get('page')), ['1', '2'])

    // A test-mode store on the test gateway, not connected: its product names a platform product, yet nothing is asked.
    const testShop = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, testShop.auth, { platform_product_id: String(BEANS) })
    const plan = (await createPlan(t.app, testShop.auth, product.id)).id
    const [sub] = await checkout(t.app, testShop.auth, checkoutBody(plan, { items: [{ plan_id: plan, quantity: 1, platform_variant_id: WHOLE }] }))
    const portal = await signInSubscriber(t.app, t.db, testShop.store.id, sub.subscriber_id)
    const before = sim.requests.length
    const listed = await variantsOf(portal, sub.id)
    assert.equal(listed.statusCode, 200, listed.body)
    assert.deepEqual(listed.json, { object: 'list', data: [] })
    assertProblem(await portalSwap(portal, sub.id, { plan_id: plan, platform_variant_id: GROUND }), 400, 'validation_failed', { path: '/body/platform_variant_id' })
    assert.equal(sim.requests.length, before, 'the platform is not asked for a test-gateway store')
    assert.deepEqual(sim.violations, [])
  })

  test("a subscriber changes to a listed variant: 200, only the variant changes, and the next renewal's order carries it at the subscription's price", async () => {
    const s = await liveStore()
    const sub = await subscribe(s, s.plans.beans, WHOLE)
    const since = sim.requests.length
    const swapped = await portalSwap(sub.portal, sub.id, { plan_id: sub.plan_id, platform_variant_id: String(GROUND) })
    assert.equal(swapped.statusCode, 200, swapped.body)
    assert.deepEqual([swapped.json.plan_id, swapped.json.platform_variant_id, swapped.json.amount, swapped.json.next_charge_at], [s.plans.beans, String(GROUND), 1250, sub.next_charge_at])
    assert.equal(variantReads(s.hash, since).length, 1, 'checked against the catalogue, once')
    const listed = await variantsOf(sub.portal, sub.id)
    assert.deepEqual(listed.json.data.filter((variant: { current: boolean }) => variant.current).map((variant: { platform_variant_id: string }) => variant.platform_variant_id), [String(GROUND)])
    const events = (await call(t.app, { method: 'GET', url: '/api/v1/admin/events?event_type=subscription.swapped', headers: s.shop.auth })).json.data
    assert.ok(events.some((event: any) => event.data.id === sub.id && event.data.platform_variant_id === String(GROUND)), 'subscription.swapped carries the new variant')

    // The same variant again changes nothing, and the platform is not asked.
    const again = sim.requests.length
    assertProblem(await portalSwap(sub.portal, sub.id, { plan_id: sub.plan_id, platform_variant_id: GROUND }), 409, 'invalid_state')
    assert.equal(variantReads(s.hash, again).length, 0)

    await engineAt(sub.next_charge_at).runDue({ storeId: s.shop.store.id })
    const charge = await t.db.selectFrom('charges').selectAll().where('subscription_id', '=', sub.id).executeTakeFirstOrThrow()
    assert.equal(charge.status, 'succeeded', JSON.stringify(sim.violations))
    const order = sim.orders(s.hash).find((candidate) => String(candidate.id) === charge.platform_order_id)
    assert.ok(order, 'the renewal order')
    assert.deepEqual(order.products.map((line) => [line.product_id, line.variant_id, line.quantity, line.price_ex_tax]), [[BEANS, GROUND, 1, 125_000]], "the new variant, at the subscription's price (12.50), not the catalogue's")
    assert.deepEqual(sim.violations, [])
  })

  test('refused with 400 at /body/platform_variant_id, nothing changed: an unknown variant, one of another product, one not for sale, another plan, none', async () => {
    const s = await liveStore()
    const sub = await subscribe(s, s.plans.beans, WHOLE)
    const refusals: [string, Record<string, unknown>, RegExp][] = [
      ['an unknown variant', { plan_id: sub.plan_id, platform_variant_id: 999_999 }, /is not one of this product's variants/],
      ['a variant of another product', { plan_id: sub.plan_id, platform_variant_id: TEA_LOOSE }, /is not one of this product's variants/],
      ['a variant the store no longer sells', { plan_id: sub.plan_id, platform_variant_id: ESPRESSO }, /is not for sale/],
      ['another plan', { plan_id: s.plans.dearerBeans, platform_variant_id: GROUND }, /can only be changed on the current plan/],
      ['no variant', { plan_id: sub.plan_id, platform_variant_id: null }, /must name one of the product's variants/],
    ]
    for (const [what, body, words] of refusals) {
      const refused = await portalSwap(sub.portal, sub.id, body)
      assertProblem(refused, 400, 'validation_failed', { path: '/body/platform_variant_id', what })
      assert.match(refused.json.errors[0].message, words, what)
    }
    assert.deepEqual(await variantRow(sub.id), { platform_variant_id: String(WHOLE), plan_id: s.plans.beans, amount: 1250 })

    // Another subscriber cannot change it: not found.
    const other = await subscribe(s, s.plans.beans, GROUND, 'another customer')
    assertProblem(await portalSwap(other.portal, sub.id, { plan_id: sub.plan_id, platform_variant_id: GROUND }), 404, 'not_found')

    // The merchant's swap is unchanged: any variant, any plan, without asking the platform.
    const since = sim.requests.length
    const admin = await call(t.app, { method: 'POST', url: `/api/v1/admin/subscriptions/${sub.id}/swap`, headers: s.shop.auth, payload: { plan_id: sub.plan_id, platform_variant_id: ESPRESSO } })
    assert.equal(admin.statusCode, 200, admin.body)
    assert.equal(admin.json.platform_variant_id, String(ESPRESSO))
    assert.equal(variantReads(s.hash, since).length, 0)
    assert.deepEqual(sim.violations, [])
  })

  test('the platform cannot answer (503, a 429 past the wait): 503 platform_unavailable from the list and the swap, nothing changed', async () => {
    const s = await liveStore()
    const sub = await subscribe(s, s.plans.beans, WHOLE)

    sim.failNext('getProductVariants', 503, { afterProcessing: false })
    const down = await variantsOf(sub.portal, sub.id)
    assertProblem(down, 503, 'platform_unavailable')
    assert.match(down.json.detail, /BigCommerce answered 503/)

    sim.rateLimitNext(1, { resetMs: 60_000, operation: 'getProductVariants' })
    const limited = await variantsOf(sub.portal, sub.id)
    assertProblem(limited, 503, 'platform_unavailable')
    assert.equal(limited.headers['retry-after'], '60')

    sim.failNext('getProductVariants', 503, { afterProcessing: false })
    assertProblem(await portalSwap(sub.portal, sub.id, { plan_id: sub.plan_id, platform_variant_id: GROUND }), 503, 'platform_unavailable')
    assert.equal((await variantRow(sub.id)).platform_variant_id, String(WHOLE))

    // Back again: listed, and the change goes through.
    assert.equal((await variantsOf(sub.portal, sub.id)).statusCode, 200)
    assert.equal((await portalSwap(sub.portal, sub.id, { plan_id: sub.plan_id, platform_variant_id: GROUND })).statusCode, 200)
    assert.deepEqual(sim.violations, [])
  })
})
