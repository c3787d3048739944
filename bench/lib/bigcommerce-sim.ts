import { fork } from 'node:child_process'
import { once } from 'node:events'
import { cpuSecondsOf } from './cpu.ts'

/** One simulated store of the platform renewals bench: a physical product, a customer with a stored card, a tax rate. */
export interface SimStoreSetup {
  /** Lower-case letters and digits (the simulator's rule for store hashes). */
  hash: string
  accessToken: string
  productId: number
  /** The catalogue price in decimal major units (the renewal's cart carries the subscription's own). */
  price: number
  customerId: number
  taxCountry: string
  taxRateBps: number
}

/** What one simulated store received and holds. */
export interface SimStoreSummary {
  /** Requests by operation id. */
  operations: Record<string, number>
  /** Requests by the status answered (or 'held' / 'destroyed'). */
  statuses: Record<string, number>
  orders: Array<{
    id: number
    externalOrderId: string | null
    externalSource: string | null
    cartId: string | null
    statusId: number
    /** Ten-thousandths of the currency's major unit. */
    totalIncTax: number
    paymentRequests: number
    successfulPayments: number
  }>
  /** Carts still held (a cart is deleted when its order is paid). */
  carts: number
  doubleCharges: number
  violations: string[]
  /** Requests refused by the store's enforced rate limit (setRateLimit), answered 429. */
  rateLimited: number
}

/** One store's counts, for benches with hundreds of stores (tallies: one pass over every request). */
export interface SimStoreTally {
  /** Api and payments requests. */
  calls: number
  /** Answered 429, by the enforced limit or otherwise. */
  answered429: number
  /** Requests by operation id. */
  operations: Record<string, number>
  orders: number
  /** Orders paid exactly once. */
  paidOnce: number
  doubleCharges: number
  violations: number
}

export interface SimTallies {
  stores: Record<string, SimStoreTally>
  /** Up to ten violations of any store, described. */
  violationSamples: string[]
}

/** A store's enforced quota (the simulator's setRateLimit); null: the default, reported and never enforced. */
export type SimRateLimit = { quota: number; windowMs: number } | null

export type SimParentMessage =
  | { type: 'setup'; setup: SimStoreSetup }
  | { type: 'latency'; ms: number }
  | { type: 'summary'; hash: string }
  | { type: 'rateLimit'; hash: string; limit: SimRateLimit }
  | { type: 'tallies' }
  | { type: 'close' }

export type SimChildMessage =
  | { type: 'ready'; apiUrl: string; paymentsUrl: string }
  | { type: 'card'; token: string }
  | { type: 'ok' }
  | { type: 'summary'; summary: SimStoreSummary }
  | { type: 'tallies'; tallies: SimTallies }
  | { type: 'error'; message: string }

export interface SimulatorChild {
  apiUrl: string
  paymentsUrl: string
  /** Adds the store; answers the token of the customer's stored card. */
  setUp(setup: SimStoreSetup): Promise<string>
  /** Every operation answers after `ms` (setLatency's `'*'`). */
  setLatency(ms: number): Promise<void>
  summary(hash: string): Promise<SimStoreSummary>
  /** Enforces `limit` on the store's api-host requests (null: back to the default, never enforced). */
  setRateLimit(hash: string, limit: SimRateLimit): Promise<void>
  /** Every store's counts in one pass. */
  tallies(): Promise<SimTallies>
  cpuSeconds(): number | undefined
  close(): Promise<void>
}

/** Starts the BigCommerce simulator in a child on the pinned Node (process.execPath), listening on 127.0.0.1. */
export async function startSimulatorChild(timeoutMs = 60_000): Promise<SimulatorChild> {
  const child = fork(new URL('./bigcommerce-sim-child.ts', import.meta.url).pathname, [], {
    execPath: process.execPath,
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  })
  const waiting: ((message: SimChildMessage) => void)[] = []
  let ready: ((message: Extract<SimChildMessage, { type: 'ready' }>) => void) | undefined
  const readied = new Promise<Extract<SimChildMessage, { type: 'ready' }>>((resolve) => (ready = resolve))
  child.on('message', (message: SimChildMessage) => {
    if (message.type === 'ready') return ready!(message)
    waiting.shift()?.(message)
  })
  const exited = once(child, 'exit')
  let timer: NodeJS.Timeout | undefined
  const started = await Promise.race([
    readied,
    exited.then(() => Promise.reject(new Error('the BigCommerce simulator exited before it was ready'))),
    new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the BigCommerce simulator did not start within ${timeoutMs} ms`)), timeoutMs))),
  ]).finally(() => clearTimeout(timer))

  // One question at a time: answers come back in order.
  let chain: Promise<unknown> = Promise.resolve()
  const ask = <T extends SimChildMessage['type']>(message: SimParentMessage, expect: T): Promise<Extract<SimChildMessage, { type: T }>> => {
    const asked = chain.then(
      () =>
        new Promise<Extract<SimChildMessage, { type: T }>>((resolve, reject) => {
          const limit = setTimeout(() => reject(new Error(`the simulator did not answer ${message.type} within ${timeoutMs} ms`)), timeoutMs)
          waiting.push((answer) => {
            clearTimeout(limit)
            if (answer.type === expect) resolve(answer as Extract<SimChildMessage, { type: T }>)
            else reject(new Error(answer.type === 'error' ? `simulator: ${answer.message}` : `the simulator answered ${answer.type}, expected ${expect}`))
          })
          child.send(message)
        }),
    )
    chain = asked.catch(() => undefined)
    return asked
  }

  return {
    apiUrl: started.apiUrl,
    paymentsUrl: started.paymentsUrl,
    setUp: async (setup) => (await ask({ type: 'setup', setup }, 'card')).token,
    setLatency: async (ms) => void (await ask({ type: 'latency', ms }, 'ok')),
    summary: async (hash) => (await ask({ type: 'summary', hash }, 'summary')).summary,
    setRateLimit: async (hash, limit) => void (await ask({ type: 'rateLimit', hash, limit }, 'ok')),
    tallies: async () => (await ask({ type: 'tallies' }, 'tallies')).tallies,
    cpuSeconds: () => cpuSecondsOf(child.pid),
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.send({ type: 'close' } satisfies SimParentMessage)
      const force = setTimeout(() => child.kill('SIGKILL'), 5_000)
      await exited
      clearTimeout(force)
    },
  }
}
