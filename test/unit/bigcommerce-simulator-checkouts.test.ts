/**
 * The BigCommerce simulator's carts, checkouts, inventory and variants (test/helpers/bigcommerce/
 * checkouts.ts, docs/platform-api.md §13): the figures a checkout answers, checked by hand, the orders
 * made from it, and the requests it refuses (each recorded as a violation). Real HTTP on 127.0.0.1.
 */
import assert from 'node:assert/strict'
import { after, describe, test } from 'node:test'
import { startBigCommerceSimulator, type BigCommerceSimulator } from '../helpers/bigcommerce-simulator.ts'

const HASH = 'chk123'
const TOKEN = 'store-token-chk123'
const HEADERS = { 'X-Auth-Token': TOKEN, Accept: 'application/json', 'Content-Type': 'application/json' }
const PRODUCT = 501
const VARIANT = 601
const SOLD_OUT = 602
const MUG = 502
const CUSTOMER = 11

const sims: BigCommerceSimulator[] = []
after(async () => {
  await Promise.all(sims.map((s) => s.close()))
})

interface Answer {
  status: number
  body: any
}

async function call(method: string, url: string, opts: { headers?: Record<string, string>; body?: unknown; raw?: string } = {}): Promise<Answer> {
  const res = await fetch(url, {
    method,
    headers: opts.headers ?? HEADERS,
    body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
    signal: AbortSignal.timeout(5000),
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) }
}

const VIRGINIA = {
  first_name: 'Jane',
  last_name: 'Doe',
  email: 'jane@example.com',
  address1: '1 Main Street',
  city: 'Richmond',
  state_or_province: 'Virginia',
  state_or_province_code: 'VA',
  country_code: 'US',
  postal_code: '23219',
  phone: '18045550100',
}

async function setup() {
  const sim = await startBigCommerceSimulator()
  sims.push(sim)
  sim.addStore({ hash: HASH, accessToken: TOKEN })
  sim.addProduct(HASH, {
    id: PRODUCT,
    name: 'Coffee beans',
    sku: 'BEANS',
    price: 16,
    type: 'physical',
    variants: [
      { id: VARIANT, sku: 'BEANS-1KG', price: 18, inventory_level: 10, option_values: [{ id: 71, label: '1 kg', option_id: 70, option_display_name: 'Size' }] },
      { id: SOLD_OUT, sku: 'BEANS-5KG', inventory_level: 0, option_values: [{ id: 72, label: '5 kg', option_id: 70, option_display_name: 'Size' }] },
    ],
  })
  sim.addProduct(HASH, { id: MUG, name: 'Mug', sku: 'MUG', price: 8, type: 'physical', inventory_level: 3 })
  const customer = sim.addCustomer(HASH, { id: CUSTOMER, email: 'jane@example.com', instruments: [{}] })
  sim.setTaxRates(HASH, [
    { country: 'US', state: 'VA', rate_bps: 530 },
    { country: 'US', rate_bps: 100 },
  ])
  const api = `${sim.apiUrl}/stores/${HASH}`
  return { sim, api, card: customer.instruments[0]!.token }
}

type Setup = Awaited<ReturnType<typeof setup>>

async function newCart(s: Setup, lines: unknown[] = [{ product_id: PRODUCT, variant_id: VARIANT, quantity: 2, list_price: 14 }]): Promise<Answer> {
  return call('POST', `${s.api}/v3/carts`, { body: { customer_id: CUSTOMER, line_items: lines, channel_id: 1, currency: { code: 'USD' } } })
}

/** A cart of 2 x 14.00 with billing and a consignment to Virginia, Ground chosen, 2.80 off. */
async function pricedCheckout(s: Setup): Promise<{ id: string; lineId: string; consignmentId: string }> {
  const cart = await newCart(s)
  assert.equal(cart.status, 201, JSON.stringify(cart.body))
  const id = cart.body.data.id as string
  const lineId = cart.body.data.line_items.physical_items[0].id as string
  assert.equal((await call('POST', `${s.api}/v3/checkouts/${id}/billing-address`, { body: VIRGINIA })).status, 200)
  const consigned = await call('POST', `${s.api}/v3/checkouts/${id}/consignments?include=consignments.available_shipping_options`, {
    body: [{ address: VIRGINIA, line_items: [{ item_id: lineId, quantity: 2 }] }],
  })
  assert.equal(consigned.status, 200, JSON.stringify(consigned.body))
  const consignment = consigned.body.data.consignments[0]
  const chosen = await call('PUT', `${s.api}/v3/checkouts/${id}/consignments/${consignment.id}`, { body: { shipping_option_id: consignment.available_shipping_options[0].id } })
  assert.equal(chosen.status, 200, JSON.stringify(chosen.body))
  const discounted = await call('POST', `${s.api}/v3/checkouts/${id}/discounts`, { body: { cart: { discounts: [{ discounted_amount: 2.8, name: 'Subscription discount' }] } } })
  assert.equal(discounted.status, 200, JSON.stringify(discounted.body))
  return { id, lineId, consignmentId: consignment.id }
}

describe('a cart priced through its checkout', () => {
  test('2 x 14.00, 2.80 off, Ground 5.99 to Virginia at 5.30 %: tax 1.34, grand total 32.53', async () => {
    const s = await setup()
    const cart = await newCart(s)
    assert.equal(cart.status, 201)
    const data = cart.body.data
    assert.match(data.id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    assert.deepEqual([data.customer_id, data.channel_id, data.email, data.currency.code], [CUSTOMER, 1, 'jane@example.com', 'USD'])
    assert.deepEqual([data.base_amount, data.discount_amount, data.cart_amount], [28, 0, 28])
    const line = data.line_items.physical_items[0]
    // list_price overrides the variant's 18.00; original_price stays the catalog's.
    assert.deepEqual(
      [line.product_id, line.variant_id, line.quantity, line.sku, line.name, line.list_price, line.original_price, line.sale_price, line.extended_list_price, line.extended_sale_price],
      [PRODUCT, VARIANT, 2, 'BEANS-1KG', 'Coffee beans', 14, 18, 14, 28, 28],
    )
    assert.deepEqual([data.line_items.digital_items, data.line_items.gift_certificates, data.line_items.custom_items], [[], [], []])
    assert.equal(s.sim.counters.cartsCreated, 1)

    const { id, consignmentId } = await pricedCheckout(s)
    const checkout = (await call('GET', `${s.api}/v3/checkouts/${id}`)).body.data
    assert.equal(checkout.id, id)
    assert.deepEqual([checkout.cart.base_amount, checkout.cart.discount_amount, checkout.cart.cart_amount_ex_tax], [28, 2.8, 25.2])
    assert.deepEqual(checkout.cart.discounts, [{ id: 'manual-discount', discounted_amount: 2.8 }])
    const item = checkout.cart.line_items.physical_items[0]
    assert.deepEqual([item.discount_amount, item.sale_price, item.extended_sale_price], [2.8, 12.6, 25.2])
    // 25.20 x 0.053 = 1.3356 -> 1.34; shipping untaxed.
    assert.deepEqual(checkout.taxes, [{ name: 'Tax', amount: 1.34 }])
    assert.equal(checkout.tax_total, 1.34)
    assert.deepEqual([checkout.subtotal_ex_tax, checkout.subtotal_inc_tax], [25.2, 26.54])
    assert.deepEqual([checkout.shipping_cost_total_ex_tax, checkout.shipping_cost_total_inc_tax], [5.99, 5.99])
    // 25.20 + 5.99 + 1.34
    assert.equal(checkout.grand_total, 32.53)
    assert.equal(checkout.order_id, null)
    assert.equal(checkout.billing_address.state_or_province_code, 'VA')
    const consignment = checkout.consignments[0]
    assert.equal(consignment.id, consignmentId)
    assert.equal(consignment.selected_shipping_option.description, 'Ground')
    assert.deepEqual([consignment.shipping_cost_ex_tax, consignment.shipping_cost_inc_tax], [5.99, 5.99])
    assert.equal(consignment.available_shipping_options, undefined, 'listed only with the include')
    const withOptions = (await call('GET', `${s.api}/v3/checkouts/${id}?include=consignments.available_shipping_options`)).body.data
    assert.deepEqual(
      withOptions.consignments[0].available_shipping_options.map((o: any) => [o.description, o.cost, o.type, o.transit_time]),
      [['Ground', 5.99, 'shipping_flatrate', '']],
    )
    // The cart API shows the discount too.
    const again = (await call('GET', `${s.api}/v3/carts/${id}`)).body.data
    assert.deepEqual([again.discount_amount, again.cart_amount], [2.8, 25.2])

    // Tax on shipping: 5.99 x 0.053 = 0.31747 -> 0.32, grand total 32.85.
    s.sim.setTaxRates(HASH, [{ country: 'US', state: 'VA', rate_bps: 530 }], { taxShipping: true })
    const taxed = (await call('GET', `${s.api}/v3/checkouts/${id}`)).body.data
    assert.deepEqual([taxed.tax_total, taxed.shipping_cost_total_inc_tax, taxed.grand_total], [1.66, 6.31, 32.85])
    assert.deepEqual(s.sim.violations, [])
  })

  test('shipping zones by country, and a discount replaces the earlier one', async () => {
    const s = await setup()
    s.sim.setShippingOptions(HASH, [
      { description: 'Ground', cost: 5.99, countries: ['US'] },
      { description: 'Air', cost: 19.5 },
      { description: 'Canada Post', cost: 9, countries: ['CA'] },
    ])
    const cart = (await newCart(s)).body.data
    const lineId = cart.line_items.physical_items[0].id
    const toOntario = { ...VIRGINIA, state_or_province: 'Ontario', state_or_province_code: 'ON', country_code: 'CA', postal_code: 'K1A 0B1' }
    const consigned = await call('POST', `${s.api}/v3/checkouts/${cart.id}/consignments?include=consignments.available_shipping_options`, {
      body: [{ address: toOntario, line_items: [{ item_id: lineId, quantity: 2 }] }],
    })
    assert.deepEqual(consigned.body.data.consignments[0].available_shipping_options.map((o: any) => [o.description, o.cost]), [['Air', 19.5], ['Canada Post', 9]])
    // No rate for CA: no tax, and no billing address needed for that.
    assert.deepEqual([consigned.body.data.taxes, consigned.body.data.tax_total], [[], 0])
    const url = `${s.api}/v3/checkouts/${cart.id}/discounts`
    await call('POST', url, { body: { cart: { discounts: [{ discounted_amount: 5 }] } } })
    const second = await call('POST', url, { body: { cart: { discounts: [{ discounted_amount: 1.5 }] } } })
    assert.deepEqual([second.body.data.cart.discount_amount, second.body.data.cart.cart_amount_ex_tax], [1.5, 26.5])
    assert.deepEqual(s.sim.violations, [])
  })
})

describe('orders made from a checkout', () => {
  test('each call makes a new Incomplete order; both are found by cart_id and carry the checkout figures', async () => {
    const s = await setup()
    const { id } = await pricedCheckout(s)
    // An unrelated v2 order and another cart's order must not be found by this cart_id.
    const v2 = await call('POST', `${s.api}/v2/orders`, {
      body: { status_id: 0, customer_id: CUSTOMER, billing_address: { zip: '23219', country_iso2: 'US' }, products: [{ product_id: MUG, quantity: 1 }] },
    })
    assert.equal(v2.status, 200)
    // No body (the reference defines none), so no Content-Type either.
    const first = await call('POST', `${s.api}/v3/checkouts/${id}/orders`, { headers: { 'X-Auth-Token': TOKEN, Accept: 'application/json' } })
    assert.equal(first.status, 200, JSON.stringify(first.body))
    assert.deepEqual(Object.keys(first.body), ['data', 'meta'])
    assert.deepEqual(first.body.meta, {})
    const second = await call('POST', `${s.api}/v3/checkouts/${id}/orders`, { body: {} })
    assert.equal(second.status, 200)
    const [a, b] = [first.body.data.id, second.body.data.id]
    assert.ok(Number.isInteger(a) && Number.isInteger(b) && a !== b)
    assert.equal((await call('GET', `${s.api}/v3/checkouts/${id}`)).body.data.order_id, String(b))

    const found = await call('GET', `${s.api}/v2/orders?cart_id=${id}&status_id=0`)
    assert.deepEqual(found.body.map((o: any) => o.id), [a, b])
    assert.ok(found.body.every((o: any) => o.cart_id === id))
    assert.equal((await call('GET', `${s.api}/v2/orders?cart_id=00000000-0000-0000-0000-000000000000&status_id=0`)).status, 204)

    const order = (await call('GET', `${s.api}/v2/orders/${a}`)).body
    assert.deepEqual(
      [order.status_id, order.customer_id, order.cart_id, order.currency_code, order.subtotal_ex_tax, order.subtotal_inc_tax, order.shipping_cost_ex_tax, order.shipping_cost_inc_tax, order.total_ex_tax, order.total_inc_tax],
      [0, CUSTOMER, id, 'USD', '25.2000', '26.5400', '5.9900', '5.9900', '31.1900', '32.5300'],
    )
    assert.deepEqual([order.billing_address.street_1, order.billing_address.zip, order.billing_address.country_iso2, order.billing_address.state], ['1 Main Street', '23219', 'US', 'Virginia'])
    const products = (await call('GET', `${s.api}/v2/orders/${a}/products`)).body
    // 12.60 a unit after the discount; its tax 1.34 / 2 = 0.67.
    assert.deepEqual(products.map((p: any) => [p.product_id, p.variant_id, p.quantity, p.price_ex_tax, p.price_inc_tax]), [[PRODUCT, VARIANT, 2, '12.6000', '13.2700']])
    const shipping = (await call('GET', `${s.api}/v2/orders/${a}/shipping_addresses`)).body
    assert.deepEqual([shipping[0].shipping_method, shipping[0].cost_ex_tax, shipping[0].street_1, shipping[0].country_iso2], ['Ground', '5.9900', '1 Main Street', 'US'])
    assert.deepEqual([s.sim.counters.checkoutOrdersCreated, s.sim.counters.ordersCreated], [2, 3])
    assert.deepEqual(s.sim.violations, [])
  })

  test('paying an order deletes its cart: the cart and checkout then answer 404', async () => {
    const s = await setup()
    const { id } = await pricedCheckout(s)
    const orderId = (await call('POST', `${s.api}/v3/checkouts/${id}/orders`, { body: {} })).body.data.id
    const pat = await call('POST', `${s.api}/v3/payments/access_tokens`, { body: { order: { id: orderId, is_recurring: true } } })
    assert.equal(pat.status, 201)
    const paid = await call('POST', `${s.sim.paymentsUrl}/stores/${HASH}/payments`, {
      headers: { Authorization: `PAT ${pat.body.data.id}`, Accept: 'application/vnd.bc.v1+json', 'Content-Type': 'application/json' },
      body: { payment: { instrument: { type: 'stored_card', token: s.card }, payment_method_id: 'stripe.card' } },
    })
    assert.equal(paid.status, 201)
    assert.equal(s.sim.order(HASH, orderId)!.total_inc_tax, 325_300)
    assert.equal(s.sim.cart(HASH, id), undefined)
    assert.equal((await call('GET', `${s.api}/v3/checkouts/${id}`)).status, 404)
    assert.equal((await call('GET', `${s.api}/v3/carts/${id}`)).status, 404)
    assert.deepEqual(s.sim.violations.map((v) => [v.operation, v.status, v.kind]), [['getCheckout', 404, 'state'], ['getCart', 404, 'state']])
  })

  test('an order from a checkout whose consignment has no shipping option is refused and recorded', async () => {
    const s = await setup()
    const cart = (await newCart(s)).body.data
    await call('POST', `${s.api}/v3/checkouts/${cart.id}/billing-address`, { body: VIRGINIA })
    const none = await call('POST', `${s.api}/v3/checkouts/${cart.id}/orders`, { body: {} })
    assert.equal(none.status, 422)
    assert.match(none.body.detail, /is in no consignment/)
    await call('POST', `${s.api}/v3/checkouts/${cart.id}/consignments`, { body: [{ address: VIRGINIA, line_items: [{ item_id: cart.line_items.physical_items[0].id, quantity: 2 }] }] })
    const unchosen = await call('POST', `${s.api}/v3/checkouts/${cart.id}/orders`, { body: {} })
    assert.equal(unchosen.status, 422)
    assert.deepEqual([unchosen.body.status, unchosen.body.title], [422, 'Shipping is incomplete'])
    assert.match(unchosen.body.detail, /no selected shipping option/)
    assert.deepEqual(s.sim.violations.map((v) => [v.operation, v.status, v.kind]), [['createCheckoutOrder', 422, 'state'], ['createCheckoutOrder', 422, 'state']])
    assert.equal(s.sim.orders(HASH).length, 0)
  })

  test('PUT /v2/orders takes the money overrides in pairs while Incomplete, and refuses them once paid', async () => {
    const s = await setup()
    const { id } = await pricedCheckout(s)
    const orderId = (await call('POST', `${s.api}/v3/checkouts/${id}/orders`, { body: {} })).body.data.id
    const url = `${s.api}/v2/orders/${orderId}`
    // A shipping edit recalculates the total (ORD "Calculating totals"): 32.53 - 5.99 + 4.00.
    const shipped = await call('PUT', url, { body: { shipping_cost_ex_tax: '4.00', shipping_cost_inc_tax: 4 } })
    assert.equal(shipped.status, 200, JSON.stringify(shipped.body))
    assert.deepEqual([shipped.body.shipping_cost_inc_tax, shipped.body.total_inc_tax, shipped.body.total_ex_tax], ['4.0000', '30.5400', '29.2000'])
    const totals = await call('PUT', url, { body: { total_ex_tax: 29.2, total_inc_tax: '30.5', subtotal_ex_tax: 25.2, subtotal_inc_tax: 26.5 } })
    assert.deepEqual([totals.body.total_inc_tax, totals.body.subtotal_inc_tax], ['30.5000', '26.5000'])
    assert.equal(s.sim.violations.length, 0)

    const half = await call('PUT', url, { body: { total_inc_tax: 30 } })
    assert.equal(half.status, 400)
    assert.ok(Array.isArray(half.body), 'the v2 error array')
    const negative = await call('PUT', url, { body: { total_inc_tax: -1, total_ex_tax: 1 } })
    assert.equal(negative.status, 400)
    await call('PUT', url, { body: { status_id: 11 } })
    const late = await call('PUT', url, { body: { total_inc_tax: 30, total_ex_tax: 30 } })
    assert.equal(late.status, 400)
    assert.match(late.body[0].message, /not Incomplete/)
    assert.deepEqual(s.sim.violations.map((v) => [v.operation, v.status, v.kind]), [['updateOrder', 400, 'body'], ['updateOrder', 400, 'body'], ['updateOrder', 400, 'state']])
  })

  test('faults target the checkout order route apart from POST /v2/orders', async () => {
    const s = await setup()
    const { id } = await pricedCheckout(s)
    s.sim.failNext('createCheckoutOrder', 503, { afterProcessing: true })
    const v2 = await call('POST', `${s.api}/v2/orders`, { body: { status_id: 0, billing_address: { zip: '23219', country_iso2: 'US' }, products: [{ product_id: MUG, quantity: 1 }] } })
    assert.equal(v2.status, 200)
    const failed = await call('POST', `${s.api}/v3/checkouts/${id}/orders`, { body: {} })
    assert.equal(failed.status, 503)
    // The work was done: the order exists and is found by its cart.
    assert.equal(s.sim.orders(HASH).filter((o) => o.cart_id === id).length, 1)
    assert.deepEqual(s.sim.violations, [])
  })
})

describe('stock, inventory items and variants', () => {
  test('an out-of-stock variant is refused when carted (a platform answer, not a violation) until stock comes back', async () => {
    const s = await setup()
    const sold = await newCart(s, [{ product_id: PRODUCT, variant_id: SOLD_OUT, quantity: 1 }])
    assert.equal(sold.status, 422)
    assert.match(sold.body.title, /Not enough stock: BEANS-5KG/)
    // Product-level stock counts every line of the product: 2 + 2 > 3.
    const mugs = await newCart(s, [{ product_id: MUG, quantity: 2 }, { product_id: MUG, quantity: 2, list_price: 1 }])
    assert.equal(mugs.status, 422)
    assert.deepEqual(s.sim.violations, [])
    s.sim.setInventory(HASH, { productId: PRODUCT, variantId: SOLD_OUT, level: 4 })
    const restocked = await newCart(s, [{ product_id: PRODUCT, variant_id: SOLD_OUT, quantity: 1 }])
    assert.equal(restocked.status, 201)
    // No list_price: the variant has no price of its own, so the product's 16.00.
    assert.equal(restocked.body.data.line_items.physical_items[0].list_price, 16)
    assert.equal(s.sim.counters.cartsCreated, 1)
  })

  test('inventory items and product variants read back', async () => {
    const s = await setup()
    s.sim.setInventory(HASH, { productId: MUG, level: 7 })
    const items = await call('GET', `${s.api}/v3/inventory/items?variant_id:in=${VARIANT},${SOLD_OUT}`)
    assert.equal(items.status, 200)
    assert.deepEqual(
      items.body.data.map((i: any) => [i.identity.sku, i.identity.variant_id, i.identity.product_id, i.locations[0].location_id, i.locations[0].available_to_sell, i.locations[0].total_inventory_onhand]),
      [['BEANS-1KG', VARIANT, PRODUCT, 1, 10, 10], ['BEANS-5KG', SOLD_OUT, PRODUCT, 1, 0, 0]],
    )
    assert.equal(items.body.meta.pagination.total, 2)
    const mug = await call('GET', `${s.api}/v3/inventory/items?product_id:in=${MUG}`)
    assert.deepEqual(mug.body.data.map((i: any) => [i.identity.sku, i.identity.sku_id, i.locations[0].available_to_sell]), [['MUG', null, 7]])

    const variants = await call('GET', `${s.api}/v3/catalog/products/${PRODUCT}/variants`)
    assert.equal(variants.status, 200)
    assert.deepEqual(
      variants.body.data.map((v: any) => [v.id, v.product_id, v.sku, v.price, v.calculated_price, v.inventory_level, v.option_values]),
      [
        [VARIANT, PRODUCT, 'BEANS-1KG', 18, 18, 10, [{ id: 71, label: '1 kg', option_id: 70, option_display_name: 'Size' }]],
        [SOLD_OUT, PRODUCT, 'BEANS-5KG', null, 16, 0, [{ id: 72, label: '5 kg', option_id: 70, option_display_name: 'Size' }]],
      ],
    )
    assert.deepEqual(variants.body.meta.pagination, { total: 2, count: 2, per_page: 50, current_page: 1, total_pages: 1, links: { current: '?page=1&limit=50' } })
    const few = await call('GET', `${s.api}/v3/catalog/products/${PRODUCT}/variants?include_fields=sku`)
    assert.deepEqual(few.body.data[0], { id: VARIANT, sku: 'BEANS-1KG' })
    assert.deepEqual(s.sim.violations, [])
  })
})

describe('refused requests on the new routes are recorded', () => {
  test('a malformed request on each route is answered in the v3 error shape and recorded', async () => {
    const s = await setup()
    const { id, consignmentId } = await pricedCheckout(s)
    const checkout = `${s.api}/v3/checkouts/${id}`
    const cases: [string, string, string, { body?: unknown; raw?: string }, number][] = [
      ['createCart', 'POST', `${s.api}/v3/carts`, { body: { customer_id: CUSTOMER, line_items: [{ product_id: PRODUCT, quantity: 1 }] } }, 422], // variant_id missing
      ['createCart', 'POST', `${s.api}/v3/carts`, { body: { line_items: [{ product_id: MUG, quantity: 1 }], currency: { code: 'EUR' } } }, 400],
      ['createCart', 'POST', `${s.api}/v3/carts`, { raw: '{"line_items": [' }, 400],
      ['getCart', 'GET', `${s.api}/v3/carts/${id}?include=everything`, {}, 422],
      ['deleteCart', 'DELETE', `${s.api}/v3/carts/no-such-cart`, {}, 404],
      ['addCheckoutBillingAddress', 'POST', `${checkout}/billing-address`, { body: { ...VIRGINIA, street_1: '1 Main Street', zip: '23219' } }, 422],
      ['addCheckoutBillingAddress', 'POST', `${checkout}/billing-address`, { body: { first_name: 'Jane', country_code: 'US' } }, 422], // email missing
      ['addCheckoutConsignment', 'POST', `${checkout}/consignments`, { body: { address: VIRGINIA } }, 422], // not an array
      ['updateCheckoutConsignment', 'PUT', `${checkout}/consignments/${consignmentId}`, { body: { shipping_option_id: 'x', address: VIRGINIA } }, 422],
      ['updateCheckoutConsignment', 'PUT', `${checkout}/consignments/${consignmentId}`, { body: { shipping_option_id: 'no-such-option' } }, 422],
      ['addCheckoutDiscount', 'POST', `${checkout}/discounts`, { body: { cart: { discounts: [{ discounted_amount: '2.80' }] } } }, 422],
      ['getCheckout', 'GET', `${checkout}?include=consignments`, {}, 422],
      ['createCheckoutOrder', 'POST', `${checkout}/orders`, { body: { status_id: 0 } }, 400],
      ['getInventoryItems', 'GET', `${s.api}/v3/inventory/items?variant_id:in=abc`, {}, 422],
      ['getProductVariants', 'GET', `${s.api}/v3/catalog/products/999/variants`, {}, 404],
      ['getProductVariants', 'GET', `${s.api}/v3/catalog/products/${PRODUCT}/variants?limit=0`, {}, 422],
    ]
    for (const [operation, method, url, opts, status] of cases) {
      const before = s.sim.violations.length
      const r = await call(method, url, opts)
      assert.equal(r.status, status, `${operation}: ${JSON.stringify(r.body)}`)
      assert.equal(r.body.status, status, `${operation}: the v3 error object`)
      assert.equal(r.body.type, 'https://developer.bigcommerce.com/api-docs/getting-started/api-status-codes')
      assert.equal(s.sim.violations.length, before + 1, operation)
      assert.equal(s.sim.violations.at(-1)!.operation, operation)
    }
    // Field errors name the field.
    const wrongNames = await call('POST', `${checkout}/billing-address`, { body: { ...VIRGINIA, zip: '1' } })
    assert.ok('zip' in wrongNames.body.errors)
    // A stale version is a conflict (409), as CartConflictErrorResponse documents.
    const stale = await call('POST', `${checkout}/billing-address`, { body: { ...VIRGINIA, version: 1 } })
    assert.equal(stale.status, 409)
    // Headers and scopes like every route: Content-Type on a body, and the carts scope.
    const noType = await call('POST', `${s.api}/v3/carts`, { headers: { 'X-Auth-Token': TOKEN, Accept: 'application/json' }, body: {} })
    assert.equal(noType.status, 415)
    s.sim.addStore({ hash: 'narrow', accessToken: 'narrow-token', scopes: ['store_v2_orders', 'store_checkouts'] })
    const narrow = { 'X-Auth-Token': 'narrow-token', Accept: 'application/json', 'Content-Type': 'application/json' }
    const noScope = await call('POST', `${s.sim.apiUrl}/stores/narrow/v3/carts`, { headers: narrow, body: { line_items: [] } })
    assert.equal(noScope.status, 403)
    // store_checkouts (checkouts.v3 spelling) is accepted like store_checkout (ACCT): the 404 is past the scope check.
    assert.equal((await call('GET', `${s.sim.apiUrl}/stores/narrow/v3/checkouts/${id}`, { headers: narrow })).status, 404)
  })
})
