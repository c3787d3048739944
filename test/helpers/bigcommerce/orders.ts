/**
 * Orders: v2 create / find / read / products / update (§2), v3 transactions (§4) and refunds (§5).
 * "§n" refers to docs/platform-api.md; "(simulator's reading)" marks a choice the reference leaves open.
 */
import type { Ctx, Reply } from './context.ts'
import {
  FieldErrors,
  Refusal,
  fourDp,
  isDecimal,
  isInt,
  isObject,
  pageParams,
  pagination,
  parseJson,
  pick,
  rfc2822,
  toUnits,
  twoDpNumber,
} from './http.ts'
import { ORDER_STATUSES, cardType, refundableUnits, type SimOrder, type SimOrderProduct, type SimRefund, type SimTransaction } from './state.ts'

// ---------------------------------------------------------------------------------------------
// Field lists of POST /v2/orders (O2 order_Post + order_Shared; order_RespOnly is read-only).
// ---------------------------------------------------------------------------------------------

const ORDER_WRITABLE = new Set([
  'billing_address', 'default_currency_code', 'products', 'shipping_addresses', 'consignments', 'fees',
  'base_handling_cost', 'base_shipping_cost', 'base_wrapping_cost', 'channel_id', 'customer_id', 'customer_message',
  'date_created', 'discount_amount', 'order_source', 'ebay_order_id', 'external_merchant_id', 'external_source',
  'geoip_country', 'geoip_country_iso2', 'handling_cost_ex_tax', 'handling_cost_inc_tax', 'ip_address', 'ip_address_v6',
  'items_shipped', 'items_total', 'order_is_digital', 'payment_method', 'payment_provider_id', 'refunded_amount',
  'shipping_cost_ex_tax', 'shipping_cost_inc_tax', 'staff_notes', 'status_id', 'subtotal_ex_tax', 'subtotal_inc_tax',
  'tax_provider_id', 'customer_locale', 'external_order_id', 'total_ex_tax', 'total_inc_tax', 'wrapping_cost_ex_tax',
  'wrapping_cost_inc_tax',
])

/** order_RespOnly fields and `external_id` (§2.1: "(Read-only) The order ID in another system"). */
const ORDER_READ_ONLY = new Set([
  'id', 'date_modified', 'date_shipped', 'cart_id', 'status', 'subtotal_tax', 'shipping_cost_tax',
  'shipping_cost_tax_class_id', 'handling_cost_tax', 'handling_cost_tax_class_id', 'wrapping_cost_tax',
  'wrapping_cost_tax_class_id', 'payment_status', 'store_credit_amount', 'gift_certificate_amount', 'currency_id',
  'currency_code', 'currency_exchange_rate', 'default_currency_id', 'store_default_currency_code',
  'store_default_to_transactional_exchange_rate', 'coupon_discount', 'shipping_address_count', 'is_deleted',
  'total_tax', 'is_tax_inclusive_pricing', 'is_email_opt_in', 'coupons', 'external_id',
])

/** billingAddress_Base / shippingAddress_Base fields, all strings (§2.1). */
const ADDRESS_FIELDS = new Set(['first_name', 'last_name', 'company', 'street_1', 'street_2', 'city', 'state', 'zip', 'country', 'country_iso2', 'phone', 'email'])

const CATALOG_ITEM_FIELDS = new Set([
  'product_id', 'name', 'name_customer', 'name_merchant', 'product_options', 'quantity', 'price_inc_tax', 'price_ex_tax',
  'upc', 'variant_id', 'wrapping_id', 'wrapping_name', 'wrapping_message', 'wrapping_cost_ex_tax', 'wrapping_cost_inc_tax',
])
const CUSTOM_ITEM_FIELDS = new Set(['name', 'name_customer', 'name_merchant', 'quantity', 'price_inc_tax', 'price_ex_tax', 'upc', 'sku'])

/** Pairs that must be sent together (§2.1 "If you send one, send the other"; ORD "Calculating totals"). */
const MONEY_PAIRS: [string, string][] = [
  ['shipping_cost_ex_tax', 'shipping_cost_inc_tax'],
  ['handling_cost_ex_tax', 'handling_cost_inc_tax'],
  ['subtotal_ex_tax', 'subtotal_inc_tax'],
  ['total_ex_tax', 'total_inc_tax'],
  ['wrapping_cost_ex_tax', 'wrapping_cost_inc_tax'],
]

/** Order-level money is "(Float, Float-As-String, Integer)" (§0 "Money"). */
function orderLevelMoney(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isFinite(v) && v >= 0) return toUnits(v)
  if (typeof v === 'string' && /^\d+(\.\d{1,4})?$/.test(v)) return toUnits(Number(v))
  return undefined
}

function readOnlyMessage(field: string): string {
  // The message of O2's updateOrderShippingAddress 400 example (§2.1 "Errors").
  return `The field '${field}' cannot be written to. Please remove it from your request before trying again.`
}

function checkAddress(errors: FieldErrors, path: string, value: unknown, billing: boolean): Record<string, string> {
  const out: Record<string, string> = {}
  if (!isObject(value)) {
    errors.add(path, 'must be an object')
    return out
  }
  for (const [key, v] of Object.entries(value)) {
    if (key === 'shipping_method' && !billing) {
      if (typeof v !== 'string') errors.add(`${path}.shipping_method`, 'must be a string')
      else out[key] = v
      continue
    }
    if (key === 'form_fields') continue
    if (!ADDRESS_FIELDS.has(key)) errors.add(`${path}.${key}`, 'is not a field of the address')
    else if (typeof v !== 'string') errors.add(`${path}.${key}`, 'must be a string')
    else out[key] = v
  }
  if (billing) {
    // billingAddress_Base requires `zip`, "two or more characters" (§2.1).
    if (typeof value.zip !== 'string' || value.zip.trim().length < 2) errors.add(`${path}.zip`, 'is required, two or more characters')
    // ORD FAQ: country or country_iso2, either is enough (simulator's reading: one of them is needed).
    if (typeof value.country !== 'string' && typeof value.country_iso2 !== 'string') errors.add(`${path}.country`, 'country or country_iso2 is required')
  }
  return out
}

function checkPrices(errors: FieldErrors, path: string, item: Record<string, unknown>, required: boolean): { ex: number; inc: number } | undefined {
  const hasInc = 'price_inc_tax' in item
  const hasEx = 'price_ex_tax' in item
  if (!hasInc && !hasEx) {
    if (required) errors.add(`${path}.price_inc_tax`, 'price_inc_tax and price_ex_tax are required for a custom product')
    return undefined
  }
  // ORD "Adding products": override both or the totals come out wrong. The platform would compute
  // wrong totals; the simulator refuses (stricter than the platform, on purpose).
  if (hasInc !== hasEx) {
    errors.add(`${path}.${hasInc ? 'price_ex_tax' : 'price_inc_tax'}`, 'price_inc_tax and price_ex_tax must be overridden together')
    return undefined
  }
  // JSON numbers in decimal major units (O2 orderCatalogProduct_Post: `type: number`; §0 "Money").
  for (const f of ['price_inc_tax', 'price_ex_tax']) {
    if (!isDecimal(item[f], 4) || (item[f] as number) < 0) errors.add(`${path}.${f}`, 'must be a JSON number in decimal major units (e.g. 10.98), not negative')
  }
  if (!isDecimal(item.price_inc_tax, 4) || !isDecimal(item.price_ex_tax, 4)) return undefined
  return { inc: toUnits(item.price_inc_tax), ex: toUnits(item.price_ex_tax) }
}

function checkProducts(ctx: Ctx, errors: FieldErrors, value: unknown): SimOrderProduct[] {
  const out: SimOrderProduct[] = []
  if (!Array.isArray(value) || value.length === 0) {
    errors.add('products', 'must be a non-empty array')
    return out
  }
  value.forEach((item: unknown, i) => {
    const path = `products[${i}]`
    if (!isObject(item)) return errors.add(path, 'must be an object')
    const catalog = 'product_id' in item
    const allowed = catalog ? CATALOG_ITEM_FIELDS : CUSTOM_ITEM_FIELDS
    for (const key of Object.keys(item)) if (!allowed.has(key)) errors.add(`${path}.${key}`, `is not a field of a ${catalog ? 'catalog' : 'custom'} product`)
    if (!isInt(item.quantity) || item.quantity < 1) errors.add(`${path}.quantity`, 'is required, an integer of at least 1')
    for (const f of ['name', 'name_customer', 'name_merchant']) {
      if (f in item && (typeof item[f] !== 'string' || (item[f] as string).length === 0)) errors.add(`${path}.${f}`, 'must be a non-empty string')
    }
    const prices = checkPrices(errors, path, item, !catalog)
    const quantity = isInt(item.quantity) ? item.quantity : 0
    if (catalog) {
      // orderCatalogProduct_Post: product_id integer of a catalog product.
      if (!isInt(item.product_id)) return errors.add(`${path}.product_id`, 'must be an integer')
      const product = ctx.store.products.get(item.product_id)
      if (!product) return errors.add(`${path}.product_id`, `product ${item.product_id} does not exist in the catalog`)
      let variantId: number | null = null
      if ('variant_id' in item) {
        if (!isInt(item.variant_id) || !product.variant_ids.includes(item.variant_id)) return errors.add(`${path}.variant_id`, `is not a variant of product ${product.id}`)
        variantId = item.variant_id
      }
      const options: { id: number; value: string }[] = []
      if ('product_options' in item) {
        if (!Array.isArray(item.product_options)) errors.add(`${path}.product_options`, 'must be an array')
        else
          item.product_options.forEach((o: unknown, j) => {
            if (!isObject(o) || !isInt(o.id) || typeof o.value !== 'string') errors.add(`${path}.product_options[${j}]`, 'must be {id: integer, value: string}')
            else options.push({ id: o.id, value: o.value })
          })
      }
      // §2.1: product_options are needed for a product with variants and no variant_id.
      if (product.variant_ids.length > 0 && variantId === null && options.length === 0) errors.add(`${path}.variant_id`, 'the product has variants: send variant_id or product_options')
      const price = prices ?? { inc: toUnits(product.price), ex: toUnits(product.price) }
      out.push({
        id: 0,
        product_id: product.id,
        variant_id: variantId,
        name: typeof item.name === 'string' ? item.name : product.name,
        sku: product.sku,
        type: product.type,
        quantity,
        price_ex_tax: price.ex,
        price_inc_tax: price.inc,
        product_options: options,
      })
    } else {
      // orderCustomProduct_Post: name (1 to 250), quantity, price_inc_tax, price_ex_tax required.
      if (typeof item.name !== 'string' || item.name.length < 1 || item.name.length > 250) errors.add(`${path}.name`, 'is required for a custom product (1 to 250 characters), or send product_id')
      if (!prices) return
      out.push({
        id: 0,
        product_id: 0,
        variant_id: null,
        name: String(item.name),
        sku: typeof item.sku === 'string' ? item.sku : '',
        type: 'physical',
        quantity,
        price_ex_tax: prices.ex,
        price_inc_tax: prices.inc,
        product_options: [],
      })
    }
  })
  return out
}

/** POST /v2/orders (§2.1). */
/** What a new order of either kind (v2 create, from a checkout) starts with: made now, nothing paid or refunded. */
export function unpaidOrderState(now: Date) {
  return {
    payment_status: '',
    payment_method: '',
    payment_provider_id: null,
    date_created: now,
    date_modified: now,
    transactions: [],
    refunds: [],
    payment_requests: 0,
    successful_payments: 0,
    pats_issued: 0,
  }
}

/** Order-level money fields sent in pairs (ex/inc tax), in ten-thousandths; a field sent alone, or not an amount, is an error. */
function moneyPairsOf(body: Record<string, unknown>, pairs: ReadonlyArray<readonly [string, string]>, errors: FieldErrors): Record<string, number> {
  const money: Record<string, number> = {}
  for (const [a, b] of pairs) {
    if ((a in body) !== (b in body)) errors.add(a in body ? b : a, `${a} and ${b} must be sent together`)
    for (const f of [a, b]) {
      if (!(f in body)) continue
      const units = orderLevelMoney(body[f])
      if (units === undefined) errors.add(f, 'must be a non-negative amount (Float, Float-As-String, Integer)')
      else money[f] = units
    }
  }
  return money
}

export async function createOrder(ctx: Ctx): Promise<Reply> {
  const body = parseJson(ctx.rawBody)
  if (!isObject(body)) throw new Refusal(400, 'body', 'The request body must be a JSON object')
  for (const key of Object.keys(body)) {
    if (ORDER_READ_ONLY.has(key)) throw new Refusal(400, 'body', readOnlyMessage(key))
    // Unknown fields (`status`, `external_id`'s cousins, `total_minor_units`, `customer_email`...) are
    // refused too (simulator's reading: the reference does not say; a silent drop would hide the bug).
    if (!ORDER_WRITABLE.has(key)) throw new Refusal(400, 'body', `The field '${key}' is not a field of an order.`)
  }
  const errors = new FieldErrors()
  if (!('billing_address' in body)) errors.add('billing_address', 'is required')
  const billing = checkAddress(errors, 'billing_address', body.billing_address, true)
  // §2.1: products (or consignments) are required, never both. Consignments are not simulated.
  if ('consignments' in body) errors.add('consignments', 'consignments are not simulated; send products')
  const products = checkProducts(ctx, errors, body.products)
  const shipping: Record<string, unknown>[] = []
  if ('shipping_addresses' in body) {
    if (!Array.isArray(body.shipping_addresses)) errors.add('shipping_addresses', 'must be an array')
    else body.shipping_addresses.forEach((a: unknown, i) => shipping.push(checkAddress(errors, `shipping_addresses[${i}]`, a, false)))
  }
  // status_id int of §2.5; absent = 1 Pending (ORD "Changing order status").
  let statusId = 1
  if ('status_id' in body) {
    if (!isInt(body.status_id) || !(body.status_id in ORDER_STATUSES)) errors.add('status_id', 'must be an order status id (0 to 14)')
    else statusId = body.status_id
  }
  // customer_id: 0 or absent = guest (ORD); otherwise an existing customer (simulator's reading: 400).
  let customerId = 0
  if ('customer_id' in body) {
    if (!isInt(body.customer_id) || body.customer_id < 0) errors.add('customer_id', 'must be an integer (0 for a guest)')
    else if (body.customer_id > 0 && !ctx.store.customers.has(body.customer_id)) errors.add('customer_id', `customer ${body.customer_id} does not exist`)
    else customerId = body.customer_id
  }
  for (const f of ['external_order_id', 'customer_message', 'staff_notes']) {
    if (f in body && typeof body[f] !== 'string') errors.add(f, 'must be a string')
  }
  if (typeof body.staff_notes === 'string' && body.staff_notes.length > 65535) errors.add('staff_notes', 'at most 65535 characters')
  if ('external_source' in body && body.external_source !== null && typeof body.external_source !== 'string') errors.add('external_source', 'must be a string or null')
  // channel_id must be a valid, enabled channel (§2.1); the simulator has channel 1 only.
  if ('channel_id' in body && body.channel_id !== 1) errors.add('channel_id', 'channel does not exist or is not enabled')
  // default_currency_code is writable only with multi-currency (§2.1); the simulator has one currency.
  if ('default_currency_code' in body && body.default_currency_code !== ctx.store.currency) errors.add('default_currency_code', `multi-currency is off; the store currency is ${ctx.store.currency}`)
  const money = moneyPairsOf(body, MONEY_PAIRS, errors)
  errors.throwIfAny(400)

  await ctx.delay()
  const store = ctx.store
  const now = ctx.core.now()
  const id = store.next.order++
  for (const p of products) p.id = store.next.orderProduct++
  const subtotalEx = products.reduce((s, p) => s + p.price_ex_tax * p.quantity, 0)
  const subtotalInc = products.reduce((s, p) => s + p.price_inc_tax * p.quantity, 0)
  const shipEx = money.shipping_cost_ex_tax ?? 0
  const shipInc = money.shipping_cost_inc_tax ?? 0
  const handEx = money.handling_cost_ex_tax ?? 0
  const handInc = money.handling_cost_inc_tax ?? 0
  const order: SimOrder = {
    id,
    store_hash: store.hash,
    customer_id: customerId,
    status_id: statusId,
    external_order_id: typeof body.external_order_id === 'string' ? body.external_order_id : null,
    external_source: typeof body.external_source === 'string' ? body.external_source : null,
    channel_id: 1,
    billing_address: billing,
    shipping_addresses: shipping,
    products,
    subtotal_ex_tax: money.subtotal_ex_tax ?? subtotalEx,
    subtotal_inc_tax: money.subtotal_inc_tax ?? subtotalInc,
    shipping_cost_ex_tax: shipEx,
    shipping_cost_inc_tax: shipInc,
    handling_cost_ex_tax: handEx,
    handling_cost_inc_tax: handInc,
    total_ex_tax: money.total_ex_tax ?? subtotalEx + shipEx + handEx,
    total_inc_tax: money.total_inc_tax ?? subtotalInc + shipInc + handInc,
    currency_code: store.currency,
    staff_notes: typeof body.staff_notes === 'string' ? body.staff_notes : '',
    customer_message: typeof body.customer_message === 'string' ? body.customer_message : '',
    ...unpaidOrderState(now),
  }
  store.orders.set(id, order)
  ctx.core.counters.ordersCreated++
  // WHE: store/order/created fires for Incomplete orders too (§7.2).
  ctx.core.orderEvent(store, order, 'store/order/created')
  // O2 documents 200 with the bare order_Resp (§2.1); switchable to 201.
  return { status: ctx.core.options.createOrderStatus, body: renderOrder(order, ctx) }
}

/** The bare order object, `order_Resp` (§2.1, §2.3). Money as 4-decimal strings. */
export function renderOrder(o: SimOrder, ctx: Ctx): Record<string, unknown> {
  const base = `${ctx.url.split('/v2/')[0]}/v2/orders/${o.id}`
  const itemsTotal = o.products.reduce((s, p) => s + p.quantity, 0)
  const refunded = o.refunds.reduce((s, r) => s + (r.payments.some((p) => p.is_declined) ? 0 : r.total_amount), 0)
  return {
    id: o.id,
    customer_id: o.customer_id,
    date_created: rfc2822(o.date_created),
    date_modified: rfc2822(o.date_modified),
    date_shipped: '',
    status_id: o.status_id,
    status: ORDER_STATUSES[o.status_id],
    custom_status: ORDER_STATUSES[o.status_id],
    subtotal_ex_tax: fourDp(o.subtotal_ex_tax),
    subtotal_inc_tax: fourDp(o.subtotal_inc_tax),
    subtotal_tax: fourDp(o.subtotal_inc_tax - o.subtotal_ex_tax),
    base_shipping_cost: fourDp(o.shipping_cost_ex_tax),
    shipping_cost_ex_tax: fourDp(o.shipping_cost_ex_tax),
    shipping_cost_inc_tax: fourDp(o.shipping_cost_inc_tax),
    shipping_cost_tax: fourDp(o.shipping_cost_inc_tax - o.shipping_cost_ex_tax),
    base_handling_cost: fourDp(o.handling_cost_ex_tax),
    handling_cost_ex_tax: fourDp(o.handling_cost_ex_tax),
    handling_cost_inc_tax: fourDp(o.handling_cost_inc_tax),
    handling_cost_tax: fourDp(o.handling_cost_inc_tax - o.handling_cost_ex_tax),
    base_wrapping_cost: '0.0000',
    wrapping_cost_ex_tax: '0.0000',
    wrapping_cost_inc_tax: '0.0000',
    wrapping_cost_tax: '0.0000',
    total_ex_tax: fourDp(o.total_ex_tax),
    total_inc_tax: fourDp(o.total_inc_tax),
    total_tax: fourDp(o.total_inc_tax - o.total_ex_tax),
    items_total: itemsTotal,
    items_shipped: 0,
    payment_method: o.payment_method,
    payment_provider_id: o.payment_provider_id,
    payment_status: o.payment_status,
    refunded_amount: fourDp(refunded),
    order_is_digital: o.products.every((p) => p.type === 'digital'),
    store_credit_amount: '0.0000',
    gift_certificate_amount: '0.0000',
    ip_address: '',
    ip_address_v6: '',
    geoip_country: '',
    geoip_country_iso2: '',
    currency_id: 1,
    currency_code: o.currency_code,
    currency_exchange_rate: '1.0000000000',
    default_currency_id: 1,
    default_currency_code: o.currency_code,
    store_default_currency_code: o.currency_code,
    store_default_to_transactional_exchange_rate: '1.0000000000',
    staff_notes: o.staff_notes,
    customer_message: o.customer_message,
    discount_amount: '0.0000',
    coupon_discount: '0.0000',
    shipping_address_count: o.shipping_addresses.length,
    is_deleted: false,
    ebay_order_id: '0',
    // The cart (= checkout) an order was made from (O2 order_RespOnly.cart_id, §13.5); '' otherwise.
    cart_id: o.cart_id ?? '',
    billing_address: { ...o.billing_address, form_fields: [] },
    is_email_opt_in: false,
    credit_card_type: null,
    order_source: 'external',
    channel_id: o.channel_id,
    external_source: o.external_source,
    external_id: null,
    external_merchant_id: null,
    external_order_id: o.external_order_id,
    tax_provider_id: '',
    customer_locale: '',
    products: { url: `${base}/products`, resource: `/orders/${o.id}/products` },
    shipping_addresses: { url: `${base}/shipping_addresses`, resource: `/orders/${o.id}/shipping_addresses` },
    coupons: { url: `${base}/coupons`, resource: `/orders/${o.id}/coupons` },
  }
}

function orderOr404(ctx: Ctx): SimOrder {
  const id = Number(ctx.params.orderId)
  const order = Number.isInteger(id) ? ctx.store.orders.get(id) : undefined
  if (!order) throw new Refusal(404, 'state', 'The requested resource was not found.', { title: `Order ${ctx.params.orderId} not found` })
  return order
}

function intQuery(ctx: Ctx, name: string, status: number): number | undefined {
  const raw = ctx.query.get(name)
  if (raw === null) return undefined
  const n = Number(raw)
  if (raw === '' || !Number.isInteger(n)) throw new Refusal(status, 'body', `The query parameter '${name}' must be an integer`)
  return n
}

/** GET /v2/orders (§2.2): filters, a bare array, 204 or `[]` when empty (switch). */
export function listOrders(ctx: Ctx): Reply {
  const { page, limit } = pageParams(ctx.query, 400)
  const statusId = intQuery(ctx, 'status_id', 400)
  const customerId = intQuery(ctx, 'customer_id', 400)
  const minId = intQuery(ctx, 'min_id', 400)
  const maxId = intQuery(ctx, 'max_id', 400)
  const external = ctx.query.get('external_order_id')
  // O2 getOrders `cart_id` (string): orders made from that cart (checkouts, §13.5).
  const cartId = ctx.query.get('cart_id')
  const sort = ctx.query.get('sort') ?? 'id:asc'
  const [sortField, sortDir = 'asc'] = sort.split(':')
  const sortable = ['id', 'customer_id', 'date_created', 'date_modified', 'status_id', 'channel_id', 'external_id']
  if (!sortable.includes(sortField ?? '') || !['asc', 'desc'].includes(sortDir)) throw new Refusal(400, 'body', `The query parameter 'sort' must be one of ${sortable.join(', ')} with :asc or :desc`)
  let orders = [...ctx.store.orders.values()].filter((o) => {
    // Incomplete orders only when asked for (simulator's default reading, §2.2; switchable).
    if (statusId === undefined && o.status_id === 0 && !ctx.core.options.listIncludesIncomplete) return false
    if (statusId !== undefined && o.status_id !== statusId) return false
    if (customerId !== undefined && o.customer_id !== customerId) return false
    if (minId !== undefined && o.id < minId) return false
    if (maxId !== undefined && o.id > maxId) return false
    // Exact match (§2.2 leaves the matching open; simulator's reading).
    if (external !== null && o.external_order_id !== external) return false
    if (cartId !== null && o.cart_id !== cartId) return false
    return true
  })
  const key = sortField as keyof SimOrder
  orders.sort((a, b) => {
    const x = a[key] as number | Date
    const y = b[key] as number | Date
    const d = Number(x) - Number(y) || a.id - b.id
    return sortDir === 'desc' ? -d : d
  })
  orders = pick(orders, page, limit)
  if (orders.length === 0 && ctx.core.options.emptyOrderListStatus === 204) return { status: 204 }
  return { status: 200, body: orders.map((o) => renderOrder(o, ctx)) }
}

/** GET /v2/orders/{id} (§2.3). */
export function getOrder(ctx: Ctx): Reply {
  return { status: 200, body: renderOrder(orderOr404(ctx), ctx) }
}

/** GET /v2/orders/{id}/products (§2.4): a bare array. */
export function getOrderProducts(ctx: Ctx): Reply {
  const order = orderOr404(ctx)
  const { page, limit } = pageParams(ctx.query, 400)
  const body = pick(order.products, page, limit).map((p) => ({
    id: p.id,
    order_id: order.id,
    product_id: p.product_id,
    variant_id: p.variant_id,
    order_address_id: 0,
    name: p.name,
    name_customer: p.name,
    name_merchant: p.name,
    sku: p.sku,
    upc: '',
    type: p.type,
    base_price: fourDp(p.price_ex_tax),
    price_ex_tax: fourDp(p.price_ex_tax),
    price_inc_tax: fourDp(p.price_inc_tax),
    price_tax: fourDp(p.price_inc_tax - p.price_ex_tax),
    base_total: fourDp(p.price_ex_tax * p.quantity),
    total_ex_tax: fourDp(p.price_ex_tax * p.quantity),
    total_inc_tax: fourDp(p.price_inc_tax * p.quantity),
    total_tax: fourDp((p.price_inc_tax - p.price_ex_tax) * p.quantity),
    quantity: p.quantity,
    is_refunded: false,
    quantity_refunded: 0,
    refund_amount: '0.0000',
    product_options: p.product_options.map((o, i) => {
      const defined = ctx.store.products.get(p.product_id)?.options.get(o.id)
      return {
        id: i + 1,
        option_id: o.id,
        order_product_id: p.id,
        product_option_id: o.id,
        display_name: defined?.display_name ?? `Option ${o.id}`,
        display_value: o.value,
        value: o.value,
        type: defined?.type ?? 'Multiple choice',
        name: `option-${o.id}`,
      }
    }),
    applied_discounts: [],
    parent_order_product_id: null,
  }))
  return { status: 200, body }
}

/** GET /v2/orders/{id}/shipping_addresses (O2 getOrderShippingAddresses): a bare array, 50 per page. */
export function getOrderShippingAddresses(ctx: Ctx): Reply {
  const order = orderOr404(ctx)
  const { page, limit } = pageParams(ctx.query, 400)
  const body = pick(order.shipping_addresses, page, limit).map((a, i) => ({
    id: i + 1,
    order_id: order.id,
    first_name: '', last_name: '', company: '', street_1: '', street_2: '', city: '', state: '', zip: '', country: '', country_iso2: '', phone: '', email: '',
    ...a,
    items_total: order.products.reduce((n, p) => n + p.quantity, 0),
    items_shipped: 0,
    shipping_method: typeof a.shipping_method === 'string' ? a.shipping_method : '',
    form_fields: [],
  }))
  return { status: 200, body }
}

/** order_Put money overrides the simulator takes on PUT (§13.7): each pair sent together. */
const PUT_MONEY_PAIRS: [string, string][] = [
  ['shipping_cost_ex_tax', 'shipping_cost_inc_tax'],
  ['subtotal_ex_tax', 'subtotal_inc_tax'],
  ['total_ex_tax', 'total_inc_tax'],
]

/**
 * PUT /v2/orders/{id}: status, external_order_id and notes (§2.1 "can be changed later by POST or PUT"),
 * and the order_Put money overrides of PUT_MONEY_PAIRS on an Incomplete order (§13.7).
 */
export function updateOrder(ctx: Ctx): Reply {
  const order = orderOr404(ctx)
  const body = parseJson(ctx.rawBody)
  if (!isObject(body)) throw new Refusal(400, 'body', 'The request body must be a JSON object')
  const simulated = new Set(['status_id', 'external_order_id', 'staff_notes', 'customer_message', 'external_source', ...PUT_MONEY_PAIRS.flat()])
  for (const key of Object.keys(body)) {
    if (ORDER_READ_ONLY.has(key)) throw new Refusal(400, 'body', readOnlyMessage(key))
    if (!simulated.has(key)) throw new Refusal(400, 'body', `The field '${key}' cannot be updated in the simulator (or is not a field of an order).`)
  }
  const errors = new FieldErrors()
  if ('status_id' in body && (!isInt(body.status_id) || !(body.status_id in ORDER_STATUSES))) errors.add('status_id', 'must be an order status id (0 to 14)')
  for (const f of ['external_order_id', 'staff_notes', 'customer_message']) if (f in body && typeof body[f] !== 'string') errors.add(f, 'must be a string')
  // order_Put: "(Float, Float-As-String, Integer)", "can't be negative"; subtotal_* and total_* "If
  // specified, the field ... is also required" (the shipping pair too, ORD "Calculating totals").
  const money = moneyPairsOf(body, PUT_MONEY_PAIRS, errors)
  errors.throwIfAny(400)
  // A paid order's money does not change in the simulator: overrides only while Incomplete (simulator's reading).
  if (Object.keys(money).length > 0 && order.status_id !== 0) {
    throw new Refusal(400, 'state', `Order ${order.id} is ${ORDER_STATUSES[order.status_id]} (${order.status_id}), not Incomplete (0): its amounts can no longer be changed`)
  }
  if (money.shipping_cost_ex_tax !== undefined && money.shipping_cost_inc_tax !== undefined) {
    // ORD "Calculating totals": a shipping edit recalculates the total, unless the total is sent too.
    if (money.total_ex_tax === undefined) order.total_ex_tax += money.shipping_cost_ex_tax - order.shipping_cost_ex_tax
    if (money.total_inc_tax === undefined) order.total_inc_tax += money.shipping_cost_inc_tax - order.shipping_cost_inc_tax
    order.shipping_cost_ex_tax = money.shipping_cost_ex_tax
    order.shipping_cost_inc_tax = money.shipping_cost_inc_tax
  }
  // ORD: "If you override subtotal or total, override both; the system will not re-calculate the other."
  if (money.subtotal_ex_tax !== undefined && money.subtotal_inc_tax !== undefined) {
    order.subtotal_ex_tax = money.subtotal_ex_tax
    order.subtotal_inc_tax = money.subtotal_inc_tax
  }
  if (money.total_ex_tax !== undefined && money.total_inc_tax !== undefined) {
    order.total_ex_tax = money.total_ex_tax
    order.total_inc_tax = money.total_inc_tax
  }
  const previous = order.status_id
  if (isInt(body.status_id)) order.status_id = body.status_id
  if (typeof body.external_order_id === 'string') order.external_order_id = body.external_order_id
  if (typeof body.staff_notes === 'string') order.staff_notes = body.staff_notes
  if (typeof body.customer_message === 'string') order.customer_message = body.customer_message
  if (typeof body.external_source === 'string') order.external_source = body.external_source
  order.date_modified = ctx.core.now()
  ctx.core.orderEvent(ctx.store, order, 'store/order/updated')
  if (previous !== order.status_id) ctx.core.orderEvent(ctx.store, order, 'store/order/statusUpdated', { previous_status_id: previous, new_status_id: order.status_id })
  return { status: 200, body: renderOrder(order, ctx) }
}

// ---------------------------------------------------------------------------------------------
// v3 transactions (§4)
// ---------------------------------------------------------------------------------------------

export function renderTransaction(t: SimTransaction): Record<string, unknown> {
  return {
    id: t.id,
    order_id: String(t.order_id), // a string in O3 Transaction (§4)
    event: t.event,
    method: 'credit_card',
    amount: twoDpNumber(t.amount), // number, major units (§4)
    currency: t.currency,
    gateway: t.gateway,
    gateway_transaction_id: t.gateway_transaction_id,
    date_created: t.date_created.toISOString(),
    test: t.test,
    status: t.status,
    fraud_review: false,
    reference_transaction_id: t.reference_transaction_id,
    payment_method_id: t.payment_method_id,
    payment_instrument_token: t.payment_instrument_token,
    offline: null,
    custom: null,
    gift_certificate: null,
    store_credit: null,
    credit_card: t.instrument
      ? {
          card_type: cardType(t.instrument.brand),
          card_iin: t.instrument.issuer_identification_number,
          card_last4: t.instrument.last_4,
          card_expiry_month: t.instrument.expiry_month,
          card_expiry_year: t.instrument.expiry_year,
        }
      : null,
    avs_result: { code: 'Y', message: 'Address and ZIP match', street_match: 'Y', postal_match: 'Y' },
    cvv_result: { code: 'M', message: 'CVV matches' },
  }
}

/** GET /v3/orders/{id}/transactions: 404 unknown order, 204 none, else 200 {data, meta} (§4). */
export function getOrderTransactions(ctx: Ctx): Reply {
  const order = orderOr404(ctx)
  if (order.transactions.length === 0) return { status: 204 }
  const data = order.transactions.map(renderTransaction)
  return { status: 200, body: { data, meta: pagination(data.length, 1, Math.max(50, data.length)) } }
}

// ---------------------------------------------------------------------------------------------
// v3 refunds (§5)
// ---------------------------------------------------------------------------------------------

interface QuotedItems {
  items: SimRefund['items']
  requested: number
}

/**
 * `items` of RefundQuote_Post / RefundRequest_Post_Items (§5.1). ORDER (amount) and PRODUCT
 * (quantity) are simulated; SHIPPING, HANDLING, TAX, GIFT_WRAPPING and FEE are refused as unsimulated.
 */
function checkRefundItems(order: SimOrder, body: Record<string, unknown>, errors: FieldErrors): QuotedItems {
  const out: QuotedItems = { items: [], requested: 0 }
  if ('tax_adjustment_amount' in body) {
    errors.add('tax_adjustment_amount', 'tax adjustment refunds are not simulated; send items')
    return out
  }
  if (!Array.isArray(body.items) || body.items.length === 0) {
    errors.add('items', 'is required, a non-empty array')
    return out
  }
  body.items.forEach((item: unknown, i) => {
    const path = `items[${i}]`
    if (!isObject(item)) return errors.add(path, 'must be an object')
    const type = item.item_type
    const reason = item.reason === undefined ? '' : item.reason
    if (typeof reason !== 'string' || reason.length > 1000) errors.add(`${path}.reason`, 'must be a string of at most 1000 characters')
    if (!isInt(item.item_id)) return errors.add(`${path}.item_id`, 'is required, an integer')
    if (type === 'ORDER') {
      // RefundItem: "order.id corresponding to the item_type of ORDER" (TaxExemptItem's own text says
      // "ID of the product in the order"; simulator's reading: the order id).
      if (item.item_id !== order.id) errors.add(`${path}.item_id`, 'for ORDER must be the order id')
      // Amount: "A non-negative 2 decimal place rounded value" (O3 Amount).
      if (!isDecimal(item.amount, 2) || (item.amount as number) <= 0) return errors.add(`${path}.amount`, 'is required, a positive number of major units with at most 2 decimals')
      out.items.push({ item_type: 'ORDER', item_id: item.item_id, requested_amount: toUnits(item.amount as number), reason: String(reason) })
      out.requested += toUnits(item.amount as number)
    } else if (type === 'PRODUCT') {
      const product = order.products.find((p) => p.id === item.item_id)
      if (!product) return errors.add(`${path}.item_id`, 'is not an order product id of this order (GET /v2/orders/{id}/products)')
      if (!isInt(item.quantity) || item.quantity < 1 || item.quantity > product.quantity) return errors.add(`${path}.quantity`, `is required, an integer from 1 to ${product.quantity}`)
      out.items.push({ item_type: 'PRODUCT', item_id: item.item_id, quantity: item.quantity, requested_amount: null, reason: String(reason) })
      out.requested += product.price_inc_tax * item.quantity
    } else if (['SHIPPING', 'HANDLING', 'TAX', 'GIFT_WRAPPING', 'FEE'].includes(String(type))) {
      errors.add(`${path}.item_type`, `${String(type)} refunds are not simulated`)
    } else {
      errors.add(`${path}.item_type`, 'must be one of PRODUCT, GIFT_WRAPPING, ORDER, SHIPPING, HANDLING, TAX, FEE')
    }
  })
  return out
}

function refundProvider(ctx: Ctx, order: SimOrder): { provider_id: string; provider_description: string } | undefined {
  const paid = order.transactions.find((t) => t.status === 'ok' && (t.event === 'purchase' || t.event === 'capture' || t.event === 'settled'))
  if (!paid) return undefined
  const method = ctx.store.methods.find((m) => m.id === paid.payment_method_id)
  return { provider_id: paid.gateway, provider_description: method?.name ?? paid.gateway }
}

function quote(ctx: Ctx, order: SimOrder, body: Record<string, unknown>, refusalStyle: 'v3' | 'v3-refund') {
  const errors = new FieldErrors()
  const items = checkRefundItems(order, body, errors)
  errors.throwIfAny(422, { style: refusalStyle })
  const provider = refundProvider(ctx, order)
  const refundable = refundableUnits(order)
  if (!provider || refundable === 0) throw new Refusal(422, 'state', 'The order has no payment that can be refunded', { style: refusalStyle })
  const total = Math.min(items.requested, refundable)
  return { items, provider, total, adjustment: total - items.requested }
}

/** POST /v3/orders/{id}/payment_actions/refund_quotes (§5.1): 201 {data: RefundQuote_Full, meta}. */
export function createRefundQuote(ctx: Ctx): Reply {
  const order = orderOr404(ctx)
  const body = parseJson(ctx.rawBody)
  if (!isObject(body)) throw new Refusal(422, 'body', 'The request body must be a JSON object')
  const q = quote(ctx, order, body, 'v3')
  return {
    status: 201,
    body: {
      data: {
        order_id: order.id,
        total_refund_amount: twoDpNumber(q.total),
        total_refund_tax_amount: 0,
        order_level_refund_amount: twoDpNumber(q.items.items.filter((i) => i.item_type === 'ORDER').reduce((s, i) => s + (i.requested_amount ?? 0), 0)),
        rounding: 0,
        adjustment: twoDpNumber(q.adjustment),
        tax_inclusive: true,
        refund_methods: [[{ ...q.provider, amount: twoDpNumber(q.total), offline: false, offline_provider: false, offline_reason: '' }]],
      },
      meta: {},
    },
  }
}

const refundsInFlight = new WeakSet<SimOrder>()

/** POST /v3/orders/{id}/payment_actions/refunds (§5.2): 201 {data: Refund, meta}; 422 {data:[...]}. */
export async function createRefund(ctx: Ctx): Promise<Reply> {
  const order = orderOr404(ctx)
  const body = parseJson(ctx.rawBody)
  if (!isObject(body)) throw new Refusal(422, 'body', 'The request body must be a JSON object', { style: 'v3-refund' })
  const q = quote(ctx, order, body, 'v3-refund')
  const errors = new FieldErrors()
  const payments: { provider_id: string; amount: number; offline: boolean }[] = []
  if (!Array.isArray(body.payments) || body.payments.length === 0) errors.add('payments', 'is required, a non-empty array')
  else
    body.payments.forEach((p: unknown, i) => {
      if (!isObject(p) || typeof p.provider_id !== 'string' || !isDecimal(p.amount, 2) || ('offline' in p && typeof p.offline !== 'boolean')) {
        return errors.add(`payments[${i}]`, 'must be {provider_id: string, amount: number (2 decimals), offline: boolean}')
      }
      if (p.provider_id !== q.provider.provider_id) return errors.add(`payments[${i}].provider_id`, `must be a provider_id of the quote's refund_methods (${q.provider.provider_id})`)
      payments.push({ provider_id: p.provider_id, amount: toUnits(p.amount), offline: p.offline === true })
    })
  errors.throwIfAny(422, { style: 'v3-refund' })
  // O3 note: the amount must match the quote's refund_methods amount, or 422.
  const sum = payments.reduce((s, p) => s + p.amount, 0)
  if (sum !== q.total) throw new Refusal(422, 'state', `The payments total ${fourDp(sum)} does not match the refundable amount ${fourDp(q.total)} of the quote`, { style: 'v3-refund' })
  // O3: concurrent refunds on one order are "not yet supported" (simulator's reading: 422).
  if (refundsInFlight.has(order)) throw new Refusal(422, 'state', 'Another refund of this order is being processed; refunds must be sent one at a time', { style: 'v3-refund' })
  refundsInFlight.add(order)
  try {
    await ctx.delay()
  } finally {
    refundsInFlight.delete(order)
  }
  const store = ctx.store
  const declined = ctx.core.refundDeclines > 0
  if (declined) ctx.core.refundDeclines--
  const refund: SimRefund = {
    id: store.next.refund++,
    order_id: order.id,
    reason: q.items.items[0]?.reason ?? '',
    total_amount: q.total,
    items: q.items.items,
    payments: payments.map((p) => ({
      id: store.next.refundPayment++,
      ...p,
      is_declined: declined,
      declined_message: declined ? 'The payment provider declined the refund' : '',
      transaction_id: '',
    })),
    created: ctx.core.now(),
  }
  order.refunds.push(refund)
  if (!declined) {
    const paid = order.transactions.find((t) => t.status === 'ok' && t.event !== 'refund')
    const t: SimTransaction = {
      id: store.next.transaction++,
      order_id: order.id,
      event: 'refund',
      status: 'ok',
      amount: q.total,
      currency: order.currency_code,
      gateway: q.provider.provider_id,
      gateway_transaction_id: `re_${refund.id}_${order.id}`,
      payment_method_id: paid?.payment_method_id ?? '',
      payment_instrument_token: paid?.payment_instrument_token ?? null,
      instrument: paid?.instrument ?? null,
      test: paid?.test ?? true,
      reference_transaction_id: paid?.id ?? null,
      date_created: ctx.core.now(),
      payment_id: null,
    }
    order.transactions.push(t)
    for (const p of refund.payments) p.transaction_id = String(t.id)
    // §5.2: afterwards the order is 4 Refunded or 14 Partially Refunded.
    const previous = order.status_id
    const fully = refundableUnits(order) === 0
    order.status_id = fully ? 4 : 14
    order.payment_status = fully ? 'refunded' : 'partially refunded'
    order.date_modified = ctx.core.now()
    if (previous !== order.status_id) ctx.core.orderEvent(store, order, 'store/order/statusUpdated', { previous_status_id: previous, new_status_id: order.status_id })
  }
  ctx.core.counters.refundsCreated++
  ctx.core.orderEvent(store, order, 'store/order/refund/created')
  return { status: 201, body: { data: renderRefund(refund), meta: {} } }
}

export function renderRefund(r: SimRefund): Record<string, unknown> {
  return {
    id: r.id,
    order_id: r.order_id,
    user_id: 0,
    created: r.created.toISOString(),
    reason: r.reason,
    total_amount: twoDpNumber(r.total_amount),
    total_tax: 0,
    uses_merchant_override_values: false,
    items: r.items.map((i) => ({ ...i, requested_amount: i.requested_amount === null ? null : twoDpNumber(i.requested_amount) })),
    payments: r.payments.map((p) => ({ ...p, amount: twoDpNumber(p.amount) })),
  }
}

/** GET /v3/orders/{id}/payment_actions/refunds (§5.3). */
export function getOrderRefunds(ctx: Ctx): Reply {
  const order = orderOr404(ctx)
  const data = order.refunds.map(renderRefund)
  return { status: 200, body: { data, meta: pagination(data.length, 1, Math.max(50, data.length)) } }
}

