// The service as `npm start` assembles it, on a database the parent prepared, seeded with one
// product and its plans through the admin API so the data takes the same write path as in use.
import { buildApp } from '../../src/app.ts'
import { loadConfig } from '../../src/config.ts'
import { connectDatabase } from '../../src/db/connect.ts'
import { migrateToLatest } from '../../src/db/migrate.ts'
import type { App } from '../../src/http/types.ts'
import { createAdminKey, createStore } from '../../src/modules/stores/index.ts'
import { announceReady, closeOnSignal } from './child-protocol.ts'
import { post, serverVersion } from './seeding.ts'

const STORE_HASH = 'bench-store'
const PLATFORM_PRODUCT_ID = 'bench-product-1'
const INTERVALS = ['week', 'month', 'year'] as const

const planCount = Number(process.env.BENCH_PLAN_COUNT ?? 20)
const config = loadConfig()
const database = await connectDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir })
await migrateToLatest(database.db)
const store = await createStore(database.db, { storeHash: STORE_HASH, name: 'Bench store' })
const { key } = await createAdminKey(database.db, store, 'bench')
const app = await buildApp({ database, config })
await seedCatalog(app, { authorization: `Bearer ${key}` })

await app.listen({ port: config.port, host: config.host })
closeOnSignal(async () => {
  await app.close()
  await database.close()
})
const path = `/api/v1/storefront/plans?store_hash=${STORE_HASH}&platform_product_id=${PLATFORM_PRODUCT_ID}`
announceReady(app.server, path, { engine: database.engine, serverVersion: await serverVersion(database.db), planCount })

async function seedCatalog(app: App, headers: Record<string, string>): Promise<void> {
  const product = await post(app, headers, '/api/v1/admin/products', {
    platform_product_id: PLATFORM_PRODUCT_ID,
    name: 'Single-origin coffee, 1 lb',
    description: 'Roasted to order and shipped on your schedule.',
  })
  for (let n = 1; n <= planCount; n++) {
    await post(app, headers, '/api/v1/admin/plans', {
      product_id: product.id,
      name: `Plan ${n}`,
      amount: 1000 + n * 25,
      currency: 'USD',
      interval: INTERVALS[n % INTERVALS.length],
      interval_count: 1 + (n % 4),
      trial_days: n % 3 === 0 ? 14 : 0,
    })
  }
}
