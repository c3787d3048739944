// The platform renewals bench's BigCommerce: the test suite's simulator (test/helpers/bigcommerce-simulator.ts)
// in a process of its own, forked with an IPC channel, so its CPU is not counted as the engine's and its
// event loop is not the engine's. The parent sets up one simulated store per case and, afterwards, asks
// what the store received and holds; see bigcommerce-sim.ts.
import { startBigCommerceSimulator } from '../../test/helpers/bigcommerce-simulator.ts'
import type { SimChildMessage, SimParentMessage, SimStoreSetup, SimStoreSummary, SimStoreTally, SimTallies } from './bigcommerce-sim.ts'

const sim = await startBigCommerceSimulator()

function send(message: SimChildMessage): void {
  process.send!(message)
}

function setUp(setup: SimStoreSetup): string {
  sim.addStore({ hash: setup.hash, accessToken: setup.accessToken })
  // Stock tracked, as a physical-goods store's is: each renewal reads the catalog's tracking and the inventory first.
  sim.addProduct(setup.hash, { id: setup.productId, name: 'Coffee beans', price: setup.price, type: 'physical', inventory_tracking: 'product', inventory_level: 10_000_000 })
  // The default shipping zone (one `Ground` at 5.99 everywhere), said out loud.
  sim.setShippingOptions(setup.hash, [{ description: 'Ground', cost: 5.99 }])
  sim.setTaxRates(setup.hash, [{ country: setup.taxCountry, rate_bps: setup.taxRateBps }])
  return sim.addCustomer(setup.hash, { id: setup.customerId, email: 'buyer@example.com', instruments: [{}] }).instruments[0]!.token
}

function summary(hash: string): SimStoreSummary {
  const operations: Record<string, number> = {}
  const statuses: Record<string, number> = {}
  const path = `/stores/${hash}/`
  for (const request of sim.requests) {
    if (!request.url.includes(path)) continue
    operations[request.operation] = (operations[request.operation] ?? 0) + 1
    statuses[String(request.outcome)] = (statuses[String(request.outcome)] ?? 0) + 1
  }
  const orders = sim.orders(hash).map((order) => ({
    id: order.id,
    externalOrderId: order.external_order_id,
    externalSource: order.external_source,
    cartId: order.cart_id ?? null,
    statusId: order.status_id,
    totalIncTax: Number(order.total_inc_tax),
    paymentRequests: order.payment_requests,
    successfulPayments: order.successful_payments,
  }))
  return {
    operations,
    statuses,
    orders,
    carts: sim.carts(hash).length,
    doubleCharges: sim.doubleCharges().filter((order) => sim.orders(hash).includes(order)).length,
    violations: sim.violations.filter((violation) => violation.url.includes(path)).map((violation) => `${violation.operation} ${violation.status} ${violation.kind}: ${violation.message}`),
    rateLimited: sim.rateLimited(hash),
  }
}

function tallies(): SimTallies {
  const stores: Record<string, SimStoreTally> = {}
  const tally = (hash: string): SimStoreTally => (stores[hash] ??= { calls: 0, answered429: 0, operations: {}, orders: 0, paidOnce: 0, doubleCharges: 0, violations: 0 })
  for (const request of sim.requests) {
    if (!request.store) continue
    const t = tally(request.store)
    t.calls++
    if (request.outcome === 429) t.answered429++
    t.operations[request.operation] = (t.operations[request.operation] ?? 0) + 1
  }
  for (const [hash, t] of Object.entries(stores)) {
    for (const order of sim.orders(hash)) {
      t.orders++
      if (order.successful_payments === 1) t.paidOnce++
      if (order.successful_payments > 1) t.doubleCharges++
    }
  }
  const violationSamples: string[] = []
  for (const violation of sim.violations) {
    const hash = /\/stores\/([^/]+)\//.exec(violation.url)?.[1]
    if (hash) tally(hash).violations++
    if (violationSamples.length < 10) violationSamples.push(`${violation.operation} ${violation.status} ${violation.kind}: ${violation.message} (${violation.url})`)
  }
  return { stores, violationSamples }
}

process.on('message', (message: SimParentMessage) => {
  try {
    switch (message.type) {
      case 'setup':
        return send({ type: 'card', token: setUp(message.setup) })
      case 'latency':
        sim.setLatency(message.ms)
        return send({ type: 'ok' })
      case 'summary':
        return send({ type: 'summary', summary: summary(message.hash) })
      case 'rateLimit':
        sim.setRateLimit(message.hash, message.limit)
        return send({ type: 'ok' })
      case 'tallies':
        return send({ type: 'tallies', tallies: tallies() })
      case 'close':
        void sim.close().then(() => process.exit(0))
        return
    }
  } catch (error) {
    send({ type: 'error', message: error instanceof Error ? (error.stack ?? error.message) : String(error) })
  }
})
process.on('disconnect', () => process.exit(0))
send({ type: 'ready', apiUrl: sim.apiUrl, paymentsUrl: sim.paymentsUrl })
