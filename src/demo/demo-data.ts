import type { Db } from '../db/database.ts'
import { newId } from '../lib/ids.ts'
import { createAdminKey, createStore, findStoreByHash } from '../modules/stores/index.ts'

export const DEMO_STORE_HASH = 'demo-store'
export const DEMO_PLATFORM_PRODUCT_ID = '112'

export interface DemoData {
  storeHash: string
  platformProductId: string
  /** The admin key made now; undefined when the demo store was already there (its key was shown when it was made). */
  adminKey: string | undefined
  created: boolean
}

const PRODUCTS = [
  {
    platform_product_id: DEMO_PLATFORM_PRODUCT_ID,
    name: 'Single-Origin Coffee, 1 lb',
    description: 'Roasted to order and shipped on your schedule.',
    one_time: 2400,
    plans: [
      { name: 'Every week', amount: 2040, interval: 'week', interval_count: 1, trial_days: 0, prepaid_cycles: null },
      { name: 'Every 2 weeks', amount: 2160, interval: 'week', interval_count: 2, trial_days: 0, prepaid_cycles: null },
      { name: 'Every month', amount: 2160, interval: 'month', interval_count: 1, trial_days: 14, prepaid_cycles: null },
      { name: '3 months, paid up front', amount: 6120, interval: 'month', interval_count: 1, trial_days: 0, prepaid_cycles: 3 },
    ],
  },
  {
    platform_product_id: '113',
    name: 'Tea Sampler',
    description: 'Six loose-leaf teas a month.',
    one_time: 3000,
    plans: [
      { name: 'Every month', amount: 2700, interval: 'month', interval_count: 1, trial_days: 0, prepaid_cycles: null },
      { name: 'Every year', amount: 29_000, interval: 'year', interval_count: 1, trial_days: 0, prepaid_cycles: null },
    ],
  },
] as const

/**
 * The demo store a newcomer sees on first start. Its admin key is made with it and shown once, like
 * every admin key: the database keeps only its hash, and nothing is written to DATA_DIR.
 * - `create`: make the store when it is missing (otherwise only report one that exists);
 * - `newKey`: when the store exists already, make it another admin key (the CLI's `demo` command).
 * Answers undefined when there is no demo store and none was made.
 */
export async function ensureDemoData(db: Db, { create = true, newKey = false }: { create?: boolean; newKey?: boolean } = {}): Promise<DemoData | undefined> {
  const existing = await findStoreByHash(db, DEMO_STORE_HASH)
  if (existing) {
    const adminKey = newKey ? (await createAdminKey(db, existing, 'demo')).key : undefined
    return { storeHash: DEMO_STORE_HASH, platformProductId: DEMO_PLATFORM_PRODUCT_ID, adminKey, created: false }
  }
  if (!create) return undefined
  const store = await createStore(db, { storeHash: DEMO_STORE_HASH, name: 'Demo Coffee Roasters', mode: 'test', timezone: 'America/New_York' })
  await insertDemoCatalog(db, store.id)
  const { key } = await createAdminKey(db, store, 'demo')
  return { storeHash: DEMO_STORE_HASH, platformProductId: DEMO_PLATFORM_PRODUCT_ID, adminKey: key, created: true }
}

async function insertDemoCatalog(db: Db, storeId: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    for (const product of PRODUCTS) {
      const productId = newId('prod')
      await trx
        .insertInto('products')
        .values({
          id: productId,
          store_id: storeId,
          platform_product_id: product.platform_product_id,
          name: product.name,
          description: product.description,
          one_time_amount: product.one_time,
          one_time_currency: 'USD',
          active: true,
        })
        .execute()
      for (const plan of product.plans) {
        await trx
          .insertInto('plans')
          .values({ id: newId('plan'), store_id: storeId, product_id: productId, currency: 'USD', b2b: false, active: true, ...plan })
          .execute()
      }
    }
  })
}
