import { createHash } from 'node:crypto'
import { LRUCache } from 'lru-cache'
import type { Db } from '../../db/database.ts'
import { invalidField, notFound } from '../../lib/errors.ts'
import { listPage, type Page, type PageRequest } from '../../lib/pagination.ts'
import { findStoreByHash } from '../stores/index.ts'
import * as repo from './catalog.repository.ts'
import type { PlanWithProduct } from './catalog.repository.ts'
import { presentPlan, presentProduct, storefrontOrder } from './catalog.presenters.ts'
import type { PlanView, ProductView, StorefrontPlansView } from './catalog.schemas.ts'

/** A storefront answer ready to send: serialized and UTF-8 encoded once, with its validator. */
export interface StorefrontAnswer {
  body: Buffer
  etag: string
}

export interface PublicCatalogOptions {
  db: Db
  /** How long an answer may be served from memory; writes through this process clear it at once. */
  cacheTtlMs: number
  maxCachedAnswers?: number
}

export type PublicCatalog = ReturnType<typeof createPublicCatalog>

/**
 * Reads anyone may make. Storefront widgets call on every product page view, so their answers are
 * cached per (store, product, page) and concurrent misses share one query. Other processes' writes
 * show within the TTL.
 */
export function createPublicCatalog({ db, cacheTtlMs, maxCachedAnswers = 10_000 }: PublicCatalogOptions) {
  const cache = cacheTtlMs > 0 ? new LRUCache<string, StorefrontAnswer>({ max: maxCachedAnswers, ttl: cacheTtlMs }) : undefined
  const inFlight = new Map<string, Promise<StorefrontAnswer>>()
  let generation = 0

  /**
   * Where the page after the plan `afterId` starts in `plans` (sorted in storefront order). Pages
   * follow the sort key, not positions: a plan's cadence never changes (its price only by a price change,
   * rare enough that a list read across one may show that plan twice or miss it), so a plan archived
   * since the previous page (no longer in `plans`, still in the table) still marks the place.
   */
  async function startAfter(plans: PlanWithProduct[], afterId: string): Promise<number> {
    const last = plans.find((plan) => plan.id === afterId) ?? (await repo.findPlan(db, afterId))
    if (!last) throw invalidField('/query/cursor', 'names a plan that no longer exists: start again without a cursor')
    const start = plans.findIndex((plan) => plan.id !== last.id && storefrontOrder(plan, last) > 0)
    return start === -1 ? plans.length : start
  }

  async function buildStorefrontAnswer(storeHash: string, platformProductId: string, page: PageRequest): Promise<StorefrontAnswer> {
    const [plans, product] = await Promise.all([
      repo.listStorefrontPlans(db, storeHash, platformProductId),
      repo.findProductByPlatformId(db, storeHash, platformProductId),
    ])
    plans.sort(storefrontOrder)
    const { data, next_cursor } = await listPage(page, async ({ limit, afterId }) => {
      const start = afterId === undefined ? 0 : await startAfter(plans, afterId)
      return plans.slice(start, start + limit + 1)
    }, presentPlan)
    const view: StorefrontPlansView = { data, next_cursor, ...(product?.active ? { product: presentProduct(product) } : {}) }
    // Bytes, not a string: every send of a cached answer would otherwise encode it again.
    const body = Buffer.from(JSON.stringify(view))
    return { body, etag: `"${createHash('sha1').update(body).digest('base64url')}"` }
  }

  return {
    /** One page of a product's storefront plans; a cursor this API did not issue is 400 (nothing is cached then). */
    storefrontPlans(storeHash: string, platformProductId: string, page: PageRequest): StorefrontAnswer | Promise<StorefrontAnswer> {
      const key = [storeHash, platformProductId, page.limit, page.cursor ?? ''].join('\u0000')
      const cached = cache?.get(key)
      if (cached) return cached
      const pending = inFlight.get(key)
      if (pending) return pending
      const startedAt = generation
      const loading = buildStorefrontAnswer(storeHash, platformProductId, page)
        .then((answer) => {
          // A write that landed while we queried makes this answer stale: serve it once, keep it not.
          if (startedAt === generation) cache?.set(key, answer)
          return answer
        })
        .finally(() => inFlight.delete(key))
      inFlight.set(key, loading)
      return loading
    },

    invalidate(): void {
      generation++
      cache?.clear()
      inFlight.clear()
    },

    async listProducts(query: { store_hash: string; limit: number; cursor?: string | undefined }): Promise<Page<ProductView>> {
      const storeId = await findStoreByHash(db, query.store_hash).then((store) => store?.id)
      // An unknown store lists nothing, but its cursor is still checked like every other.
      return listPage(query, async (bounds) => storeId ? repo.listProducts(db, storeId, {
        ...bounds,
        active: true,
      }) : [], presentProduct)
    },

    async listPlans(query: { store_hash: string; product_id?: string | undefined; limit: number; cursor?: string | undefined }): Promise<Page<PlanView>> {
      const storeId = await findStoreByHash(db, query.store_hash).then((store) => store?.id)
      return listPage(query, async (bounds) => storeId ? repo.listPlans(db, storeId, {
        ...bounds,
        productId: query.product_id,
        active: true,
        productActive: true,
      }) : [], presentPlan)
    },

    async getProduct(id: string): Promise<ProductView> {
      const product = await repo.findProduct(db, id)
      if (!product) throw notFound('product', id)
      return presentProduct(product)
    },

    async getPlan(id: string): Promise<PlanView> {
      const plan = await repo.findPlan(db, id)
      if (!plan) throw notFound('plan', id)
      return presentPlan(plan)
    },
  }
}
