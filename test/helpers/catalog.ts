import assert from 'node:assert/strict'
import type { Db, StoreMode } from '../../src/db/database.ts'
import type { App } from '../../src/http/types.ts'
import { call, createStoreWithKey, type StoreWithKey } from './test-app.ts'

let productCounter = 0

export async function createProduct(app: App, auth: Record<string, string>, body: Record<string, unknown> = {}): Promise<any> {
  productCounter += 1
  const response = await call(app, {
    method: 'POST',
    url: '/api/v1/admin/products',
    headers: auth,
    payload: { platform_product_id: `p-${productCounter}`, name: `Product ${productCounter}`, ...body },
  })
  assert.equal(response.statusCode, 201, `creating a product failed: ${response.body}`)
  return response.json
}

export async function createPlan(app: App, auth: Record<string, string>, productId: string, body: Record<string, unknown> = {}): Promise<any> {
  const response = await call(app, {
    method: 'POST',
    url: '/api/v1/admin/plans',
    headers: auth,
    payload: { product_id: productId, name: 'Monthly', amount: 1500, currency: 'USD', interval: 'month', ...body },
  })
  assert.equal(response.statusCode, 201, `creating a plan failed: ${response.body}`)
  return response.json
}

/**
 * A store of its own (test mode unless `mode` says) with one product and one plan of 1500 USD a month;
 * with `clockAt` the store's test clock stands at that instant.
 */
export async function createShopWithPlan(
  t: { app: App; db: Db },
  options: { mode?: StoreMode; clockAt?: string } = {},
): Promise<StoreWithKey & { planId: string }> {
  const shop = await createStoreWithKey(t.db, options.mode ? { mode: options.mode } : {})
  if (options.clockAt) await t.db.updateTable('stores').set({ test_clock_now: new Date(options.clockAt) }).where('id', '=', shop.store.id).execute()
  const product = await createProduct(t.app, shop.auth)
  const plan = await createPlan(t.app, shop.auth, product.id, { amount: 1500, interval: 'month' })
  return { ...shop, planId: plan.id }
}
