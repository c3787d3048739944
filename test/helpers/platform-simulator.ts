import { once } from 'node:events'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

/**
 * A local stand-in for the commerce platform, implementing what the platform gateway calls today
 * (src/modules/billing/gateways/platform-gateway.ts), and counting what it was asked:
 *
 *   POST {api}/orders                      X-Auth-Token; one order per `idempotency-key` header -> 201 {data:{id}}
 *   POST {api}/payments/access_tokens      X-Auth-Token; body {order:{id}} -> 201 {data:{id: PAT}} (one PAT per order)
 *   POST {payments}/payments               Authorization: PAT <pat>; after `latencyMs`, records a purchase on the
 *                                          PAT's order -> 201 {data:{id, status:'success'}}
 *   GET  {api}/orders/{id}/transactions    X-Auth-Token -> {data:[{event:'purchase', status:'ok', ...}]} or {data:[]}
 *
 * Like a real platform it takes no idempotency key for payments: whether an order is paid already
 * is checked when the payment arrives, so a payment for an order that has a successful one answers
 * 422, while two payments racing on an unpaid order both go through (the double charge the renewal
 * engine must never cause). A payment whose client disconnects before the latency has elapsed still
 * completes: the platform does not know the client has gone.
 *
 * Every payment request is counted per order (`paymentRequests`), whatever its answer, and so is
 * every successful one (`successfulPayments`).
 */

export const SIMULATOR_ACCESS_TOKEN = 'sim-store-token-SECRET-5d1e'

export interface SimulatedTransaction {
  id: string
  orderId: number
  /** The charge's idempotency key as sent with the payment. */
  idempotencyKey: string | undefined
  instrument: string
  at: Date
}

export interface SimulatedOrder {
  id: number
  /** The `idempotency-key` header the order was raised under (`<charge key>:order`). */
  key: string
  /** `external_id` of the body: the charge's idempotency key. */
  externalId: string | undefined
  totalMinorUnits: number | undefined
  /** Payment requests received for this order, whatever their answer. */
  paymentRequests: number
  /** Payments that went through (more than one is a double charge). */
  transactions: SimulatedTransaction[]
}

export interface PlatformSimulatorOptions {
  /** How long a payment takes to be processed once its request has arrived. */
  latencyMs?: number
  accessToken?: string
}

export interface PlatformSimulator {
  /** For `createPlatformGateway`'s configFor. */
  readonly apiBaseUrl: string
  readonly paymentsBaseUrl: string
  readonly accessToken: string
  /** The simulated store's access, as plain fields (the store's hash is `sim`: PLATFORM_API_URL is apiBaseUrl without `/stores/sim/v3`). */
  credentials(): { api_base_url: string; payments_base_url: string; access_token: string }
  setLatency(ms: number): void
  readonly latencyMs: number
  readonly orders: ReadonlyMap<number, SimulatedOrder>
  /** Payments received and not yet processed (their client may have gone). */
  readonly paymentsInFlight: number
  readonly counters: {
    orderRequests: number
    tokenRequests: number
    paymentRequests: number
    successfulPayments: number
    rejectedPayments: number
    transactionLookups: number
    /** Payment answers the client was no longer there to read. */
    paymentsAnsweredToNobody: number
    unauthorized: number
  }
  /** Orders that received more than one payment request / more than one successful payment. */
  ordersWithRepeatedPayments(): SimulatedOrder[]
  ordersPaidTwice(): SimulatedOrder[]
  /** Resolves once `paymentsInFlight` reaches at least `count`, or rejects after `timeoutMs`. */
  waitForPaymentsInFlight(count?: number, timeoutMs?: number): Promise<void>
  /** Resolves once no payment is being processed. */
  idle(timeoutMs?: number): Promise<void>
  /** Resolves once `condition` holds; it is checked at every request the simulator receives or finishes. */
  waitFor(condition: () => boolean, timeoutMs?: number, what?: string): Promise<void>
  /** Forgets every order and counter (the latency stays). */
  reset(): void
  close(): Promise<void>
}

const API_PREFIX = '/stores/sim/v3'
const PAYMENTS_PREFIX = '/payments-host/stores/sim'

function reply(res: ServerResponse, status: number, payload: unknown): boolean {
  if (res.destroyed || res.writableEnded) return false
  res.writeHead(status, { 'content-type': 'application/json' })
  res.end(JSON.stringify(payload))
  return true
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  let raw = ''
  for await (const chunk of req) raw += chunk
  if (!raw) return undefined
  try {
    return JSON.parse(raw)
  } catch {
    return null
  }
}

export async function startPlatformSimulator(options: PlatformSimulatorOptions = {}): Promise<PlatformSimulator> {
  const accessToken = options.accessToken ?? SIMULATOR_ACCESS_TOKEN
  let latencyMs = options.latencyMs ?? 0
  let nextOrderId = 1000
  let nextTransaction = 1
  const orders = new Map<number, SimulatedOrder>()
  const orderByKey = new Map<string, number>()
  const orderByPat = new Map<string, number>()
  let inFlight = 0
  const waiters = new Set<() => void>()
  const emptyCounters = () => ({ orderRequests: 0, tokenRequests: 0, paymentRequests: 0, successfulPayments: 0, rejectedPayments: 0, transactionLookups: 0, paymentsAnsweredToNobody: 0, unauthorized: 0 })
  let counters = emptyCounters()
  const notify = () => {
    for (const waiter of [...waiters]) waiter()
  }

  async function pay(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const pat = /^PAT (.+)$/.exec(String(req.headers.authorization ?? ''))?.[1]
    const orderId = pat === undefined ? undefined : orderByPat.get(pat)
    if (orderId === undefined) {
      counters.unauthorized++
      await readJson(req)
      reply(res, 401, { status: 401, title: 'Unauthorized: unknown payment access token' })
      return
    }
    const order = orders.get(orderId)!
    // Counted as soon as its headers arrive, whatever happens next (even a body cut short): this is
    // what "the platform was asked to pay" means.
    order.paymentRequests++
    counters.paymentRequests++
    notify()
    const body = (await readJson(req)) as { payment?: { instrument?: { type?: unknown; token?: unknown }; payment_method_id?: unknown } } | null | undefined
    const instrument = body?.payment?.instrument
    if (instrument?.type !== 'stored_card' || typeof instrument.token !== 'string' || body?.payment?.payment_method_id !== 'stored_card') {
      reply(res, 400, { status: 400, title: 'malformed payment' })
      return
    }
    if (order.transactions.length > 0) {
      counters.rejectedPayments++
      reply(res, 422, { status: 422, title: `Order ${orderId} has already been paid`, errors: [{ code: 'order_already_paid', message: `Order ${orderId} has already been paid` }] })
      return
    }
    inFlight++
    notify()
    try {
      // Processing goes on whether or not the client is still there.
      if (latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, latencyMs))
      const transaction: SimulatedTransaction = {
        id: `txn_${nextTransaction++}`,
        orderId,
        idempotencyKey: typeof req.headers['idempotency-key'] === 'string' ? req.headers['idempotency-key'] : undefined,
        instrument: instrument.token,
        at: new Date(),
      }
      order.transactions.push(transaction)
      counters.successfulPayments++
      if (!reply(res, 201, { data: { id: transaction.id, status: 'success', transaction_type: 'purchase' } })) counters.paymentsAnsweredToNobody++
    } finally {
      inFlight--
      notify()
    }
  }

  const server: Server = createServer((req, res) => {
    const handle = async () => {
      const url = new URL(req.url ?? '/', 'http://simulator')
      const path = url.pathname
      if (req.method === 'POST' && path === `${PAYMENTS_PREFIX}/payments`) return pay(req, res)
      if (!path.startsWith(`${API_PREFIX}/`)) return void reply(res, 404, { status: 404, title: 'Not found' })
      if (req.headers['x-auth-token'] !== accessToken) {
        counters.unauthorized++
        await readJson(req)
        return void reply(res, 401, { status: 401, title: 'Unauthorized' })
      }
      const route = path.slice(API_PREFIX.length)
      if (req.method === 'POST' && route === '/orders') {
        const body = (await readJson(req)) as { external_id?: unknown; total_minor_units?: unknown } | null | undefined
        counters.orderRequests++
        const key = req.headers['idempotency-key']
        if (typeof key !== 'string' || key === '') return void reply(res, 400, { status: 400, title: 'missing Idempotency-Key' })
        let id = orderByKey.get(key)
        if (id === undefined) {
          id = nextOrderId++
          orderByKey.set(key, id)
          orders.set(id, {
            id,
            key,
            externalId: typeof body?.external_id === 'string' ? body.external_id : undefined,
            totalMinorUnits: typeof body?.total_minor_units === 'number' ? body.total_minor_units : undefined,
            paymentRequests: 0,
            transactions: [],
          })
        }
        reply(res, 201, { data: { id, status_id: 0 } })
        return notify()
      }
      if (req.method === 'POST' && route === '/payments/access_tokens') {
        const body = (await readJson(req)) as { order?: { id?: unknown } } | null | undefined
        counters.tokenRequests++
        const orderId = body?.order?.id
        if (typeof orderId !== 'number' || !orders.has(orderId)) return void reply(res, 422, { status: 422, title: `order ${String(orderId)} does not exist` })
        const pat = `sim-pat-${orderId}-${Math.random().toString(36).slice(2)}`
        orderByPat.set(pat, orderId)
        reply(res, 201, { data: { id: pat } })
        return notify()
      }
      const lookup = /^\/orders\/(\d+)\/transactions$/.exec(route)
      if (req.method === 'GET' && lookup) {
        counters.transactionLookups++
        const order = orders.get(Number(lookup[1]))
        if (!order) return void reply(res, 404, { status: 404, title: 'order not found' })
        return void reply(res, 200, {
          data: order.transactions.map((transaction, index) => ({
            id: index + 1,
            order_id: String(order.id),
            event: 'purchase',
            method: 'credit_card',
            status: 'ok',
            gateway: 'stored_card',
            gateway_transaction_id: transaction.id,
            amount: order.totalMinorUnits === undefined ? undefined : order.totalMinorUnits / 100,
            date_created: transaction.at.toISOString(),
          })),
          meta: {},
        })
      }
      return void reply(res, 404, { status: 404, title: 'Not found' })
    }
    handle().catch((error: unknown) => reply(res, 500, { status: 500, title: `simulator error: ${String(error)}` }))
  })
  // Keep-alive sockets of killed clients must not hold the server open.
  server.keepAliveTimeout = 2_000
  server.listen(0, '127.0.0.1')
  await once(server, 'listening')
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const apiBaseUrl = `${origin}${API_PREFIX}`
  const paymentsBaseUrl = `${origin}${PAYMENTS_PREFIX}`

  function waitFor(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
    if (condition()) return Promise.resolve()
    return new Promise((resolve, reject) => {
      const done = () => {
        if (!condition()) return
        clearTimeout(timer)
        waiters.delete(done)
        resolve()
      }
      const timer = setTimeout(() => {
        waiters.delete(done)
        reject(new Error(`platform simulator: ${what} not reached in ${timeoutMs} ms (payments in flight: ${inFlight})`))
      }, timeoutMs)
      waiters.add(done)
    })
  }

  return {
    apiBaseUrl,
    paymentsBaseUrl,
    accessToken,
    credentials: () => ({ api_base_url: apiBaseUrl, payments_base_url: paymentsBaseUrl, access_token: accessToken }),
    setLatency(ms) {
      latencyMs = ms
    },
    get latencyMs() {
      return latencyMs
    },
    orders,
    get paymentsInFlight() {
      return inFlight
    },
    get counters() {
      return counters
    },
    ordersWithRepeatedPayments: () => [...orders.values()].filter((order) => order.paymentRequests > 1),
    ordersPaidTwice: () => [...orders.values()].filter((order) => order.transactions.length > 1),
    waitForPaymentsInFlight: (count = 1, timeoutMs = 30_000) => waitFor(() => inFlight >= count, timeoutMs, `${count} payment(s) in flight`),
    idle: (timeoutMs = 30_000) => waitFor(() => inFlight === 0, timeoutMs, 'no payment in flight'),
    waitFor: (condition, timeoutMs = 30_000, what = 'the condition') => waitFor(condition, timeoutMs, what),
    reset() {
      orders.clear()
      orderByKey.clear()
      orderByPat.clear()
      counters = emptyCounters()
    },
    async close() {
      await waitFor(() => inFlight === 0, 30_000, 'no payment in flight').catch(() => {})
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
