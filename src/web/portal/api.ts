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
} from './types.ts'

import { ApiError } from '../shared/api-error.ts'

export { ApiError }

let onUnauthorized: (error: ApiError) => void = () => {}
/** Called when the service refuses the session (401): the app signs out and shows sign-in. */
export function setUnauthorizedHandler(handler: (error: ApiError) => void): void {
  onUnauthorized = handler
}

const BASE = '/api/v1'

interface CallOptions {
  body?: unknown
  /** Send the session token (default true); a 401 then ends the session. */
  auth?: boolean
  /** For POSTs that change something: a fresh key makes a double submit harmless. */
  idempotent?: boolean
}

async function call<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  const auth = options.auth ?? true
  const headers: Record<string, string> = { accept: 'application/json' }
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  if (auth) {
    const session = currentSession()
    if (!session) {
      const error = new ApiError(401, 'session_expired', 'Your session has expired.')
      onUnauthorized(error)
      throw error
    }
    headers.authorization = `Bearer ${session.token}`
  }
  if (options.idempotent) headers['idempotency-key'] = randomKey()

  let response: Response
  try {
    response = await fetch(`${BASE}${path}`, {
      method,
      headers,
      body: options.body === undefined ? null : JSON.stringify(options.body),
      credentials: 'omit',
      cache: 'no-store',
    })
  } catch {
    throw new ApiError(0, 'network_error', 'The service could not be reached. Check your connection and try again.')
  }
  if (response.status === 204) return undefined as T
  const text = await response.text()
  let payload: unknown = null
  try {
    payload = text ? JSON.parse(text) : null
  } catch {
    payload = null
  }
  if (!response.ok) {
    const problem = (payload ?? {}) as { detail?: string; title?: string; code?: string; errors?: { path: string; message: string }[] }
    const detail = problem.detail || problem.title || `The service answered ${response.status}.`
    const error = new ApiError(response.status, problem.code ?? 'http_error', detail, Array.isArray(problem.errors) ? problem.errors : [])
    if (response.status === 401 && auth) onUnauthorized(error)
    throw error
  }
  return payload as T
}

/** 128 random bits as hex; getRandomValues also works on plain-http origins, where randomUUID does not exist. */
function randomKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  return Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')
}

const enc = encodeURIComponent

function query(params: Record<string, string | number | null | undefined>): string {
  const search = new URLSearchParams()
  for (const [key, value] of Object.entries(params)) if (value !== null && value !== undefined && value !== '') search.set(key, String(value))
  const text = search.toString()
  return text ? `?${text}` : ''
}

export const api = {
  storefrontStore: (storeHash: string) => call<StorefrontStore>('GET', `/storefront/store${query({ store_hash: storeHash })}`, { auth: false }),
  requestLink: (email: string, storeHash: string) =>
    call<{ status: 'sent' }>('POST', '/portal/auth/request-link', { auth: false, body: { email, store_hash: storeHash } }),
  verify: (token: string) => call<SessionAnswer>('POST', '/portal/auth/verify', { auth: false, body: { token } }),
  logout: () => call<void>('POST', '/portal/auth/logout'),
  me: () => call<Subscriber>('GET', '/portal/me'),

  subscriptions: (cursor?: string | null) => call<Page<Subscription>>('GET', `/portal/subscriptions${query({ limit: 50, cursor })}`),
  subscription: (id: string) => call<Subscription>('GET', `/portal/subscriptions/${enc(id)}`),
  charges: (id: string, cursor?: string | null) => call<Page<Charge>>('GET', `/portal/subscriptions/${enc(id)}/charges${query({ limit: 10, cursor })}`),
  paymentInstruments: () => call<PaymentInstrumentList>('GET', '/portal/payment-instruments'),
  swapOptions: (id: string) => call<Page<Plan>>('GET', `/portal/subscriptions/${enc(id)}/swap-options${query({ limit: 100 })}`),
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

/** Words for a refusal: the service's detail, with request paths like /body/quantity named as fields. */
export function errorText(error: unknown, fieldNames: Record<string, string> = {}): string {
  if (error instanceof ApiError) {
    if (error.code === 'validation_failed' && error.fieldErrors.length > 0) {
      return error.fieldErrors
        .map((issue) => {
          const last = issue.path.split('/').filter(Boolean).pop() ?? ''
          const name = fieldNames[last] ?? (last === 'body' ? 'The request' : last.replaceAll('_', ' '))
          return `${capitalize(name)} ${issue.message}.`
        })
        .join(' ')
    }
    return capitalize(error.message.endsWith('.') ? error.message : `${error.message}.`)
  }
  return 'Something went wrong. Please try again.'
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}
