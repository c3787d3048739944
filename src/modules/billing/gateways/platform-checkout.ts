import { RENEWAL_ORDER_SOURCE, type PlatformAccess, type PlatformClient, type PlatformReply } from '../../platform/index.ts'
import type { ChargeRequest, OrderAddress, OrderOutcome, PlatformPricing, RenewalOrder } from './gateway.ts'
import { MAX_AMOUNT, MAX_CHARGE_AMOUNT } from '../../../lib/money.ts'
import { storableName } from '../../../lib/printable-text.ts'
import { currencyExponent, decimalToMinor, minorToDecimal } from './platform-outcomes.ts'
import { bodyOf, is2xx, isConfigurationRefusal, platformInt, replyReason, statusOf, type Redact } from './platform-replies.ts'

/**
 * A renewal's order made through the platform's own checkout, server to server, so the order is the one
 * the storefront would have made: the store's tax, its shipping zones (docs/bigcommerce.md "A renewal,
 * call by call"; docs/platform-api.md §9):
 *
 *   cart        POST /v3/carts: the customer, the renewal's lines at the subscription's prices, the variant
 *               (the cart id is also the checkout id; the engine keeps it on the charge at once);
 *   checkout    its billing address; one consignment to the shipping address, with the options its zones
 *               quote; the subscription's discount as a cart-level discount; the option the store's
 *               policy picks, in a request of its own. The last answer is the priced checkout;
 *   order       POST /v3/checkouts/{id}/orders: Incomplete, for the checkout's grand total;
 *   tag         PUT /v2/orders/{id}: our source and the charge's key (so the order webhook knows it and a
 *               search by key finds it) and, when the store ships at its own rate rather than the
 *               quote, that shipping and the totals it makes.
 *
 * Nothing before the order moves money or makes an order, so every trouble there is retried on the same
 * cart. The order is the one step the platform does not deduplicate ("you can create as many orders from
 * the same cart as you want"): it is asked for once per holder after the engine records the request, and
 * after a lost answer or a crash it is found again by its cart (`GET /v2/orders?cart_id=`), never asked
 * for blindly.
 */

interface CheckoutItem {
  id?: unknown
  product_id?: unknown
  variant_id?: unknown
  quantity?: unknown
  list_price?: unknown
}

interface ShippingOption {
  id?: unknown
  description?: unknown
  cost?: unknown
}

interface Checkout {
  id?: unknown
  cart?: {
    currency?: { code?: unknown }
    discount_amount?: unknown
    line_items?: { physical_items?: CheckoutItem[]; digital_items?: CheckoutItem[] }
  }
  billing_address?: { id?: unknown; address1?: unknown } | null
  consignments?: Array<{
    id?: unknown
    available_shipping_options?: ShippingOption[] | null
    selected_shipping_option?: ShippingOption | null
  }>
  shipping_cost_total_ex_tax?: unknown
  shipping_cost_total_inc_tax?: unknown
  tax_total?: unknown
  grand_total?: unknown
}

/** The longest shipping method name kept, as a checkout's `shipping.method` may be. */
const SHIPPING_METHOD_MAX = 250

const INCLUDE_OPTIONS = { include: 'consignments.available_shipping_options' }

/** A step's trouble as an outcome: our data or credentials refused is definite, anything else is asked again later. */
type Step<T> = { ok: T } | { outcome: OrderOutcome }

/** Our address as a checkout address (checkouts.v3 `address_Base`): the name split once, the country as ISO 2. */
export function checkoutAddress(address: OrderAddress, email: string): Record<string, string> {
  const name = address.name.trim()
  const space = name.indexOf(' ')
  const out: Record<string, string> = {
    first_name: space > 0 ? name.slice(0, space) : name,
    last_name: space > 0 ? name.slice(space + 1).trim() : '',
    email,
    address1: address.line1,
    city: address.city,
    country_code: address.country,
    postal_code: address.postal_code,
  }
  if (address.line2) out.address2 = address.line2
  if (address.state) {
    out.state_or_province = address.state
    // A state given as its code ("VA") is also the code the platform's tax zones match.
    if (/^[A-Z]{1,3}$/.test(address.state)) out.state_or_province_code = address.state
  }
  if (address.phone) out.phone = address.phone
  return out
}

/** `checkout_rate` and `requote` look for the checkout's method by name; otherwise (or if gone) the cheapest option. */
export function pickShippingOption(options: readonly ShippingOption[], method: string | null, exponent: number): ShippingOption | undefined {
  const priced = options.filter((option) => typeof option.id === 'string' && decimalToMinor(option.cost, exponent) !== undefined)
  const named = method === null ? undefined : priced.find((option) => typeof option.description === 'string' && option.description.trim().toLowerCase() === method.trim().toLowerCase())
  if (named) return named
  return priced.reduce<ShippingOption | undefined>((cheapest, option) => (cheapest === undefined || decimalToMinor(option.cost, exponent)! < decimalToMinor(cheapest.cost, exponent)! ? option : cheapest), undefined)
}

/** Half up, in integers: `value` x `numerator` / `denominator`. */
const scaled = (value: number, numerator: number, denominator: number): number => Math.floor((2 * value * numerator + denominator) / (2 * denominator))

export interface CheckoutPricing extends PlatformPricing {
  /** The order's shipping and totals to set when the store ships at its own rate rather than the quote. */
  override: Record<string, string> | null
}

/**
 * What the priced checkout makes of the renewal: its tax, the shipping the store's policy charges, and
 * the whole. The lines and the discount must be ours, and the grand total exactly the goods, the
 * shipping and the checkout's `tax_total` (a platform that priced it otherwise is never paid). A store
 * shipping at its own rate (`order.shipping.amount`) keeps the tax the checkout put on shipping in
 * proportion.
 */
export function checkoutPricing(checkout: Checkout, order: RenewalOrder): { pricing: CheckoutPricing } | { problem: string } {
  const exponent = currencyExponent(order.currency)
  // The platform's decimal major units (numbers or strings) in minor units; undefined when not an exact amount.
  const minor = (value: unknown) => decimalToMinor(value, exponent)
  const currency = checkout.cart?.currency?.code
  if (typeof currency === 'string' && currency.toUpperCase() !== order.currency.toUpperCase()) {
    return { problem: `the platform's checkout is in ${currency}, the subscription in ${order.currency} (a BigCommerce store charges in its own currency)` }
  }
  const items = [...(checkout.cart?.line_items?.physical_items ?? []), ...(checkout.cart?.line_items?.digital_items ?? [])]
  const wanted = [{ product: order.platformProductId, quantity: order.quantity, unit: order.unitAmount }, ...(order.addOns ?? []).map((line) => ({ product: line.platformProductId, quantity: line.quantity, unit: line.unitAmount }))]
  const lines = items.map((item) => `${String(item.product_id)} x ${String(item.quantity)} at ${String(minor(item.list_price))}`).sort()
  const ours = wanted.map((line) => `${String(platformInt(line.product))} x ${line.quantity} at ${line.unit}`).sort()
  if (lines.join('; ') !== ours.join('; ')) return { problem: `the platform's cart holds ${lines.join('; ') || 'nothing'}, not the renewal's ${ours.join('; ')}` }
  const discount = minor(checkout.cart?.discount_amount ?? 0)
  if (discount !== order.discountAmount) return { problem: `the platform's cart takes ${String(checkout.cart?.discount_amount)} off, not the renewal's ${minorToDecimal(order.discountAmount, exponent)}` }

  const grandTotal = minor(checkout.grand_total)
  const taxTotal = minor(checkout.tax_total ?? 0)
  const quotedShipping = minor(checkout.shipping_cost_total_ex_tax ?? 0)
  const quotedShippingTaxed = minor(checkout.shipping_cost_total_inc_tax ?? 0)
  if (grandTotal === undefined || taxTotal === undefined || quotedShipping === undefined || quotedShippingTaxed === undefined || quotedShippingTaxed < quotedShipping) {
    return { problem: `the platform's checkout totals cannot be read (grand total ${String(checkout.grand_total)}, tax ${String(checkout.tax_total)}, shipping ${String(checkout.shipping_cost_total_ex_tax)})` }
  }
  const goods = order.subtotal - order.discountAmount
  // Handling, fees, gift wrapping or prices that include tax would make the total something else: the
  // charge's breakdown could not say what it paid, so such a checkout is not paid.
  if (grandTotal !== goods + quotedShipping + taxTotal) {
    return { problem: `the platform's checkout total ${String(checkout.grand_total)} is not the goods (${minorToDecimal(goods, exponent)}), the shipping (${String(checkout.shipping_cost_total_ex_tax)}) and the tax (${String(checkout.tax_total)}): fees, handling or prices including tax are not supported` }
  }
  const quotedShippingTax = quotedShippingTaxed - quotedShipping
  const goodsTax = taxTotal - quotedShippingTax
  if (goodsTax < 0) return { problem: `the platform's checkout taxes shipping (${minorToDecimal(quotedShippingTax, exponent)}) above its whole tax (${String(checkout.tax_total)})` }
  const selected = checkout.consignments?.[0]?.selected_shipping_option
  // The platform's text, kept in a column (no NUL) and as long as a checkout's method may be.
  const described = typeof selected?.description === 'string' ? storableName(selected.description, SHIPPING_METHOD_MAX) : ''
  const shippingMethod = described !== '' ? described : order.shipping.method

  // Nothing ships (digital goods, or no address): no shipping whatever the policy.
  const ships = (checkout.consignments ?? []).length > 0
  const own = ships ? order.shipping.amount : 0
  if (quotedShipping > MAX_AMOUNT || grandTotal > MAX_CHARGE_AMOUNT) return { problem: `the platform's checkout (${String(checkout.grand_total)}, shipping ${String(checkout.shipping_cost_total_ex_tax)}) is over what one charge may be` }
  if (own === null || own === quotedShipping) {
    return { pricing: { shippingAmount: quotedShipping, shippingMethod, taxAmount: taxTotal, amount: grandTotal, override: null } }
  }
  const shippingTax = quotedShipping > 0 ? scaled(quotedShippingTax, own, quotedShipping) : 0
  const amount = goods + own + goodsTax + shippingTax
  const decimal = (value: number) => minorToDecimal(value, exponent)
  return {
    pricing: {
      shippingAmount: own,
      shippingMethod,
      taxAmount: goodsTax + shippingTax,
      amount,
      override: {
        shipping_cost_ex_tax: decimal(own),
        shipping_cost_inc_tax: decimal(own + shippingTax),
        total_ex_tax: decimal(amount - goodsTax - shippingTax),
        total_inc_tax: decimal(amount),
      },
    },
  }
}

export interface CheckoutOrderDeps {
  client: PlatformClient
  access: PlatformAccess
  redact: Redact
  /** How long after an order request another one may still be in flight (platform-gateway.ts). */
  orderRequestWindowMs: number
  /** The order the platform holds, checked against the charge before anything pays it. */
  fits(answered: unknown, order: RenewalOrder): OrderOutcome
}

/** Makes (or finds again) the renewal's order through the platform's checkout; see the module comment. */
export async function checkoutOrder(deps: CheckoutOrderDeps, charge: ChargeRequest, order: RenewalOrder): Promise<OrderOutcome> {
  const { client, access, redact } = deps
  const customerId = platformInt(order.platformCustomerId)
  if (customerId === undefined) return failed('processing_error', 'the subscription has no platform customer: a stored card can only be charged for the customer who owns it')
  const productId = platformInt(order.platformProductId)
  if (productId === undefined) return failed('processing_error', `the product's platform id ${JSON.stringify(order.platformProductId)} is not a platform product id`)
  const billing = order.billingAddress ?? order.shippingAddress
  if (!billing) return failed('processing_error', 'the subscription has neither a billing nor a shipping address; the platform requires a billing address on every order')
  let exponent: number
  try {
    exponent = currencyExponent(order.currency)
  } catch {
    return failed('processing_error', `${order.currency} is not a currency`)
  }
  const decimal = (value: number) => Number(minorToDecimal(value, exponent))

  /** One call of a step: its body when it answered 2xx, else the outcome its failure means (nothing was paid). */
  async function step(what: string, call: Parameters<PlatformClient['call']>[1], refused?: 'cart'): Promise<Step<unknown>> {
    const reply = await client.call(access, call)
    if (is2xx(reply)) return { ok: bodyOf(reply) }
    return { outcome: refusal(what, reply, refused) }
  }
  /**
   * A step refused. Our credentials refused (401) fail the charge like every other step. Anything else
   * before the order is the store's setup or stock, not the subscriber's card (a token granted before
   * the checkout scopes existed, an item out of stock, a cart the platform dropped): the charge stays
   * pending with nothing paid, is tried again, and past the grace period waits for a person
   * (requires_review) instead of sending the subscriber into dunning.
   */
  function refusal(what: string, reply: PlatformReply, refused?: 'cart' | 'order'): OrderOutcome {
    const status = statusOf(reply)
    if (status === 401) return failed('gateway_configuration', redact(replyReason(what, reply)))
    const hint = status === 403 ? " (the store's token may lack the store_cart and store_checkout scopes: authorize the app again)" : ''
    const outcome: OrderOutcome = { status: 'unknown', reason: redact(`${replyReason(what, reply)}${hint}; nothing was paid`) }
    // Making the cart or the order refused: nothing was made, and stock that ran out since it was read
    // is one reason; the engine reads it again.
    return status === 422 && refused ? { ...outcome, refused } : outcome
  }
  const dataOf = (body: unknown) => (body as { data?: unknown } | null)?.data as Checkout | undefined

  // 1. The cart: an earlier holder's, or a new one kept on the charge before anything else.
  let cartId = charge.cartId
  let checkout: Checkout | undefined
  if (cartId === undefined) {
    const addOnLines = []
    for (const [index, line] of (order.addOns ?? []).entries()) {
      const id = platformInt(line.platformProductId)
      if (id === undefined) return failed('processing_error', `add-on ${index + 1}: the product's platform id ${JSON.stringify(line.platformProductId)} is not a platform product id`)
      addOnLines.push({ product_id: id, quantity: line.quantity, list_price: decimal(line.unitAmount) })
    }
    const variantId = platformInt(order.platformVariantId)
    const made = await step('creating the renewal cart', {
      method: 'POST',
      path: '/v3/carts',
      body: {
        customer_id: customerId,
        line_items: [{ product_id: productId, ...(variantId === undefined ? {} : { variant_id: variantId }), quantity: order.quantity, list_price: decimal(order.unitAmount) }, ...addOnLines],
      },
    }, 'cart')
    if ('outcome' in made) return made.outcome
    const id = (dataOf(made.ok) as { id?: unknown } | undefined)?.id
    if (typeof id !== 'string' || id === '') return { status: 'unknown', reason: 'the platform answered the new cart without an id; nothing was paid' }
    try {
      await charge.onCart?.(id)
    } catch (error) {
      return { status: 'unknown', reason: `the cart was not kept: ${(error instanceof Error ? error.message : String(error)).slice(0, 200)}` }
    }
    cartId = id
    checkout = { cart: dataOf(made.ok) as Checkout['cart'] }
  } else {
    const read = await step("reading the renewal's checkout", { method: 'GET', path: `/v3/checkouts/${encodeURIComponent(cartId)}`, query: INCLUDE_OPTIONS })
    if ('outcome' in read) return read.outcome
    checkout = dataOf(read.ok)
  }
  const path = `/v3/checkouts/${encodeURIComponent(cartId)}`

  // 2. Price the checkout, doing only what it lacks (a reused cart may be part way).
  if (!checkout?.billing_address?.address1) {
    const added = await step("adding the checkout's billing address", { method: 'POST', path: `${path}/billing-address`, body: checkoutAddress(billing, order.email) })
    if ('outcome' in added) return added.outcome
    checkout = dataOf(added.ok)
  }
  // The discount first: applying one can clear a chosen shipping option.
  if (order.discountAmount > 0 && decimalToMinor(checkout?.cart?.discount_amount ?? 0, exponent) !== order.discountAmount) {
    const discounted = await step("applying the subscription's discount", {
      method: 'POST',
      path: `${path}/discounts`,
      body: { cart: { discounts: [{ discounted_amount: decimal(order.discountAmount), name: 'Subscription discount' }] } },
    })
    if ('outcome' in discounted) return discounted.outcome
    checkout = dataOf(discounted.ok)
  }
  // Only physical items ship: a cart of digital goods has no consignment and no shipping.
  const physical = checkout?.cart?.line_items?.physical_items ?? []
  let picked: ShippingOption | undefined
  if (order.shippingAddress && physical.length > 0) {
    let consignment = checkout?.consignments?.[0]
    if (!consignment || !consignment.available_shipping_options) {
      const added = consignment
        ? await step("reading the checkout's shipping options", { method: 'GET', path, query: INCLUDE_OPTIONS })
        : await step('adding the consignment', {
            method: 'POST',
            path: `${path}/consignments`,
            query: INCLUDE_OPTIONS,
            body: [{ address: checkoutAddress(order.shippingAddress, order.email), line_items: physical.map((item) => ({ item_id: item.id, quantity: item.quantity })) }],
          })
      if ('outcome' in added) return added.outcome
      checkout = dataOf(added.ok)
      consignment = checkout?.consignments?.[0]
    }
    if (!consignment || typeof consignment.id !== 'string') return { status: 'unknown', reason: 'the platform answered the consignment without an id; nothing was paid' }
    picked = pickShippingOption(consignment.available_shipping_options ?? [], order.shipping.method, exponent)
    if (!picked) return { status: 'unknown', reason: "the platform quotes no shipping option to the subscription's shipping address; nothing was paid" }
    if (consignment.selected_shipping_option?.id !== picked.id) {
      const chosen = await step('choosing the shipping option', { method: 'PUT', path: `${path}/consignments/${encodeURIComponent(consignment.id)}`, body: { shipping_option_id: picked.id } })
      if ('outcome' in chosen) return chosen.outcome
      checkout = dataOf(chosen.ok)
    }
  }
  if (checkout?.grand_total === undefined) {
    const read = await step('reading the priced checkout', { method: 'GET', path })
    if ('outcome' in read) return read.outcome
    checkout = dataOf(read.ok)
  }
  // Ordered only with the option chosen still selected: the total must include the shipping it names.
  if (picked && checkout?.consignments?.[0]?.selected_shipping_option?.id !== picked.id) {
    return { status: 'unknown', reason: "the checkout's shipping option was not the one chosen when it was priced; nothing was paid" }
  }
  const priced = checkoutPricing(checkout ?? {}, order)
  // A platform that prices the renewal otherwise than the service is never paid; a person looks at it.
  if ('problem' in priced) return { status: 'unknown', reason: `${priced.problem}: nothing was paid` }
  const { pricing } = priced

  // 3. The order: found again by its cart when an earlier request may have made it, else asked for once.
  let orderId: number | undefined
  if (charge.orderRequestedAt) {
    const found = await orderOfCart(deps, cartId)
    if ('outcome' in found) return found.outcome
    orderId = found.ok
    if (orderId === undefined && Date.now() - charge.orderRequestedAt.getTime() < deps.orderRequestWindowMs) {
      return { status: 'unknown', reason: "an earlier request for the renewal's order may still be in flight; the order is looked for again later" }
    }
  }
  if (orderId === undefined) {
    try {
      await charge.onOrderRequest?.()
    } catch (error) {
      return { status: 'unknown', reason: `the order was not requested: ${(error instanceof Error ? error.message : String(error)).slice(0, 200)}` }
    }
    const made = await client.call(access, { method: 'POST', path: `${path}/orders` })
    const id = is2xx(made) ? (bodyOf(made) as { data?: { id?: unknown } } | null)?.data?.id : undefined
    if (Number.isInteger(id)) orderId = id as number
    else if (statusOf(made) >= 400 && statusOf(made) < 500 && statusOf(made) !== 429) return refusal('creating the order from the checkout', made, 'order')
    else if (!made.sent && made.neverSent) return { status: 'unknown', reason: redact(replyReason('creating the order from the checkout (nothing was sent)', made)) }
    else {
      // Lost, 5xx, or a 2xx without an id: the order may exist. Look again, never ask again blindly.
      const found = await orderOfCart(deps, cartId)
      if ('ok' in found && found.ok !== undefined) orderId = found.ok
      else return { status: 'unknown', reason: redact(replyReason('creating the order from the checkout', made)) }
    }
  }

  // 4. Tag it (and set the store's own shipping); the answer is the order as the platform holds it.
  const tagged = await step('tagging the renewal order', {
    method: 'PUT',
    path: `/v2/orders/${orderId}`,
    body: { external_source: RENEWAL_ORDER_SOURCE, external_order_id: charge.idempotencyKey, staff_notes: `Renewal of subscription ${charge.subscriptionId}`, ...(pricing.override ?? {}) },
  })
  if ('outcome' in tagged) return tagged.outcome
  const fits = deps.fits(tagged.ok, { ...order, amount: pricing.amount })
  if (fits.status !== 'created') return fits
  const { override: _override, ...figures } = pricing
  return { status: 'created', orderId: String(orderId), priced: figures }
}

/** The first order made from this cart, if any (orders.v2 `getOrders` by `cart_id`, lowest id first). */
async function orderOfCart(deps: CheckoutOrderDeps, cartId: string): Promise<Step<number | undefined>> {
  // Whether the plain listing includes Incomplete orders is not settled (docs/platform-api.md §2.2): ask both ways.
  const queries: Record<string, string | number>[] = [{ cart_id: cartId }, { cart_id: cartId, status_id: 0 }]
  for (const query of queries) {
    const reply = await deps.client.call(deps.access, { method: 'GET', path: '/v2/orders', query: { ...query, sort: 'id:asc' } })
    if (statusOf(reply) === 204) continue
    if (!is2xx(reply)) return { outcome: { status: 'unknown', reason: deps.redact(replyReason('looking for the renewal order by its cart', reply)) } }
    const orders = Array.isArray(bodyOf(reply)) ? (bodyOf(reply) as Array<{ id?: unknown; cart_id?: unknown }>) : []
    // The filter's matching rule is not documented: keep only exact matches.
    const ids = orders.filter((o) => o?.cart_id === cartId && Number.isInteger(o.id)).map((o) => o.id as number).sort((a, b) => a - b)
    if (ids.length > 0) return { ok: ids[0] }
  }
  return { ok: undefined }
}

function failed(failureCode: 'processing_error' | 'gateway_configuration', failureMessage: string): OrderOutcome {
  return { status: 'failed', failureCode, failureMessage }
}
