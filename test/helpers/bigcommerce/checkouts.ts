/**
 * Carts (carts.v3), checkouts (checkouts.v3), inventory items (inventory.v3) and product variants
 * (catalog/product-variants): §13 of docs/platform-api.md. A cart's id is its checkout's id.
 *
 * Money is kept in ten-thousandths like orders.ts (http.ts toUnits) and answered as JSON numbers in
 * decimal major units, as the v3 schemas type it (`type: number`). "(simulator's reading)" marks a
 * choice the reference leaves open.
 *
 * Pricing of a checkout (simulator's model of the platform's, §13.5):
 *   base_amount      = Σ list_price × quantity
 *   discount_amount  = the cart-level manual discounts (addCheckoutDiscount), spread over the lines
 *                      in proportion to their amounts (each line's `discount_amount`)
 *   cart_amount_ex   = base_amount − discount_amount            (= subtotal_ex_tax)
 *   goods tax        = per tax address: Σ its lines' discounted amounts × rate, half up to the minor unit
 *   shipping tax     = per consignment, only with setTaxRates(..., {taxShipping}): cost × rate, half up
 *   grand_total      = cart_amount_ex + shipping_ex + goods tax + shipping tax
 * A line's tax address is its consignment's address, else the billing address, else none (no tax).
 */
import { randomBytes, randomUUID } from 'node:crypto'
import type { Ctx, Reply } from './context.ts'
import { FieldErrors, Refusal, fourDp, isDecimal, isInt, isObject, pageParams, pagination, parseJson, pick, toUnits } from './http.ts'
import { unpaidOrderState } from './orders.ts'
import type {
  SimCart, SimCartLine, SimCatalogProduct, SimCheckoutAddress, SimConsignment, SimOrder, SimOrderProduct, SimShippingOption, SimStore, SimVariant,
} from './state.ts'

// ---------------------------------------------------------------------------------------------
// Shared helpers
// ---------------------------------------------------------------------------------------------

/** Ten-thousandths to a JSON number of major units (exact: the units are integers). */
const major = (units: number): number => units / 10_000

/** ISO-8601 as the reference's examples write it: '2025-08-05T15:38:14+00:00'. */
const isoTime = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, '+00:00')

/** Decimal places of a currency's minor unit (2 for USD, 0 for JPY), from the ISO 4217 data in Intl. */
export function minorDigits(currency: string): number {
  try {
    return new Intl.NumberFormat('en', { style: 'currency', currency }).resolvedOptions().maximumFractionDigits ?? 2
  } catch {
    return 2
  }
}

/** `raw` = ten-thousandths × basis points (1e-8 major units), rounded half up to the minor unit, in ten-thousandths. */
function taxUnits(raw: number, digits: number): number {
  const step = 10 ** (8 - digits)
  return Math.floor((raw + step / 2) / step) * 10 ** (4 - digits)
}

/** Splits `total` over `weights` in proportion, in steps of `step` units, the remainder on the last weighted entry. */
function allocate(total: number, weights: number[], step: number): number[] {
  const sum = weights.reduce((s, w) => s + w, 0)
  if (sum === 0 || total === 0) return weights.map(() => 0)
  const out = weights.map((w) => Math.floor((total * w) / sum / step) * step)
  const last = weights.map((w, i) => (w > 0 ? i : -1)).filter((i) => i >= 0).at(-1)!
  out[last]! += total - out.reduce((s, v) => s + v, 0)
  return out
}

const CONFLICT_TITLE = 'The request cannot be processed due to a possible conflict. Please review the changes and try again.'

/** `version` (optimistic concurrency, every write body of checkouts.v3 and carts.v3): 409 when stale. */
function checkVersion(errors: FieldErrors, cart: SimCart, path: string, value: unknown): void {
  if (value === undefined) return
  if (!isInt(value)) return errors.add(path, 'must be an integer')
  if (value !== cart.version) {
    throw new Refusal(409, 'state', `${path} ${value} is not the cart's current version ${cart.version}`, { title: CONFLICT_TITLE })
  }
}

/** `include` (form style, comma separated) checked against the operation's enum. */
function includes(ctx: Ctx, allowed: readonly string[]): Set<string> {
  const raw = ctx.query.getAll('include').flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean)
  const bad = raw.filter((v) => !allowed.includes(v))
  if (bad.length > 0) throw new Refusal(422, 'body', `include must be among ${allowed.join(', ')}; got ${bad.join(', ')}`, { errors: { include: 'unknown value' } })
  return new Set(raw)
}

function cartOr404(ctx: Ctx, param: 'cartId' | 'checkoutId'): SimCart {
  const cart = ctx.store.carts.get(ctx.params[param] ?? '')
  const what = param === 'cartId' ? 'Cart' : 'Checkout'
  // CART getCart 404 "Cart not found."; a paid checkout's cart is gone (CHK createOrder usage notes).
  if (!cart) throw new Refusal(404, 'state', `${what} ${ctx.params[param]} not found (never created, deleted, or its order was paid)`, { title: `${what} not found` })
  return cart
}

function touch(ctx: Ctx, cart: SimCart): void {
  cart.version++
  cart.updated = ctx.core.now()
}

/** The body as a JSON value (400 when not JSON, http.ts parseJson). */
function body(ctx: Ctx): unknown {
  return parseJson(ctx.rawBody)
}

// ---------------------------------------------------------------------------------------------
// Stock (catalog inventory_tracking; §13.1 "Stock")
// ---------------------------------------------------------------------------------------------

interface Wanted {
  product: SimCatalogProduct
  variant: SimVariant | undefined
  quantity: number
}

/** The first line whose tracked stock is below the quantity wanted (summed over lines of one item), or undefined. */
function shortfall(wanted: Wanted[]): string | undefined {
  const need = new Map<string, { level: number; quantity: number; sku: string }>()
  for (const w of wanted) {
    if (w.product.inventory_tracking === 'none') continue
    const byVariant = w.product.inventory_tracking === 'variant' && w.variant !== undefined
    const key = byVariant ? `v${w.variant!.id}` : `p${w.product.id}`
    const entry = need.get(key) ?? { level: byVariant ? w.variant!.inventory_level : w.product.inventory_level, quantity: 0, sku: byVariant ? w.variant!.sku : w.product.sku }
    entry.quantity += w.quantity
    need.set(key, entry)
  }
  for (const e of need.values()) {
    if (e.quantity > e.level) return `${e.sku}: ${e.quantity} wanted, ${Math.max(0, e.level)} in stock`
  }
  return undefined
}

/** 422 for stock: a platform outcome (stock changes under a correct client), not recorded as a violation. */
function outOfStock(message: string): Refusal {
  return new Refusal(422, 'state', `Not enough stock: ${message}`, { title: `Not enough stock: ${message}`, platformOutcome: true })
}

function wantedOf(store: SimStore, lines: SimCartLine[]): Wanted[] {
  return lines.map((l) => {
    const product = store.products.get(l.product_id)!
    return { product, variant: product.variants.find((v) => v.id === l.variant_id), quantity: l.quantity }
  })
}

// ---------------------------------------------------------------------------------------------
// Addresses (checkouts.v3 AddressProperties; §13.2)
// ---------------------------------------------------------------------------------------------

const ADDRESS_STRINGS = new Set([
  'first_name', 'last_name', 'email', 'company', 'address1', 'address2', 'city', 'state_or_province', 'state_or_province_code', 'country_code', 'postal_code', 'phone',
  // Not a schema property, but CHK addCheckoutConsignment names `country` among the address fields an order needs.
  'country',
])

/** AddressProperties.phone pattern `^\+?[1-9]\d{1,14}(x\d{1-5})?$`, read with the evident `{1,5}` (simulator's reading). */
const PHONE = /^\+?[1-9]\d{1,14}(x\d{1,5})?$/
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/

function checkAddress(errors: FieldErrors, path: string, value: unknown, opts: { required: string[]; phonePattern: boolean; extra?: readonly string[] }): Omit<SimCheckoutAddress, 'id'> | undefined {
  if (!isObject(value)) {
    errors.add(path === '' ? 'body' : path, 'must be an object (AddressProperties)')
    return undefined
  }
  const prefix = path === '' ? '' : `${path}.`
  const fields: Record<string, string> = {}
  const custom: SimCheckoutAddress['custom_fields'] = []
  for (const [key, v] of Object.entries(value)) {
    if (opts.extra?.includes(key)) continue
    if (key === 'custom_fields') {
      if (!Array.isArray(v)) errors.add(`${prefix}custom_fields`, 'must be an array')
      else
        v.forEach((f: unknown, i) => {
          if (!isObject(f) || typeof f.field_id !== 'string') errors.add(`${prefix}custom_fields[${i}]`, 'must be {field_id: string, field_value}')
          else custom.push({ field_id: f.field_id, field_value: f.field_value })
        })
      continue
    }
    // v2 names (street_1, zip, state, country_iso2) are not fields of a checkout address (§12).
    if (!ADDRESS_STRINGS.has(key)) errors.add(`${prefix}${key}`, 'is not a field of a checkout address (AddressProperties: address1, postal_code, state_or_province, country_code, ...)')
    else if (typeof v !== 'string') errors.add(`${prefix}${key}`, 'must be a string')
    else fields[key] = v
  }
  for (const f of opts.required) if (typeof value[f] !== 'string' || (value[f] as string).trim() === '') errors.add(`${prefix}${f}`, 'is required')
  if (typeof fields.country_code === 'string' && fields.country_code !== '') {
    if (!/^[A-Za-z]{2}$/.test(fields.country_code)) errors.add(`${prefix}country_code`, 'must be an ISO 3166-1 alpha-2 code, e.g. US')
    else fields.country_code = fields.country_code.toUpperCase()
  }
  if (typeof fields.email === 'string' && fields.email !== '' && !EMAIL.test(fields.email)) errors.add(`${prefix}email`, 'must be an email address')
  // An empty phone is accepted (simulator's reading: the pattern describes a phone when there is one).
  if (opts.phonePattern && typeof fields.phone === 'string' && fields.phone !== '' && !PHONE.test(fields.phone)) errors.add(`${prefix}phone`, `must match ${PHONE.source}`)
  return { fields, custom_fields: custom }
}

const hexId = (chars: number): string => randomBytes(Math.ceil(chars / 2)).toString('hex').slice(0, chars)

function renderAddress(a: SimCheckoutAddress): Record<string, unknown> {
  const f = a.fields
  return {
    id: a.id,
    first_name: f.first_name ?? '',
    last_name: f.last_name ?? '',
    email: f.email ?? '',
    company: f.company ?? '',
    address1: f.address1 ?? '',
    address2: f.address2 ?? '',
    city: f.city ?? '',
    state_or_province: f.state_or_province ?? '',
    state_or_province_code: f.state_or_province_code ?? '',
    country: f.country ?? countryName(f.country_code ?? ''),
    country_code: f.country_code ?? '',
    postal_code: f.postal_code ?? '',
    phone: f.phone ?? '',
    custom_fields: a.custom_fields,
  }
}

function countryName(code: string): string {
  if (code === '') return ''
  try {
    return new Intl.DisplayNames(['en'], { type: 'region' }).of(code) ?? code
  } catch {
    return code
  }
}

// ---------------------------------------------------------------------------------------------
// Pricing
// ---------------------------------------------------------------------------------------------

interface LinePrice {
  extList: number
  discount: number
  extSale: number
  tax: number
}

interface Priced {
  lines: Map<string, LinePrice>
  base: number
  discount: number
  cartEx: number
  goodsTax: number
  consignments: Map<string, { shipEx: number; shipTax: number }>
  shipEx: number
  shipTax: number
  taxTotal: number
  grand: number
}

function rateOf(store: SimStore, address: SimCheckoutAddress | null): number {
  if (!address) return 0
  const country = (address.fields.country_code ?? '').toUpperCase()
  const state = (address.fields.state_or_province_code ?? '').toUpperCase()
  const exact = store.tax.rates.find((r) => r.country === country && r.state !== null && r.state === state)
  return (exact ?? store.tax.rates.find((r) => r.country === country && r.state === null))?.rate_bps ?? 0
}

function consignmentOf(cart: SimCart, lineId: string): SimConsignment | undefined {
  return cart.consignments.find((c) => c.line_item_ids.includes(lineId))
}

export function priceCart(store: SimStore, cart: SimCart): Priced {
  const digits = minorDigits(cart.currency)
  const step = 10 ** (4 - digits)
  const extList = cart.lines.map((l) => l.list_price * l.quantity)
  const base = extList.reduce((s, v) => s + v, 0)
  const discount = Math.min(base, cart.discounts.reduce((s, d) => s + d.amount, 0))
  const shares = allocate(discount, extList, step)
  const lines = new Map<string, LinePrice>()
  cart.lines.forEach((l, i) => lines.set(l.id, { extList: extList[i]!, discount: shares[i]!, extSale: extList[i]! - shares[i]!, tax: 0 }))

  // Goods tax per tax address (consignment, else billing), rounded per group, spread over its lines.
  const groups = new Map<string, { address: SimCheckoutAddress | null; lines: SimCartLine[] }>()
  for (const l of cart.lines) {
    const c = consignmentOf(cart, l.id)
    const key = c ? c.id : 'billing'
    const g = groups.get(key) ?? { address: c ? c.address : cart.billing_address, lines: [] }
    g.lines.push(l)
    groups.set(key, g)
  }
  let goodsTax = 0
  for (const g of groups.values()) {
    const rate = rateOf(store, g.address)
    const amounts = g.lines.map((l) => lines.get(l.id)!.extSale)
    const tax = taxUnits(amounts.reduce((s, v) => s + v, 0) * rate, digits)
    allocate(tax, amounts, step).forEach((t, i) => (lines.get(g.lines[i]!.id)!.tax = t))
    goodsTax += tax
  }
  const consignments = new Map<string, { shipEx: number; shipTax: number }>()
  let shipEx = 0
  let shipTax = 0
  for (const c of cart.consignments) {
    const ex = c.selected?.cost ?? 0
    const tax = store.tax.shipping ? taxUnits(ex * rateOf(store, c.address), digits) : 0
    consignments.set(c.id, { shipEx: ex, shipTax: tax })
    shipEx += ex
    shipTax += tax
  }
  const cartEx = base - discount
  return { lines, base, discount, cartEx, goodsTax, consignments, shipEx, shipTax, taxTotal: goodsTax + shipTax, grand: cartEx + shipEx + goodsTax + shipTax }
}

// ---------------------------------------------------------------------------------------------
// Rendering: Cart_Full (carts.v3) and Checkout (checkouts.v3)
// ---------------------------------------------------------------------------------------------

function renderLine(ctx: Ctx, cart: SimCart, l: SimCartLine, p: LinePrice, opts: { checkout: boolean; options: boolean }): Record<string, unknown> {
  const product = ctx.store.products.get(l.product_id)
  const item: Record<string, unknown> = {
    id: l.id,
    parent_id: null,
    variant_id: l.variant_id,
    product_id: l.product_id,
    sku: l.sku,
    name: l.name,
    url: `https://store-${cart.store_hash}.mybigcommerce.com/products/${l.product_id}/`,
    quantity: l.quantity,
    is_taxable: true,
    image_url: '',
    // CHK: a manual discount's id "is always equal to manual-discount regardless of the input".
    discounts: p.discount > 0 ? [{ id: 'manual-discount', discounted_amount: major(p.discount) }] : [],
    coupons: [],
    discount_amount: major(p.discount),
    coupon_amount: 0,
    original_price: major(l.original_price),
    list_price: major(l.list_price),
    sale_price: major(Math.round(p.extSale / l.quantity)),
    extended_list_price: major(p.extList),
    extended_sale_price: major(p.extSale),
    is_require_shipping: l.type === 'physical',
    is_mutable: true,
    added_by_promotion: false,
    gift_wrapping: null,
  }
  if (opts.checkout) {
    item.comparison_price = major(l.list_price)
    item.extended_comparison_price = major(p.extList)
  }
  if (opts.options) {
    item.options = l.options.map((o) => ({
      name: o.name ?? product?.options.get(o.option_id)?.display_name ?? `Option ${o.option_id}`,
      nameId: o.option_id,
      value: o.value ?? (typeof o.option_value === 'string' ? o.option_value : JSON.stringify(o.option_value)),
      ...(isInt(o.option_value) ? { valueId: o.option_value } : {}),
    }))
  }
  return item
}

function renderLines(ctx: Ctx, cart: SimCart, priced: Priced, opts: { checkout: boolean; physicalOptions: boolean; digitalOptions: boolean }) {
  const of = (type: 'physical' | 'digital', options: boolean) =>
    cart.lines.filter((l) => l.type === type).map((l) => renderLine(ctx, cart, l, priced.lines.get(l.id)!, { checkout: opts.checkout, options }))
  return { physical_items: of('physical', opts.physicalOptions), digital_items: of('digital', opts.digitalOptions), gift_certificates: [], custom_items: [] }
}

function cartDiscounts(priced: Priced): { id: string; discounted_amount: number }[] {
  return priced.discount > 0 ? [{ id: 'manual-discount', discounted_amount: major(priced.discount) }] : []
}

/** carts.v3 Cart_Full. */
export function renderCart(ctx: Ctx, cart: SimCart, include: Set<string>): Record<string, unknown> {
  const priced = priceCart(ctx.store, cart)
  return {
    id: cart.id,
    customer_id: cart.customer_id,
    channel_id: cart.channel_id,
    email: cart.email,
    currency: { code: cart.currency },
    tax_included: false,
    base_amount: major(priced.base),
    discount_amount: major(priced.discount),
    manual_discount_amount: major(priced.discount),
    // "Sum of cart line-item amounts minus cart-level discounts and coupons. This amount includes taxes
    // (where applicable)": the store's prices exclude tax, so no tax here (simulator's reading).
    cart_amount: major(priced.cartEx),
    coupons: [],
    discounts: cartDiscounts(priced),
    line_items: renderLines(ctx, cart, priced, {
      checkout: false,
      physicalOptions: include.has('line_items.physical_items.options'),
      digitalOptions: include.has('line_items.digital_items.options'),
    }),
    created_time: isoTime(cart.created),
    updated_time: isoTime(cart.updated),
    locale: cart.locale,
    ...(include.has('promotions.banners') ? { promotions: { banners: [] } } : {}),
    version: cart.version,
  }
}

function renderOption(o: SimShippingOption): Record<string, unknown> {
  return { id: o.id, type: o.type, description: o.description, image_url: '', cost: major(o.cost), transit_time: '', additional_description: '' }
}

/** The store's options whose countries include the address's country_code (or that ship everywhere). */
function availableOptions(store: SimStore, address: SimCheckoutAddress): SimShippingOption[] {
  const country = (address.fields.country_code ?? '').toUpperCase()
  return store.shipping.filter((o) => o.countries === null || o.countries.includes(country))
}

/** checkouts.v3 Checkout. */
export function renderCheckout(ctx: Ctx, cart: SimCart, include: Set<string>): Record<string, unknown> {
  const priced = priceCart(ctx.store, cart)
  const withOptions = include.has('consignments.available_shipping_options')
  const taxes = priced.taxTotal > 0 ? [{ name: 'Tax', amount: major(priced.taxTotal) }] : []
  const checkout: Record<string, unknown> = {
    id: cart.id,
    cart: {
      id: cart.id,
      customer_id: cart.customer_id,
      email: cart.email,
      currency: { code: cart.currency },
      tax_included: false,
      base_amount: major(priced.base),
      channel_id: cart.channel_id,
      discount_amount: major(priced.discount),
      cart_amount_inc_tax: major(priced.cartEx + priced.goodsTax),
      cart_amount_ex_tax: major(priced.cartEx),
      coupons: [],
      discounts: cartDiscounts(priced),
      line_items: renderLines(ctx, cart, priced, {
        checkout: true,
        physicalOptions: include.has('cart.line_items.physical_items.options'),
        digitalOptions: include.has('cart.line_items.digital_items.options'),
      }),
      created_time: isoTime(cart.created),
      updated_time: isoTime(cart.updated),
    },
  }
  // Before a billing address is added the key is left out (simulator's reading: the schema's object is
  // not nullable and the reference shows no checkout without one).
  if (cart.billing_address) checkout.billing_address = renderAddress(cart.billing_address)
  checkout.consignments = cart.consignments.map((c) => {
    const cost = priced.consignments.get(c.id)!
    return {
      id: c.id,
      address: renderAddress(c.address),
      ...(withOptions ? { available_shipping_options: availableOptions(ctx.store, c.address).map(renderOption) } : {}),
      ...(c.selected ? { selected_shipping_option: renderOption(c.selected) } : {}),
      coupon_discounts: [],
      discounts: [],
      shipping_cost_inc_tax: major(cost.shipEx + cost.shipTax),
      shipping_cost_ex_tax: major(cost.shipEx),
      handling_cost_inc_tax: 0,
      handling_cost_ex_tax: 0,
      line_item_ids: c.line_item_ids,
    }
  })
  Object.assign(checkout, {
    taxes,
    coupons: [],
    fees: [],
    // `order_id` is a nullable string in the Checkout schema: the latest order made from the checkout.
    order_id: cart.order_ids.length > 0 ? String(cart.order_ids.at(-1)) : null,
    shipping_cost_total_inc_tax: major(priced.shipEx + priced.shipTax),
    shipping_cost_total_ex_tax: major(priced.shipEx),
    handling_cost_total_inc_tax: 0,
    handling_cost_total_ex_tax: 0,
    tax_total: major(priced.taxTotal),
    // "Subtotal of the checkout before applying item-level discounts": the simulated discount is
    // cart-level, so the subtotal is after it (simulator's reading; keeps the order's
    // subtotal + shipping = total, §13.5).
    subtotal_inc_tax: major(priced.cartEx + priced.goodsTax),
    subtotal_ex_tax: major(priced.cartEx),
    grand_total: major(priced.grand),
    created_time: isoTime(cart.created),
    updated_time: isoTime(cart.updated),
    customer_message: '',
    ...(include.has('promotions.banners') ? { promotions: [] } : {}),
    version: cart.version,
  })
  return checkout
}

const CART_INCLUDE = ['redirect_urls', 'line_items.physical_items.options', 'line_items.digital_items.options', 'promotions.banners'] as const
const CHECKOUT_INCLUDE = ['cart.line_items.physical_items.options', 'cart.line_items.digital_items.options', 'consignments.available_shipping_options', 'promotions.banners'] as const
const SHIPPING_INCLUDE = ['consignments.available_shipping_options'] as const

function cartIncludes(ctx: Ctx): Set<string> {
  const set = includes(ctx, CART_INCLUDE)
  if (set.has('redirect_urls')) throw new Refusal(422, 'body', 'include=redirect_urls is not simulated')
  return set
}

// ---------------------------------------------------------------------------------------------
// Carts (carts.v3; §13.1)
// ---------------------------------------------------------------------------------------------

const CART_FIELDS = new Set(['customer_id', 'line_items', 'custom_items', 'gift_certificates', 'channel_id', 'currency', 'locale'])
/** cart_PostVariant ∪ cart_PostModifier. */
const LINE_FIELDS = new Set(['quantity', 'product_id', 'list_price', 'variant_id', 'name', 'gift_wrapping', 'option_selections'])
const SELECTION_FIELDS = new Set(['option_id', 'option_value', 'name', 'value', 'nameId', 'valueId'])

/** POST /v3/carts (CART createCart): 201 {data: Cart_Full, meta}. */
export function createCart(ctx: Ctx): Reply {
  const include = cartIncludes(ctx)
  const b = body(ctx)
  if (!isObject(b)) throw new Refusal(422, 'body', 'The request body must be a JSON object (CartCreatePostData)')
  const store = ctx.store
  // CART: "Passing a non-transactional display currency will result in a 400 error".
  if ('currency' in b) {
    const code = isObject(b.currency) ? b.currency.code : undefined
    if (!isObject(b.currency) || Object.keys(b.currency).some((k) => k !== 'code') || typeof code !== 'string') {
      throw new Refusal(422, 'body', 'currency must be {code: ISO-4217 string}', { errors: { currency: 'must be {code}' } })
    }
    if (code.toUpperCase() !== store.currency) throw new Refusal(400, 'body', `currency.code ${code} is not a transactional currency of the store (${store.currency})`)
  }
  const errors = new FieldErrors()
  for (const key of Object.keys(b)) if (!CART_FIELDS.has(key)) errors.add(key, 'is not a field of CartCreatePostData')
  if ('custom_items' in b) errors.add('custom_items', 'custom items are not simulated; send line_items')
  if ('gift_certificates' in b) errors.add('gift_certificates', 'gift certificates are not simulated')
  let customerId = 0
  if ('customer_id' in b) {
    if (!isInt(b.customer_id) || b.customer_id < 0) errors.add('customer_id', 'must be an integer (0 for a guest)')
    else if (b.customer_id > 0 && !store.customers.has(b.customer_id)) errors.add('customer_id', `customer ${b.customer_id} does not exist`)
    else customerId = b.customer_id
  }
  // CART: "If no channel is specified, defaults to 1"; the simulator has channel 1 only.
  if ('channel_id' in b && b.channel_id !== 1) errors.add('channel_id', 'channel does not exist (the simulator has channel 1)')
  if ('locale' in b && (typeof b.locale !== 'string' || !/^[a-z]{2}(-[A-Za-z]{2})?$/.test(b.locale))) errors.add('locale', 'must be xx or xx-YY (ISO-639)')
  const lines: SimCartLine[] = []
  const wanted: Wanted[] = []
  if (!Array.isArray(b.line_items) || b.line_items.length === 0) errors.add('line_items', 'is required, a non-empty array')
  else
    b.line_items.forEach((item: unknown, i) => {
      const path = `line_items[${i}]`
      if (!isObject(item)) return errors.add(path, 'must be an object')
      for (const key of Object.keys(item)) if (!LINE_FIELDS.has(key)) errors.add(`${path}.${key}`, 'is not a field of a line item')
      if ('gift_wrapping' in item) errors.add(`${path}.gift_wrapping`, 'gift wrapping is not simulated')
      // `quantity` and `product_id` are required (cart_PostModifier); quantity a whole number of at least 1.
      if (!isInt(item.quantity) || item.quantity < 1) errors.add(`${path}.quantity`, 'is required, an integer of at least 1')
      if ('name' in item && (typeof item.name !== 'string' || item.name === '')) errors.add(`${path}.name`, 'must be a non-empty string')
      // list_price: "Optional price override", decimal major units (a JSON number).
      if ('list_price' in item && (!isDecimal(item.list_price, 4) || (item.list_price as number) < 0)) errors.add(`${path}.list_price`, 'must be a JSON number of major units (e.g. 14.00), not negative')
      const options: SimCartLine['options'] = []
      if ('option_selections' in item) {
        if (!Array.isArray(item.option_selections)) errors.add(`${path}.option_selections`, 'must be an array')
        else
          item.option_selections.forEach((o: unknown, j) => {
            const op = `${path}.option_selections[${j}]`
            if (!isObject(o) || !isInt(o.option_id) || !('option_value' in o)) return errors.add(op, 'must be {option_id: integer, option_value}')
            for (const key of Object.keys(o)) if (!SELECTION_FIELDS.has(key)) errors.add(`${op}.${key}`, 'is not a field of an option selection')
            if ('name' in o && typeof o.name !== 'string') errors.add(`${op}.name`, 'must be a string')
            if ('value' in o && typeof o.value !== 'string') errors.add(`${op}.value`, 'must be a string')
            options.push({ option_id: o.option_id, option_value: o.option_value, ...(typeof o.name === 'string' ? { name: o.name } : {}), ...(typeof o.value === 'string' ? { value: o.value } : {}) })
          })
      }
      if (!isInt(item.product_id)) return errors.add(`${path}.product_id`, 'is required, an integer')
      const product = store.products.get(item.product_id)
      if (!product) return errors.add(`${path}.product_id`, `product ${item.product_id} does not exist in the catalog`)
      let variant: SimVariant | undefined
      if (product.variants.length > 0) {
        // LineItemRequestData: "Variant ID. Required if the product has variants."
        if (!('variant_id' in item)) return errors.add(`${path}.variant_id`, `is required: product ${product.id} has variants (${product.variant_ids.join(', ')})`)
        variant = product.variants.find((v) => v.id === item.variant_id)
        if (!variant) return errors.add(`${path}.variant_id`, `is not a variant of product ${product.id} (${product.variant_ids.join(', ')})`)
      } else if ('variant_id' in item && item.variant_id !== product.base_variant_id) {
        return errors.add(`${path}.variant_id`, `product ${product.id} has no variants (its base variant is ${product.base_variant_id})`)
      }
      if (!isInt(item.quantity) || item.quantity < 1) return
      const catalog = toUnits(variant?.price ?? product.price)
      lines.push({
        id: randomUUID(),
        product_id: product.id,
        variant_id: variant?.id ?? product.base_variant_id!,
        name: typeof item.name === 'string' && item.name !== '' ? item.name : product.name,
        sku: variant?.sku ?? product.sku,
        type: product.type,
        quantity: item.quantity,
        list_price: isDecimal(item.list_price, 4) ? toUnits(item.list_price) : catalog,
        original_price: catalog,
        options,
      })
      wanted.push({ product, variant, quantity: item.quantity })
    })
  errors.throwIfAny(422)
  const short = shortfall(wanted)
  if (short) throw outOfStock(short)

  const now = ctx.core.now()
  const cart: SimCart = {
    id: randomUUID(),
    store_hash: store.hash,
    customer_id: customerId,
    channel_id: 1,
    email: store.customers.get(customerId)?.email ?? '',
    currency: store.currency,
    locale: typeof b.locale === 'string' ? b.locale : 'en',
    lines,
    discounts: [],
    billing_address: null,
    consignments: [],
    created: now,
    updated: now,
    version: 1,
    order_ids: [],
  }
  store.carts.set(cart.id, cart)
  ctx.core.counters.cartsCreated++
  return { status: 201, body: { data: renderCart(ctx, cart, include), meta: {} } }
}

/** GET /v3/carts/{cartId} (CART getCart): 200 {data: Cart_Full, meta}; 404 unknown. */
export function getCart(ctx: Ctx): Reply {
  const include = cartIncludes(ctx)
  return { status: 200, body: { data: renderCart(ctx, cartOr404(ctx, 'cartId'), include), meta: {} } }
}

/** DELETE /v3/carts/{cartId} (CART deleteCart): 204. */
export function deleteCart(ctx: Ctx): Reply {
  const cart = cartOr404(ctx, 'cartId')
  ctx.store.carts.delete(cart.id)
  return { status: 204 }
}

// ---------------------------------------------------------------------------------------------
// Checkouts (checkouts.v3; §13.2 to §13.5)
// ---------------------------------------------------------------------------------------------

/** GET /v3/checkouts/{checkoutId} (CHK getCheckout): 200 {data: Checkout, meta}. */
export function getCheckout(ctx: Ctx): Reply {
  const include = includes(ctx, CHECKOUT_INCLUDE)
  return { status: 200, body: { data: renderCheckout(ctx, cartOr404(ctx, 'checkoutId'), include), meta: {} } }
}

/** POST /v3/checkouts/{checkoutId}/billing-address (CHK addCheckoutBillingAddress): AddressProperties; 200 {data: Checkout}. */
export function addBillingAddress(ctx: Ctx): Reply {
  const cart = cartOr404(ctx, 'checkoutId')
  const b = body(ctx)
  const errors = new FieldErrors()
  // AddressProperties requires email and country_code.
  const address = checkAddress(errors, '', b, { required: ['email', 'country_code'], phonePattern: true, extra: ['version'] })
  if (isObject(b)) checkVersion(errors, cart, 'version', b.version)
  errors.throwIfAny(422)
  // A second POST replaces the address (simulator's reading; CHK has updateCheckoutBillingAddress too).
  cart.billing_address = { id: cart.billing_address?.id ?? hexId(13), ...address! }
  cart.email = address!.fields.email!
  touch(ctx, cart)
  return { status: 200, body: { data: renderCheckout(ctx, cart, new Set()), meta: {} } }
}

const CONSIGNMENT_FIELDS = new Set(['address', 'line_items', 'pickup_option', 'version'])

/** `line_items` of a consignment: whole physical lines of the cart, each once. */
function checkConsignmentLines(errors: FieldErrors, cart: SimCart, path: string, value: unknown, seen: Set<string>): string[] {
  const ids: string[] = []
  if (!Array.isArray(value) || value.length === 0) {
    errors.add(path, 'is required, a non-empty array of {item_id, quantity}')
    return ids
  }
  value.forEach((li: unknown, j) => {
    const lp = `${path}[${j}]`
    if (!isObject(li)) return errors.add(lp, 'must be {item_id, quantity}')
    for (const key of Object.keys(li)) if (key !== 'item_id' && key !== 'quantity') errors.add(`${lp}.${key}`, 'is not a field of a consignment line item')
    if (typeof li.item_id !== 'string') return errors.add(`${lp}.item_id`, 'is required, a string (a physical line item id of the cart)')
    const line = cart.lines.find((l) => l.id === li.item_id)
    if (!line) return errors.add(`${lp}.item_id`, `is not a line item of checkout ${cart.id}`)
    if (line.type !== 'physical') return errors.add(`${lp}.item_id`, 'is a digital item: only physical_items go in consignments')
    if (seen.has(line.id)) return errors.add(`${lp}.item_id`, 'appears twice in the request')
    seen.add(line.id)
    // Splitting a line over consignments is not simulated: the whole line's quantity (simulator's reading).
    if (!isInt(li.quantity) || li.quantity !== line.quantity) return errors.add(`${lp}.quantity`, `is required, an integer: the line's quantity ${line.quantity}`)
    ids.push(line.id)
  })
  return ids
}

/** Moves line ids into `target`, taking them out of the other consignments (emptied ones are removed). */
function assignLines(cart: SimCart, target: SimConsignment, ids: string[]): void {
  for (const c of cart.consignments) if (c !== target) c.line_item_ids = c.line_item_ids.filter((id) => !ids.includes(id))
  target.line_item_ids = ids
  cart.consignments = cart.consignments.filter((c) => c === target || c.line_item_ids.length > 0)
}

/** POST /v3/checkouts/{checkoutId}/consignments (CHK addCheckoutConsignment): CreateConsignmentRequest; 200 {data: Checkout}. */
export function addConsignments(ctx: Ctx): Reply {
  const include = includes(ctx, SHIPPING_INCLUDE)
  const cart = cartOr404(ctx, 'checkoutId')
  const b = body(ctx)
  if (!Array.isArray(b) || b.length === 0) throw new Refusal(422, 'body', 'The request body must be a non-empty array of consignments (CreateConsignmentRequest)')
  const errors = new FieldErrors()
  const seen = new Set<string>()
  const made: { address: Omit<SimCheckoutAddress, 'id'>; ids: string[] }[] = []
  b.forEach((item: unknown, i) => {
    const path = `[${i}]`
    if (!isObject(item)) return errors.add(path, 'must be an object {address, line_items}')
    for (const key of Object.keys(item)) if (!CONSIGNMENT_FIELDS.has(key)) errors.add(`${path}.${key}`, 'is not a field of a consignment')
    if ('pickup_option' in item) return errors.add(`${path}.pickup_option`, 'pickup consignments are not simulated')
    checkVersion(errors, cart, `${path}.version`, item.version)
    // CreateConsignmentRequest address: required country_code, email, state_or_province, postal_code.
    if (!('address' in item)) errors.add(`${path}.address`, 'is required')
    const address = 'address' in item ? checkAddress(errors, `${path}.address`, item.address, { required: ['country_code', 'email', 'state_or_province', 'postal_code'], phonePattern: false }) : undefined
    const ids = checkConsignmentLines(errors, cart, `${path}.line_items`, item.line_items, seen)
    if (address) made.push({ address, ids })
  })
  errors.throwIfAny(422)
  for (const m of made) {
    const consignment: SimConsignment = { id: hexId(13), address: { id: hexId(13), ...m.address }, line_item_ids: [], selected: null }
    cart.consignments.push(consignment)
    assignLines(cart, consignment, m.ids)
  }
  touch(ctx, cart)
  return { status: 200, body: { data: renderCheckout(ctx, cart, include), meta: {} } }
}

const UPDATE_CONSIGNMENT_FIELDS = new Set(['address', 'line_items', 'shipping_option_id', 'pickup_option', 'custom_shipping', 'version'])

/** PUT /v3/checkouts/{checkoutId}/consignments/{consignmentId} (CHK updateCheckoutConsignment): 200 {data: Checkout}. */
export function updateConsignment(ctx: Ctx): Reply {
  const include = includes(ctx, SHIPPING_INCLUDE)
  const cart = cartOr404(ctx, 'checkoutId')
  const consignment = cart.consignments.find((c) => c.id === ctx.params.consignmentId)
  if (!consignment) throw new Refusal(404, 'state', `Consignment ${ctx.params.consignmentId} not found in checkout ${cart.id}`, { title: 'Consignment not found' })
  const b = body(ctx)
  if (!isObject(b)) throw new Refusal(422, 'body', 'The request body must be a JSON object (UpdateConsignmentRequest)')
  const errors = new FieldErrors()
  for (const key of Object.keys(b)) if (!UPDATE_CONSIGNMENT_FIELDS.has(key)) errors.add(key, 'is not a field of UpdateConsignmentRequest')
  if ('pickup_option' in b) errors.add('pickup_option', 'pickup consignments are not simulated')
  if ('custom_shipping' in b) errors.add('custom_shipping', 'custom shipping is not simulated; choose a shipping_option_id')
  checkVersion(errors, cart, 'version', b.version)
  const hasOption = 'shipping_option_id' in b
  const hasAddressOrLines = 'address' in b || 'line_items' in b
  // UpdateConsignmentRequest: "`shipping_option_id` has to be updated in a separate request".
  if (hasOption && hasAddressOrLines) errors.add('shipping_option_id', 'must be sent in a request of its own, without address or line_items')
  if (!hasOption && !hasAddressOrLines && !('pickup_option' in b) && !('custom_shipping' in b)) errors.add('address', 'one of address, line_items or shipping_option_id is required')
  const address = 'address' in b ? checkAddress(errors, 'address', b.address, { required: ['country_code', 'email'], phonePattern: true }) : undefined
  const ids = 'line_items' in b ? checkConsignmentLines(errors, cart, 'line_items', b.line_items, new Set()) : undefined
  if (hasOption && typeof b.shipping_option_id !== 'string') errors.add('shipping_option_id', 'must be a string (an id of available_shipping_options)')
  errors.throwIfAny(422)
  if (hasOption && !hasAddressOrLines) {
    const option = availableOptions(ctx.store, consignment.address).find((o) => o.id === b.shipping_option_id)
    // Not documented (CHK documents only 409): 422 (simulator's reading).
    if (!option) {
      throw new Refusal(422, 'state', `shipping_option_id ${String(b.shipping_option_id)} is not an available shipping option of consignment ${consignment.id} (GET with include=consignments.available_shipping_options)`, {
        title: 'Invalid shipping option',
        errors: { shipping_option_id: 'not available for this consignment' },
      })
    }
    consignment.selected = { ...option }
  } else {
    // A new address or new lines can invalidate the quoted options: the choice is dropped.
    if (address) consignment.address = { id: consignment.address.id, ...address }
    if (ids) assignLines(cart, consignment, ids)
    consignment.selected = null
  }
  touch(ctx, cart)
  return { status: 200, body: { data: renderCheckout(ctx, cart, include), meta: {} } }
}

/** POST /v3/checkouts/{checkoutId}/discounts (CHK addCheckoutDiscount): cart-level manual discounts; 200 {data: Checkout}. */
export function addDiscount(ctx: Ctx): Reply {
  const cart = cartOr404(ctx, 'checkoutId')
  const b = body(ctx)
  if (!isObject(b)) throw new Refusal(422, 'body', 'The request body must be a JSON object {cart: {discounts: [...]}}')
  const errors = new FieldErrors()
  for (const key of Object.keys(b)) if (key !== 'cart' && key !== 'version') errors.add(key, 'is not a field of the discount request (send {cart: {discounts}})')
  // `version` is under `cart` in the schema and at the top in the example: both are read.
  checkVersion(errors, cart, 'version', b.version)
  const digits = minorDigits(cart.currency)
  const discounts: SimCart['discounts'] = []
  if (!isObject(b.cart)) errors.add('cart', 'is required, an object {discounts}')
  else {
    for (const key of Object.keys(b.cart)) if (!['discounts', 'line_items', 'version'].includes(key)) errors.add(`cart.${key}`, 'is not a field of cart')
    checkVersion(errors, cart, 'cart.version', b.cart.version)
    if ('line_items' in b.cart) errors.add('cart.line_items', 'item-level manual discounts are not simulated; send cart.discounts')
    if (!Array.isArray(b.cart.discounts) || b.cart.discounts.length === 0) errors.add('cart.discounts', 'is required, a non-empty array of {discounted_amount}')
    else
      b.cart.discounts.forEach((d: unknown, i) => {
        const path = `cart.discounts[${i}]`
        if (!isObject(d)) return errors.add(path, 'must be an object {discounted_amount}')
        // `name` is not in the schema; accepted and kept (simulator's reading: the platform ignores it).
        for (const key of Object.keys(d)) if (key !== 'discounted_amount' && key !== 'name') errors.add(`${path}.${key}`, 'is not a field of a discount')
        if ('name' in d && typeof d.name !== 'string') errors.add(`${path}.name`, 'must be a string')
        if (!isDecimal(d.discounted_amount, digits) || (d.discounted_amount as number) < 0) {
          return errors.add(`${path}.discounted_amount`, `is required, a non-negative JSON number of major units with at most ${digits} decimals`)
        }
        discounts.push({ name: typeof d.name === 'string' ? d.name : null, amount: toUnits(d.discounted_amount) })
      })
  }
  errors.throwIfAny(422)
  const total = discounts.reduce((s, d) => s + d.amount, 0)
  const base = priceCart(ctx.store, cart).base
  if (total > base) throw new Refusal(422, 'body', `The discounts (${fourDp(total)}) exceed the cart's amount (${fourDp(base)})`, { errors: { 'cart.discounts': 'more than the cart amount' } })
  // CHK: "When you call this API, you clear out all existing discounts".
  cart.discounts = discounts
  touch(ctx, cart)
  return { status: 200, body: { data: renderCheckout(ctx, cart, new Set()), meta: {} } }
}

/** v3 address fields to v2 order address fields (billingAddress_Base / shippingAddress_Base). */
function v2Address(a: SimCheckoutAddress): Record<string, string> {
  const f = a.fields
  return {
    first_name: f.first_name ?? '',
    last_name: f.last_name ?? '',
    company: f.company ?? '',
    street_1: f.address1 ?? '',
    street_2: f.address2 ?? '',
    city: f.city ?? '',
    state: f.state_or_province ?? '',
    zip: f.postal_code ?? '',
    country: f.country ?? countryName(f.country_code ?? ''),
    country_iso2: f.country_code ?? '',
    phone: f.phone ?? '',
    email: f.email ?? '',
  }
}

/** CHK addCheckoutConsignment: the address fields an order needs (country_code stands for `country`). */
const ORDER_ADDRESS_FIELDS = ['first_name', 'last_name', 'address1', 'city', 'country_code', 'email']

/**
 * POST /v3/checkouts/{checkoutId}/orders (CHK createOrder; table id `createCheckoutOrder`): a new
 * Incomplete order on every call (CHK: "You can create as many orders from the same order (cart) as
 * you want"); 200 {data: {id}, meta: {}}. No request body.
 */
export async function createCheckoutOrder(ctx: Ctx): Promise<Reply> {
  const cart = cartOr404(ctx, 'checkoutId')
  if (ctx.rawBody.trim() !== '') {
    const b = parseJson(ctx.rawBody)
    if (!isObject(b) || Object.keys(b).length > 0) throw new Refusal(400, 'body', 'createOrder of a checkout takes no request body (send none, or {})')
  }
  // Undocumented errors (CHK documents only 200): 422 with a title naming what is missing (simulator's reading).
  if (!cart.billing_address) throw new Refusal(422, 'state', `Checkout ${cart.id} has no billing address: POST /v3/checkouts/{id}/billing-address first`, { title: 'Billing address is required' })
  const missing: string[] = []
  for (const line of cart.lines.filter((l) => l.type === 'physical')) {
    const c = consignmentOf(cart, line.id)
    if (!c) missing.push(`line ${line.id} (${line.sku}) is in no consignment`)
    else if (!c.selected) missing.push(`consignment ${c.id} has no selected shipping option`)
  }
  for (const c of cart.consignments) {
    const absent = ORDER_ADDRESS_FIELDS.filter((f) => (c.address.fields[f] ?? '').trim() === '')
    if (absent.length > 0) missing.push(`consignment ${c.id}'s address lacks ${absent.join(', ')}`)
  }
  if (missing.length > 0) throw new Refusal(422, 'state', `The checkout is not ready for an order: ${[...new Set(missing)].join('; ')}`, { title: 'Shipping is incomplete' })
  const short = shortfall(wantedOf(ctx.store, cart.lines))
  if (short) throw outOfStock(short)

  await ctx.delay()
  const store = ctx.store
  if (!store.carts.has(cart.id)) throw new Refusal(404, 'state', `Checkout ${cart.id} not found (deleted while the order was being made)`, { title: 'Checkout not found' })
  const priced = priceCart(store, cart)
  const now = ctx.core.now()
  const id = store.next.order++
  const products: SimOrderProduct[] = cart.lines.map((l) => {
    const p = priced.lines.get(l.id)!
    const ex = Math.round(p.extSale / l.quantity)
    return {
      id: store.next.orderProduct++,
      product_id: l.product_id,
      variant_id: l.variant_id,
      name: l.name,
      sku: l.sku,
      type: l.type,
      quantity: l.quantity,
      // The discounted unit price, and with its share of the goods tax (§13.5).
      price_ex_tax: ex,
      price_inc_tax: ex + Math.round(p.tax / l.quantity),
      product_options: l.options.map((o) => ({ id: o.option_id, value: typeof o.option_value === 'string' ? o.option_value : JSON.stringify(o.option_value) })),
    }
  })
  const shipping = cart.consignments.map((c) => {
    const cost = priced.consignments.get(c.id)!
    return {
      ...v2Address(c.address),
      shipping_method: c.selected?.description ?? '',
      base_cost: fourDp(cost.shipEx),
      cost_ex_tax: fourDp(cost.shipEx),
      cost_inc_tax: fourDp(cost.shipEx + cost.shipTax),
      cost_tax: fourDp(cost.shipTax),
    }
  })
  const order: SimOrder = {
    id,
    store_hash: store.hash,
    cart_id: cart.id,
    customer_id: cart.customer_id,
    status_id: 0, // CHK: "Orders created will be set to incomplete order status."
    external_order_id: null,
    external_source: null,
    channel_id: cart.channel_id,
    billing_address: v2Address(cart.billing_address),
    shipping_addresses: shipping,
    products,
    subtotal_ex_tax: priced.cartEx,
    subtotal_inc_tax: priced.cartEx + priced.goodsTax,
    shipping_cost_ex_tax: priced.shipEx,
    shipping_cost_inc_tax: priced.shipEx + priced.shipTax,
    handling_cost_ex_tax: 0,
    handling_cost_inc_tax: 0,
    total_ex_tax: priced.cartEx + priced.shipEx,
    total_inc_tax: priced.grand,
    currency_code: store.currency,
    staff_notes: '',
    customer_message: '',
    ...unpaidOrderState(now),
  }
  store.orders.set(id, order)
  cart.order_ids.push(id)
  ctx.core.counters.ordersCreated++
  ctx.core.counters.checkoutOrdersCreated++
  // WHE: store/order/created fires for Incomplete orders too (§7.2), as for POST /v2/orders.
  ctx.core.orderEvent(store, order, 'store/order/created')
  return { status: 200, body: { data: { id }, meta: {} } }
}

// ---------------------------------------------------------------------------------------------
// Inventory items (inventory.v3 get-inventory-items; §13.6)
// ---------------------------------------------------------------------------------------------

function intList(ctx: Ctx, name: string): Set<number> | undefined {
  const raw = ctx.query.get(name)
  if (raw === null) return undefined
  const parts = raw.split(',').map((p) => p.trim())
  if (parts.some((p) => !/^\d+$/.test(p))) throw new Refusal(422, 'body', `${name} must be a comma-separated list of integers`, { errors: { [name]: 'must be integers' } })
  return new Set(parts.map(Number))
}

function stringList(ctx: Ctx, name: string): Set<string> | undefined {
  const raw = ctx.query.get(name)
  return raw === null ? undefined : new Set(raw.split(',').map((p) => p.trim()))
}

const LOCATION = { location_id: 1, location_code: 'BC-LOCATION-1', location_name: 'Default location' }

interface InventoryItem {
  identity: { sku: string; variant_id: number | null; product_id: number; sku_id: number | null }
  level: number
}

/**
 * The store's inventory items: each variant of a product tracked by `variant`; otherwise one item per
 * product (INV: "If a product has no variants, use product_id"), carrying its base variant when it has
 * one, else `variant_id: null` (simulator's reading). A product tracked `none` is listed with its
 * catalog level as `available_to_sell` (the reference does not say how untracked stock is reported;
 * simulator's reading).
 */
function inventoryItems(store: SimStore): InventoryItem[] {
  const out: InventoryItem[] = []
  for (const p of [...store.products.values()].sort((a, b) => a.id - b.id)) {
    if (p.inventory_tracking === 'variant' && p.variants.length > 0) {
      // sku_id: "Read-only reference to Catalog V2 API's SKU ID"; the variant's id stands for it here.
      for (const v of p.variants) out.push({ identity: { sku: v.sku, variant_id: v.id, product_id: p.id, sku_id: v.id }, level: v.inventory_level })
    } else {
      out.push({ identity: { sku: p.sku, variant_id: p.base_variant_id, product_id: p.id, sku_id: null }, level: p.inventory_level })
    }
  }
  return out
}

/** GET /v3/inventory/items (INV get-inventory-items): 200 {data: ItemResponse[], meta: pagination}. */
export function getInventoryItems(ctx: Ctx): Reply {
  // INV: "Limit of 1000 items for payload length".
  const { page, limit } = pageParams(ctx.query, 422, 1000)
  const variants = intList(ctx, 'variant_id:in')
  const products = intList(ctx, 'product_id:in')
  const skus = stringList(ctx, 'sku:in')
  const locationIds = intList(ctx, 'location_id:in')
  const locationCodes = stringList(ctx, 'location_code:in')
  const locationShown = (!locationIds || locationIds.has(LOCATION.location_id)) && (!locationCodes || locationCodes.has(LOCATION.location_code))
  const items = inventoryItems(ctx.store).filter(
    (i) =>
      (!variants || (i.identity.variant_id !== null && variants.has(i.identity.variant_id))) &&
      (!products || products.has(i.identity.product_id)) &&
      (!skus || skus.has(i.identity.sku)),
  )
  const data = pick(items, page, limit).map((i) => ({
    identity: i.identity,
    locations: locationShown
      ? [
          {
            ...LOCATION,
            available_to_sell: Math.max(0, i.level),
            total_inventory_onhand: i.level,
            location_enabled: true,
            settings: { safety_stock: 0, is_in_stock: true, warning_level: 0, bin_picking_number: '' },
          },
        ]
      : [],
  }))
  return { status: 200, body: { data, meta: pagination(items.length, page, limit) } }
}

// ---------------------------------------------------------------------------------------------
// Product variants (catalog/product-variants getProductVariants; §13.6)
// ---------------------------------------------------------------------------------------------

function renderVariant(p: SimCatalogProduct, v: SimVariant | undefined): Record<string, unknown> {
  return {
    id: v?.id ?? p.base_variant_id,
    product_id: p.id,
    sku: v?.sku ?? p.sku,
    sku_id: v ? v.id : null,
    // `price` null = the product's price; calculated_price is the price that applies.
    price: v ? v.price : p.price,
    calculated_price: v?.price ?? p.price,
    sale_price: null,
    retail_price: null,
    map_price: null,
    weight: null,
    calculated_weight: 0,
    width: null,
    height: null,
    depth: null,
    is_free_shipping: false,
    fixed_cost_shipping_price: null,
    purchasing_disabled: v?.purchasing_disabled ?? false,
    purchasing_disabled_message: v?.purchasing_disabled ? 'This item is not for sale' : '',
    image_url: '',
    cost_price: null,
    upc: '',
    mpn: '',
    gtin: '',
    inventory_level: v ? v.inventory_level : p.inventory_level,
    inventory_warning_level: 0,
    bin_picking_number: '',
    option_values: v?.option_values ?? [],
  }
}

function fieldList(ctx: Ctx, name: string): string[] | undefined {
  const raw = ctx.query.get(name)
  return raw === null ? undefined : raw.split(',').map((f) => f.trim()).filter(Boolean)
}

/** GET /v3/catalog/products/{productId}/variants (VAR getProductVariants): 200 {data: productVariant_Full[], meta}. */
export function getProductVariants(ctx: Ctx): Reply {
  const id = Number(ctx.params.productId)
  const product = Number.isInteger(id) ? ctx.store.products.get(id) : undefined
  if (!product) throw new Refusal(404, 'state', `Product ${ctx.params.productId} not found`, { title: 'The requested resource was not found.' })
  const { page, limit } = pageParams(ctx.query, 422)
  // A product without variants lists its base variant (catalog: every product has at least one).
  const all = product.variants.length > 0 ? product.variants.map((v) => renderVariant(product, v)) : [renderVariant(product, undefined)]
  const only = fieldList(ctx, 'include_fields')
  const without = fieldList(ctx, 'exclude_fields')
  const fields = Object.keys(all[0]!)
  for (const f of [...(only ?? []), ...(without ?? [])]) {
    if (!fields.includes(f)) throw new Refusal(422, 'body', `${f} is not a field of a variant (include_fields / exclude_fields)`, { errors: { include_fields: `unknown field ${f}` } })
  }
  const data = pick(all, page, limit).map((v) =>
    Object.fromEntries(Object.entries(v).filter(([k]) => k === 'id' || ((!only || only.includes(k)) && !(without ?? []).includes(k)))),
  )
  return { status: 200, body: { data, meta: pagination(all.length, page, limit) } }
}

// ---------------------------------------------------------------------------------------------
// Products (catalog/products getProducts; §13.6)
// ---------------------------------------------------------------------------------------------

/** The fields of a product the simulator models (a subset of CAT `product_Full`). */
const PRODUCT_FIELDS = ['id', 'name', 'type', 'sku', 'price', 'calculated_price', 'inventory_level', 'inventory_warning_level', 'inventory_tracking', 'availability', 'is_visible', 'base_variant_id']

function renderProduct(p: SimCatalogProduct): Record<string, unknown> {
  return {
    id: p.id,
    name: p.name,
    type: p.type,
    sku: p.sku,
    price: p.price,
    calculated_price: p.price,
    inventory_level: p.inventory_level,
    inventory_warning_level: 0,
    inventory_tracking: p.inventory_tracking,
    availability: 'available',
    is_visible: true,
    base_variant_id: p.base_variant_id,
  }
}

/**
 * GET /v3/catalog/products (CAT getProducts; `id:in`, `include_fields`, `exclude_fields`, `page`,
 * `limit`): 200 {data: product_Full[], meta: metaCollection_Full}. Only the fields listed in
 * `renderProduct` are simulated; asking for another is refused (422) so a caller relying on one the
 * simulator does not model finds out.
 */
export function getProducts(ctx: Ctx): Reply {
  const { page, limit } = pageParams(ctx.query, 422)
  const ids = intList(ctx, 'id:in')
  const all = [...ctx.store.products.values()].filter((p) => !ids || ids.has(p.id)).sort((a, b) => a.id - b.id).map(renderProduct)
  const only = fieldList(ctx, 'include_fields')
  const without = fieldList(ctx, 'exclude_fields')
  for (const f of [...(only ?? []), ...(without ?? [])]) {
    if (!PRODUCT_FIELDS.includes(f)) throw new Refusal(422, 'body', `${f} is not a field of a product the simulator models (include_fields / exclude_fields)`, { errors: { include_fields: `unknown field ${f}` } })
  }
  const data = pick(all, page, limit).map((p) => Object.fromEntries(Object.entries(p).filter(([k]) => k === 'id' || ((!only || only.includes(k)) && !(without ?? []).includes(k)))))
  return { status: 200, body: { data, meta: pagination(all.length, page, limit) } }
}
