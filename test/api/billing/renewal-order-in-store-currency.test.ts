/**
 * A defect a review found (now fixed; this test keeps it fixed), as the review described it:
 *
 * Review of issue 14 (renewal orders). A v2 order takes no currency: the platform prices it in the
 * store's currency (`currency_code` is read-only, docs/platform-api.md §11 row 5). The gateway sends
 * the charge's amount as decimal major units of the *charge's* currency and never compares it with
 * the currency the platform answers for the order (`currency_code` on the created order, or the
 * PAT's `currency`). A plan in JPY on a USD store (or a store whose `currency` setting differs from
 * the BigCommerce store's) renews ¥1,200 as $1,200.00.
 */
import assert from 'node:assert/strict'
import { after, before, describe, test } from 'node:test'
import { createPlatformGateway, type ChargeRequest, type RenewalOrder } from '../../../src/modules/billing/gateways/index.ts'
import { createPlatformClient, type PlatformClient } from '../../../src/modules/platform/index.ts'
import { startBigCommerceSimulator, type BigCommerceSimulator } from '../../helpers/bigcommerce-simulator.ts'

const HASH = 'currencyrev'
const TOKEN = 'store-token-SECRET-5150'

describe('a renewal order is priced in the platform store\'s currency, whatever the charge\'s', () => {
  let sim: BigCommerceSimulator
  let client: PlatformClient
  let card: string

  before(async () => {
    sim = await startBigCommerceSimulator()
    sim.addStore({ hash: HASH, accessToken: TOKEN, currency: 'USD' })
    sim.addProduct(HASH, { id: 77, name: 'Green tea', price: 8 })
    card = sim.addCustomer(HASH, { id: 11, email: 'jane@example.com', instruments: [{}] }).instruments[0]!.token
    client = createPlatformClient({ apiUrl: sim.apiUrl, paymentsUrl: sim.paymentsUrl, timeoutMs: 2_000, rateLimitBudgetMs: 1_000 })
  })
  after(async () => {
    await client.close()
    await sim.close()
  })

  test('a ¥1,200 renewal on a USD store is not paid as $1,200.00', async () => {
    const gateway = createPlatformGateway({ client, accessOf: async () => ({ storeHash: HASH, accessToken: TOKEN }) })
    const charge: ChargeRequest = {
      idempotencyKey: 'sub_cur1:2026-03-01T00:00:00.000Z:1', storeId: 'store_cur', subscriptionId: 'sub_cur1',
      amount: 1200, currency: 'JPY', paymentInstrumentId: card, description: 'renewal',
    }
    const order: RenewalOrder = {
      platformProductId: '77', platformVariantId: null, quantity: 1, unitAmount: 1200, subtotal: 1200, discountAmount: 0, shipping: { amount: 0, method: null }, amount: 1200, currency: 'JPY', email: 'jane@example.com',
      platformCustomerId: '11', billingAddress: { name: 'Jane Doe', line1: '1 Main Street', city: 'Austin', postal_code: '78751', country: 'US' }, shippingAddress: null,
    }
    const made = await gateway.createOrder!(charge, order)
    let outcome
    if (made.status === 'created') {
      charge.orderId = made.orderId
      outcome = await gateway.charge(charge)
    }
    const paidOrders = sim.orders(HASH).filter((o) => o.successful_payments > 0)
    assert.deepEqual(
      paidOrders.map((o) => ({ currency: o.currency_code, total: o.total_inc_tax / 10_000 })),
      [],
      `a JPY charge was paid through a ${paidOrders[0]?.currency_code} order (outcome ${JSON.stringify(outcome)})`,
    )
  })
})
