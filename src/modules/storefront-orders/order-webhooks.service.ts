import { timingSafeEqual } from 'node:crypto'
import type { ValidateFunction } from 'ajv'
import type { FastifyBaseLogger } from 'fastify'
import type { Db, StoreRow } from '../../db/database.ts'
import { PLATFORM_ORDERS } from '../../http/actors.ts'
import { createAjv } from '../../http/ajv.ts'
import { enqueue } from '../../jobs/job-kinds.ts'
import { JobGaveUp } from '../../jobs/runner.ts'
import { currencyExponent, decimalToMinor, minorToDecimal } from '../../lib/money.ts'
import { storableName } from '../../lib/printable-text.ts'
import { findPlanRows, platformProductIdOf } from '../catalog/index.ts'
import type { Clock } from '../../lib/clock.ts'
import { AppError, ERROR_STATUS } from '../../lib/errors.ts'
import { problemText, RENEWAL_ORDER_SOURCE, type PlatformAccess, type PlatformAnswer, type PlatformCall, type PlatformClient, type PlatformConnections, type TokenVault } from '../platform/index.ts'
import { findStoreByHash, findStoreById } from '../stores/index.ts'
import { CheckoutBody, type CheckoutInput, type CheckoutService } from '../subscriptions/index.ts'
import { callbackSignatureChecker } from './callback-signature.ts'
import { HandleOrderWebhook, RegisterOrderHooks } from './storefront-orders.jobs.ts'
import { purgeReceipts, recordReceipt } from './storefront-orders.repository.ts'

/**
 * Orders placed on the storefront start subscriptions (docs/bigcommerce.md "Order webhooks",
 * docs/platform-api.md §7):
 *
 * 1. On connection, a job registers the store's order webhooks on the platform (list first: one hook
 *    per store + client + scope + destination), with a per-store secret in the hook's custom
 *    `headers`, which BigCommerce sends back on every callback.
 * 2. `POST /platform/webhooks` checks that secret in constant time, records the payload's `hash`
 *    once per store and enqueues a job; it answers 200 before any work.
 * 3. The job reads the order; once it is paid, the line items the storefront marked as subscription
 *    items become subscriptions through the checkout service, idempotent by order id.
 *
 * Authenticity: the custom header secret is the check that always applies. BigCommerce's reference
 * (§7.5) also describes Standard Webhooks signatures (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature`, HMAC-SHA256 under the app's client secret) for hooks an app created, but does
 * not say which secret signs hooks made with a store-level API account token, nor since when every
 * callback is signed. So a signature is verified only when one is sent for a store connected through
 * the app with the client secret configured (a wrong one, or one more than 5 minutes from now, is
 * refused); its absence is not a refusal.
 */

/** The scopes registered: created (orders made already paid, by the control panel or an app) and statusUpdated (a storefront order is created Incomplete and paid later). */
export const ORDER_HOOK_SCOPES = ['store/order/created', 'store/order/statusUpdated'] as const
/** The custom header that carries the store's webhook secret. */
export const WEBHOOK_SECRET_HEADER = 'x-subscription-billing-secret'
export const WEBHOOK_PATH = '/platform/webhooks'

/**
 * Order statuses (§2.5, compared by id, never by name) that mean the shopper has paid: Shipped,
 * Partially Shipped, Awaiting Pickup, Awaiting Shipment, Completed, Awaiting Fulfillment. Not paid
 * (yet), or not to be started: Incomplete 0, Pending 1, Refunded 4, Cancelled 5, Declined 6, Awaiting
 * Payment 7, Manual Verification Required 12, Disputed 13, Partially Refunded 14.
 */
/** Longer than BigCommerce retries a delivery (48 hours, §7.4): a late retry is still recognised. */
export const RECEIPT_RETENTION_MS = 7 * 24 * 3_600_000
/** How often a connected store's hooks are listed again. */
export const HOOK_CHECK_EVERY_MS = 24 * 3_600_000

export const PAID_ORDER_STATUS_IDS: ReadonlySet<number> = new Set([2, 3, 8, 9, 10, 11])

/**
 * How the storefront widget marks a line item as a subscription: the product has a text modifier
 * (option) whose display name is this text, and the widget puts the plan id in it. On the order the
 * line item carries it in `product_options[]` as `{display_name, value}` (§2.4).
 */
export const SUBSCRIPTION_OPTION_NAME = 'Subscription plan'
const PLAN_ID = /^plan_[0-9A-HJKMNP-TV-Z]{26}$/

/** Transaction events that mean money was taken or authorised with the instrument (§4). */
const PAYING_EVENTS = new Set(['purchase', 'capture', 'authorization', 'settled'])

const PAGE_LIMIT = 250
const MAX_PAGES = 40

export interface OrderWebhookPayload {
  scope: string
  store_id?: string | number
  data: { type: string; id: number; [key: string]: unknown }
  hash: string
  created_at?: number
  producer: string
}

export interface OrderWebhooksOptions {
  db: Db
  clock: Clock
  client: PlatformClient
  connections: PlatformConnections
  vault: TokenVault
  checkouts: CheckoutService
  /** PUBLIC_URL: the hooks' destination is `{publicUrl}/platform/webhooks`. */
  publicUrl: string | undefined
  /** The app's client secret, for Standard Webhooks signatures on app-made hooks. */
  appClientSecret: string | undefined
  log: FastifyBaseLogger
}

export type OrderWebhooks = ReturnType<typeof createOrderWebhooks>

/** Why a callback is refused; the route answers 401 for every one of them, alike. */
export type ReceiveOutcome = { accepted: true; duplicate: boolean; enqueued: boolean } | { accepted: false; reason: string }

/** A platform call that did not give a 2xx: retried by the job runner unless retrying cannot help. */
function platformFailure(what: string, reply: Awaited<ReturnType<PlatformClient['call']>>): Error {
  if (!reply.sent) return new Error(`${what}: the platform could not be reached (${reply.reason})`)
  const { statusCode, body } = reply.answer
  const text = problemText(body)
  const message = `${what}: the platform answered ${statusCode}${text ? ` (${text})` : ''}`
  // 429 past the client's budget, 5xx: try again later. Any other 4xx is the request or the token: give up.
  if (statusCode === 429 || statusCode >= 500) return new Error(message)
  return new JobGaveUp(message)
}

export function destinationOf(publicUrl: string | undefined): string {
  if (!publicUrl) throw new JobGaveUp('PUBLIC_URL is not set: the order webhooks are sent to {PUBLIC_URL}/platform/webhooks (docs/bigcommerce.md)')
  let url: URL
  try {
    url = new URL(publicUrl)
  } catch {
    throw new JobGaveUp('PUBLIC_URL is not an absolute URL')
  }
  // §7.1: BigCommerce delivers to https on port 443 only.
  if (url.protocol !== 'https:' || (url.port !== '' && url.port !== '443')) {
    throw new JobGaveUp(`PUBLIC_URL must be https on port 443 for BigCommerce to deliver webhooks to it (is ${url.protocol}//${url.host})`)
  }
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}${WEBHOOK_PATH}`
}

/** v2 order address (§2.1, §2.3) → our address shape; undefined when it is missing altogether. */
/**
 * The shipping method and rate the shopper's order paid (O2: the shipping address's `shipping_method`,
 * the order's `shipping_cost_ex_tax` in its currency): what a `checkout_rate` store's renewals ship
 * at. Before tax, because a renewal's tax is computed again. Undefined when either is missing or not
 * a plain amount: the subscription then keeps no rate, and its renewals ship at 0 under that policy.
 */
export function shippingPaidBy(order: Record<string, unknown>, address: unknown): CheckoutInput['shipping'] {
  const raw = (address as { shipping_method?: unknown } | undefined)?.shipping_method
  // The platform's text, kept in a column (no NUL) and within the checkout's 250 characters.
  const method = typeof raw === 'string' ? storableName(raw, 250) : ''
  if (!method || typeof order.currency_code !== 'string') return undefined
  let exponent: number
  try {
    exponent = currencyExponent(order.currency_code)
  } catch {
    return undefined
  }
  const amount = decimalToMinor(order.shipping_cost_ex_tax, exponent)
  return amount === undefined ? undefined : { method, amount }
}

export function addressOf(v2: unknown): CheckoutInput['billing_address'] | undefined {
  if (!v2 || typeof v2 !== 'object') return undefined
  const a = v2 as Record<string, unknown>
  const text = (value: unknown) => (typeof value === 'string' ? value.trim() : '')
  const name = [text(a.first_name), text(a.last_name)].filter(Boolean).join(' ') || text(a.company)
  return {
    name,
    line1: text(a.street_1),
    line2: text(a.street_2) || null,
    city: text(a.city),
    state: text(a.state) || null,
    postal_code: text(a.zip),
    country: text(a.country_iso2).toUpperCase(),
    phone: text(a.phone) || null,
  }
}

interface OrderProduct {
  id?: unknown
  product_id?: unknown
  price_inc_tax?: unknown
  quantity?: unknown
  variant_id?: unknown
  product_options?: unknown
}

/** The subscription lines of an order: `{plan_id, quantity, variant}`, or the reason a marked line is unusable. */
export function subscriptionItems(products: OrderProduct[]): { items: CheckoutInput['items']; lines: OrderProduct[]; problems: string[] } {
  const items: CheckoutInput['items'] = []
  const lines: OrderProduct[] = []
  const problems: string[] = []
  for (const product of products) {
    const options = Array.isArray(product.product_options) ? (product.product_options as Record<string, unknown>[]) : []
    const marker = options.find((o) => typeof o?.display_name === 'string' && o.display_name.trim().toLowerCase() === SUBSCRIPTION_OPTION_NAME.toLowerCase())
    if (!marker) continue
    const value = typeof marker.value === 'string' ? marker.value.trim() : typeof marker.display_value === 'string' ? marker.display_value.trim() : ''
    if (!PLAN_ID.test(value)) {
      problems.push(`order product ${String(product.id)}: "${SUBSCRIPTION_OPTION_NAME}" is not a plan id`)
      continue
    }
    const quantity = Number(product.quantity)
    if (!Number.isInteger(quantity) || quantity < 1) {
      problems.push(`order product ${String(product.id)}: quantity ${String(product.quantity)} is not a positive integer`)
      continue
    }
    const variant = Number(product.variant_id)
    items.push({ plan_id: value, quantity, ...(Number.isInteger(variant) && variant > 0 ? { platform_variant_id: variant } : {}) })
    lines.push(product)
  }
  return { items, lines, problems }
}

/** The stored instrument the shopper paid with, from the order's transactions (§4). */
export function instrumentOf(transactions: unknown): string | undefined {
  const data = (transactions as { data?: unknown } | undefined)?.data
  if (!Array.isArray(data)) return undefined
  for (const t of data as Record<string, unknown>[]) {
    if (t?.status === 'ok' && PAYING_EVENTS.has(String(t.event)) && typeof t.payment_instrument_token === 'string' && t.payment_instrument_token) {
      return t.payment_instrument_token
    }
  }
  return undefined
}

let checkoutValidator: ValidateFunction | undefined
/** The checkout body's own schema, so an order that would be refused at the API is refused here too. */
function validateCheckout(input: unknown): { ok: boolean; errors: string[] } {
  checkoutValidator ??= createAjv('body', []).compile(CheckoutBody)
  const ok = checkoutValidator(input) as boolean
  return { ok, errors: (checkoutValidator.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`) }
}

export function createOrderWebhooks({ db, clock, client, connections, vault, checkouts, publicUrl, appClientSecret, log }: OrderWebhooksOptions) {
  /** The store's webhook secret: derived from the platform token key, never stored (rotating the key re-registers it). */
  async function secretOf(storeId: string): Promise<string> {
    return (await vault.derive(`platform-webhook-secret:${storeId}`)).toString('base64url')
  }

  async function call(access: PlatformAccess, request: PlatformCall, what: string): Promise<PlatformAnswer> {
    const reply = await client.call(access, request)
    if (!reply.sent || reply.answer.statusCode < 200 || reply.answer.statusCode >= 300) throw platformFailure(what, reply)
    return reply.answer
  }

  /** Standard Webhooks (§7.5): `v1,<base64 HMAC-SHA256 of "id.timestamp.body">` under the client secret; any of several signatures may match. */
  // Standard Webhooks signatures of app-made hooks, timestamp tolerance included (callback-signature.ts).
  const signatureMatches = appClientSecret ? callbackSignatureChecker(appClientSecret, clock) : undefined

  /** Why a subscription line does not pay for the plan it names, or undefined when every line does. */
  async function linesPayForTheirPlans(storeId: string, items: CheckoutInput['items'], lines: OrderProduct[], orderCurrency: unknown): Promise<string | undefined> {
    const plans = await findPlanRows(db, storeId, [...new Set(items.map((item) => item.plan_id))])
    for (const [index, item] of items.entries()) {
      const line = lines[index]!
      const plan = plans.find((candidate) => candidate.id === item.plan_id)
      // An unknown plan is the checkout's to refuse, with its own words.
      if (!plan) continue
      const what = `order product ${String(line.id)} (plan ${plan.id})`
      const productId = await platformProductIdOf(db, plan.product_id)
      if (String(line.product_id) !== productId) return `${what}: the plan is for platform product ${productId}, the line is product ${String(line.product_id)}`
      if (typeof orderCurrency === 'string' && orderCurrency && orderCurrency.toUpperCase() !== plan.currency.trim().toUpperCase()) {
        return `${what}: the order is in ${orderCurrency}, the plan in ${plan.currency.trim()}`
      }
      const exponent = currencyExponent(plan.currency.trim())
      const paid = decimalToMinor(line.price_inc_tax, exponent)
      const owed = plan.amount * (plan.prepaid_cycles ?? 1)
      if (paid === undefined || paid < owed) {
        return `${what}: the line paid ${String(line.price_inc_tax)} a unit, one charge of the plan is ${minorToDecimal(owed, exponent)} (the first period must be paid at the plan's price)`
      }
    }
    return undefined
  }

  const api = {
    secretOf,

    /**
     * Hourly upkeep: receipts older than the platform's retry window are forgotten, and every
     * connected store's hooks are checked again once a day (BigCommerce deactivates a hook after
     * 48 hours of failed deliveries, and stores connected before hooks existed have none), one job per
     * store, deduplicated while one is queued. Nothing is checked without a public https origin.
     */
    async maintain(now: Date = clock.now()): Promise<{ purged: number; queued: number }> {
      const purged = await purgeReceipts(db, new Date(now.getTime() - RECEIPT_RETENTION_MS))
      let queued = 0
      try {
        destinationOf(publicUrl)
      } catch {
        return { purged, queued }
      }
      for (const storeId of await connections.dueForHookCheck(new Date(now.getTime() - HOOK_CHECK_EVERY_MS))) {
        await enqueue(db, RegisterOrderHooks, { store_id: storeId }, { dedupeKey: `${RegisterOrderHooks.kind}:${storeId}`, storeId })
        queued += 1
      }
      return { purged, queued }
    },

    /**
     * Makes sure the store's order hooks exist, are active and carry its secret: lists them first
     * (one hook per store + client + scope + destination), creates the missing ones, re-enables or
     * updates the others. Records `hooks_registered_at`.
     */
    async registerHooks(storeId: string): Promise<{ created: number; updated: number } | undefined> {
      const access = await connections.accessOf(storeId)
      if (!access) return undefined
      let destination: string
      try {
        destination = destinationOf(publicUrl)
      } catch (error) {
        // A configuration without a public https origin (development, tests) cannot receive webhooks:
        // said once per connection; connecting again after setting PUBLIC_URL registers them.
        log.warn({ storeId, reason: (error as Error).message }, 'BigCommerce order webhooks not registered: storefront orders will not start subscriptions')
        return undefined
      }
      const headers = { [WEBHOOK_SECRET_HEADER]: await secretOf(storeId) }
      let created = 0
      let updated = 0
      for (const scope of ORDER_HOOK_SCOPES) {
        const listed = await call(access, { method: 'GET', path: '/v3/hooks', query: { scope, destination, page: 1, limit: 250 } }, `listing the ${scope} hooks`)
        const hooks = Array.isArray((listed.body as { data?: unknown } | undefined)?.data) ? ((listed.body as { data: Record<string, unknown>[] }).data) : []
        const existing = hooks.find((h) => h.scope === scope && h.destination === destination)
        if (!existing) {
          await call(access, { method: 'POST', path: '/v3/hooks', body: { scope, destination, is_active: true, headers } }, `creating the ${scope} hook`)
          created += 1
          continue
        }
        const sameHeaders = JSON.stringify(existing.headers ?? null) === JSON.stringify(headers)
        if (existing.is_active !== true || !sameHeaders) {
          await call(access, { method: 'PUT', path: `/v3/hooks/${Number(existing.id)}`, body: { is_active: true, headers } }, `updating the ${scope} hook`)
          updated += 1
        }
      }
      await connections.markHooksRegistered(storeId, clock.now())
      log.info({ storeId, destination, created, updated }, 'BigCommerce order webhooks registered')
      return { created, updated }
    },

    /**
     * A callback, body already parsed and shape-checked: authenticates it for the store `producer`
     * names, records its hash once and enqueues the order's job. Refusals carry a reason for the
     * log; the caller answers them all with the same 401.
     */
    async receive(payload: OrderWebhookPayload, headers: Record<string, string | string[] | undefined>, rawBody: Buffer): Promise<ReceiveOutcome> {
      const given = headers[WEBHOOK_SECRET_HEADER]
      const storeHash = /^stores\/([a-z0-9]{1,64})$/.exec(payload.producer)?.[1]
      const store = storeHash ? await findStoreByHash(db, storeHash) : undefined
      // Computed even for an unknown store, so the answer takes as long either way.
      const expected = Buffer.from(await secretOf(store?.id ?? `unknown:${storeHash ?? ''}`))
      const presented = Buffer.from(typeof given === 'string' ? given : '')
      const secretOk = presented.length === expected.length && timingSafeEqual(presented, expected)
      if (!store) return { accepted: false, reason: 'no store for this producer' }
      if (!secretOk) return { accepted: false, reason: 'the secret header does not match' }
      const source = await connections.sourceOf(store.id)
      if (!source) return { accepted: false, reason: 'the store is not connected' }
      if (source === 'app' && signatureMatches?.(headers, rawBody) === false) {
        return { accepted: false, reason: 'the Standard Webhooks signature does not match or is too old' }
      }
      const orderEvent = payload.scope.startsWith('store/order/') && payload.data.type === 'order'
      return db.transaction().execute(async (trx) => {
        const fresh = await recordReceipt(trx, { storeId: store.id, hash: payload.hash, scope: payload.scope, at: clock.now() })
        if (!fresh) return { accepted: true, duplicate: true, enqueued: false }
        if (!orderEvent) return { accepted: true, duplicate: false, enqueued: false }
        // No dedupe key: a job already running for this order must not swallow a later status change.
        await enqueue(trx, HandleOrderWebhook, { store_id: store.id, order_id: payload.data.id, scope: payload.scope, hash: payload.hash }, { storeId: store.id })
        return { accepted: true, duplicate: false, enqueued: true }
      })
    },

    /**
     * Reads the order and starts the subscriptions its marked line items ask for, once it is paid.
     * Our own renewal orders, unpaid orders and plain orders change nothing. An order whose
     * subscriptions cannot be created (a guest, no stored instrument, a checkout refused) is set aside
     * with the reason (job failed_at + last_error, the `job` set-aside count) for a person to look at.
     */
    async handleOrder(storeId: string, orderId: number, scope: string): Promise<{ outcome: string; subscriptions?: string[] }> {
      const store = await findStoreById(db, storeId)
      if (!store) return { outcome: 'store_gone' }
      const access = await connections.accessOf(store.id)
      if (!access) {
        log.warn({ storeId, orderId, scope }, 'order webhook for a store that is no longer connected: the order is not read')
        return { outcome: 'not_connected' }
      }
      const order = (await call(access, { method: 'GET', path: `/v2/orders/${orderId}` }, `reading order ${orderId}`)).body as Record<string, unknown> | undefined
      if (!order || typeof order !== 'object') throw new Error(`reading order ${orderId}: the platform answered no order`)
      if (order.external_source === RENEWAL_ORDER_SOURCE) return { outcome: 'renewal_order' }
      const statusId = Number(order.status_id)
      if (!PAID_ORDER_STATUS_IDS.has(statusId)) {
        log.info({ storeId, orderId, statusId, scope }, 'order not paid yet: a later status update brings it back')
        return { outcome: 'not_paid' }
      }

      const products: OrderProduct[] = []
      for (let page = 1; page <= MAX_PAGES; page++) {
        const answer = await call(access, { method: 'GET', path: `/v2/orders/${orderId}/products`, query: { page, limit: PAGE_LIMIT } }, `reading order ${orderId}'s products`)
        const rows = Array.isArray(answer.body) ? (answer.body as OrderProduct[]) : []
        products.push(...rows)
        if (rows.length < PAGE_LIMIT) break
      }
      const { items, lines, problems } = subscriptionItems(products)
      if (items.length === 0 && problems.length === 0) return { outcome: 'plain_order' }
      const refuse = (reason: string) => {
        log.error({ storeId, orderId, reason }, 'storefront order with subscription items set aside: no subscription was created')
        return new JobGaveUp(`order ${orderId}: ${reason}`)
      }
      if (problems.length > 0) throw refuse(problems.join('; '))
      const customerId = Number(order.customer_id)
      if (!Number.isInteger(customerId) || customerId <= 0) {
        throw refuse('a guest order (customer_id 0): a stored card belongs to a customer account, so renewals could not be charged; the shopper must check out signed in')
      }

      // The plan id is text the shopper's cart carried: it must be a plan of the line's own product, in
      // the order's currency, and the line must have paid what one charge of that plan costs.
      const mismatch = await linesPayForTheirPlans(store.id, items, lines, order.currency_code)
      if (mismatch) throw refuse(mismatch)

      const transactions = await client.call(access, { method: 'GET', path: `/v3/orders/${orderId}/transactions` })
      if (!transactions.sent || (transactions.answer.statusCode !== 204 && (transactions.answer.statusCode < 200 || transactions.answer.statusCode >= 300))) {
        throw platformFailure(`reading order ${orderId}'s transactions`, transactions)
      }
      const instrument = transactions.answer.statusCode === 204 ? undefined : instrumentOf(transactions.answer.body)
      if (!instrument) throw refuse('no transaction carries a stored instrument (payment_instrument_token): the shopper did not save the card, so renewals could not be charged')

      const billing = addressOf(order.billing_address)
      const email = typeof (order.billing_address as { email?: unknown } | undefined)?.email === 'string' ? ((order.billing_address as { email: string }).email.trim()) : ''
      let shipping: CheckoutInput['shipping_address']
      let shippingPaid: CheckoutInput['shipping']
      if (Number(order.shipping_address_count) > 0) {
        const answer = await client.call(access, { method: 'GET', path: `/v2/orders/${orderId}/shipping_addresses`, query: { page: 1, limit: 1 } })
        if (!answer.sent || (answer.answer.statusCode !== 204 && (answer.answer.statusCode < 200 || answer.answer.statusCode >= 300))) {
          throw platformFailure(`reading order ${orderId}'s shipping addresses`, answer)
        }
        const first = Array.isArray(answer.answer.body) ? answer.answer.body[0] : undefined
        shipping = addressOf(first)
        // The order's shipping is the rate of one subscription's box only when the order is that box: with
        // other lines, or several subscriptions (each renews in a box of its own), no rate is kept and the
        // renewal ships for what the store quotes then (renewal_shipping checkout_rate).
        if (items.length === 1 && products.length === 1) shippingPaid = shippingPaidBy(order, first)
      }
      const input: CheckoutInput = {
        platform_order_id: orderId,
        email,
        ...(billing?.name ? { name: billing.name } : {}),
        payment_instrument_id: instrument,
        platform_customer_id: customerId,
        ...(billing ? { billing_address: billing } : {}),
        ...(shipping ? { shipping_address: shipping } : {}),
        ...(shippingPaid ? { shipping: shippingPaid } : {}),
        items,
      }
      const checked = validateCheckout(input)
      if (!checked.ok) throw refuse(`the order does not make a valid checkout: ${checked.errors.join('; ')}`)
      let outcome
      try {
        outcome = await checkouts.checkout(store as StoreRow, input, PLATFORM_ORDERS)
      } catch (error) {
        if (error instanceof AppError) {
          const status = ERROR_STATUS[error.code]
          // The checkout refused the order itself (unknown or archived plan, an instrument not the
          // customer's, already ingested differently): trying again would be refused again.
          if (status >= 400 && status < 500 && status !== 429) throw refuse(`the checkout refused it (${error.code}: ${error.message})`)
        }
        throw error
      }
      const ids = outcome.data.map((subscription) => subscription.id)
      log.info({ storeId, orderId, subscriptions: ids, replayed: outcome.replayed }, outcome.replayed ? 'storefront order already started its subscriptions' : 'storefront order started subscriptions')
      return { outcome: outcome.replayed ? 'replayed' : 'created', subscriptions: ids }
    },
  }
  return api
}
