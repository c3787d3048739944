import { createApiClient, enc, query } from '../shared/api-client.ts'
import { ApiError, errorText } from '../shared/api-error.ts'
import { currentSession } from './session.ts'
import type {
  ChangeRequest,
  Charge,
  Onetime,
  Page,
  PaymentInstrumentList,
  Plan,
  PortalStore,
  Product,
  RetentionOffer,
  SessionAnswer,
  StorefrontStore,
  Subscriber,
  Subscription,
  SubscriptionVariantList,
  UpcomingRenewal,
} from './types.ts'

export { ApiError, errorText }

/** The portal's client: the versioned API, the session token; changes carry a key only when asked. */
const client = createApiClient({
  base: '/api/v1',
  credential: () => currentSession()?.token ?? null,
  signedOut: () => new ApiError(401, 'session_expired', 'Your session has expired.'),
  idempotentByDefault: () => false,
})
const call = client.call
export const setUnauthorizedHandler = client.setUnauthorizedHandler

export const api = {
  storefrontStore: (storeHash: string) => call<StorefrontStore>('GET', `/storefront/store${query({ store_hash: storeHash })}`, { auth: false }),
  requestLink: (email: string, storeHash: string) =>
    call<{ status: 'sent' }>('POST', '/portal/auth/request-link', { auth: false, body: { email, store_hash: storeHash } }),
  verify: (token: string) => call<SessionAnswer>('POST', '/portal/auth/verify', { auth: false, body: { token } }),
  logout: () => call<void>('POST', '/portal/auth/logout'),
  me: () => call<Subscriber>('GET', '/portal/me'),

  subscriptions: (cursor?: string | null) => call<Page<Subscription>>('GET', `/portal/subscriptions${query({ limit: 50, cursor })}`),
  subscription: (id: string) => call<Subscription>('GET', `/portal/subscriptions/${enc(id)}`),
  /** The next renewal as the server prices it (409 invalid_state when there is none). */
  upcoming: (id: string) => call<UpcomingRenewal>('GET', `/portal/subscriptions/${enc(id)}/upcoming`),
  charges: (id: string, cursor?: string | null) => call<Page<Charge>>('GET', `/portal/subscriptions/${enc(id)}/charges${query({ limit: 10, cursor })}`),
  paymentInstruments: () => call<PaymentInstrumentList>('GET', '/portal/payment-instruments'),
  swapOptions: (id: string) => call<Page<Plan>>('GET', `/portal/subscriptions/${enc(id)}/swap-options${query({ limit: 100 })}`),
  /** The variants of the subscription's product, read live from the store's catalogue (empty: nothing to choose). */
  variants: (id: string) => call<SubscriptionVariantList>('GET', `/portal/subscriptions/${enc(id)}/variants`),
  action: (id: string, action: string, body?: unknown) =>
    call<Subscription>('POST', `/portal/subscriptions/${enc(id)}/${action}`, { body: body ?? undefined, idempotent: true }),

  portalStore: () => call<PortalStore>('GET', '/portal/store'),
  applyDiscount: (id: string, code: string) => call<Subscription>('POST', `/portal/subscriptions/${enc(id)}/discount`, { body: { code }, idempotent: true }),
  removeDiscount: (id: string) => call<Subscription>('DELETE', `/portal/subscriptions/${enc(id)}/discount`),
  onetimes: (id: string) => call<Page<Onetime>>('GET', `/portal/subscriptions/${enc(id)}/onetimes${query({ limit: 100, status: 'pending' })}`),
  addOnetime: (id: string, body: { product_id: string; quantity: number }) =>
    call<Onetime>('POST', `/portal/subscriptions/${enc(id)}/onetimes`, { body, idempotent: true }),
  removeOnetime: (id: string, onetimeId: string) => call<Onetime>('DELETE', `/portal/subscriptions/${enc(id)}/onetimes/${enc(onetimeId)}`),
  retentionOffers: (id: string) => call<{ data: RetentionOffer[] }>('GET', `/portal/subscriptions/${enc(id)}/retention-offers`),
  acceptOffer: (id: string, type: RetentionOffer['type']) =>
    call<Subscription>('POST', `/portal/subscriptions/${enc(id)}/retention-offers/${enc(type)}/accept`, { idempotent: true }),

  changeRequests: (subscriptionId?: string, cursor?: string | null) =>
    call<Page<ChangeRequest>>('GET', `/portal/change-requests${query({ limit: 50, subscription_id: subscriptionId, cursor })}`),
  createChangeRequest: (subscriptionId: string, body: { changes: ChangeRequest['changes']; note?: string }) =>
    call<ChangeRequest>('POST', `/portal/subscriptions/${enc(subscriptionId)}/change-requests`, { body, idempotent: true }),

  // Public catalogue reads: the names behind a subscription's plan and product ids.
  plan: (id: string) => call<Plan>('GET', `/plans/${enc(id)}`, { auth: false }),
  product: (id: string) => call<Product>('GET', `/products/${enc(id)}`, { auth: false }),
  products: (storeHash: string, cursor?: string | null) => call<Page<Product>>('GET', `/products${query({ store_hash: storeHash, limit: 100, cursor })}`, { auth: false }),
}

/** Every product of the store's public catalogue (pages of 100, at most 20 pages). */
export async function allProducts(storeHash: string): Promise<Product[]> {
  const products: Product[] = []
  let cursor: string | null = null
  for (let pages = 0; pages < 20; pages++) {
    const page: Page<Product> = await api.products(storeHash, cursor)
    products.push(...page.data)
    cursor = page.next_cursor
    if (!cursor) break
  }
  return products
}

const planCache = new Map<string, Promise<Plan | null>>()
const productCache = new Map<string, Promise<Product | null>>()

/** A plan by id, read once per page load; null when it cannot be read (the page then shows the id). */
export function planById(id: string): Promise<Plan | null> {
  let cached = planCache.get(id)
  if (!cached) {
    cached = api.plan(id).catch(() => null)
    planCache.set(id, cached)
  }
  return cached
}

export function productById(id: string): Promise<Product | null> {
  let cached = productCache.get(id)
  if (!cached) {
    cached = api.product(id).catch(() => null)
    productCache.set(id, cached)
  }
  return cached
}
