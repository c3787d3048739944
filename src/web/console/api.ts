import { all, createApiClient, enc, query, type CallOptions } from '../shared/api-client.ts'
import { ApiError, errorText } from '../shared/api-error.ts'
import { currentKey } from './session.ts'
import type {
  AnalyticsSummary,
  AnalyticsTimeseries,
  AttentionList,
  BulkBody,
  BulkItem,
  BulkOperation,
  BulkPreview,
  ExpectedRevenue,
  ApiKey,
  Charge,
  CreatedApiKey,
  Delivery,
  DeliveryDetail,
  Discount,
  Event,
  Import,
  ImportFormat,
  Notification,
  Onetime,
  Page,
  PaymentInstrumentList,
  Plan,
  PlatformConnection,
  Product,
  Store,
  SubscriberDetail,
  Subscription,
  SubscriptionWithSubscriber,
  UpcomingRenewal,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
  WebhookHealth,
} from './types.ts'

export { all, ApiError, errorText, query }

/** The console's client: the admin API, the stored key; every change carries a fresh Idempotency-Key. */
const client = createApiClient({
  base: '/api/v1/admin',
  credential: currentKey,
  signedOut: () => new ApiError(401, 'unauthenticated', 'Sign in with an admin API key.'),
  idempotentByDefault: (method) => method !== 'GET',
})
export const setUnauthorizedHandler = client.setUnauthorizedHandler
export function call<T>(method: string, path: string, options: CallOptions = {}): Promise<T> {
  return client.call<T>(method, path, options)
}

/**
 * An export as a file saved by the browser: fetched with the console's credential (a header, so a
 * plain link could not carry it), then handed to the browser as a download from a blob URL.
 */
export async function downloadExport(kind: 'subscriptions' | 'charges' | 'subscribers', filters: Record<string, string | null | undefined>): Promise<string> {
  const { blob, filename } = await client.download(`/exports/${kind}${query(filters)}`)
  const name = filename ?? `${kind}.csv`
  const url = URL.createObjectURL(blob)
  const link = document.createElement('a')
  link.href = url
  link.download = name
  document.body.append(link)
  link.click()
  link.remove()
  // Revoked after the click has handed the file to the browser's download.
  setTimeout(() => URL.revokeObjectURL(url), 60_000)
  return name
}

export interface SubscriptionFilter {
  status?: string | null
  email?: string | null
  /** The search: part of an email or name, an order number, an id. */
  q?: string | null
  plan_id?: string | null
  cursor?: string | null
  limit?: number
}

export const api = {
  store: (key?: string) => call<Store>('GET', '/store', key === undefined ? {} : { credential: key }),
  updateStore: (body: Partial<Store>) => call<Store>('PATCH', '/store', { body }),

  subscriptions: (filter: SubscriptionFilter) =>
    call<Page<SubscriptionWithSubscriber>>('GET', `/subscriptions${query({ limit: filter.limit ?? 20, q: filter.q, status: filter.status, email: filter.email, plan_id: filter.plan_id, cursor: filter.cursor })}`),
  /** One subscriber with every subscription, address, instrument, their latest charges and emails. */
  subscriber: (id: string) => call<SubscriberDetail>('GET', `/subscribers/${enc(id)}`),
  subscription: (id: string) => call<SubscriptionWithSubscriber>('GET', `/subscriptions/${enc(id)}`),
  /** The next renewal as the server prices it (409 invalid_state when there is none). */
  upcoming: (id: string) => call<UpcomingRenewal>('GET', `/subscriptions/${enc(id)}/upcoming`),
  action: (id: string, action: string, body?: unknown) => call<Subscription>('POST', `/subscriptions/${enc(id)}/${action}`, { body: body ?? {} }),
  /** Payment recovery: the failed renewal charged now (200 settled, 202 still pending), the update-card email, the cards to change to, what needs attention. */
  retryCharge: (id: string) => call<Charge>('POST', `/subscriptions/${enc(id)}/retry-charge`, { body: {} }),
  paymentUpdateLink: (id: string) => call<Notification>('POST', `/subscriptions/${enc(id)}/payment-update-link`, { body: {} }),
  paymentInstruments: (id: string) => call<PaymentInstrumentList>('GET', `/subscriptions/${enc(id)}/payment-instruments`),
  attention: () => call<AttentionList>('GET', `/attention${query({ limit: 500 })}`),

  charges: (filter: { subscription_id?: string; subscriber_id?: string; status?: string; cursor?: string | null; limit?: number }) =>
    call<Page<Charge>>('GET', `/charges${query({ limit: filter.limit ?? 20, subscription_id: filter.subscription_id, subscriber_id: filter.subscriber_id, status: filter.status, cursor: filter.cursor })}`),
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
  createWebhook: (body: Record<string, unknown>) => call<WebhookEndpointWithSecret>('POST', '/webhook-subscriptions', { body }),
  updateWebhook: (id: string, body: Record<string, unknown>) => call<WebhookEndpoint>('PATCH', `/webhook-subscriptions/${enc(id)}`, { body }),
  deliveries: (id: string, filter: { status?: string; cursor?: string | null; limit?: number } = {}) =>
    call<Page<Delivery>>('GET', `/webhook-subscriptions/${enc(id)}/deliveries${query({ limit: filter.limit ?? 20, status: filter.status, cursor: filter.cursor })}`),
  delivery: (id: string, deliveryId: string) => call<DeliveryDetail>('GET', `/webhook-subscriptions/${enc(id)}/deliveries/${enc(deliveryId)}`),
  webhookHealth: (id: string) => call<WebhookHealth>('GET', `/webhook-subscriptions/${enc(id)}/health`),
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

  notifications: (filter: { status?: string; template?: string; subscriber_id?: string; cursor?: string | null; limit?: number } = {}) =>
    call<Page<Notification>>('GET', `/notifications${query({ limit: filter.limit ?? 20, status: filter.status, template: filter.template, subscriber_id: filter.subscriber_id, cursor: filter.cursor })}`),

  apiKeys: () => call<{ data: ApiKey[] }>('GET', '/api-keys'),
  createApiKey: (name: string) => call<CreatedApiKey>('POST', '/api-keys', { body: { name } }),
  /** Ends the session on the server; given the token, since the tab forgets it at once. */
  credential: () => call<{ object: 'admin_credential'; via: 'api_key' | 'console_session'; scope: 'full' | 'read_only' | 'support' }>('GET', '/credential'),
  signOutConsoleSession: (token: string) => call<null>('DELETE', '/console-session', { credential: token }),
  revokeApiKey: (id: string) => call<ApiKey>('DELETE', `/api-keys/${enc(id)}`),

  /** A test-mode store's clock (404 for a live store). */
  testClock: () => call<{ object: 'test_clock'; now: string; follows_real_time: boolean }>('GET', '/test-clock'),

  analyticsSummary: () => call<AnalyticsSummary>('GET', '/analytics/summary'),
  analyticsTimeseries: (days: number) => call<AnalyticsTimeseries>('GET', `/analytics/timeseries${query({ days })}`),
  expectedRevenue: (days: number) => call<ExpectedRevenue>('GET', `/analytics/expected-revenue${query({ days })}`),

  /**
   * An import (POST /imports): the file is the body as it is, read by the service as it arrives; the
   * answer comes when the whole file is read (`imports` shows a running one's progress meanwhile).
   * Sent as text/csv whatever type the browser gave the file (Windows calls a .csv application/vnd.ms-excel).
   */
  createImport: (file: Blob, format: ImportFormat, dryRun: boolean) => call<Import>('POST', `/imports${query({ format, dry_run: dryRun })}`, { file: { blob: file, type: 'text/csv' } }),
  imports: (limit = 20) => call<Page<Import>>('GET', `/imports${query({ limit })}`),
  import: (id: string) => call<Import>('GET', `/imports/${enc(id)}`),

  /** Bulk changes (POST /bulk-operations): the dry run's count and sample, then the operation the worker runs. */
  previewBulk: (body: BulkBody) => call<BulkPreview>('POST', '/bulk-operations', { body: { ...body, dry_run: true } }),
  startBulk: (body: BulkBody) => call<BulkOperation>('POST', '/bulk-operations', { body: { ...body, dry_run: false } }),
  bulkOperations: (limit = 20) => call<Page<BulkOperation>>('GET', `/bulk-operations${query({ limit })}`),
  bulkOperation: (id: string) => call<BulkOperation>('GET', `/bulk-operations/${enc(id)}`),
  bulkResults: (id: string, filter: { status?: BulkItem['status']; cursor?: string | null; limit?: number } = {}) =>
    call<Page<BulkItem>>('GET', `/bulk-operations/${enc(id)}/results${query({ limit: filter.limit ?? 50, status: filter.status, cursor: filter.cursor })}`),

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
