import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlan, createProduct } from '../../helpers/catalog.ts'
import { assertProblem } from '../../helpers/problem.ts'
import { buildTestApp, call, createStoreWithKey, type StoreWithKey, type TestApp } from '../../helpers/test-app.ts'
import { checkout, checkoutBody, nextEmail, OTHER_ADDRESS, postCheckout } from './fixtures.ts'

/**
 * A subscriber is who they are on the platform (docs/contract.md, Subscriber identity): checkouts find
 * the subscriber by platform customer id first, and a checkout or order whose email is a subscriber of
 * another platform customer never changes that subscriber (409, nothing written). Before, a shopper's
 * email re-pointed the subscriber, name and address to the shopper's customer, and renewals and
 * instrument checks ran against it.
 */
describe('subscriber identity', () => {
  let t: TestApp
  let shop: StoreWithKey
  let planId: string

  before(async () => {
    t = await buildTestApp()
    shop = await createStoreWithKey(t.db)
    const product = await createProduct(t.app, shop.auth)
    planId = (await createPlan(t.app, shop.auth, product.id)).id
  })
  after(() => t.close())

  const subscriberOf = async (subscriptionId: string) => {
    const read = await call(t.app, { method: 'GET', url: `/api/v1/admin/subscriptions/${subscriptionId}`, headers: shop.auth })
    assert.equal(read.statusCode, 200, read.body)
    const { updated_at: _, ...subscriber } = read.json.subscriber
    return subscriber as { id: string; email: string; name: string | null; shipping_address: unknown; platform_customer_id: string | null }
  }

  test('an email of another platform customer\'s subscriber is refused (409) and changes nothing of them', async () => {
    const email = nextEmail('ada')
    const [ada] = await checkout(t.app, shop.auth, checkoutBody(planId, { email, name: 'Ada Lovelace', platform_customer_id: 11 }))
    const before = await subscriberOf(ada.id)
    assert.equal(before.platform_customer_id, '11', 'admin reads show who the subscriber is on the platform')

    const intruder = await postCheckout(t.app, shop.auth, checkoutBody(planId, { email, name: 'Mallory', shipping_address: OTHER_ADDRESS, platform_customer_id: 22 }))
    assertProblem(intruder, 409, 'conflict')
    assert.match(intruder.json.detail, /another platform customer/)
    const after = await subscriberOf(ada.id)
    assert.deepEqual(after, before, 'name, address and customer unchanged')
    const subscriptions = await t.db.selectFrom('subscriptions').select('id').where('subscriber_id', '=', before.id).execute()
    assert.equal(subscriptions.length, 1, 'nothing of the refused order was written')
  })

  test('the same platform customer under another email is the same subscriber (found by customer id); their email stays', async () => {
    const email = nextEmail('grace')
    const [first] = await checkout(t.app, shop.auth, checkoutBody(planId, { email, name: 'Grace Hopper', platform_customer_id: 33 }))
    const [second] = await checkout(t.app, shop.auth, checkoutBody(planId, { email: nextEmail('grace.new'), name: 'Grace B. Hopper', platform_customer_id: 33 }))
    const a = await subscriberOf(first.id)
    const b = await subscriberOf(second.id)
    assert.equal(b.id, a.id)
    assert.deepEqual([b.email, b.name, b.platform_customer_id], [email, 'Grace B. Hopper', '33'])
  })

  test('a checkout naming no customer, or the subscriber\'s own, goes to the subscriber of that email; a subscriber without a customer takes the first one named', async () => {
    const email = nextEmail('linus')
    const [first] = await checkout(t.app, shop.auth, checkoutBody(planId, { email }))
    assert.equal((await subscriberOf(first.id)).platform_customer_id, null)
    const [second] = await checkout(t.app, shop.auth, checkoutBody(planId, { email, platform_customer_id: 44 }))
    assert.equal((await subscriberOf(second.id)).id, (await subscriberOf(first.id)).id)
    assert.equal((await subscriberOf(first.id)).platform_customer_id, '44')
    const [third] = await checkout(t.app, shop.auth, checkoutBody(planId, { email }))
    assert.equal((await subscriberOf(third.id)).platform_customer_id, '44', 'a checkout naming no customer does not clear it')
    assertProblem(await postCheckout(t.app, shop.auth, checkoutBody(planId, { email, platform_customer_id: 45 })), 409, 'conflict')
  })

  test('a gift to a subscriber who is a platform customer, or a checkout naming no customer, adds its subscription without rewriting their name or address', async () => {
    const email = nextEmail('ada.gifted')
    const [own] = await checkout(t.app, shop.auth, checkoutBody(planId, { email, name: 'Ada Lovelace', platform_customer_id: 61 }))
    const before = await subscriberOf(own.id)
    const [gift] = await checkout(t.app, shop.auth, checkoutBody(planId, { email: nextEmail('gifter'), platform_customer_id: 62, shipping_address: OTHER_ADDRESS, gift: { recipient_email: email, message: 'Enjoy' } }))
    const [anonymous] = await checkout(t.app, shop.auth, checkoutBody(planId, { email, name: 'Mallory', shipping_address: OTHER_ADDRESS }))
    for (const added of [gift, anonymous]) assert.deepEqual(await subscriberOf(added.id), before)
  })
})
