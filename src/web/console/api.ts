import { currentKey } from './session.ts'
import type { ApiKey, Charge, Delivery, Discount, Event, Notification, Onetime, Page, Plan, PlatformConnection, Product, Store, Subscription, WebhookEndpoint } from './types.ts'

import { ApiError } from '../shared/api-error.ts'

export { ApiError }

let onUnauthorized: (error: ApiError) => void = () => {}
/** Called when the service refuses the key (401): the console forgets it and shows sign-in. */
export function setUnauthorizedHandler(handler: (error: ApiError) => void): void {
  onUnauthorized = handler
}

const BASE = '/api/v1/admin'

interface CallOptions {
  body?: unknown
  /** A key to try (sign-in) instead of the stored one; a 401 then does not sign out. */
  key?: string
}

export async function call<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  const key = options.key ?? currentKey()
  if (!key) {
    const error = new ApiError(401, 'unauthenticated', 'Sign in with an admin API key.')
    onUnauthorized(error)
    throw error
  }
  const headers: Record<string, string> = { accept: 'application/json', authorization: `Bearer ${key}` }
  if (options.body !== undefined) headers['content-type'] = 'application/json'
  // Every change carries a fresh key, so a double submit (or a retried request) is harmless.
  if (method !== 'GET') headers['idempotency-key'] = randomKey()
  let response: Response
  try {
    response = await fetch(`${BASE}${path}`, { method, headers, body: options.body === undefined ? null : JSON.stringify(options.body), credentials: 'omit', cache: 'no-store' })
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
    const error = new ApiError(response.status, problem.code ?? 'http_error', problem.detail || problem.title || `The service answered ${response.status}.`, Array.isArray(problem.errors) ? problem.errors : [])
    if (response.status === 401 && options.key === undefined) onUnauthorized(error)
    throw error
  }
  return payload as T
}

function randomKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('')
}

const enc = encodeURIComponent

export function query(params: Record<string, string | number | boolean | null | undefined>): string {
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(params)) if (value !== null && value !== undefined && value !== '') search.set(name, String(value))
  const text = search.toString()
  return text ? `?${text}` : ''
}

export interface SubscriptionFilter {
  status?: string | null
  email?: string | null
  plan_id?: string | null
  cursor?: string | null
  limit?: number
}

export const api = {
  store: (key?: string) => call<Store>('GET', '/store', key === undefined ? {} : { key }),
  updateStore: (body: Partial<Store>) => call<Store>('PATCH', '/store', { body }),

  subscriptions: (filter: SubscriptionFilter) => call<Page<Subscription>>('GET', `/subscriptions${query({ limit: filter.limit ?? 20, status: filter.status, email: filter.email, plan_id: filter.plan_id, cursor: filter.cursor })}`),
  subscription: (id: string) => call<Subscription>('GET', `/subscriptions/${enc(id)}`),
  action: (id: string, action: string, body?: unknown) => call<Subscription>('POST', `/subscriptions/${enc(id)}/${action}`, { body: body ?? {} }),

  charges: (filter: { subscription_id?: string; status?: string; cursor?: string | null; limit?: number }) =>
    call<Page<Charge>>('GET', `/charges${query({ limit: filter.limit ?? 20, subscription_id: filter.subscription_id, status: filter.status, cursor: filter.cursor })}`),
  refund: (id: string, body: { amount?: number; reason?: string }) => call<Charge>('POST', `/charges/${enc(id)}/refund`, { body }),
  resolve: (id: string, outcome: 'succeeded' | 'failed') => call<Charge>('POST', `/charges/${enc(id)}/resolve`, { body: { outcome } }),

  events: (filter: { entity_id?: string; event_type?: string; occurred_after?: string; cursor?: string | null; limit?: number }) =>
    call<Page<Event>>('GET', `/events${query({ limit: filter.limit ?? 50, entity_id: filter.entity_id, event_type: filter.event_type, occurred_after: filter.occurred_after, cursor: filter.cursor })}`),

  products: (cursor?: string | null) => call<Page<Product>>('GET', `/products${query({ limit: 100, cursor })}`),
  product: (id: string) => call<Product>('GET', `/products/${enc(id)}`),
  createProduct: (body: Record<string, unknown>) => call<Product>('POST', '/products', { body }),
  updateProduct: (id: string, body: Record<string, unknown>) => call<Product>('PATCH', `/products/${enc(id)}`, { body }),
  plans: (filter: { product_id?: string; cursor?: string | null } = {}) => call<Page<Plan>>('GET', `/plans${query({ limit: 100, product_id: filter.product_id, cursor: filter.cursor })}`),
  plan: (id: string) => call<Plan>('GET', `/plans/${enc(id)}`),
  createPlan: (body: Record<string, unknown>) => call<Plan>('POST', '/plans', { body }),
  updatePlan: (id: string, body: Record<string, unknown>) => call<Plan>('PATCH', `/plans/${enc(id)}`, { body }),

  webhooks: () => call<Page<WebhookEndpoint>>('GET', `/webhook-subscriptions${query({ limit: 100 })}`),
  webhook: (id: string) => call<WebhookEndpoint>('GET', `/webhook-subscriptions/${enc(id)}`),
  createWebhook: (body: Record<string, unknown>) => call<WebhookEndpoint>('POST', '/webhook-subscriptions', { body }),
  updateWebhook: (id: string, body: Record<string, unknown>) => call<WebhookEndpoint>('PATCH', `/webhook-subscriptions/${enc(id)}`, { body }),
  deliveries: (id: string, filter: { status?: string; cursor?: string | null; limit?: number } = {}) =>
    call<Page<Delivery>>('GET', `/webhook-subscriptions/${enc(id)}/deliveries${query({ limit: filter.limit ?? 20, status: filter.status, cursor: filter.cursor })}`),
  redeliver: (id: string, eventId: string) => call<Delivery>('POST', `/webhook-subscriptions/${enc(id)}/redeliver`, { body: { event_id: eventId } }),
  replay: (id: string, since: string) => call<{ replayed?: number } & Record<string, unknown>>('POST', `/webhook-subscriptions/${enc(id)}/replay`, { body: { since } }),
  rotate: (id: string) => call<{ secret: string } & Record<string, unknown>>('POST', `/webhook-subscriptions/${enc(id)}/rotate-secret`, { body: {} }),
  ping: (id: string) => call<Record<string, unknown>>('POST', `/webhook-subscriptions/${enc(id)}/test`, { body: {} }),

  discounts: (filter: { active?: boolean; cursor?: string | null } = {}) => call<Page<Discount>>('GET', `/discounts${query({ limit: 100, active: filter.active, cursor: filter.cursor })}`),
  createDiscount: (body: Record<string, unknown>) => call<Discount>('POST', '/discounts', { body }),
  updateDiscount: (id: string, body: Record<string, unknown>) => call<Discount>('PATCH', `/discounts/${enc(id)}`, { body }),
  deleteDiscount: (id: string) => call<void>('DELETE', `/discounts/${enc(id)}`),
  applyDiscount: (subscriptionId: string, code: string) => call<Subscription>('POST', `/subscriptions/${enc(subscriptionId)}/discount`, { body: { code } }),
  removeDiscount: (subscriptionId: string) => call<Subscription>('DELETE', `/subscriptions/${enc(subscriptionId)}/discount`),

  onetimes: (subscriptionId: string) => call<Page<Onetime>>('GET', `/subscriptions/${enc(subscriptionId)}/onetimes${query({ limit: 100 })}`),
  addOnetime: (subscriptionId: string, body: { product_id: string; quantity: number }) => call<Onetime>('POST', `/subscriptions/${enc(subscriptionId)}/onetimes`, { body }),
  removeOnetime: (subscriptionId: string, onetimeId: string) => call<Onetime>('DELETE', `/subscriptions/${enc(subscriptionId)}/onetimes/${enc(onetimeId)}`),

  notifications: (filter: { status?: string; template?: string; cursor?: string | null; limit?: number } = {}) =>
    call<Page<Notification>>('GET', `/notifications${query({ limit: filter.limit ?? 20, status: filter.status, template: filter.template, cursor: filter.cursor })}`),

  apiKeys: () => call<{ data: ApiKey[] }>('GET', '/api-keys'),
  createApiKey: (name: string) => call<ApiKey & { key: string }>('POST', '/api-keys', { body: { name } }),
  revokeApiKey: (id: string) => call<ApiKey>('DELETE', `/api-keys/${enc(id)}`),

  platformConnection: () => call<PlatformConnection>('GET', '/platform-connection'),
  connectPlatform: (accessToken: string) => call<PlatformConnection>('PUT', '/platform-connection', { body: { access_token: accessToken } }),
  disconnectPlatform: () => call<void>('DELETE', '/platform-connection'),
}

const planCache = new Map<string, Promise<Plan | null>>()
/** A plan by id, read once per page load; null when it cannot be read (the page then shows the id). */
export function planById(id: string): Promise<Plan | null> {
  let cached = planCache.get(id)
  if (!cached) {
    cached = api.plan(id).catch(() => null)
    planCache.set(id, cached)
  }
  return cached
}
export function forgetPlans(): void {
  planCache.clear()
}

/** Every page of a list, up to `max` rows. */
export async function all<T>(read: (cursor: string | null) => Promise<Page<T>>, max = 1000): Promise<T[]> {
  const rows: T[] = []
  let cursor: string | null = null
  do {
    const page: Page<T> = await read(cursor)
    rows.push(...page.data)
    cursor = page.next_cursor
  } while (cursor && rows.length < max)
  return rows
}

/** Words for a refusal: the service's detail, with request paths like /body/quantity named as fields. */
export function errorText(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.code === 'validation_failed' && error.fieldErrors.length > 0) {
      return error.fieldErrors
        .map((issue) => {
          const last = issue.path.split('/').filter(Boolean).pop() ?? ''
          const name = last === 'body' || last === '' ? 'The request' : last.replaceAll('_', ' ')
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

const emailCache = new Map<string, Promise<string | null>>()
/** The subscriber email of a subscription, read once per page load (lists answer only ids). */
export function emailOf(subscriptionId: string): Promise<string | null> {
  let cached = emailCache.get(subscriptionId)
  if (!cached) {
    cached = api.subscription(subscriptionId).then((s) => s.subscriber?.email ?? null, () => null)
    emailCache.set(subscriptionId, cached)
  }
  return cached
}
