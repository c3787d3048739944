// The service as `npm start` assembles it, seeded for the portal bench: a store with one plan, a
// subscriber with five subscriptions (and other subscribers around them, so the query has to filter),
// all through the admin API, then a portal session made through the real verify route.
import { buildApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config.ts'
import { connectDatabase } from '../../src/db/connect.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import { randomToken, sha256Hex } from '../../src/lib/secrets.ts'
import { createAdminKey, createStore } from '../../src/modules/stores/index.ts'
import { announceReady, closeOnSignal } from './child-protocol.ts'
import { post, serverVersion } from './seeding.ts'

// `admin`: the admin list of the store's subscriptions with the admin key, instead of the portal's own list.
const ROUTE = process.env.BENCH_PORTAL_ROUTE === 'admin' ? 'admin' : 'portal'
const PORTAL_BENCH_PATH = process.env.BENCH_PORTAL_PATH ?? (ROUTE === 'admin' ? '/api/v1/admin/subscriptions?limit=20' : '/api/v1/portal/subscriptions')
const SUBSCRIPTIONS = Number(process.env.BENCH_PORTAL_SUBSCRIPTIONS ?? 5)
const OTHER_SUBSCRIBERS = 20
// Signed-in subscribers the load spreads over, each with SUBSCRIPTIONS subscriptions (the portal route only).
const SIGNED_IN = ROUTE === 'admin' ? 1 : Number(process.env.BENCH_PORTAL_SIGNED_IN ?? 1)
// Stores the admin load spreads over, each seeded alike and called with its own key (the admin route only).
const ADMIN_STORES = ROUTE === 'admin' ? Number(process.env.BENCH_ADMIN_STORES ?? 1) : 1
const ADDRESS = { name: 'Ada Lovelace', line1: '1 Analytical Street', city: 'London', postal_code: 'N1 9GU', country: 'GB' }

const config = loadConfig()
const database = await connectDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })
await migrateToLatest(database.db)
const app = await buildApp({ database, config })

let order = 0
/** A store with one plan, `signedIn` subscribers of SUBSCRIPTIONS subscriptions each and OTHER_SUBSCRIBERS others. */
async function seedStore(index: number, signedIn: number) {
  const store = await createStore(database.db, { storeHash: index === 0 ? 'bench-store' : `bench-store-${index}`, name: `Bench store ${index}` })
  const { key } = await createAdminKey(database.db, store, 'bench')
  const headers = { authorization: `Bearer ${key}` }
  const product = await post(app, headers, '/api/v1/admin/products', { platform_product_id: 'bench-product-1', name: 'Single-origin coffee, 1 lb' })
  const plan = await post(app, headers, '/api/v1/admin/plans', { product_id: product.id, name: 'Monthly', amount: 1800, currency: 'USD', interval: 'month' })
  const checkoutFor = async (email: string) => {
    order += 1
    const body = {
      platform_order_id: `bench-order-${order}`,
      email,
      name: 'Ada Lovelace',
      shipping_address: ADDRESS,
      payment_instrument_id: 'instr_bench',
      items: [{ plan_id: plan.id, quantity: 1 }],
    }
    const created = await post(app, headers, '/api/v1/admin/checkouts', body)
    return (created as unknown as { data: Array<{ subscriber_id: string }> }).data[0]!.subscriber_id
  }
  const subscribers: string[] = []
  for (let person = 0; person < signedIn; person++) {
    const email = person === 0 ? 'ada@example.com' : `signed-in-${person}@example.com`
    const subscriberIds = new Set<string>()
    for (let n = 0; n < SUBSCRIPTIONS; n++) subscriberIds.add(await checkoutFor(email))
    if (subscriberIds.size !== 1) throw new Error(`expected one subscriber for ${SUBSCRIPTIONS} checkouts, got ${subscriberIds.size}`)
    subscribers.push([...subscriberIds][0]!)
  }
  for (let n = 0; n < OTHER_SUBSCRIBERS; n++) await checkoutFor(`other-${n}@example.com`)
  return { store, key, subscribers }
}

const seeded = []
for (let index = 0; index < ADMIN_STORES; index++) seeded.push(await seedStore(index, SIGNED_IN))
const { store, key } = seeded[0]!
const signedIn = seeded[0]!.subscribers

// Sign in as the emailed link would: a one-time token stored as its hash, exchanged at verify.
const sessions: Array<{ access_token: string; expires_in: number }> = []
for (const subscriberId of signedIn) {
  const oneTime = randomToken(32)
  await database.db
    .insertInto('magic_link_tokens')
    .values({ token_hash: sha256Hex(oneTime), store_id: store.id, subscriber_id: subscriberId, expires_at: new Date(Date.now() + 15 * 60_000) })
    .execute()
  const verified = await app.inject({ method: 'POST', url: '/api/v1/portal/auth/verify', payload: { token: oneTime } })
  if (verified.statusCode !== 200) throw new Error(`verify answered ${verified.statusCode}: ${verified.body}`)
  sessions.push(verified.json() as { access_token: string; expires_in: number })
}
const session = sessions[0]!

await app.listen({ port: config.port, host: config.host })
closeOnSignal(async () => {
  await app.close()
  await database.close()
})
announceReady(app.server, PORTAL_BENCH_PATH, {
  engine: database.engine,
  serverVersion: await serverVersion(database.db),
  subscriptions: SUBSCRIPTIONS,
  otherSubscribers: OTHER_SUBSCRIBERS,
  signedIn: SIGNED_IN,
  accessToken: ROUTE === 'admin' ? key : session.access_token,
  // Space-separated: details are plain strings and numbers.
  accessTokens: ROUTE === 'admin' ? seeded.map((each) => each.key).join(' ') : sessions.map((each) => each.access_token).join(' '),
  stores: ADMIN_STORES,
  route: ROUTE,
  expiresIn: session.expires_in,
})
