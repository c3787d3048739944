/**
 * A local BigCommerce for the tests of the real integration: one `node:http` server on 127.0.0.1
 * playing three hosts under distinct base URLs (§0 "Hosts and paths" of docs/platform-api.md):
 *
 *   apiUrl      = http://127.0.0.1:<port>/api       → {apiUrl}/stores/{hash}/v2/..., /v3/...
 *   paymentsUrl = http://127.0.0.1:<port>/payments  → {paymentsUrl}/stores/{hash}/payments
 *   loginUrl    = http://127.0.0.1:<port>/login     → {loginUrl}/oauth2/token
 *
 * Routes (operation ids of the reference; "§n" = docs/platform-api.md section):
 *   POST   /v2/orders                                   createOrder                (§2.1)
 *   GET    /v2/orders?external_order_id=&status_id=...  getOrders                  (§2.2)
 *   GET    /v2/orders/{id}                              getOrder                   (§2.3)
 *   PUT    /v2/orders/{id}                              updateOrder                (§2.1)
 *   GET    /v2/orders/{id}/products                     getOrderProducts           (§2.4)
 *   GET    /v2/orders/{id}/shipping_addresses           getOrderShippingAddresses  (O2)
 *   GET    /v3/payments/methods?order_id=               getPaymentMethods          (§3.1)
 *   POST   /v3/payments/access_tokens                   createPaymentAccessToken   (§3.2)
 *   POST   {payments}/stores/{hash}/payments            PaymentsPost               (§3.3)
 *   GET    /v3/orders/{id}/transactions                 getOrderTransactions       (§4)
 *   POST   /v3/orders/{id}/payment_actions/refund_quotes createOrderRefundQuotes   (§5.1)
 *   POST   /v3/orders/{id}/payment_actions/refunds      createOrderRefund          (§5.2)
 *   GET    /v3/orders/{id}/payment_actions/refunds      getOrderRefunds            (§5.3)
 *   GET    /v3/customers?id:in=                         getCustomers               (§6.1)
 *   GET    /v3/customers/{id}/stored-instruments        getCustomerStoredInstruments (§6.3)
 *   POST/GET /v3/hooks, PUT/DELETE /v3/hooks/{id}       createWebhooks ...         (§7.1)
 *   POST   {login}/oauth2/token                         oauthToken                 (§1.2)
 *   POST   /v3/carts                                    createCart                 (§13.1)
 *   GET    /v3/carts/{cartId}                           getCart                    (§13.1)
 *   DELETE /v3/carts/{cartId}                           deleteCart                 (§13.1)
 *   GET    /v3/checkouts/{checkoutId}?include=          getCheckout                (§13.5)
 *   POST   /v3/checkouts/{checkoutId}/billing-address   addCheckoutBillingAddress  (§13.2)
 *   POST   /v3/checkouts/{checkoutId}/consignments?include=consignments.available_shipping_options
 *                                                       addCheckoutConsignment     (§13.3)
 *   PUT    /v3/checkouts/{checkoutId}/consignments/{consignmentId}
 *                                                       updateCheckoutConsignment  (§13.3)
 *   POST   /v3/checkouts/{checkoutId}/discounts         addCheckoutDiscount        (§13.4)
 *   POST   /v3/checkouts/{checkoutId}/orders            createCheckoutOrder        (§13.5)
 *   GET    /v3/inventory/items?variant_id:in=&product_id:in=  getInventoryItems    (§13.6)
 *   GET    /v3/catalog/products/{productId}/variants    getProductVariants         (§13.6)
 *   GET    /v3/catalog/products?id:in=&include_fields=  getProducts                (§13.6)
 *
 * The operation ids are the reference's, except two: the checkout's order route is the checkouts
 * reference's `createOrder` but is named `createCheckoutOrder` here, so a fault (failNext,
 * holdNextAnswer, ...) can target it apart from POST /v2/orders `createOrder`; and inventory's
 * `get-inventory-items` is `getInventoryItems`. A cart's id is its checkout's id; paying an order made
 * from a checkout deletes the cart (later calls on it answer 404).
 *
 * Every refused request (wrong host, path, method, headers, credentials, scope, body shape, or a
 * state rule such as 30101/30051) is answered in the platform's error shape for that route (§0
 * "Error bodies") AND recorded in `violations`, so a test can assert `violations` stayed empty.
 * Declines and faults a test injects are platform behaviour, not violations.
 *
 * Behaviour switches: declineNextPayment, nextPaymentPending, declineNextRefund, rateLimitNext (429
 * with the rate headers of §0 "Rate limits"), failNext (5xx before or after processing),
 * holdNextAnswer (time out after processing), loseNextAnswer (destroy the socket after processing),
 * setLatency, setRateLimit (a store's quota, enforced), and `options` (points the reference leaves
 * open, see context.ts SimOptions).
 *
 * Rate limits (§0): each store's api-host requests are counted in a fixed window of its own, which
 * starts at the first request after the previous one ended, and every api answer carries the
 * `X-Rate-Limit-*` headers of that window. By default the quota reported is DEFAULT_QUOTA and is never
 * enforced, so a service that budgets its calls from the headers is not slowed in ordinary tests;
 * setRateLimit gives a store a real quota, and a request over it answers 429 (Left 0, X-Retry-After)
 * and does nothing.
 * Store setup for checkouts: setShippingOptions (zones; default one `Ground` 5.99 everywhere),
 * setTaxRates (default none), setInventory (stock at any time).
 */
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
// wall clock: the simulated platform's latency (setLatency) is real time, as the real platform's is.
import { setTimeout as sleep } from 'node:timers/promises'
import {
  addBillingAddress, addConsignments, addDiscount, createCart, createCheckoutOrder, deleteCart, getCart, getCheckout, getInventoryItems, getProducts, getProductVariants, updateConsignment,
} from './bigcommerce/checkouts.ts'
import type { Ctx, PaymentOutcome, Reply, SimCore, SimCounters, SimOptions } from './bigcommerce/context.ts'
import { Refusal, errorBody, requireAccept, requireJsonContentType, type ErrorStyle, type Host, type Violation, type ViolationKind } from './bigcommerce/http.ts'
import { createOrder, createRefund, createRefundQuote, getOrder, getOrderProducts, getOrderRefunds, getOrderShippingAddresses, getOrderTransactions, listOrders, updateOrder } from './bigcommerce/orders.ts'
import { createPaymentAccessToken, getPaymentMethods, paymentCodeStatus, processPayment } from './bigcommerce/payments.ts'
import {
  createHook, deleteHook, deliver, exchangeToken, getCustomers, getStoredInstruments, listHooks, newGrant, updateHook,
  type AuthGrant, type LoginState, type SimApp, type WebhookDelivery,
} from './bigcommerce/platform.ts'
import {
  newCustomer, newProduct, newStore, shippingOptions,
  type CustomerSeed, type ProductSeed, type SimCart, type SimCatalogProduct, type SimCustomer, type SimOrder, type SimPaymentMethod, type SimStore, type StoreSeed,
} from './bigcommerce/state.ts'

export type { Violation, ViolationKind, WebhookDelivery, SimOrder, SimStore, SimCustomer, SimOptions, AuthGrant, SimApp, SimCart }
export { paymentCodeStatus }

// ---------------------------------------------------------------------------------------------
// Route table
// ---------------------------------------------------------------------------------------------

interface Route {
  operation: string
  host: Host
  method: string
  /** Relative to /stores/{hash} (api, payments) or to the host root (login). */
  path: RegExp
  params: string[]
  style: ErrorStyle
  /** Any one of these scopes (§8); null = the `default` scope every token has. */
  scopes: string[] | null
  /** The handler waits the latency itself, between its checks and its commit (payments). */
  delayInside?: boolean
  /** A POST without a request body in the reference: Content-Type is checked only when a body is sent. */
  bodyless?: boolean
  handler(ctx: Ctx): Reply | Promise<Reply>
}

const ORDERS_RW = ['store_v2_orders']
const ORDERS_RO = ['store_v2_orders', 'store_v2_orders_read_only']
const TX_RW = ['store_v2_orders', 'store_v2_transactions']
const TX_RO = ['store_v2_transactions_read_only', 'store_v2_transactions']
/** carts.v3 securitySchemes (and ACCT). */
const CART_RW = ['store_cart']
const CART_RO = ['store_cart', 'store_cart_read_only']
/**
 * checkouts.v3 securitySchemes names `store_checkouts` / `store_checkouts_read_only`, ACCT names
 * `store_checkout` / `store_checkout_read_only`: either spelling is accepted (§13.8).
 */
const CHECKOUT_RW = ['store_checkout', 'store_checkouts']
const CHECKOUT_RO = [...CHECKOUT_RW, 'store_checkout_read_only', 'store_checkouts_read_only']
const INVENTORY_RO = ['store_inventory_read_only', 'store_inventory']
const PRODUCTS_RO = ['store_v2_products_read_only', 'store_v2_products']

function route(
  operation: string, host: Host, method: string, path: string, style: ErrorStyle, scopes: string[] | null, handler: Route['handler'], delayInside = false, bodyless = false,
): Route {
  const params: string[] = []
  const source = path.replace(/\{(\w+)\}/g, (_, name: string) => {
    params.push(name)
    return '([^/]+)'
  })
  return { operation, host, method, path: new RegExp(`^${source}$`), params, style, scopes, handler, delayInside, bodyless }
}

function routes(login: LoginState): Route[] {
  return [
    route('createOrder', 'api', 'POST', '/v2/orders', 'v2', ORDERS_RW, createOrder, true),
    route('getOrders', 'api', 'GET', '/v2/orders', 'v2', ORDERS_RO, listOrders),
    route('getOrder', 'api', 'GET', '/v2/orders/{orderId}', 'v2', ORDERS_RO, getOrder),
    route('updateOrder', 'api', 'PUT', '/v2/orders/{orderId}', 'v2', ORDERS_RW, updateOrder),
    route('getOrderProducts', 'api', 'GET', '/v2/orders/{orderId}/products', 'v2', ORDERS_RO, getOrderProducts),
    route('getOrderShippingAddresses', 'api', 'GET', '/v2/orders/{orderId}/shipping_addresses', 'v2', ORDERS_RO, getOrderShippingAddresses),
    route('getPaymentMethods', 'api', 'GET', '/v3/payments/methods', 'v3', ['store_payments_methods_read'], getPaymentMethods),
    route('createPaymentAccessToken', 'api', 'POST', '/v3/payments/access_tokens', 'v3', ['store_payments_access_token_create'], createPaymentAccessToken),
    route('getOrderTransactions', 'api', 'GET', '/v3/orders/{orderId}/transactions', 'v3', TX_RO, getOrderTransactions),
    route('createOrderRefundQuotes', 'api', 'POST', '/v3/orders/{orderId}/payment_actions/refund_quotes', 'v3', TX_RW, createRefundQuote),
    route('createOrderRefund', 'api', 'POST', '/v3/orders/{orderId}/payment_actions/refunds', 'v3', TX_RW, createRefund, true),
    route('getOrderRefunds', 'api', 'GET', '/v3/orders/{orderId}/payment_actions/refunds', 'v3', [...TX_RO, ...ORDERS_RO], getOrderRefunds),
    route('getCustomers', 'api', 'GET', '/v3/customers', 'customers', ['store_v2_customers_read_only', 'store_v2_customers'], getCustomers),
    route('getCustomerStoredInstruments', 'api', 'GET', '/v3/customers/{customerId}/stored-instruments', 'customers', ['store_stored_payment_instruments_read_only', 'store_stored_payment_instruments'], getStoredInstruments),
    route('createWebhooks', 'api', 'POST', '/v3/hooks', 'v3', null, createHook),
    route('getWebhooks', 'api', 'GET', '/v3/hooks', 'v3', null, listHooks),
    route('updateWebhook', 'api', 'PUT', '/v3/hooks/{hookId}', 'v3', null, updateHook),
    route('deleteWebhook', 'api', 'DELETE', '/v3/hooks/{hookId}', 'v3', null, deleteHook),
    route('createCart', 'api', 'POST', '/v3/carts', 'v3', CART_RW, createCart),
    route('getCart', 'api', 'GET', '/v3/carts/{cartId}', 'v3', CART_RO, getCart),
    route('deleteCart', 'api', 'DELETE', '/v3/carts/{cartId}', 'v3', CART_RW, deleteCart),
    route('getCheckout', 'api', 'GET', '/v3/checkouts/{checkoutId}', 'v3', CHECKOUT_RO, getCheckout),
    route('addCheckoutBillingAddress', 'api', 'POST', '/v3/checkouts/{checkoutId}/billing-address', 'v3', CHECKOUT_RW, addBillingAddress),
    route('addCheckoutConsignment', 'api', 'POST', '/v3/checkouts/{checkoutId}/consignments', 'v3', CHECKOUT_RW, addConsignments),
    route('updateCheckoutConsignment', 'api', 'PUT', '/v3/checkouts/{checkoutId}/consignments/{consignmentId}', 'v3', CHECKOUT_RW, updateConsignment),
    route('addCheckoutDiscount', 'api', 'POST', '/v3/checkouts/{checkoutId}/discounts', 'v3', CHECKOUT_RW, addDiscount),
    // The checkouts reference's `createOrder`, named apart from POST /v2/orders for faults (header).
    route('createCheckoutOrder', 'api', 'POST', '/v3/checkouts/{checkoutId}/orders', 'v3', CHECKOUT_RW, createCheckoutOrder, true, true),
    route('getInventoryItems', 'api', 'GET', '/v3/inventory/items', 'v3', INVENTORY_RO, getInventoryItems),
    route('getProductVariants', 'api', 'GET', '/v3/catalog/products/{productId}/variants', 'v3', PRODUCTS_RO, getProductVariants),
    route('getProducts', 'api', 'GET', '/v3/catalog/products', 'v3', PRODUCTS_RO, getProducts),
    route('PaymentsPost', 'payments', 'POST', '/payments', 'payments', null, processPayment, true),
    route('oauthToken', 'login', 'POST', '/oauth2/token', 'login', null, (ctx) => exchangeToken(ctx, login)),
  ]
}

// ---------------------------------------------------------------------------------------------
// Faults
// ---------------------------------------------------------------------------------------------

type Fault =
  | { kind: 'rate-limit'; resetMs: number; withHeaders: boolean }
  | { kind: 'status'; status: number; after: boolean }
  | { kind: 'hold' }
  | { kind: 'destroy' }
  | { kind: 'pause'; reached: () => void; released: Promise<void> }

interface ArmedFault {
  fault: Fault
  operation: string | '*'
  host: Host | '*'
  remaining: number
}

/** §0 "Rate limits": a 30 s window, 150 requests (Standard/Plus); what an armed rateLimitNext 429 reports. */
const WINDOW_MS = 30_000
const QUOTA = 150
/**
 * The quota a store without setRateLimit reports (never enforced). Far above what any test or bench
 * sends one store in a window (a 1,600-renewal bench is ~16,000 calls), so a budget kept from the
 * headers never waits in them; a real quota is what setRateLimit is for.
 */
export const DEFAULT_QUOTA = 1_000_000

/** A store's enforced quota: `quota` api-host requests per fixed window of `windowMs`. */
export interface RateLimit {
  quota: number
  windowMs: number
}

interface StoreWindow {
  start: number
  count: number
  /** Set by setRateLimit: enforced. */
  limit: RateLimit | null
  /** Requests refused by the enforced limit (not the armed rateLimitNext ones). */
  refused: number
}

export interface RequestRecord {
  at: Date
  host: Host | 'unknown'
  /** The store hash of an api or payments request, once known. */
  store?: string
  operation: string
  method: string
  url: string
  /** The status answered, or 'held' / 'destroyed'. */
  outcome: number | 'held' | 'destroyed'
}

export interface BigCommerceSimulatorOptions {
  app?: Partial<SimApp>
  latencyMs?: number
  options?: Partial<SimOptions>
  /** Timeout of one webhook delivery. Default 5000 ms. */
  webhookTimeoutMs?: number
  /** The clock of the rate-limit windows, in ms (tests move it instead of sleeping). Default Date.now. */
  rateLimitNow?: () => number
}

export interface BigCommerceSimulator {
  readonly origin: string
  readonly apiUrl: string
  readonly paymentsUrl: string
  readonly loginUrl: string
  /** The app registered on the login host (client id/secret, registered auth callback URL). */
  readonly app: SimApp
  /** Points the reference leaves open; mutable between requests. */
  readonly options: SimOptions
  readonly counters: Readonly<SimCounters>
  /** Refused (or flagged) requests that were the client's fault, in arrival order. */
  readonly violations: Violation[]
  readonly requests: RequestRecord[]
  /** Every webhook delivery made (sendWebhook, sendOrderWebhook, autoWebhooks). */
  readonly deliveries: WebhookDelivery[]

  // seeds
  addStore(seed: StoreSeed): SimStore
  addCustomer(storeHash: string, seed?: CustomerSeed): SimCustomer
  addProduct(storeHash: string, seed?: ProductSeed): SimCatalogProduct
  addPaymentMethod(storeHash: string, method: Partial<SimPaymentMethod> & { id: string }): SimPaymentMethod
  /** A fresh auth callback for the store (§1.1): the `code, scope, context, account_uuid` to exchange. */
  beginInstall(storeHash: string, scopes: string[]): AuthGrant
  /**
   * The store's shipping zones (§13.3): a consignment is quoted the options whose `countries` (ISO2)
   * include its address's country_code, or that have none. Default: `[{description: 'Ground', cost: 5.99}]`.
   */
  setShippingOptions(storeHash: string, options: Array<{ description: string; cost: number; countries?: string[] }>): void
  /**
   * The store's tax table (§13.5): a tax address's rate is its country + state_or_province_code row,
   * else its country's row (no `state`), else 0. Tax is charged on the goods after discounts, and on
   * shipping with `taxShipping`, each rounded half up to the currency's minor unit. Default: none.
   */
  setTaxRates(storeHash: string, rates: Array<{ country: string; state?: string; rate_bps: number }>, opts?: { taxShipping?: boolean }): void
  /** Sets stock: a variant's with `variantId` (or the product's own through its base variant id), else the product's. */
  setInventory(storeHash: string, stock: { productId: number; variantId?: number; level: number }): void

  // inspection
  store(storeHash: string): SimStore
  order(storeHash: string, orderId: number): SimOrder | undefined
  orders(storeHash: string): SimOrder[]
  /** A cart (= checkout) as the simulator holds it; undefined once deleted (or after its order is paid). */
  cart(storeHash: string, cartId: string): SimCart | undefined
  carts(storeHash: string): SimCart[]
  /** Orders with more than one successful payment: double charges. */
  doubleCharges(): SimOrder[]
  /** Answers held by holdNextAnswer and not yet released. */
  readonly heldAnswers: number
  /** Requests of the store refused by its enforced rate limit (429). */
  rateLimited(storeHash: string): number

  // switches
  setLatency(ms: number, operation?: string): void
  /** The next payment that passes every check is declined with `code` (HTTP status from paymentCodeStatus unless given). */
  declineNextPayment(code: number, opts?: { status?: number; times?: number }): void
  /** The next payment answers 201 `pending` and records an `event: pending` transaction; the order stays 0. */
  nextPaymentPending(): void
  /** The next refund is accepted (201) and its payment `is_declined` (refunds are asynchronous, §5.2). */
  declineNextRefund(): void
  /**
   * Enforces `limit` on the store's api-host requests from now (a fresh window), or with null goes back
   * to the default: counted and reported with DEFAULT_QUOTA per 30 s, never refused.
   */
  setRateLimit(storeHash: string, limit: RateLimit | null): void
  /** The next `n` requests (of a host / operation) answer 429 (§0 "Rate limits"). */
  rateLimitNext(n: number, opts?: { resetMs?: number; withHeaders?: boolean; host?: Host; operation?: string }): void
  /** The next `times` requests of `operation` answer `status`; after processing by default (the work is done). */
  failNext(operation: string, status: number, opts?: { afterProcessing?: boolean; times?: number }): void
  /** Process the next `operation` request, then never answer (until releaseHeld or close): a client timeout. */
  holdNextAnswer(operation: string, times?: number): void
  /** Process the next `operation` request, then destroy the socket: a lost answer. */
  loseNextAnswer(operation: string, times?: number): void
  /** Destroys the sockets of held answers. */
  releaseHeld(): void
  /**
   * The next `operation` request waits before it is processed until `release` (a request still on its
   * way to the platform); `reached` resolves when it arrives.
   */
  pauseNext(operation: string): { reached: Promise<void>; release(): void }
  /** Makes every PAT issued so far expired. */
  expirePats(): void
  /** Fixes the simulator's clock (undefined = real time). */
  setNow(now: Date | undefined): void

  // webhooks
  /** Deliver webhooks to this origin instead of the registered https destination (path kept). */
  routeWebhooksTo(origin: string | undefined): void
  sendWebhook(storeHash: string, scope: string, data: Record<string, unknown>): Promise<WebhookDelivery[]>
  /** `store/order/created` (or another order scope) for an order, payload of §7.3. */
  sendOrderWebhook(storeHash: string, orderId: number, scope?: string): Promise<WebhookDelivery[]>
  /** Waits for webhooks fired by `autoWebhooks`. */
  settleWebhooks(): Promise<void>

  close(): Promise<void>
}

const DEFAULT_OPTIONS: SimOptions = {
  createOrderStatus: 200,
  emptyOrderListStatus: 204,
  listIncludesIncomplete: false,
  patForNonIncompleteOrder: 422,
  recordDeclinedTransactions: false,
  autoWebhooks: false,
}

export async function startBigCommerceSimulator(init: BigCommerceSimulatorOptions = {}): Promise<BigCommerceSimulator> {
  const violations: Violation[] = []
  const requests: RequestRecord[] = []
  const deliveries: WebhookDelivery[] = []
  const faults: ArmedFault[] = []
  const latency = new Map<string, number>([['*', init.latencyMs ?? 0]])
  const held = new Set<ServerResponse>()
  const pendingWebhooks = new Set<Promise<unknown>>()
  let fixedNow: Date | undefined
  let webhookOrigin: string | undefined
  const rateNow = init.rateLimitNow ?? Date.now
  const windows = new Map<string, StoreWindow>()

  const app: SimApp = {
    clientId: init.app?.clientId ?? 'sim-client-id',
    clientSecret: init.app?.clientSecret ?? 'sim-client-secret-' + randomBytes(6).toString('hex'),
    redirectUri: init.app?.redirectUri ?? 'https://app.example.com/platform/auth',
  }

  const core: SimCore = {
    stores: new Map(),
    tokens: new Map(),
    pats: new Map(),
    options: { ...DEFAULT_OPTIONS, ...init.options },
    counters: { ordersCreated: 0, checkoutOrdersCreated: 0, cartsCreated: 0, patsIssued: 0, paymentRequests: 0, paymentsSucceeded: 0, paymentsDeclined: 0, refundsCreated: 0, webhooksSent: 0, requests: 0 },
    paymentOutcomes: [] as PaymentOutcome[],
    refundDeclines: 0,
    patSecret: randomBytes(32),
    now: () => fixedNow ?? new Date(),
    orderEvent(store, order, scope, status) {
      if (!core.options.autoWebhooks) return
      const data: Record<string, unknown> = { type: 'order', id: order.id }
      if (status) data.status = status
      if (scope === 'store/order/refund/created') data.refund = { refund_id: order.refunds.at(-1)?.id }
      const p = send(store, scope, data).finally(() => pendingWebhooks.delete(p))
      pendingWebhooks.add(p)
    },
  }

  const login: LoginState = {
    app,
    grants: new Map(),
    issueToken(storeHash, scopes) {
      const token = 'bc_' + randomBytes(16).toString('hex')
      // A fresh auth for the same store replaces the app's previous token (§1.2).
      for (const [t, rec] of core.tokens) if (rec.store_hash === storeHash && rec.client_id === app.clientId) core.tokens.delete(t)
      core.tokens.set(token, { token, store_hash: storeHash, scopes: new Set(scopes), client_id: app.clientId })
      return token
    },
  }

  const table = routes(login)

  async function send(store: SimStore, scope: string, data: Record<string, unknown>): Promise<WebhookDelivery[]> {
    // Hooks made by the app's OAuth token are signed with its client secret (§7.5); hooks of a
    // store-level token are not (which secret would sign them is not in the reference).
    const signed = await deliver(
      { ...store, hooks: store.hooks.filter((h) => h.client_id === app.clientId) },
      scope,
      data,
      { origin: webhookOrigin, signingSecret: app.clientSecret, now: core.now(), timeoutMs: init.webhookTimeoutMs ?? 5000 },
    )
    const unsigned = await deliver(
      { ...store, hooks: store.hooks.filter((h) => h.client_id !== app.clientId) },
      scope,
      data,
      { origin: webhookOrigin, signingSecret: undefined, now: core.now(), timeoutMs: init.webhookTimeoutMs ?? 5000 },
    )
    const all = [...signed, ...unsigned]
    deliveries.push(...all)
    core.counters.webhooksSent += all.length
    return all
  }

  function storeOf(hash: string): SimStore {
    const store = core.stores.get(hash)
    if (!store) throw new Error(`No simulated store ${hash}: addStore first`)
    return store
  }

  function takeFault(host: Host, operation: string, match: (f: Fault) => boolean): Fault | undefined {
    const armed = faults.find((a) => (a.host === '*' || a.host === host) && (a.operation === '*' || a.operation === operation) && match(a.fault))
    if (!armed) return undefined
    if (--armed.remaining <= 0) faults.splice(faults.indexOf(armed), 1)
    return armed.fault
  }

  function windowOf(hash: string): StoreWindow {
    let window = windows.get(hash)
    if (!window) windows.set(hash, (window = { start: Number.NEGATIVE_INFINITY, count: 0, limit: null, refused: 0 }))
    return window
  }

  /**
   * Counts one api-host request in the store's window and answers its rate headers, or, over an
   * enforced quota, the 429's headers (the refused request is not counted: it did nothing).
   */
  function rateLimit(hash: string): { headers: Record<string, string>; refused: boolean } {
    const window = windowOf(hash)
    const { quota, windowMs } = window.limit ?? { quota: DEFAULT_QUOTA, windowMs: WINDOW_MS }
    const now = rateNow()
    if (now - window.start >= windowMs) {
      window.start = now
      window.count = 0
    }
    const resetMs = Math.max(0, window.start + windowMs - now)
    const refused = window.limit !== null && window.count >= quota
    if (refused) window.refused++
    else window.count++
    const headers: Record<string, string> = {
      'X-Rate-Limit-Time-Window-Ms': String(windowMs),
      'X-Rate-Limit-Time-Reset-Ms': String(resetMs),
      'X-Rate-Limit-Requests-Quota': String(quota),
      'X-Rate-Limit-Requests-Left': String(Math.max(0, quota - window.count)),
    }
    if (refused) headers['X-Retry-After'] = String(Math.ceil(resetMs / 1000))
    return { headers, refused }
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    core.counters.requests++
    const method = req.method ?? 'GET'
    const url = req.url ?? '/'
    const parsed = new URL(url, 'http://127.0.0.1')
    const record: RequestRecord = { at: new Date(), host: 'unknown', operation: 'unknown', method, url, outcome: 0 }
    requests.push(record)

    const chunks: Buffer[] = []
    let size = 0
    for await (const chunk of req) {
      size += (chunk as Buffer).length
      if (size > 1_000_000) break
      chunks.push(chunk as Buffer)
    }
    const rawBody = Buffer.concat(chunks).toString('utf8')

    let style: ErrorStyle = 'v3'
    let host: Host | undefined
    let operation = 'unknown'
    let extraHeaders: Record<string, string> = {}

    const answer = (reply: Reply): void => {
      const headers: Record<string, string> = { ...extraHeaders, ...reply.headers }
      if (reply.body !== undefined && reply.status !== 204) headers['Content-Type'] = 'application/json'
      res.writeHead(reply.status, headers)
      res.end(reply.body === undefined || reply.status === 204 ? undefined : JSON.stringify(reply.body))
      record.outcome = reply.status
    }
    const violation = (status: number, kind: ViolationKind, message: string, code?: number): void => {
      violations.push({ at: new Date(), operation, method, url, status, kind, message, ...(code === undefined ? {} : { code }) })
    }
    const refuse = (r: Refusal): void => {
      if (!r.platformOutcome) violation(r.status, r.kind, r.message, r.code)
      answer({ status: r.status, body: errorBody(r.style ?? style, r) })
    }

    try {
      if (size > 1_000_000) throw new Refusal(413, 'body', 'The request body is larger than 1 MB')
      // Host and store from the path.
      const hostMatch = /^\/(api|payments|login)(\/.*)?$/.exec(parsed.pathname)
      if (!hostMatch) throw new Refusal(404, 'route', `No simulated host for ${parsed.pathname} (use apiUrl, paymentsUrl or loginUrl)`)
      host = hostMatch[1] as Host
      record.host = host
      let rest = hostMatch[2] ?? '/'
      let store: SimStore | undefined
      if (host !== 'login') {
        const storeMatch = /^\/stores\/([^/]+)(\/.*)$/.exec(rest)
        if (!storeMatch) throw new Refusal(404, 'route', `Expected /stores/{store_hash}/... on the ${host} host`)
        store = core.stores.get(storeMatch[1]!)
        record.store = storeMatch[1]!
        rest = storeMatch[2]!
        if (host === 'api') style = rest.startsWith('/v2/') ? 'v2' : 'v3'
        else style = 'payments'
        if (!store) throw new Refusal(404, 'route', `Unknown store hash ${storeMatch[1]}`)
      } else style = 'login'

      const onPath = table.filter((r) => r.host === host && r.path.test(rest))
      const found = onPath.find((r) => r.method === method)
      if (!found) {
        if (onPath.length > 0) throw new Refusal(405, 'route', `${method} is not allowed on ${rest}; allowed: ${onPath.map((r) => r.method).join(', ')}`)
        const hint =
          host === 'api' && rest === '/v3/orders' ? ' (orders are created on POST /v2/orders, §0)' : host === 'api' && rest.endsWith('/payments') ? ' (payments go to the payments host, §0)' : ''
        throw new Refusal(404, 'route', `No route ${method} ${rest} on the ${host} host${hint}`)
      }
      operation = found.operation
      record.operation = operation
      style = found.style
      const m = found.path.exec(rest)!
      const params = Object.fromEntries(found.params.map((name, i) => [name, decodeURIComponent(m[i + 1]!)]))

      if (host === 'api') {
        const counted = rateLimit(store!.hash)
        extraHeaders = counted.headers
        if (counted.refused) return answer({ status: 429, body: errorBody(style, new Refusal(429, 'state', 'You have exceeded the API rate limit')) })
      }
      // 429 switch (§0 "Rate limits"; RATE: with the headers, or bare under heavy load).
      const limited = takeFault(host, operation, (f) => f.kind === 'rate-limit')
      if (limited?.kind === 'rate-limit') {
        const headers: Record<string, string> = limited.withHeaders
          ? {
              'X-Rate-Limit-Time-Window-Ms': String(WINDOW_MS),
              'X-Rate-Limit-Time-Reset-Ms': String(limited.resetMs),
              'X-Rate-Limit-Requests-Quota': String(QUOTA),
              'X-Rate-Limit-Requests-Left': '0',
              'X-Retry-After': String(Math.ceil(limited.resetMs / 1000)),
            }
          : {}
        extraHeaders = {}
        return answer({ status: 429, headers, body: errorBody(style, new Refusal(429, 'state', 'You have exceeded the API rate limit')) })
      }

      // Credentials (§0 "Headers"; CODES 401/403).
      let token = undefined as Ctx['token']
      if (host === 'api') {
        const given = req.headers['x-auth-token']
        if (typeof given !== 'string' || given === '') {
          const hint = req.headers.authorization ? ' (Authorization is not read on the REST host; send X-Auth-Token)' : ''
          throw new Refusal(401, 'auth', `X-Auth-Token is missing${hint}`)
        }
        token = core.tokens.get(given)
        if (!token || token.store_hash !== store!.hash) throw new Refusal(401, 'auth', 'X-Auth-Token is not a valid token for this store')
        if (found.scopes && token.scopes && !found.scopes.some((s) => token!.scopes!.has(s))) {
          throw new Refusal(403, 'scope', `Missing scope: ${operation} needs one of ${found.scopes.join(', ')}`)
        }
        // Accept / Content-Type are required parameters (O2, O3, PAT, METH).
        requireAccept(req.headers, 'application/json')
        if ((method === 'POST' || method === 'PUT') && !(found.bodyless && rawBody === '')) requireJsonContentType(req.headers)
      }

      const paused = takeFault(host, operation, (f) => f.kind === 'pause')
      if (paused?.kind === 'pause') {
        paused.reached()
        await paused.released
      }
      const before = takeFault(host, operation, (f) => f.kind === 'status' && !f.after)
      if (before?.kind === 'status') return answer({ status: before.status, body: errorBody(style, new Refusal(before.status, 'state', 'Injected failure before processing')) })

      const delay = (): Promise<void> => {
        const ms = latency.get(operation) ?? latency.get('*') ?? 0
        // wall clock: a platform that takes this long to answer, as seen over a real socket.
        return ms > 0 ? sleep(ms).then(() => undefined) : Promise.resolve()
      }
      const ctx: Ctx = {
        core,
        operation,
        method,
        url: `${parsed.origin}${parsed.pathname}`,
        headers: req.headers,
        query: parsed.searchParams,
        params,
        rawBody,
        store: store!,
        token,
        delay,
        flag: (kind, message) => violation(0, kind, message),
      }
      if (!found.delayInside) await delay()
      const reply = await found.handler(ctx)

      // Faults after processing: the work is done, the client does not learn it.
      const after = takeFault(host, operation, (f) => f.kind === 'hold' || f.kind === 'destroy' || (f.kind === 'status' && f.after))
      if (after?.kind === 'hold') {
        held.add(res)
        record.outcome = 'held'
        res.on('close', () => held.delete(res))
        return
      }
      if (after?.kind === 'destroy') {
        record.outcome = 'destroyed'
        req.socket.destroy()
        return
      }
      if (after?.kind === 'status') return answer({ status: after.status, body: errorBody(style, new Refusal(after.status, 'state', 'Injected failure after processing')) })
      answer(reply)
    } catch (err) {
      if (err instanceof Refusal) return refuse(err)
      violation(500, 'route', `Simulator error: ${(err as Error).stack ?? err}`)
      answer({ status: 500, body: errorBody(style, new Refusal(500, 'route', 'Simulator error')) })
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err) => {
      res.destroy(err as Error)
    })
  })
  server.listen(0, '127.0.0.1')
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  })
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`

  const arm = (fault: Fault, operation: string | '*', host: Host | '*', times: number): void => {
    faults.push({ fault, operation, host, remaining: times })
  }

  const sim: BigCommerceSimulator = {
    origin,
    apiUrl: `${origin}/api`,
    paymentsUrl: `${origin}/payments`,
    loginUrl: `${origin}/login`,
    app,
    options: core.options,
    counters: core.counters,
    violations,
    requests,
    deliveries,

    addStore(seed) {
      if (core.stores.has(seed.hash)) throw new Error(`Store ${seed.hash} exists`)
      if (!/^[a-z0-9]+$/.test(seed.hash)) throw new Error('A store hash is lower-case letters and digits (§1.3)')
      const store = newStore(seed)
      core.stores.set(seed.hash, store)
      if (seed.accessToken) {
        core.tokens.set(seed.accessToken, {
          token: seed.accessToken,
          store_hash: seed.hash,
          scopes: seed.scopes ? new Set(seed.scopes) : null,
          client_id: `store-level-${seed.hash}`,
        })
      }
      return store
    },
    addCustomer(hash, seed = {}) {
      const store = storeOf(hash)
      const customer = newCustomer(store, seed)
      for (const i of customer.instruments) if (!store.methods.some((m) => m.id === i.method_id)) throw new Error(`No payment method ${i.method_id} in store ${hash}`)
      store.customers.set(customer.id, customer)
      return customer
    },
    addProduct(hash, seed = {}) {
      const store = storeOf(hash)
      const product = newProduct(store, seed)
      store.products.set(product.id, product)
      return product
    },
    addPaymentMethod(hash, method) {
      const store = storeOf(hash)
      const m: SimPaymentMethod = {
        name: method.id,
        type: 'card',
        test_mode: true,
        transaction_type: 'purchase',
        stored_card_cvv_required: false,
        ...method,
      }
      store.methods.push(m)
      return m
    },
    beginInstall(hash, scopes) {
      storeOf(hash)
      return newGrant(core, login, hash, scopes)
    },
    setShippingOptions(hash, options) {
      const store = storeOf(hash)
      store.shipping = shippingOptions(hash, options)
    },
    setTaxRates(hash, rates, opts = {}) {
      const store = storeOf(hash)
      for (const r of rates) {
        if (!/^[A-Za-z]{2}$/.test(r.country)) throw new Error(`Tax rate country must be an ISO2 code; got ${r.country}`)
        if (!Number.isInteger(r.rate_bps) || r.rate_bps < 0) throw new Error(`rate_bps must be a non-negative integer (530 = 5.30 %); got ${r.rate_bps}`)
      }
      store.tax = {
        rates: rates.map((r) => ({ country: r.country.toUpperCase(), state: r.state === undefined ? null : r.state.toUpperCase(), rate_bps: r.rate_bps })),
        shipping: opts.taxShipping ?? false,
      }
    },
    setInventory(hash, stock) {
      const product = storeOf(hash).products.get(stock.productId)
      if (!product) throw new Error(`No product ${stock.productId} in store ${hash}`)
      if (!Number.isInteger(stock.level)) throw new Error('An inventory level is an integer')
      if (stock.variantId === undefined || stock.variantId === product.base_variant_id) product.inventory_level = stock.level
      else {
        const variant = product.variants.find((v) => v.id === stock.variantId)
        if (!variant) throw new Error(`Product ${stock.productId} has no variant ${stock.variantId}`)
        variant.inventory_level = stock.level
      }
    },

    store: storeOf,
    order: (hash, id) => storeOf(hash).orders.get(id),
    orders: (hash) => [...storeOf(hash).orders.values()],
    cart: (hash, cartId) => storeOf(hash).carts.get(cartId),
    carts: (hash) => [...storeOf(hash).carts.values()],
    doubleCharges: () => [...core.stores.values()].flatMap((s) => [...s.orders.values()].filter((o) => o.successful_payments > 1)),
    get heldAnswers() {
      return held.size
    },
    rateLimited: (hash) => windows.get(hash)?.refused ?? 0,

    setLatency(ms, operation = '*') {
      latency.set(operation, ms)
    },
    declineNextPayment(code, opts = {}) {
      for (let i = 0; i < (opts.times ?? 1); i++) core.paymentOutcomes.push({ kind: 'decline', code, status: opts.status ?? paymentCodeStatus(code) })
    },
    nextPaymentPending() {
      core.paymentOutcomes.push({ kind: 'pending' })
    },
    declineNextRefund() {
      core.refundDeclines++
    },
    setRateLimit(hash, limit) {
      storeOf(hash)
      if (limit && !(Number.isInteger(limit.quota) && limit.quota > 0 && Number.isInteger(limit.windowMs) && limit.windowMs > 0)) {
        throw new Error('A rate limit is a whole quota > 0 per a whole windowMs > 0')
      }
      const window = windowOf(hash)
      window.limit = limit
      window.start = Number.NEGATIVE_INFINITY
      window.count = 0
    },
    rateLimitNext(n, opts = {}) {
      arm({ kind: 'rate-limit', resetMs: opts.resetMs ?? 15_000, withHeaders: opts.withHeaders ?? true }, opts.operation ?? '*', opts.host ?? '*', n)
    },
    failNext(operation, status, opts = {}) {
      arm({ kind: 'status', status, after: opts.afterProcessing ?? true }, operation, '*', opts.times ?? 1)
    },
    holdNextAnswer(operation, times = 1) {
      arm({ kind: 'hold' }, operation, '*', times)
    },
    loseNextAnswer(operation, times = 1) {
      arm({ kind: 'destroy' }, operation, '*', times)
    },
    pauseNext(operation) {
      let reached!: () => void
      let release!: () => void
      const arrived = new Promise<void>((resolve) => (reached = resolve))
      const released = new Promise<void>((resolve) => (release = resolve))
      arm({ kind: 'pause', reached, released }, operation, '*', 1)
      return { reached: arrived, release }
    },
    releaseHeld() {
      for (const res of held) res.destroy()
      held.clear()
    },
    expirePats() {
      for (const pat of core.pats.values()) pat.expires_at = 0
    },
    setNow(now) {
      fixedNow = now
    },

    routeWebhooksTo(o) {
      webhookOrigin = o
    },
    sendWebhook: (hash, scope, data) => send(storeOf(hash), scope, data),
    sendOrderWebhook(hash, orderId, scope = 'store/order/created') {
      const store = storeOf(hash)
      if (!store.orders.has(orderId)) throw new Error(`No order ${orderId} in store ${hash}`)
      return send(store, scope, { type: 'order', id: orderId })
    },
    async settleWebhooks() {
      while (pendingWebhooks.size > 0) await Promise.allSettled([...pendingWebhooks])
    },

    async close() {
      sim.releaseHeld()
      await sim.settleWebhooks()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
  return sim
}
