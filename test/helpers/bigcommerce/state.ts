/**
 * The simulated stores: what a test seeds (stores, customers, stored instruments, payment methods,
 * catalog products) and what the API creates (orders, transactions, PATs, refunds, hooks).
 * "§n" refers to docs/platform-api.md.
 */
import { randomBytes } from 'node:crypto'

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

export interface SimCatalogProduct {
  id: number
  name: string
  sku: string
  /** Catalog price, decimal major units. */
  price: number
  /** Variant ids; a product with variants needs `variant_id` or `product_options` (§2.1). */
  variant_ids: number[]
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
  next: { order: number; orderProduct: number; customer: number; product: number; transaction: number; refund: number; refundPayment: number; hook: number }
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

export interface ProductSeed {
  id?: number
  name?: string
  sku?: string
  price?: number
  variant_ids?: number[]
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
    next: { order: 100, orderProduct: 1, customer: 1, product: 1, transaction: 1, refund: 1, refundPayment: 1, hook: 1 },
  }
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
  return {
    id,
    name: seed.name ?? `Product ${id}`,
    sku: seed.sku ?? `SKU-${id}`,
    price: seed.price ?? 10,
    variant_ids: seed.variant_ids ?? [],
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
