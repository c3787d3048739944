/**
 * The simulated stores: what a test seeds (stores, customers, stored instruments, payment methods,
 * catalog products with variants and stock, shipping zones, tax rates) and what the API creates
 * (carts and checkouts, orders, transactions, PATs, refunds, hooks).
 * "§n" refers to docs/platform-api.md.
 */
import { createHash, randomBytes } from 'node:crypto'

/** Order statuses (§2.5). */
export const ORDER_STATUSES: Readonly<Record<number, string>> = {
  0: 'Incomplete',
  1: 'Pending',
  2: 'Shipped',
  3: 'Partially Shipped',
  4: 'Refunded',
  5: 'Cancelled',
  6: 'Declined',
  7: 'Awaiting Payment',
  8: 'Awaiting Pickup',
  9: 'Awaiting Shipment',
  10: 'Completed',
  11: 'Awaiting Fulfillment',
  12: 'Manual Verification Required',
  13: 'Disputed',
  14: 'Partially Refunded',
}

export interface StoredInstrument {
  type: 'stored_card'
  /** Exactly 64 characters (§3.1). */
  token: string
  /** e.g. VISA, MASTERCARD (§6.3). */
  brand: string
  last_4: string
  /** 6 characters (§3.1). */
  issuer_identification_number: string
  expiry_month: number
  expiry_year: number
  is_default: boolean
  /** The payment method it was vaulted with, e.g. `stripe.card` (§3.1: listed under that method). */
  method_id: string
}

/** An instrument as the platform shows it (§3.1 under a method, §6.3 for a customer), without our method_id. */
export function instrumentView(i: StoredInstrument) {
  return {
    type: i.type,
    token: i.token,
    is_default: i.is_default,
    brand: i.brand,
    expiry_month: i.expiry_month,
    expiry_year: i.expiry_year,
    issuer_identification_number: i.issuer_identification_number,
    last_4: i.last_4,
  }
}

export interface SimCustomer {
  id: number
  email: string
  first_name: string
  last_name: string
  company: string
  phone: string
  customer_group_id: number
  date_created: Date
  instruments: StoredInstrument[]
}

export interface SimPaymentMethod {
  /** `<gateway>.<method>`, e.g. `stripe.card` (§3.1). */
  id: string
  name: string
  type: string
  test_mode: boolean
  /** What a successful payment is: `purchase` (auth and capture) or `authorization` only (§3.3). */
  transaction_type: 'purchase' | 'authorization'
  /** `verification_value_required` for STORED_CARD (§3.1 "Watch verification_value_required"). */
  stored_card_cvv_required: boolean
}

/** A variant of a catalog product (catalog/product-variants `productVariant_Full`, §13.6). */
export interface SimVariant {
  id: number
  sku: string
  /** Decimal major units; null = the product's price (the variant inherits it). */
  price: number | null
  /** Stock at the one simulated location; counts when the product is tracked by `variant`. */
  inventory_level: number
  option_values: { id: number; label: string; option_id: number; option_display_name: string }[]
  /** The merchant stopped selling it (VAR `purchasing_disabled`); the simulator's carts still take it. */
  purchasing_disabled: boolean
}

export type InventoryTracking = 'none' | 'product' | 'variant'

export interface SimCatalogProduct {
  id: number
  name: string
  sku: string
  /** Catalog price, decimal major units. */
  price: number
  /** Variant ids (= `variants[].id`); a product with variants needs `variant_id` or `product_options` (§2.1). */
  variant_ids: number[]
  /** The variants, with their prices and stock (§13.6). */
  variants: SimVariant[]
  /**
   * A product without variants still has one base variant on the platform (its `sku_id` is null,
   * inventory.v3 ItemResponse); its id here, null when the product has variants. Cart lines and
   * inventory items of such a product carry it as their `variant_id`.
   */
  base_variant_id: number | null
  /** How stock is tracked (catalog `inventory_tracking`): not at all, on the product, or per variant. */
  inventory_tracking: InventoryTracking
  /** Stock of the product (tracking `product`, or `none`: reported, never enforced). */
  inventory_level: number
  type: 'physical' | 'digital'
  /**
   * The product's options and modifiers by id, as the merchant named them: an order product's
   * `product_options[].display_name` comes from here (§2.4). Unlisted ids show as `Option <id>`.
   */
  options: Map<number, { display_name: string; type: string }>
}

export interface SimOrderProduct {
  id: number
  product_id: number
  variant_id: number | null
  name: string
  sku: string
  type: 'physical' | 'digital'
  quantity: number
  /** Ten-thousandths (see http.ts toUnits). */
  price_ex_tax: number
  price_inc_tax: number
  product_options: { id: number; value: string }[]
}

export interface SimTransaction {
  id: number
  order_id: number
  event: 'purchase' | 'authorization' | 'capture' | 'refund' | 'void' | 'pending' | 'settled'
  status: 'ok' | 'error'
  /** Ten-thousandths. */
  amount: number
  currency: string
  gateway: string
  gateway_transaction_id: string
  payment_method_id: string
  payment_instrument_token: string | null
  instrument: StoredInstrument | null
  test: boolean
  reference_transaction_id: number | null
  date_created: Date
  /** The processing answer's `data.id` (§3.3), kept for inspection; not part of the v3 transaction. */
  payment_id: string | null
}

export interface SimRefund {
  id: number
  order_id: number
  reason: string
  /** Ten-thousandths. */
  total_amount: number
  items: { item_type: string; item_id: number; quantity?: number; requested_amount: number | null; reason: string }[]
  payments: { id: number; provider_id: string; amount: number; offline: boolean; is_declined: boolean; declined_message: string; transaction_id: string }[]
  created: Date
}

export interface SimOrder {
  id: number
  store_hash: string
  /** The cart (= checkout) the order was made from (checkouts.v3 createOrder, §13.5); unset for POST /v2/orders. */
  cart_id?: string
  customer_id: number
  status_id: number
  external_order_id: string | null
  external_source: string | null
  channel_id: number
  billing_address: Record<string, string>
  shipping_addresses: Record<string, unknown>[]
  products: SimOrderProduct[]
  /** Ten-thousandths. */
  subtotal_ex_tax: number
  subtotal_inc_tax: number
  shipping_cost_ex_tax: number
  shipping_cost_inc_tax: number
  handling_cost_ex_tax: number
  handling_cost_inc_tax: number
  total_ex_tax: number
  total_inc_tax: number
  currency_code: string
  payment_status: string
  payment_method: string
  payment_provider_id: string | null
  staff_notes: string
  customer_message: string
  date_created: Date
  date_modified: Date
  transactions: SimTransaction[]
  refunds: SimRefund[]
  /** Every payment request that named this order through its PAT, whatever the answer. */
  payment_requests: number
  /** Payments that went through; more than one is a double charge. */
  successful_payments: number
  pats_issued: number
}

export interface SimHook {
  id: number
  client_id: string
  store_hash: string
  scope: string
  destination: string
  is_active: boolean
  headers: Record<string, string> | null
  created_at: number
  updated_at: number
  /** The token that created it: GET /v3/hooks lists only that token's hooks (§7.1). */
  created_by_token: string
}

export interface SimToken {
  token: string
  store_hash: string
  /** null = every scope (a seeded store-level token); else the OAuth scopes granted (§8). */
  scopes: Set<string> | null
  /** App client id (OAuth) or the store-level account's id; owner of hooks (§7.1). */
  client_id: string
}

export interface SimPat {
  token: string
  store_hash: string
  order_id: number
  is_recurring: boolean
  expires_at: number
  used: boolean
}

/** A shipping option of the store's zones (setShippingOptions), quoted to a consignment (§13.3). */
export interface SimShippingOption {
  /** 32 hex characters, like the reference's examples. */
  id: string
  type: string
  description: string
  /** Ten-thousandths. */
  cost: number
  /** ISO2 country codes it ships to; null = everywhere. */
  countries: string[] | null
}

/** A row of the store's tax table (setTaxRates). */
export interface SimTaxRate {
  country: string
  /** `state_or_province_code`; null = the whole country. */
  state: string | null
  /** Basis points: 530 = 5.30 %. */
  rate_bps: number
}

/** A checkout address (checkouts.v3 AddressProperties) as sent, plus the id the platform gives it. */
export interface SimCheckoutAddress {
  id: string
  /** The string fields (first_name, address1, country_code, ...). */
  fields: Record<string, string>
  custom_fields: { field_id: string; field_value: unknown }[]
}

export interface SimCartLine {
  /** A UUID (carts.v3 line-item id; the consignment's `item_id`). */
  id: string
  product_id: number
  /** The variant, or the product's base variant. */
  variant_id: number
  name: string
  sku: string
  type: 'physical' | 'digital'
  quantity: number
  /** Ten-thousandths: the unit price before discounts (the `list_price` override, else the catalog's). */
  list_price: number
  /** Ten-thousandths: the catalog price (variant, else product). */
  original_price: number
  options: { option_id: number; option_value: unknown; name?: string; value?: string }[]
}

export interface SimConsignment {
  /** 13 hex characters, like the reference's examples. */
  id: string
  address: SimCheckoutAddress
  line_item_ids: string[]
  /** The chosen option as it was quoted (its cost is kept even if the zones change later). */
  selected: SimShippingOption | null
}

/** A cart and its checkout (the same id, carts.v3 / checkouts.v3; §13). */
export interface SimCart {
  id: string
  store_hash: string
  customer_id: number
  channel_id: number
  email: string
  currency: string
  locale: string
  lines: SimCartLine[]
  /** Cart-level manual discounts (addCheckoutDiscount replaces them); ten-thousandths. */
  discounts: { name: string | null; amount: number }[]
  billing_address: SimCheckoutAddress | null
  consignments: SimConsignment[]
  created: Date
  updated: Date
  /** Optimistic concurrency `version`: 1 at creation, +1 on each change. */
  version: number
  /** Orders made from this checkout (createCheckoutOrder), oldest first. */
  order_ids: number[]
}

export interface SimStore {
  hash: string
  /** Numeric store id, a string in webhook payloads (§7.3). */
  store_id: string
  currency: string
  customers: Map<number, SimCustomer>
  products: Map<number, SimCatalogProduct>
  methods: SimPaymentMethod[]
  orders: Map<number, SimOrder>
  hooks: SimHook[]
  carts: Map<string, SimCart>
  /** The shipping zones' options (setShippingOptions); default one `Ground` 5.99 everywhere. */
  shipping: SimShippingOption[]
  /** The tax table (setTaxRates); default none (tax 0). */
  tax: { rates: SimTaxRate[]; shipping: boolean }
  next: { order: number; orderProduct: number; customer: number; product: number; transaction: number; refund: number; refundPayment: number; hook: number; baseVariant: number }
}

// ---------------------------------------------------------------------------------------------
// Seed inputs
// ---------------------------------------------------------------------------------------------

export interface StoreSeed {
  hash: string
  /** A store-level token with every scope (§1.4). Omit to connect the store through OAuth only. */
  accessToken?: string
  /** Limit the seeded token to these scopes (403 on others, §8). */
  scopes?: string[]
  storeId?: string
  currency?: string
  /** Payment methods; default one `stripe.card` purchase method without CVV on stored cards. */
  methods?: Partial<SimPaymentMethod>[]
}

export interface InstrumentSeed {
  token?: string
  brand?: string
  last_4?: string
  issuer_identification_number?: string
  expiry_month?: number
  expiry_year?: number
  is_default?: boolean
  method_id?: string
}

export interface CustomerSeed {
  id?: number
  email?: string
  first_name?: string
  last_name?: string
  instruments?: InstrumentSeed[]
}

export interface VariantSeed {
  id: number
  /** Default `<product sku>-<variant id>`. */
  sku?: string
  /** Decimal major units; absent = the product's price. */
  price?: number
  inventory_level?: number
  option_values?: { id: number; label: string; option_id: number; option_display_name: string }[]
  /** Default false. */
  purchasing_disabled?: boolean
}

export interface ProductSeed {
  id?: number
  name?: string
  sku?: string
  price?: number
  /** Variant ids without details (a variant `{id}` each); merged with `variants`. */
  variant_ids?: number[]
  variants?: VariantSeed[]
  /**
   * Default: `variant` if a variant has an inventory_level, else `product` if the product has one,
   * else `none` (stock not tracked, never refused).
   */
  inventory_tracking?: InventoryTracking
  /** Default 0. */
  inventory_level?: number
  type?: 'physical' | 'digital'
  /** Options and modifiers: `{id, display_name, type?}` (type defaults to `Text field`). */
  options?: { id: number; display_name: string; type?: string }[]
}

export function newStore(seed: StoreSeed): SimStore {
  const methods = (seed.methods ?? [{}]).map(
    (m): SimPaymentMethod => ({
      id: m.id ?? 'stripe.card',
      name: m.name ?? 'Stripe',
      type: m.type ?? 'card',
      test_mode: m.test_mode ?? true,
      transaction_type: m.transaction_type ?? 'purchase',
      stored_card_cvv_required: m.stored_card_cvv_required ?? false,
    }),
  )
  return {
    hash: seed.hash,
    store_id: seed.storeId ?? String(1_000_000 + Math.floor(Math.random() * 8_999_999)),
    currency: seed.currency ?? 'USD',
    customers: new Map(),
    products: new Map(),
    methods,
    orders: new Map(),
    hooks: [],
    carts: new Map(),
    shipping: shippingOptions(seed.hash, [{ description: 'Ground', cost: 5.99 }]),
    tax: { rates: [], shipping: false },
    // Base variants of products seeded without variants get ids far from the ids tests pick.
    next: { order: 100, orderProduct: 1, customer: 1, product: 1, transaction: 1, refund: 1, refundPayment: 1, hook: 1, baseVariant: 900_001 },
  }
}

/** The store's shipping zones from setShippingOptions' input (cost in decimal major units). */
export function shippingOptions(storeHash: string, options: { description: string; cost: number; countries?: string[] }[]): SimShippingOption[] {
  return options.map((o, i) => {
    if (typeof o.description !== 'string' || o.description === '') throw new Error('A shipping option needs a description')
    if (typeof o.cost !== 'number' || !Number.isFinite(o.cost) || o.cost < 0) throw new Error(`Shipping option ${o.description}: cost must be a non-negative number of major units`)
    return {
      id: createHash('md5').update(`${storeHash}:${i}:${o.description}`).digest('hex'),
      type: 'shipping_flatrate',
      description: o.description,
      cost: Math.round(o.cost * 10_000),
      countries: o.countries ? o.countries.map((c) => c.toUpperCase()) : null,
    }
  })
}

export function newCustomer(store: SimStore, seed: CustomerSeed): SimCustomer {
  const id = seed.id ?? store.next.customer
  store.next.customer = Math.max(store.next.customer, id + 1)
  const defaultMethod = store.methods[0]?.id ?? 'stripe.card'
  const instruments = (seed.instruments ?? []).map(
    (i, index): StoredInstrument => ({
      type: 'stored_card',
      token: i.token ?? randomBytes(32).toString('hex'),
      brand: i.brand ?? 'VISA',
      last_4: i.last_4 ?? '4242',
      issuer_identification_number: i.issuer_identification_number ?? '424242',
      expiry_month: i.expiry_month ?? 12,
      expiry_year: i.expiry_year ?? new Date().getUTCFullYear() + 3,
      is_default: i.is_default ?? index === 0,
      method_id: i.method_id ?? defaultMethod,
    }),
  )
  return {
    id,
    email: seed.email ?? `customer${id}@example.com`,
    first_name: seed.first_name ?? 'Jane',
    last_name: seed.last_name ?? 'Doe',
    company: '',
    phone: '',
    customer_group_id: 0,
    date_created: new Date(),
    instruments,
  }
}

export function newProduct(store: SimStore, seed: ProductSeed): SimCatalogProduct {
  const id = seed.id ?? store.next.product
  store.next.product = Math.max(store.next.product, id + 1)
  const sku = seed.sku ?? `SKU-${id}`
  const seeds = new Map<number, VariantSeed>()
  for (const v of seed.variant_ids ?? []) seeds.set(v, { id: v })
  for (const v of seed.variants ?? []) seeds.set(v.id, { ...seeds.get(v.id), ...v })
  const variants = [...seeds.values()].map(
    (v): SimVariant => ({
      id: v.id,
      sku: v.sku ?? `${sku}-${v.id}`,
      price: v.price ?? null,
      inventory_level: v.inventory_level ?? 0,
      option_values: v.option_values ?? [],
      purchasing_disabled: v.purchasing_disabled ?? false,
    }),
  )
  // Variant ids are unique in a store (the platform's are global ids).
  const taken = new Set([...store.products.values()].flatMap((p) => [...p.variant_ids, ...(p.base_variant_id === null ? [] : [p.base_variant_id])]))
  for (const v of variants) if (taken.has(v.id)) throw new Error(`Variant id ${v.id} is already used in store ${store.hash}`)
  const tracking: InventoryTracking =
    seed.inventory_tracking ?? ((seed.variants ?? []).some((v) => v.inventory_level !== undefined) ? 'variant' : seed.inventory_level !== undefined ? 'product' : 'none')
  return {
    id,
    name: seed.name ?? `Product ${id}`,
    sku,
    price: seed.price ?? 10,
    variant_ids: variants.map((v) => v.id),
    variants,
    base_variant_id: variants.length === 0 ? store.next.baseVariant++ : null,
    inventory_tracking: tracking,
    inventory_level: seed.inventory_level ?? 0,
    type: seed.type ?? 'digital',
    options: new Map((seed.options ?? []).map((o) => [o.id, { display_name: o.display_name, type: o.type ?? 'Text field' }])),
  }
}

/** Card type names of v3 transactions `credit_card.card_type` (§4) from the instrument brand. */
export function cardType(brand: string): string {
  const map: Record<string, string> = {
    VISA: 'visa',
    MASTERCARD: 'master',
    AMEX: 'american_express',
    DISCOVER: 'discover',
    JCB: 'jcb',
    DINERS_CLUB: 'diners_club',
    MAESTRO: 'maestro',
  }
  return map[brand.toUpperCase()] ?? brand.toLowerCase()
}

/** Paid-for amount still refundable, ten-thousandths: ok purchase/capture/settled minus ok refunds. */
export function refundableUnits(order: SimOrder): number {
  let paid = 0
  for (const t of order.transactions) {
    if (t.status !== 'ok') continue
    if (t.event === 'purchase' || t.event === 'capture' || t.event === 'settled') paid += t.amount
    if (t.event === 'refund') paid -= t.amount
  }
  return Math.max(0, paid)
}
