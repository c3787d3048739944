import assert from 'node:assert/strict'
import { sql } from 'kysely'
import { after, before, describe, test } from 'node:test'
import { MAX_AMOUNT, MAX_RENEWAL_AMOUNT } from '../../../src/lib/money.ts'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { signInSubscriber } from '../../helpers/portal.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { act, checkout, checkoutBody, closeTestApp, getSubscription, postCheckout, rowCounts, storedEvents } from './fixtures.ts'
import { assertProblem } from '../../helpers/problem.ts'

type Auth = Record<string, string>
type Response = Awaited<ReturnType<typeof call>>

// 395,256,917 x 253 is 10^11 + 1 exactly: the smallest renewal over the limit, from a price a plan may hold.
const ODD_PRICE = 395_256_917
const ODD_QUANTITY = 253

/**
 * One renewal (price x quantity, before discounts) may charge at most 10^11 minor units: every write
 * that would make it more is 400 `amount_too_large`, naming the field, and writes nothing.
 */
describe('renewal amount limit (400 amount_too_large)', () => {
  let t: TestApp
  let shop: StoreWithKey
  let monthly: any
  let priciest: any
  let odd: any
  let business: any
  let businessPriciest: any

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth)
    monthly = await createPlan(t.app, shop.auth, product.id, { name: 'Monthly', amount: 1500 })
    priciest = await createPlan(t.app, shop.auth, product.id, { name: 'Gold bars', amount: MAX_AMOUNT })
    odd = await createPlan(t.app, shop.auth, product.id, { name: 'Odd price', amount: ODD_PRICE })
    business = await createPlan(t.app, shop.auth, product.id, { name: 'Office coffee', amount: 10_000, b2b: true })
    businessPriciest = await createPlan(t.app, shop.auth, product.id, { name: 'Office gold', amount: MAX_AMOUNT, b2b: true })
  })
  after(() => closeTestApp(t))

  test('the limit is 10^11 and the largest price times 100 reaches it exactly', () => {
    assert.equal(MAX_RENEWAL_AMOUNT, 100_000_000_000)
    assert.equal(MAX_AMOUNT * 100, MAX_RENEWAL_AMOUNT)
    assert.equal(ODD_PRICE * ODD_QUANTITY, MAX_RENEWAL_AMOUNT + 1)
  })

  async function subscribe(plan: any, quantity: number) {
    const [subscription] = await checkout(t.app, shop.auth, checkoutBody(plan.id, { items: [{ plan_id: plan.id, quantity }] }))
    return subscription
  }

  /** A subscriber session for the owner of `subscription`, as the portal's emailed link gives one. */
  const portalAuth = async (subscription: any): Promise<Auth> => (await signInSubscriber(t.app, t.db, shop.store.id, subscription.subscriber_id)).auth
  const portal = (auth: Auth, url: string, payload: Record<string, unknown>) => call(t.app, { method: 'POST', url: `/api/v1/portal${url}`, headers: auth, payload })
  const decide = (id: string, decision: 'approve' | 'reject') =>
    call(t.app, { method: 'POST', url: `/api/v1/admin/change-requests/${id}/${decision}`, headers: shop.auth, payload: {} })

  /** The refusal the contract promises: 400 amount_too_large, the field named, the limit said. */
  function assertTooLarge(response: Response, path: string): void {
    assertProblem(response, 400, 'amount_too_large', { path })
    assert.equal(response.json.errors[0].path, path)
    assert.match(response.json.errors[0].message, /100000000000/, 'the message names the limit')
    assert.match(response.json.detail, /100000000000/)
  }

  /** Runs a write that must be refused as too large, and checks that the subscription, its events and the store's rows are as they were. */
  async function refusedUnchanged(subscription: any, path: string, attempt: () => Promise<Response>): Promise<Response> {
    const before = await getSubscription(t.app, shop.auth, subscription.id)
    const events = await storedEvents(t.db, subscription.id)
    const counts = await rowCounts(t.db, shop.store.id)
    const response = await attempt()
    assertTooLarge(response, path)
    const afterwards = await getSubscription(t.app, shop.auth, subscription.id)
    assert.deepEqual(afterwards, before, 'a refused write changes nothing')
    assert.equal(afterwards.version, before.version)
    assert.equal(afterwards.quantity, before.quantity)
    assert.equal(afterwards.amount, before.amount)
    assert.deepEqual(await storedEvents(t.db, subscription.id), events, 'and records no event')
    assert.deepEqual(await rowCounts(t.db, shop.store.id), counts)
    return response
  }

  describe('checkout', () => {
    test('price x quantity of exactly 10^11 (10^9 x 100) is accepted', async () => {
      const subscription = await subscribe(priciest, 100)
      assert.equal(subscription.amount, MAX_AMOUNT)
      assert.equal(subscription.quantity, 100)
      assert.deepEqual(await getSubscription(t.app, shop.auth, subscription.id), subscription)
    })

    test('10^11 + 1 (395,256,917 x 253) is refused at its item, and nothing of the order is written', async () => {
      const body = checkoutBody([monthly.id, odd.id])
      body.items[1].quantity = ODD_QUANTITY
      const counts = await rowCounts(t.db, shop.store.id)
      const response = await postCheckout(t.app, shop.auth, body)
      assertTooLarge(response, '/body/items/1/quantity')
      assert.deepEqual(await rowCounts(t.db, shop.store.id), counts, 'no subscription, subscriber, checkout or event')
      const subscriber = await t.db.selectFrom('subscribers').select('id').where('store_id', '=', shop.store.id).where('email', '=', body.email).executeTakeFirst()
      assert.equal(subscriber, undefined, 'the buyer did not become a subscriber')
      const claim = await t.db.selectFrom('checkouts').select('platform_order_id').where('store_id', '=', shop.store.id).where('platform_order_id', '=', body.platform_order_id).executeTakeFirst()
      assert.equal(claim, undefined, 'the order was not claimed')
      const subscriptions = await t.db.selectFrom('subscriptions').select('id').where('store_id', '=', shop.store.id).where('platform_order_id', '=', body.platform_order_id).execute()
      assert.deepEqual(subscriptions, [])

      // Sent again it is refused again (not replayed), and the order id is still free for an order that fits.
      assertTooLarge(await postCheckout(t.app, shop.auth, body), '/body/items/1/quantity')
      const fixed = await checkout(t.app, shop.auth, { ...body, items: [body.items[0], { plan_id: odd.id, quantity: ODD_QUANTITY - 1 }] })
      assert.deepEqual(fixed.map((subscription) => subscription.quantity), [1, ODD_QUANTITY - 1])
    })

    test('the largest price at the largest quantity (10^9 x 10,000 = 10^13) is refused', async () => {
      const counts = await rowCounts(t.db, shop.store.id)
      const response = await postCheckout(t.app, shop.auth, checkoutBody(priciest.id, { items: [{ plan_id: priciest.id, quantity: 10_000 }] }))
      assertTooLarge(response, '/body/items/0/quantity')
      assert.deepEqual(await rowCounts(t.db, shop.store.id), counts)
    })

    test('10^9 x 3 = 3 x 10^9, past a 4-byte integer, is accepted and shown back exactly', async () => {
      const subscription = await subscribe(priciest, 3)
      assert.equal(subscription.amount, 1_000_000_000)
      assert.equal(subscription.quantity, 3)
      const read = await getSubscription(t.app, shop.auth, subscription.id)
      assert.deepEqual(read, subscription)
      const listed = await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions?plan_id=${priciest.id}&limit=100`, headers: shop.auth })
      // The list adds the subscriber beside each subscription; the subscription itself is the same.
      const { subscriber, ...item } = listed.json.data.find((row: any) => row.id === subscription.id)
      assert.deepEqual(item, subscription)
      assert.equal(subscriber.id, subscription.subscriber_id)
      const events = await storedEvents(t.db, subscription.id)
      assert.ok(events.length > 0)
      for (const event of events) assert.deepEqual(event.data, subscription, `${event.event_type} carries the exact amounts`)
      // The database multiplies them as the renewal will: 3,000,000,000 does not overflow.
      const { rows } = await sql<{ total: number }>`select amount * quantity as total from subscriptions where id = ${subscription.id}`.execute(t.db)
      assert.equal(rows[0]!.total, 3_000_000_000)
    })
  })

  describe('quantity change', () => {
    test('admin: 10^9 x 101 is refused at /body/quantity; 10^9 x 100 is accepted', async () => {
      const subscription = await subscribe(priciest, 1)
      await refusedUnchanged(subscription, '/body/quantity', () => act(t.app, shop.auth, subscription.id, 'quantity', { quantity: 101 }))
      await refusedUnchanged(subscription, '/body/quantity', () => act(t.app, shop.auth, subscription.id, 'quantity', { quantity: 10_000 }))
      const accepted = await act(t.app, shop.auth, subscription.id, 'quantity', { quantity: 100 })
      assert.equal(accepted.statusCode, 200, accepted.body)
      assert.equal(accepted.json.quantity, 100)
      assert.equal(accepted.json.version, subscription.version + 1)
    })

    test('portal: the subscriber asking for quantity 10,000 is refused and nothing changes', async () => {
      const subscription = await subscribe(priciest, 1)
      const auth = await portalAuth(subscription)
      await refusedUnchanged(subscription, '/body/quantity', () => portal(auth, `/subscriptions/${subscription.id}/quantity`, { quantity: 10_000 }))
      await refusedUnchanged(subscription, '/body/quantity', () => portal(auth, `/subscriptions/${subscription.id}/quantity`, { quantity: 101 }))
    })
  })

  describe('swap', () => {
    test('admin: moving quantity 101 onto a 10^9 plan is refused at /body/plan_id', async () => {
      const subscription = await subscribe(monthly, 101)
      await refusedUnchanged(subscription, '/body/plan_id', () => act(t.app, shop.auth, subscription.id, 'swap', { plan_id: priciest.id }))
    })

    test('portal: the subscriber swapping quantity 10,000 onto an expensive plan is refused and nothing changes', async () => {
      const subscription = await subscribe(monthly, 10_000)
      const auth = await portalAuth(subscription)
      await refusedUnchanged(subscription, '/body/plan_id', () => portal(auth, `/subscriptions/${subscription.id}/swap`, { plan_id: priciest.id }))
      await refusedUnchanged(subscription, '/body/plan_id', () => portal(auth, `/subscriptions/${subscription.id}/swap`, { plan_id: odd.id }))
    })

    test('a swap onto the expensive plan at a quantity that fits is accepted', async () => {
      const subscription = await subscribe(monthly, 100)
      const response = await act(t.app, shop.auth, subscription.id, 'swap', { plan_id: priciest.id })
      assert.equal(response.statusCode, 200, response.body)
      assert.equal(response.json.amount, MAX_AMOUNT)
      assert.equal(response.json.quantity, 100)
    })

    test('a concurrent swap and quantity change, each fine alone, cannot together pass the limit', async () => {
      for (let round = 0; round < 3; round++) {
        // 1,500 x 101 fits and 10^9 x 100 fits; 10^9 x 101 does not.
        const subscription = await subscribe(monthly, 100)
        const [swap, quantity] = await Promise.all([
          act(t.app, shop.auth, subscription.id, 'swap', { plan_id: priciest.id }),
          act(t.app, shop.auth, subscription.id, 'quantity', { quantity: 101 }),
        ])
        const statuses = [swap.statusCode, quantity.statusCode].sort()
        assert.deepEqual(statuses, [200, 400], `one applies, the other is refused: ${swap.body} ${quantity.body}`)
        const refused = swap.statusCode === 400 ? swap : quantity
        assertTooLarge(refused, swap.statusCode === 400 ? '/body/plan_id' : '/body/quantity')
        const final = await getSubscription(t.app, shop.auth, subscription.id)
        assert.equal(final.version, subscription.version + 1)
        assert.ok(final.amount * final.quantity <= MAX_RENEWAL_AMOUNT, `${final.amount} x ${final.quantity}`)
      }
    })
  })

  describe('B2B change requests', () => {
    const propose = (auth: Auth, subscription: any, changes: Record<string, unknown>) =>
      portal(auth, `/subscriptions/${subscription.id}/change-requests`, { changes })

    test('creating a request whose result is too large is refused, naming the field, and no request is written', async () => {
      const subscription = await subscribe(business, 10)
      const auth = await portalAuth(subscription)
      // The plan alone fits at today's quantity (10^9 x 10); with the new quantity it does not.
      await refusedUnchanged(subscription, '/body/changes/quantity', () => propose(auth, subscription, { plan_id: businessPriciest.id, quantity: 101 }))

      const many = await subscribe(business, 101)
      const manyAuth = await portalAuth(many)
      await refusedUnchanged(many, '/body/changes/plan_id', () => propose(manyAuth, many, { plan_id: businessPriciest.id }))
      await refusedUnchanged(many, '/body/changes/plan_id', () => propose(manyAuth, many, { plan_id: businessPriciest.id, quantity: 200 }))

      const gold = await subscribe(businessPriciest, 10)
      const goldAuth = await portalAuth(gold)
      await refusedUnchanged(gold, '/body/changes/quantity', () => propose(goldAuth, gold, { quantity: 10_000 }))

      const fits = await propose(goldAuth, gold, { quantity: 100 })
      assert.equal(fits.statusCode, 201, fits.body)
    })

    test('approving a plan change is refused when the merchant has since raised the quantity; the request stays pending', async () => {
      const subscription = await subscribe(business, 10)
      const auth = await portalAuth(subscription)
      const request = await propose(auth, subscription, { plan_id: businessPriciest.id })
      assert.equal(request.statusCode, 201, request.body)
      const raised = await act(t.app, shop.auth, subscription.id, 'quantity', { quantity: 101 })
      assert.equal(raised.statusCode, 200, raised.body)

      const requestEvents = await storedEvents(t.db, request.json.id)
      await refusedUnchanged(raised.json, '/changes/plan_id', () => decide(request.json.id, 'approve'))
      const pending = await call(t.app, { method: 'GET', url: `/api/v1/admin/change-requests/${request.json.id}`, headers: shop.auth })
      assert.deepEqual(pending.json, request.json, 'the request is still pending, undecided')
      assert.deepEqual(await storedEvents(t.db, request.json.id), requestEvents)
      const rejected = await decide(request.json.id, 'reject')
      assert.equal(rejected.statusCode, 200, rejected.body)
      assert.equal(rejected.json.status, 'rejected')
    })

    test('approving a quantity change is refused when the merchant has since moved it to an expensive plan', async () => {
      const subscription = await subscribe(business, 10)
      const auth = await portalAuth(subscription)
      const request = await propose(auth, subscription, { quantity: 101 })
      assert.equal(request.statusCode, 201, request.body)
      const moved = await act(t.app, shop.auth, subscription.id, 'swap', { plan_id: businessPriciest.id })
      assert.equal(moved.statusCode, 200, moved.body)

      await refusedUnchanged(moved.json, '/changes/quantity', () => decide(request.json.id, 'approve'))
      assert.equal((await call(t.app, { method: 'GET', url: `/api/v1/admin/change-requests/${request.json.id}`, headers: shop.auth })).json.status, 'pending')
    })

    test('approving a request that fits still applies it', async () => {
      const subscription = await subscribe(business, 100)
      const auth = await portalAuth(subscription)
      const request = await propose(auth, subscription, { plan_id: businessPriciest.id })
      assert.equal(request.statusCode, 201, request.body)
      const approved = await decide(request.json.id, 'approve')
      assert.equal(approved.statusCode, 200, approved.body)
      const changed = await getSubscription(t.app, shop.auth, subscription.id)
      assert.equal(changed.amount, MAX_AMOUNT)
      assert.equal(changed.quantity, 100)
    })
  })

  test('the OpenAPI document lists amount_too_large among the problem codes and on 400 answers', async () => {
    const document = (await call(t.app, { method: 'GET', url: '/api/v1/openapi.json' })).json
    assert.ok(document.components.schemas.Problem.properties.code.enum.includes('amount_too_large'))
    const quantity = document.paths['/api/v1/admin/subscriptions/{id}/quantity'].post.responses['400']
    assert.match(quantity.description, /`amount_too_large`/)
  })
})
