import type { Db, StoreRow } from '../../db/database.ts'
import { isStillReferenced, isUniqueViolation } from '../../db/errors.ts'
import type { Clock } from '../../lib/clock.ts'
import { AppError, invalidField, notFound } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { isCurrency } from '../../lib/money.ts'
import { listPage, type Page, type PageRequest } from '../../lib/pagination.ts'
import * as repo from './catalog.repository.ts'
import { presentPlan, presentProduct } from './catalog.presenters.ts'
import type {
  CreatePlanInput,
  CreateProductInput,
  PlanView,
  ProductView,
  UpdatePlanInput,
  UpdateProductInput,
} from './catalog.schemas.ts'

function checkCurrency(currency: string | undefined, path: string): void {
  if (currency !== undefined && !isCurrency(currency)) throw invalidField(path, 'is not an ISO 4217 currency code')
}

export interface CatalogServiceDeps {
  db: Db
  clock: Clock
  /** Told after every catalogue write so cached public answers never outlive the change here. */
  onChange: (storeHash: string) => void
}

export type CatalogService = ReturnType<typeof createCatalogService>

export function createCatalogService({ db, clock, onChange }: CatalogServiceDeps) {
  async function requireProduct(store: StoreRow, id: string) {
    const product = await repo.findProduct(db, id, store.id)
    if (!product) throw notFound('product', id)
    return product
  }

  async function requirePlan(store: StoreRow, id: string) {
    const plan = await repo.findPlan(db, id, store.id)
    if (!plan) throw notFound('plan', id)
    return plan
  }

  return {
    async createProduct(store: StoreRow, input: CreateProductInput): Promise<ProductView> {
      checkCurrency(input.one_time_price?.currency, '/body/one_time_price/currency')
      const now = clock.now()
      const platformProductId = String(input.platform_product_id)
      try {
        const row = await repo.insertProduct(db, {
          id: newId('prod'),
          store_id: store.id,
          platform_product_id: platformProductId,
          name: input.name,
          description: input.description ?? null,
          one_time_amount: input.one_time_price?.amount ?? null,
          one_time_currency: input.one_time_price?.currency ?? null,
          active: input.active ?? true,
          created_at: now,
          updated_at: now,
        })
        onChange(store.store_hash)
        return presentProduct({ ...row, store_hash: store.store_hash })
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new AppError('conflict', `a product with platform_product_id ${platformProductId} already exists in this store`)
        }
        throw error
      }
    },

    async getProduct(store: StoreRow, id: string): Promise<ProductView> {
      return presentProduct(await requireProduct(store, id))
    },

    async listProducts(store: StoreRow, query: PageRequest & { active?: boolean | undefined; platform_product_id?: string | undefined }): Promise<Page<ProductView>> {
      return listPage(query, (bounds) => repo.listProducts(db, store.id, {
        ...bounds,
        active: query.active,
        platformProductId: query.platform_product_id,
      }), presentProduct)
    },

    async updateProduct(store: StoreRow, id: string, input: UpdateProductInput): Promise<ProductView> {
      checkCurrency(input.one_time_price?.currency ?? undefined, '/body/one_time_price/currency')
      const row = await repo.updateProduct(db, store.id, id, {
        ...(input.name !== undefined ? { name: input.name } : {}),
        ...(input.description !== undefined ? { description: input.description } : {}),
        ...(input.one_time_price !== undefined
          ? { one_time_amount: input.one_time_price?.amount ?? null, one_time_currency: input.one_time_price?.currency ?? null }
          : {}),
        ...(input.active !== undefined ? { active: input.active } : {}),
        updated_at: clock.now(),
      })
      if (!row) throw notFound('product', id)
      onChange(store.store_hash)
      return presentProduct({ ...row, store_hash: store.store_hash })
    },

    async deleteProduct(store: StoreRow, id: string): Promise<void> {
      try {
        if (!(await repo.deleteProduct(db, store.id, id))) throw notFound('product', id)
      } catch (error) {
        if (isStillReferenced(error)) {
          throw new AppError('conflict', `product ${id} still has plans: delete or archive them first, or set active to false`)
        }
        throw error
      }
      onChange(store.store_hash)
    },

    async createPlan(store: StoreRow, input: CreatePlanInput): Promise<PlanView> {
      checkCurrency(input.currency, '/body/currency')
      const product = await repo.findProduct(db, input.product_id, store.id)
      if (!product) throw notFound('product', input.product_id)
      const now = clock.now()
      const row = await repo.insertPlan(db, {
        id: newId('plan'),
        store_id: store.id,
        product_id: product.id,
        name: input.name,
        amount: input.amount,
        currency: input.currency,
        interval: input.interval,
        interval_count: input.interval_count ?? 1,
        trial_days: input.trial_days ?? 0,
        prepaid_cycles: input.prepaid_cycles ?? null,
        platform_variant_id: input.platform_variant_id === undefined || input.platform_variant_id === null ? null : String(input.platform_variant_id),
        b2b: input.b2b ?? false,
        active: input.active ?? true,
        created_at: now,
        updated_at: now,
      })
      onChange(store.store_hash)
      return presentPlan({ ...row, platform_product_id: product.platform_product_id, store_hash: store.store_hash })
    },

    async getPlan(store: StoreRow, id: string): Promise<PlanView> {
      return presentPlan(await requirePlan(store, id))
    },

    async listPlans(
      store: StoreRow,
      query: PageRequest & { product_id?: string | undefined; active?: boolean | undefined; currency?: string | undefined; exclude_id?: string | undefined; b2b?: boolean | undefined },
    ): Promise<Page<PlanView>> {
      return listPage(query, (bounds) => repo.listPlans(db, store.id, {
        ...bounds,
        productId: query.product_id,
        active: query.active,
        currency: query.currency,
        excludeId: query.exclude_id,
        b2b: query.b2b,
      }), presentPlan)
    },

    async updatePlan(store: StoreRow, id: string, input: UpdatePlanInput): Promise<PlanView> {
      const existing = await requirePlan(store, id)
      const { platform_variant_id: variant, ...rest } = input
      const row = await repo.updatePlan(db, store.id, id, { ...rest, ...(variant === undefined ? {} : { platform_variant_id: variant === null ? null : String(variant) }), updated_at: clock.now() })
      if (!row) throw notFound('plan', id)
      onChange(store.store_hash)
      return presentPlan({ ...row, platform_product_id: existing.platform_product_id, store_hash: store.store_hash })
    },

    async deletePlan(store: StoreRow, id: string): Promise<void> {
      try {
        if (!(await repo.deletePlan(db, store.id, id))) throw notFound('plan', id)
      } catch (error) {
        if (isStillReferenced(error)) {
          throw new AppError('conflict', `plan ${id} has subscriptions: archive it with PATCH {"active": false} instead`)
        }
        throw error
      }
      onChange(store.store_hash)
    },
  }
}
