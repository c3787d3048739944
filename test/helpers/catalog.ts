import assert from 'node:assert/strict'
import type { App } from '../../src/http/types.ts'
import { call } from './test-app.ts'

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
