/** What a route handler sees: the simulator's state and one request. */
import type { IncomingHttpHeaders } from 'node:http'
import type { ViolationKind } from './http.ts'
import type { SimOrder, SimPat, SimStore, SimToken } from './state.ts'

export interface Reply {
  status: number
  body?: unknown
  headers?: Record<string, string>
}

/** An injected payment outcome (behaviour switches of the simulator). */
export type PaymentOutcome = { kind: 'decline'; code: number; status: number } | { kind: 'pending' }

export interface SimOptions {
  /** createOrder success status: O2 documents 200, CODES says POSTs answer 201 (§2.1). Default 200. */
  createOrderStatus: 200 | 201
  /** An empty GET /v2/orders: `200 []` or `204` (§2.2, not settled). Default 204. */
  emptyOrderListStatus: 200 | 204
  /** Whether GET /v2/orders lists Incomplete (0) orders without `status_id=0` (§2.2, not settled). Default false. */
  listIncludesIncomplete: boolean
  /** A PAT asked for an order not in status 0 (§3.2, not settled): 422 code 30101 (default), 409, or issued anyway. */
  patForNonIncompleteOrder: 422 | 409 | 'issue'
  /** Record a v3 transaction with status `error` for a declined payment (not settled). Default false. */
  recordDeclinedTransactions: boolean
  /** Fire order webhooks by itself (created on POST /v2/orders, statusUpdated on payment). Default false. */
  autoWebhooks: boolean
}

export interface SimCounters {
  /** Every order made: POST /v2/orders and checkout orders (POST /v3/checkouts/{id}/orders). */
  ordersCreated: number
  /** Orders made from checkouts (createCheckoutOrder), also counted in ordersCreated. */
  checkoutOrdersCreated: number
  /** Carts made by POST /v3/carts. */
  cartsCreated: number
  patsIssued: number
  paymentRequests: number
  paymentsSucceeded: number
  paymentsDeclined: number
  refundsCreated: number
  webhooksSent: number
  requests: number
}

export interface SimCore {
  stores: Map<string, SimStore>
  tokens: Map<string, SimToken>
  pats: Map<string, SimPat>
  options: SimOptions
  counters: SimCounters
  paymentOutcomes: PaymentOutcome[]
  refundDeclines: number
  /** Key for signing PATs (HS256), the simulator's own. */
  patSecret: Buffer
  now(): Date
  /** Called on order changes; sends webhooks when `autoWebhooks` is on. */
  orderEvent(store: SimStore, order: SimOrder, scope: string, status?: { previous_status_id: number; new_status_id: number }): void
}

export interface Ctx {
  core: SimCore
  operation: string
  method: string
  url: string
  headers: IncomingHttpHeaders
  query: URLSearchParams
  params: Record<string, string>
  rawBody: string
  /** Resolved from the path's store hash (api and payments hosts). */
  store: SimStore
  /** The X-Auth-Token's record (api host). */
  token: SimToken | undefined
  /** Waits the configured latency for this operation. */
  delay(): Promise<void>
  /** Records a violation without refusing the request. */
  flag(kind: ViolationKind, message: string): void
}
