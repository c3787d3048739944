/**
 * The BigCommerce renewal gateway against the BigCommerce simulator, which checks every request the
 * way the published reference defines it (docs/platform-api.md). Each case makes a renewal order
 * through the store's checkout and pays it as the renewal engine does: createOrder (the request
 * keeping the cart and the order-request mark as the engine keeps them on the charge), then charge,
 * then lookup when needed.
 */
import assert from 'node:assert/strict'
import { after, before, beforeEach, describe, test } from 'node:test'
import { checkoutPricing, createPlatformGateway, type ChargeRequest, type RenewalOrder } from '../../../src/modules/billing/gateways/index.ts'
import { orderRequestWindowMs } from '../../../src/modules/billing/gateways/platform-gateway.ts'
import { currencyExponent, decimalToMinor, minorToDecimal, paymentOutcome, PAYMENT_ERROR_CODES, refundOutcome, transactionsOutcome } from '../../../src/modules/billing/gateways/platform-outcomes.ts'
import { createPlatformClient, type PlatformClient } from '../../../src/modules/platform/index.ts'
import { startBigCommerceSimulator, type BigCommerceSimulator } from '../../helpers/bigcommerce-simulator.ts'

const HASH = 'gw4store'
const TOKEN = 'store-token-SECRET-6614'

const address = { name: 'Jane Q Doe', line1: '1 Main Street', city: 'Austin', state: 'Texas', postal_code: '78751', country: 'US' }

let sim: BigCommerceSimulator
let client: PlatformClient
let cardToken: string
let foreignToken: string
let keys = 0

function gatewayWith(c: PlatformClient, connected = true) {
  return createPlatformGateway({ client: c, accessOf: async () => (connected ? { storeHash: HASH, accessToken: TOKEN } : undefined) })
}

/**
 * A charge request as the engine makes it: the cart the gateway makes is kept (`cartId`), and so is
 * the moment an order is asked for (`orderRequestedAt`), so asking again finds them.
 */
function chargeRequest(overrides: Partial<ChargeRequest> = {}): ChargeRequest {
  keys += 1
  const request: ChargeRequest = {
    idempotencyKey: `sub_gw${keys}:2026-03-01T00:00:00.000Z:1`,
    storeId: 'store_gw',
    subscriptionId: `sub_gw${keys}`,
    amount: 2500,
    currency: 'USD',
    paymentInstrumentId: cardToken,
    description: 'renewal',
    onCart: async (cartId) => {
      request.cartId = cartId
    },
    onOrderRequest: async () => {
      request.orderRequestedAt = new Date()
    },
    ...overrides,
  }
  return request
}

/** 2 x $12.50 of product 77, nothing to ship, no discount. */
function renewalOrder(overrides: Partial<RenewalOrder> = {}): RenewalOrder {
  return {
    platformProductId: '77',
    platformVariantId: null,
    quantity: 2,
    unitAmount: 1250,
    subtotal: 2500,
    discountAmount: 0,
    shipping: { amount: 0, method: null },
    amount: 2500,
    currency: 'USD',
    email: 'jane@example.com',
    platformCustomerId: '11',
    billingAddress: address,
    shippingAddress: null,
    ...overrides,
  }
}

/** createOrder then charge, as the engine does; the request carries the order id afterwards. */
async function renew(gateway = gatewayWith(client), request = chargeRequest(), order = renewalOrder()) {
  const made = await gateway.createOrder!(request, order)
  assert.equal(made.status, 'created', JSON.stringify(made))
  request.orderId = (made as { orderId: string }).orderId
  const outcome = await gateway.charge(request)
  return { outcome, request, orderId: Number(request.orderId), gateway, made }
}

function operations(since: number) {
  return sim.requests.slice(since).map((r) => `${r.operation} ${r.outcome}`)
}

describe('the BigCommerce renewal gateway, against the simulator', () => {
  before(async () => {
    sim = await startBigCommerceSimulator()
    sim.addStore({ hash: HASH, accessToken: TOKEN })
    sim.addProduct(HASH, { id: 77, name: 'Coffee', price: 99 })
    sim.addProduct(HASH, { id: 78, name: 'Tea', price: 10, variant_ids: [501, 502] })
    cardToken = sim.addCustomer(HASH, { id: 11, email: 'jane@example.com', instruments: [{ brand: 'VISA', last_4: '4242' }] }).instruments[0]!.token
    foreignToken = sim.addCustomer(HASH, { id: 12, instruments: [{ brand: 'MASTERCARD', last_4: '4444' }] }).instruments[0]!.token
    client = createPlatformClient({ apiUrl: sim.apiUrl, paymentsUrl: sim.paymentsUrl, timeoutMs: 2_000, rateLimitBudgetMs: 5_000 })
  })
  beforeEach(() => {
    assert.deepEqual(sim.violations, [], 'no request of the previous case broke the reference')
  })
  after(async () => {
    await client.close()
    await sim.close()
  })

  test('a renewal: a cart and checkout as the reference defines them, the order made from it and tagged, the method holding the card, a recurring PAT, one payment', async () => {
    const since = sim.requests.length
    const { outcome, orderId, request, made } = await renew()
    assert.deepEqual(outcome, { status: 'succeeded', gatewayChargeId: String(orderId) })
    assert.deepEqual(operations(since), [
      'createCart 201', 'addCheckoutBillingAddress 200', 'createCheckoutOrder 200', 'updateOrder 200', 'getPaymentMethods 200', 'createPaymentAccessToken 201', 'PaymentsPost 201',
    ])
    assert.deepEqual((made as { priced: unknown }).priced, { shippingAmount: 0, shippingMethod: null, taxAmount: 0, amount: 2500 })
    const order = sim.order(HASH, orderId)!
    assert.equal(order.cart_id, request.cartId, 'made from the kept cart')
    assert.equal(order.external_order_id, request.idempotencyKey, 'tagged with our key')
    assert.equal(order.external_source, 'subscription-billing')
    assert.equal(order.customer_id, 11)
    assert.equal(order.status_id, 11, 'paid: Awaiting Fulfillment')
    assert.equal(order.billing_address.first_name, 'Jane')
    assert.equal(order.billing_address.last_name, 'Q Doe')
    assert.equal(order.billing_address.zip, '78751')
    assert.equal(order.billing_address.country_iso2, 'US')
    assert.equal(order.total_inc_tax, 250_000, 'price x quantity in decimal units: $25.00 (ten-thousandths)')
    assert.deepEqual(order.products.map((p) => [p.product_id, p.quantity, p.price_inc_tax, p.price_ex_tax]), [[77, 2, 125_000, 125_000]])
    assert.equal(order.successful_payments, 1)
    assert.equal(sim.cart(HASH, request.cartId!), undefined, 'the paid cart is gone')
    assert.deepEqual(sim.doubleCharges(), [])
    assert.deepEqual(sim.violations, [])
  })

  test('the same charge asked again reuses its cart and finds its order instead of raising a second one', async () => {
    const gateway = gatewayWith(client)
    const request = chargeRequest()
    const first = await gateway.createOrder!(request, renewalOrder())
    const created = sim.counters.ordersCreated
    const carts = sim.counters.cartsCreated
    const second = await gateway.createOrder!(request, renewalOrder())
    assert.deepEqual(second, first)
    assert.equal(sim.counters.ordersCreated, created, 'no second order')
    assert.equal(sim.counters.cartsCreated, carts, 'no second cart')
  })

  test('an order whose creation answer was lost is found by its cart, not created again', async () => {
    const created = sim.counters.ordersCreated
    sim.loseNextAnswer('createCheckoutOrder')
    const request = chargeRequest()
    const made = await gatewayWith(client).createOrder!(request, renewalOrder())
    assert.equal(made.status, 'created', JSON.stringify(made))
    assert.equal(sim.counters.ordersCreated, created + 1, 'exactly one order')
    const order = sim.order(HASH, Number((made as { orderId: string }).orderId))!
    assert.equal(order.cart_id, request.cartId)
    assert.equal(order.external_order_id, request.idempotencyKey)
  })

  test('tax and shipping are the store\'s: 2 x $14.00 less $2.80 to Virginia at 5.30% with Ground at $5.99 is $32.53, the charge takes those figures and the order pays them', async () => {
    const hash = 'taxstore'
    const token = 'tax-store-token-SECRET-2207'
    sim.addStore({ hash, accessToken: token })
    sim.addProduct(hash, { id: 77, name: 'Coffee', price: 99, type: 'physical' })
    const card = sim.addCustomer(hash, { id: 11, email: 'jane@example.com', instruments: [{ brand: 'VISA', last_4: '4242' }] }).instruments[0]!.token
    sim.setShippingOptions(hash, [{ description: 'Express', cost: 14.99 }, { description: 'Ground', cost: 5.99 }, { description: 'Pickup point', cost: 3.5 }])
    sim.setTaxRates(hash, [{ country: 'US', rate_bps: 400 }, { country: 'US', state: 'VA', rate_bps: 530 }])
    const gateway = createPlatformGateway({ client, accessOf: async () => ({ storeHash: hash, accessToken: token }) })
    const virginia = { name: 'Grace Hopper', line1: '1 Harbor Road', city: 'Arlington', state: 'VA', postal_code: '22201', country: 'US' }
    const order = (shipping: RenewalOrder['shipping']) =>
      renewalOrder({ unitAmount: 1400, subtotal: 2800, discountAmount: 280, shipping, amount: 2520, shippingAddress: virginia })
    const pay = async (shipping: RenewalOrder['shipping']) => {
      const request = chargeRequest({ paymentInstrumentId: card })
      const made = await gateway.createOrder!(request, order(shipping))
      assert.equal(made.status, 'created', JSON.stringify(made))
      request.orderId = (made as { orderId: string }).orderId
      assert.equal((await gateway.charge(request)).status, 'succeeded')
      return { priced: (made as { priced: unknown }).priced, order: sim.order(hash, Number(request.orderId))! }
    }

    // checkout_rate: the checkout's method by name, its cost matching what the subscription pays.
    const kept = await pay({ amount: 599, method: 'Ground' })
    // Goods 25.20 x 5.30% = 1.3356 -> 1.34 (the state's rate over the country's); shipping untaxed.
    assert.deepEqual(kept.priced, { shippingAmount: 599, shippingMethod: 'Ground', taxAmount: 134, amount: 3253 })
    assert.deepEqual([kept.order.total_inc_tax, kept.order.shipping_cost_inc_tax, kept.order.successful_payments], [325_300, 59_900, 1])

    // requote without a method of that name: the cheapest option, as quoted.
    const requoted = await pay({ amount: null, method: 'Drone' })
    assert.deepEqual(requoted.priced, { shippingAmount: 350, shippingMethod: 'Pickup point', taxAmount: 134, amount: 3004 })

    // flat $4.50: the order is set to ship for the store's rate, and its total follows.
    const flat = await pay({ amount: 450, method: 'Ground' })
    assert.deepEqual(flat.priced, { shippingAmount: 450, shippingMethod: 'Ground', taxAmount: 134, amount: 3104 })
    assert.deepEqual([flat.order.total_inc_tax, flat.order.shipping_cost_ex_tax, flat.order.shipping_cost_inc_tax], [310_400, 45_000, 45_000])

    // A store that taxes shipping: Ground's 5.99 x 5.30% = 0.3175 -> 0.32; free shipping carries no shipping tax.
    sim.setTaxRates(hash, [{ country: 'US', state: 'VA', rate_bps: 530 }], { taxShipping: true })
    const taxedShipping = await pay({ amount: 599, method: 'Ground' })
    assert.deepEqual(taxedShipping.priced, { shippingAmount: 599, shippingMethod: 'Ground', taxAmount: 166, amount: 3285 })
    const free = await pay({ amount: 0, method: 'Ground' })
    assert.deepEqual(free.priced, { shippingAmount: 0, shippingMethod: 'Ground', taxAmount: 134, amount: 2654 })
    assert.deepEqual([free.order.total_inc_tax, free.order.shipping_cost_inc_tax], [265_400, 0])
    assert.deepEqual(sim.doubleCharges(), [])
    assert.deepEqual(sim.violations, [])
  })

  describe('every step of the checkout rides out the platform\'s troubles', () => {
    const hash = 'stepstore'
    const token = 'step-store-token-SECRET-3318'
    let card: string
    let gateway: ReturnType<typeof createPlatformGateway>
    const home = { name: 'Grace Hopper', line1: '1 Harbor Road', city: 'Arlington', state: 'VA', postal_code: '22201', country: 'US' }
    // Every step happens: a physical line shipped, a discount, the store's own rate (so the order is set to it).
    const order = () => renewalOrder({ unitAmount: 1400, subtotal: 2800, discountAmount: 280, shipping: { amount: 450, method: 'Ground' }, amount: 2970, shippingAddress: home })
    // The stock is read first (the product's stock is tracked), then the checkout.
    const STEPS = ['getProducts', 'getInventoryItems', 'createCart', 'addCheckoutBillingAddress', 'addCheckoutConsignment', 'updateCheckoutConsignment', 'addCheckoutDiscount', 'createCheckoutOrder', 'updateOrder', 'getPaymentMethods', 'createPaymentAccessToken', 'PaymentsPost']
    before(() => {
      sim.addStore({ hash, accessToken: token })
      sim.addProduct(hash, { id: 77, name: 'Coffee', price: 99, type: 'physical', inventory_tracking: 'product', inventory_level: 1000 })
      card = sim.addCustomer(hash, { id: 11, email: 'jane@example.com', instruments: [{ brand: 'VISA', last_4: '4242' }] }).instruments[0]!.token
      gateway = createPlatformGateway({ client, accessOf: async () => ({ storeHash: hash, accessToken: token }) })
    })
    /** As the engine does: the stock, the order, the payment. */
    async function renewHere(request: ChargeRequest) {
      const stock = await gateway.checkStock!(request, order())
      if (stock.status !== 'checked') return { made: stock, outcome: undefined }
      assert.deepEqual(stock.short, [])
      const made = await gateway.createOrder!(request, order())
      if (made.status !== 'created') return { made, outcome: undefined }
      request.orderId = made.orderId
      return { made, outcome: await gateway.charge(request) }
    }

    for (const step of STEPS) {
      test(`a 429 at ${step} is waited out: one cart, one order, one payment`, async () => {
        const carts = sim.counters.cartsCreated
        const orders = sim.counters.checkoutOrdersCreated
        sim.rateLimitNext(1, { resetMs: 50, operation: step })
        const { made, outcome } = await renewHere(chargeRequest({ paymentInstrumentId: card }))
        assert.equal(outcome?.status, 'succeeded', JSON.stringify(made))
        assert.deepEqual((made as { priced: unknown }).priced, { shippingAmount: 450, shippingMethod: 'Ground', taxAmount: 0, amount: 2970 })
        assert.deepEqual([sim.counters.cartsCreated - carts, sim.counters.checkoutOrdersCreated - orders], [1, 1])
        assert.deepEqual(sim.doubleCharges(), [])
      })
    }

    for (const step of STEPS.slice(0, 9)) {
      test(`a 503 at ${step} leaves the renewal unknown with nothing paid; asked again, it reuses the cart and pays once`, async () => {
        const carts = sim.counters.cartsCreated
        const orders = sim.counters.checkoutOrdersCreated
        const payments = sim.counters.paymentRequests
        sim.failNext(step, 503, { afterProcessing: false })
        const request = chargeRequest({ paymentInstrumentId: card })
        const first = await renewHere(request)
        assert.equal(first.made.status, 'unknown', JSON.stringify(first.made))
        assert.equal(sim.counters.paymentRequests, payments, 'nothing paid')
        if (step === 'createCheckoutOrder') {
          // The order request went out and no answer came: it may still arrive, so no second one until it cannot.
          assert.equal((await renewHere(request)).made.status, 'unknown', 'waits while the first request may still arrive')
          request.orderRequestedAt = new Date(Date.now() - orderRequestWindowMs(client) - 1)
        }
        const again = await renewHere(request)
        assert.equal(again.outcome?.status, 'succeeded', JSON.stringify(again.made))
        assert.deepEqual([sim.counters.cartsCreated - carts, sim.counters.checkoutOrdersCreated - orders], [1, 1], 'one cart and one order for the renewal')
        assert.equal(sim.order(hash, Number(request.orderId))!.total_inc_tax, 297_000)
        assert.deepEqual(sim.doubleCharges(), [])
      })
    }

    test('a cart made but its answer lost: the next attempt makes another, and the first is never ordered or paid', async () => {
      const carts = sim.counters.cartsCreated
      const orders = sim.counters.checkoutOrdersCreated
      sim.failNext('createCart', 503, { afterProcessing: true })
      const request = chargeRequest({ paymentInstrumentId: card })
      assert.equal((await renewHere(request)).made.status, 'unknown')
      assert.equal(request.cartId, undefined, 'nothing to keep')
      const again = await renewHere(request)
      assert.equal(again.outcome?.status, 'succeeded')
      assert.deepEqual([sim.counters.cartsCreated - carts, sim.counters.checkoutOrdersCreated - orders], [2, 1], 'the lost cart is left unused')
      assert.equal(sim.order(hash, Number(request.orderId))!.cart_id, request.cartId)
    })

    test('an order made but its answer a 503: found by its cart at once, paid once', async () => {
      const orders = sim.counters.checkoutOrdersCreated
      sim.failNext('createCheckoutOrder', 503, { afterProcessing: true })
      const request = chargeRequest({ paymentInstrumentId: card })
      const { made, outcome } = await renewHere(request)
      assert.equal(outcome?.status, 'succeeded', JSON.stringify(made))
      assert.equal(sim.counters.checkoutOrdersCreated - orders, 1)
      assert.deepEqual(sim.doubleCharges(), [])
    })
  })

  test('a platform that prices the lines otherwise is never paid', async () => {
    const request = chargeRequest()
    // The cart holds $12.50 units; a renewal claiming $13.00 units does not match it.
    const made = await gatewayWith(client).createOrder!(request, renewalOrder())
    assert.equal(made.status, 'created')
    const other = await gatewayWith(client).createOrder!({ ...request, orderRequestedAt: undefined, onOrderRequest: undefined }, renewalOrder({ unitAmount: 1300, subtotal: 2600, amount: 2600 }))
    // Not the subscriber's doing: nothing is paid, the charge waits (then for a person), no dunning.
    assert.equal(other.status, 'unknown')
    assert.match((other as { reason: string }).reason, /cart holds 77 x 2 at 1250, not the renewal's 77 x 2 at 1300: nothing was paid/)
  })

  test('the store\'s setup or stock refusing a step is not the subscriber\'s failure: the stock read first; a token without the checkout scopes, an item the cart refuses, a cart the platform dropped leave the renewal unknown with nothing paid; a token without the catalog scopes goes on unchecked', async () => {
    const hash = 'setupstore'
    const token = 'setup-store-token-SECRET-4410'
    sim.addStore({ hash, accessToken: token })
    sim.addProduct(hash, { id: 77, name: 'Coffee', price: 99, type: 'physical', inventory_level: 0, inventory_tracking: 'product' })
    sim.addCustomer(hash, { id: 11, email: 'jane@example.com', instruments: [{}] })
    const gateway = createPlatformGateway({ client, accessOf: async () => ({ storeHash: hash, accessToken: token }) })
    // The stock, read before any cart: the item and the lines that want it (0: the subscription's own).
    const before = sim.requests.length
    const checked = await gateway.checkStock!(chargeRequest(), renewalOrder({ shippingAddress: address }))
    assert.deepEqual(checked, { status: 'checked', short: [{ text: 'Coffee: 0 available, 2 wanted', lines: [0], available: 0 }] })
    assert.deepEqual(operations(before), ['getProducts 200', 'getInventoryItems 200'], 'nothing made')
    // Not read (a store that charges anyway, or stock gone since): the platform's cart refuses the item, nothing made.
    const outOfStock = await gateway.createOrder!(chargeRequest(), renewalOrder({ shippingAddress: address }))
    assert.equal(outOfStock.status, 'unknown', JSON.stringify(outOfStock))
    assert.match((outOfStock as { reason: string }).reason, /422.*nothing was paid/)
    assert.equal((outOfStock as { refused?: string }).refused, 'cart', 'flagged so the engine reads the stock again')

    sim.failNext('createCart', 403, { afterProcessing: false })
    const forbidden = await gatewayWith(client).createOrder!(chargeRequest(), renewalOrder())
    assert.equal(forbidden.status, 'unknown')
    assert.match((forbidden as { reason: string }).reason, /store_cart and store_checkout scopes/)
    // A token without the catalog scope (granted before stock was read): the renewal goes on unchecked, said why.
    sim.failNext('getProducts', 403, { afterProcessing: false })
    const noCatalog = await gatewayWith(client).checkStock!(chargeRequest(), renewalOrder())
    assert.deepEqual([noCatalog.status, (noCatalog as { short: unknown[] }).short], ['checked', []])
    assert.match((noCatalog as { unchecked: string }).unchecked, /reading how the renewal's products track stock: the platform answered 403.*store_v2_products_read_only and store_inventory_read_only/)
    sim.failNext('getInventoryItems', 503, { afterProcessing: false })
    const down = await gateway.checkStock!(chargeRequest(), renewalOrder())
    assert.equal(down.status, 'unknown', 'anything else is asked again later')

    const request = chargeRequest()
    request.onOrderRequest = async () => { throw new Error('stalled') }
    assert.equal((await gatewayWith(client).createOrder!(request, renewalOrder())).status, 'unknown')
    const dropped = await client.call({ storeHash: HASH, accessToken: TOKEN }, { method: 'DELETE', path: `/v3/carts/${request.cartId}` })
    assert.ok(dropped.sent && dropped.answer.statusCode === 204)
    const gone = await gatewayWith(client).createOrder!(request, renewalOrder())
    assert.equal(gone.status, 'unknown')
    assert.match((gone as { reason: string }).reason, /404/)
    // The 404 is the simulator's record of asking for a cart that is gone, which this case provokes on purpose.
    assert.deepEqual(sim.violations.map((v) => [v.operation, v.status]), [['getCheckout', 404]])
    sim.violations.length = 0
  })

  test('a checkout whose total holds more than the goods, the shipping and the tax (a fee, handling) is not paid', async () => {
    const checkout = {
      cart: { currency: { code: 'USD' }, discount_amount: 0, line_items: { physical_items: [{ product_id: 77, quantity: 2, list_price: 12.5 }] } },
      consignments: [],
      shipping_cost_total_ex_tax: 0,
      shipping_cost_total_inc_tax: 0,
      tax_total: 0,
      grand_total: 26,
    }
    const priced = checkoutPricing(checkout, renewalOrder())
    assert.ok('problem' in priced && /fees, handling or prices including tax are not supported/.test(priced.problem), JSON.stringify(priced))
    const exact = checkoutPricing({ ...checkout, tax_total: 1, grand_total: 26 }, renewalOrder())
    assert.deepEqual('pricing' in exact && exact.pricing, { shippingAmount: 0, shippingMethod: null, taxAmount: 100, amount: 2600, override: null })
  })

  test('a product with variants carries the subscription\'s variant', async () => {
    const { outcome, orderId } = await renew(gatewayWith(client), chargeRequest(), renewalOrder({ platformProductId: '78', platformVariantId: '502', unitAmount: 1250 }))
    assert.equal(outcome.status, 'succeeded')
    assert.equal(sim.order(HASH, orderId)!.products[0]!.variant_id, 502)
  })

  test('a renewal the order cannot be raised for fails on our data, before any request', async () => {
    const gateway = gatewayWith(client)
    const since = sim.requests.length
    for (const order of [renewalOrder({ platformCustomerId: null }), renewalOrder({ billingAddress: null }), renewalOrder({ platformProductId: 'abc' })]) {
      const made = await gateway.createOrder!(chargeRequest(), order)
      assert.equal(made.status, 'failed')
    }
    assert.equal(sim.requests.length, since)
    // The shipping address stands in for a missing billing address (and is shipped to).
    const made = await gateway.createOrder!(chargeRequest(), renewalOrder({ billingAddress: null, shippingAddress: address, shipping: { amount: 599, method: 'Ground' }, amount: 3099 }))
    assert.equal(made.status, 'created', JSON.stringify(made))
  })

  for (const [code, failureCode] of [[30102, 'card_declined'], [30104, 'card_declined'], [30103, 'expired_card'], [30106, 'insufficient_funds'], [30051, 'instrument_invalid'], [30001, 'gateway_configuration']] as const) {
    test(`a payment refused with code ${code} fails as ${failureCode}`, async () => {
      sim.declineNextPayment(code)
      const { outcome, orderId } = await renew()
      assert.equal(outcome.status, 'failed')
      assert.equal((outcome as { failureCode: string }).failureCode, failureCode)
      assert.equal(sim.order(HASH, orderId)!.payment_requests, 1)
    })
  }

  for (const code of [10000, 30105]) {
    test(`a payment answered with code ${code} is reconciled, never paid again`, async () => {
      sim.declineNextPayment(code)
      const { outcome, orderId, gateway, request } = await renew()
      assert.equal(outcome.status, 'unknown')
      assert.equal(sim.order(HASH, orderId)!.payment_requests, 1)
      assert.equal(await gateway.lookup(request), undefined, 'no transaction and the order still Incomplete: no trace')
    })
  }

  test('an instrument that is not the order customer\'s fails as instrument_invalid before any payment', async () => {
    const payments = sim.counters.paymentRequests
    const { outcome } = await renew(gatewayWith(client), chargeRequest({ paymentInstrumentId: foreignToken }))
    assert.equal((outcome as { failureCode: string }).failureCode, 'instrument_invalid')
    assert.equal(sim.counters.paymentRequests, payments)
    assert.equal(sim.counters.patsIssued > 0, true)
  })

  test('a lost payment answer is reconciled through the order\'s transactions: one payment, succeeded', async () => {
    sim.loseNextAnswer('PaymentsPost')
    const { outcome, orderId } = await renew()
    assert.deepEqual(outcome, { status: 'succeeded', gatewayChargeId: String(orderId) })
    assert.equal(sim.order(HASH, orderId)!.payment_requests, 1)
  })

  test('a payment answer slower than the timeout is reconciled, not paid again', async () => {
    const slow = createPlatformClient({ apiUrl: sim.apiUrl, paymentsUrl: sim.paymentsUrl, timeoutMs: 500 })
    try {
      sim.holdNextAnswer('PaymentsPost')
      const { outcome, orderId } = await renew(gatewayWith(slow))
      assert.equal(outcome.status, 'succeeded')
      assert.equal(sim.order(HASH, orderId)!.payment_requests, 1)
    } finally {
      sim.releaseHeld()
      await slow.close()
    }
  })

  test('a 5xx after the platform processed the payment is reconciled as paid; one before it stays unknown', async () => {
    sim.failNext('PaymentsPost', 502, { afterProcessing: true })
    const paid = await renew()
    assert.equal(paid.outcome.status, 'succeeded')
    sim.failNext('PaymentsPost', 503, { afterProcessing: false })
    const unpaid = await renew()
    assert.equal(unpaid.outcome.status, 'unknown')
    assert.equal(await unpaid.gateway.lookup(unpaid.request), undefined)
    assert.equal(sim.order(HASH, unpaid.orderId)!.successful_payments, 0)
  })

  test('429s are waited out for as long as the platform asks and never count as a decline', async () => {
    const since = sim.requests.length
    sim.rateLimitNext(3, { resetMs: 150 })
    const started = Date.now()
    const { outcome } = await renew()
    assert.equal(outcome.status, 'succeeded')
    assert.ok(Date.now() - started >= 450, 'waited the reset time each time')
    assert.equal(operations(since).filter((entry) => entry.endsWith(' 429')).length, 3)
  })

  test('a 429 past the wait budget is unknown with nothing paid, and the next attempt pays once', async () => {
    const impatient = createPlatformClient({ apiUrl: sim.apiUrl, paymentsUrl: sim.paymentsUrl, timeoutMs: 2_000, rateLimitBudgetMs: 0 })
    try {
      const gateway = gatewayWith(impatient)
      const request = chargeRequest()
      const made = await gateway.createOrder!(request, renewalOrder())
      request.orderId = (made as { orderId: string }).orderId
      sim.rateLimitNext(1, { resetMs: 1_000, operation: 'createPaymentAccessToken' })
      const limited = await gateway.charge(request)
      assert.equal(limited.status, 'unknown')
      assert.match((limited as { reason: string }).reason, /429/)
      assert.equal(sim.order(HASH, Number(request.orderId))!.payment_requests, 0)
      const retried = await gatewayWith(client).charge(request)
      assert.equal(retried.status, 'succeeded')
      assert.equal(sim.order(HASH, Number(request.orderId))!.successful_payments, 1)
    } finally {
      await impatient.close()
    }
  })

  test('an order already paid is reconciled when the PAT is refused (30101), never paid twice', async () => {
    const { request, orderId, gateway } = await renew()
    const again = await gateway.charge(request)
    assert.equal(again.status, 'succeeded')
    assert.equal(sim.order(HASH, orderId)!.payment_requests, 1)
    assert.deepEqual(sim.doubleCharges(), [])
    // The refused PAT is the simulator's record of the state rule (30101), which this case provokes on purpose.
    assert.deepEqual(sim.violations.map((v) => v.code), [30101])
    sim.violations.length = 0
  })

  test('lookup: paid, pending, and no trace', async () => {
    const paid = await renew()
    assert.deepEqual(await paid.gateway.lookup(paid.request), { status: 'succeeded', gatewayChargeId: String(paid.orderId) })
    sim.nextPaymentPending()
    const pending = await renew()
    assert.equal(pending.outcome.status, 'unknown')
    assert.equal((await pending.gateway.lookup(pending.request))?.status, 'unknown')
    const gateway = gatewayWith(client)
    const request = chargeRequest()
    request.orderId = (await gateway.createOrder!(request, renewalOrder()) as { orderId: string }).orderId
    assert.equal(await gateway.lookup(request), undefined)
  })

  test('onSubmit runs once, after the PAT and before the payment; a throwing one sends nothing', async () => {
    const gateway = gatewayWith(client)
    const order: string[] = []
    const request = chargeRequest({ onSubmit: async () => { order.push(`submit after ${sim.counters.patsIssued} PATs, ${sim.counters.paymentRequests} payments`) } })
    const patsBefore = sim.counters.patsIssued
    const paymentsBefore = sim.counters.paymentRequests
    const { outcome } = await renew(gateway, request)
    assert.equal(outcome.status, 'succeeded')
    assert.deepEqual(order, [`submit after ${patsBefore + 1} PATs, ${paymentsBefore} payments`])

    const refused = chargeRequest({ onSubmit: async () => { throw new Error('lease lost') } })
    const payments = sim.counters.paymentRequests
    const result = await renew(gateway, refused)
    assert.equal(result.outcome.status, 'unknown')
    assert.equal(sim.counters.paymentRequests, payments, 'no payment sent')
  })

  test('onOrderRequest runs once, after the checkout is priced and before the order request; a throwing one requests no order', async () => {
    const gateway = gatewayWith(client)
    const seen: string[] = []
    const since = sim.requests.length
    const request = chargeRequest({ onOrderRequest: async () => { seen.push(operations(since).join(', ')) } })
    const made = await gateway.createOrder!(request, renewalOrder())
    assert.equal(made.status, 'created')
    assert.deepEqual(seen, ['createCart 201, addCheckoutBillingAddress 200'], 'marked once, after pricing and before asking')

    const created = sim.counters.ordersCreated
    const refused = await gateway.createOrder!(chargeRequest({ onOrderRequest: async () => { throw new Error('lease lost') } }), renewalOrder())
    assert.equal(refused.status, 'unknown')
    assert.equal(sim.counters.ordersCreated, created, 'no order requested')
  })

  test('onCart keeps the cart before anything else is done with it; a throwing one leaves the cart unused', async () => {
    const since = sim.requests.length
    const made = await gatewayWith(client).createOrder!(chargeRequest({ onCart: async () => { throw new Error('lease lost') } }), renewalOrder())
    assert.equal(made.status, 'unknown')
    assert.match((made as { reason: string }).reason, /the cart was not kept/)
    assert.deepEqual(operations(since), ['createCart 201'], 'nothing after the cart')
  })

  test("an earlier holder's order request that may still be in flight is waited out, then looked for by its cart, never raced", async () => {
    const gateway = gatewayWith(client)
    // An earlier holder made and kept the cart, marked its order request, and was never heard of again.
    const request = chargeRequest()
    request.onOrderRequest = async () => { throw new Error('stalled') }
    assert.equal((await gateway.createOrder!(request, renewalOrder())).status, 'unknown')
    assert.ok(request.cartId, 'the cart is kept')
    let marked = 0
    request.onOrderRequest = async () => { marked++ }
    request.orderRequestedAt = new Date()
    const created = sim.counters.ordersCreated
    const waited = await gateway.createOrder!(request, renewalOrder())
    assert.equal(waited.status, 'unknown', 'the earlier request may still reach the platform: no second one')
    assert.match((waited as { reason: string }).reason, /may still be in flight/)
    assert.equal(sim.counters.ordersCreated, created, 'no order raised')
    assert.equal(marked, 0)

    // Just inside the window (the client's longest call, the 429 budget plus a timeout, and a margin): still waits.
    request.orderRequestedAt = new Date(Date.now() - orderRequestWindowMs(client) + 5_000)
    assert.equal((await gateway.createOrder!(request, renewalOrder())).status, 'unknown')
    assert.equal(sim.counters.ordersCreated, created)
    // Past it, that request is over: none arrived, so ask.
    request.orderRequestedAt = new Date(Date.now() - orderRequestWindowMs(client) - 1)
    const made = await gateway.createOrder!(request, renewalOrder())
    assert.equal(made.status, 'created')
    assert.equal(sim.counters.ordersCreated, created + 1)
    assert.equal(marked, 1)

    // Within the window, an order that did arrive is found by its cart and used.
    const again = await gateway.createOrder!({ ...request, orderRequestedAt: new Date() }, renewalOrder())
    assert.deepEqual(again, made)
    assert.equal(sim.counters.ordersCreated, created + 1)
  })

  test('a charge whose v2 order was asked for before renewals went through the checkout is found by its key', async () => {
    const gateway = gatewayWith(client)
    const request = chargeRequest({ orderRequestedAt: new Date() })
    const legacy = await client.call({ storeHash: HASH, accessToken: TOKEN }, {
      method: 'POST', path: '/v2/orders',
      body: {
        status_id: 0, customer_id: 11, billing_address: { first_name: 'Jane', last_name: 'Q Doe', street_1: '1 Main Street', city: 'Austin', zip: '78751', country_iso2: 'US' },
        products: [{ product_id: 77, quantity: 2, price_inc_tax: 12.5, price_ex_tax: 12.5 }], external_source: 'subscription-billing', external_order_id: request.idempotencyKey,
        subtotal_ex_tax: 25, subtotal_inc_tax: 25, total_ex_tax: 25, total_inc_tax: 25,
      },
    })
    assert.ok(legacy.sent && legacy.answer.statusCode < 300, JSON.stringify(legacy))
    const carts = sim.counters.cartsCreated
    const made = await gateway.createOrder!(request, renewalOrder())
    assert.deepEqual(made, { status: 'created', orderId: String((legacy.sent && (legacy.answer.body as { id: number }).id) as number) })
    assert.equal(sim.counters.cartsCreated, carts, 'no cart for it')
  })

  test('a method that demands the security code on stored cards cannot renew: gateway_configuration, no PAT', async () => {
    const hash = 'cvvstore'
    sim.addStore({ hash, accessToken: 'cvv-token', methods: [{ id: 'braintree.card', stored_card_cvv_required: true }] })
    sim.addProduct(hash, { id: 77 })
    const token = sim.addCustomer(hash, { id: 11, instruments: [{}] }).instruments[0]!.token
    const gateway = createPlatformGateway({ client, accessOf: async () => ({ storeHash: hash, accessToken: 'cvv-token' }) })
    const pats = sim.counters.patsIssued
    const { outcome } = await renew(gateway, chargeRequest({ paymentInstrumentId: token }))
    assert.equal((outcome as { failureCode: string }).failureCode, 'gateway_configuration')
    assert.equal(sim.counters.patsIssued, pats)
  })

  test('an authorize-only gateway: the held payment counts as paid, and so does its reconciliation', async () => {
    const hash = 'authstore'
    sim.addStore({ hash, accessToken: 'auth-token', methods: [{ id: 'authorizenet.card', transaction_type: 'authorization' }] })
    sim.addProduct(hash, { id: 77 })
    const token = sim.addCustomer(hash, { id: 11, instruments: [{}] }).instruments[0]!.token
    const gateway = createPlatformGateway({ client, accessOf: async () => ({ storeHash: hash, accessToken: 'auth-token' }) })
    const { outcome, request } = await renew(gateway, chargeRequest({ paymentInstrumentId: token }))
    assert.equal(outcome.status, 'succeeded')
    assert.equal((await gateway.lookup(request))?.status, 'succeeded')
  })

  test('a store that is not connected, or a charge without its order, fails before any request', async () => {
    const since = sim.requests.length
    const unconnected = gatewayWith(client, false)
    assert.equal((await unconnected.createOrder!(chargeRequest(), renewalOrder()) as { failureCode: string }).failureCode, 'gateway_configuration')
    assert.equal((await unconnected.charge(chargeRequest({ orderId: '100' })) as { failureCode: string }).failureCode, 'gateway_configuration')
    assert.equal((await gatewayWith(client).charge(chargeRequest()) as { failureCode: string }).failureCode, 'gateway_configuration')
    assert.equal(await unconnected.lookup(chargeRequest({ orderId: '100' })), undefined)
    assert.equal(sim.requests.length, since)
  })

  test('a refused store token fails as gateway_configuration and never appears in the outcome', async () => {
    const gateway = createPlatformGateway({ client, accessOf: async () => ({ storeHash: HASH, accessToken: 'wrong-token-SECRET-9' }) })
    const made = await gateway.createOrder!(chargeRequest(), renewalOrder())
    assert.equal((made as { failureCode: string }).failureCode, 'gateway_configuration', 'the cart was refused for our credentials: nothing was made, and no retry helps until someone fixes them')
    const charged = await gateway.charge(chargeRequest({ orderId: '100' }))
    assert.equal((charged as { failureCode: string }).failureCode, 'gateway_configuration')
    assert.ok(!JSON.stringify([made, charged]).includes('wrong-token-SECRET-9'))
    sim.violations.length = 0
  })

  test('a refund: a quote for the order-level amount, then the refund to the card\'s provider', async () => {
    const { request, orderId, gateway } = await renew()
    const refunded = await gateway.refund({ idempotencyKey: `${request.idempotencyKey}:refund:1`, storeId: 'store_gw', chargeIdempotencyKey: request.idempotencyKey, gatewayChargeId: String(orderId), orderId: String(orderId), amount: 1000, currency: 'USD' })
    assert.equal(refunded.status, 'succeeded')
    assert.equal(sim.order(HASH, orderId)!.refunds.length, 1)
    sim.declineNextRefund()
    const declined = await gateway.refund({ idempotencyKey: `${request.idempotencyKey}:refund:2`, storeId: 'store_gw', chargeIdempotencyKey: request.idempotencyKey, gatewayChargeId: String(orderId), orderId: String(orderId), amount: 500, currency: 'USD' })
    assert.equal(declined.status, 'failed')
  })

  test('the payment error codes of the reference are all mapped', () => {
    for (const code of [10000, 10001, 30000, 30001, 30002, 30003, 30004, 30051, 30100, 30101, 30102, 30103, 30104, 30105, 30106, 30107]) {
      assert.ok(PAYMENT_ERROR_CODES[code], `code ${code}`)
    }
    const answer = (statusCode: number, body: unknown) => ({ statusCode, body, headers: {} })
    assert.equal(paymentOutcome(answer(422, { status: 422, title: 'Declined', type: 'x' }), '1').status, 'failed', '422 without a code is a decline')
    assert.equal(paymentOutcome(answer(429, {}), '1').status, 'unknown', 'a 429 is never a decline')
    assert.equal(paymentOutcome(answer(201, { data: { id: 'x', status: 'pending' } }), '1').status, 'unknown')
    assert.equal(paymentOutcome(answer(422, { code: 30101 }), '1').status, 'reconcile')
    assert.equal(transactionsOutcome({ data: [{ event: 'authorization', status: 'ok' }] }, '1')?.status, 'succeeded')
    assert.equal(transactionsOutcome({ data: [{ event: 'pending', status: 'ok' }] }, '1')?.status, 'unknown')
    assert.equal(transactionsOutcome({ data: [] }, '1'), undefined)
  })

  test('minor units become the currency\'s decimal major units, digit by digit', () => {
    assert.equal(currencyExponent('USD'), 2)
    assert.equal(currencyExponent('JPY'), 0)
    assert.equal(currencyExponent('KWD'), 3)
    assert.throws(() => currencyExponent('not a currency'), RangeError)
    assert.equal(minorToDecimal(2500, 2), '25.00')
    assert.equal(minorToDecimal(5, 2), '0.05')
    assert.equal(minorToDecimal(500, 0), '500')
    assert.equal(minorToDecimal(12345, 3), '12.345')
    assert.equal(minorToDecimal(2 ** 53 - 1, 2), '90071992547409.91')
    assert.throws(() => minorToDecimal(12.5, 2), RangeError)
    assert.equal(decimalToMinor(19.99, 2), 1999)
    assert.equal(decimalToMinor(0.1 + 0.2, 2), 30)
    assert.equal(decimalToMinor(12.345, 2), undefined, 'more places than the currency has')
    assert.equal(decimalToMinor('abc', 2), undefined)
  })

  test('the refund answer table', () => {
    const answer = (statusCode: number, body: unknown) => ({ statusCode, body, headers: {} })
    assert.deepEqual(refundOutcome(answer(201, { data: { id: 12, payments: [{ is_declined: false }] } })), { status: 'succeeded', gatewayRefundId: '12' })
    assert.equal(refundOutcome(answer(201, { data: { id: 12, payments: [{ is_declined: true, declined_message: 'no' }] } })).status, 'failed')
    assert.equal(refundOutcome(answer(201, { data: {} })).status, 'unknown')
    assert.equal(refundOutcome(answer(422, { data: [{ status: 422, title: 'x' }] })).status, 'failed')
    assert.equal(refundOutcome(answer(429, undefined)).status, 'unknown')
    assert.equal(refundOutcome(answer(503, undefined)).status, 'unknown')
  })
})
