import type { Executor, PlanRow, ProductRow } from '../../db/database.ts'
import type { Insertable, Updateable } from 'kysely'
import type { PlansTable, ProductsTable } from '../../db/database.ts'
import { storeHashOf, storeIdOfHash } from '../stores/index.ts'

export type PlanWithProduct = PlanRow & { platform_product_id: string; store_hash: string }
export type ProductWithStore = ProductRow & { store_hash: string }

export interface ListFilter {
  limit: number
  afterId?: string | undefined
}

function productsQuery(db: Executor) {
  return db.selectFrom('products as p').selectAll('p').select(storeHashOf('p.store_id').as('store_hash'))
}

function plansQuery(db: Executor) {
  return db
    .selectFrom('plans as pl')
    .innerJoin('products as p', 'p.id', 'pl.product_id')
    .selectAll('pl')
    .select(['p.platform_product_id', storeHashOf('pl.store_id').as('store_hash')])
}

export function findProduct(db: Executor, id: string, storeId?: string): Promise<ProductWithStore | undefined> {
  let query = productsQuery(db).where('p.id', '=', id)
  if (storeId) query = query.where('p.store_id', '=', storeId)
  return query.executeTakeFirst()
}

export function listProducts(
  db: Executor,
  storeId: string,
  filter: ListFilter & { active?: boolean | undefined; platformProductId?: string | undefined },
): Promise<ProductWithStore[]> {
  let query = productsQuery(db).where('p.store_id', '=', storeId)
  if (filter.active !== undefined) query = query.where('p.active', '=', filter.active)
  if (filter.platformProductId !== undefined) query = query.where('p.platform_product_id', '=', filter.platformProductId)
  if (filter.afterId) query = query.where('p.id', '<', filter.afterId)
  return query.orderBy('p.id', 'desc').limit(filter.limit + 1).execute()
}

export function insertProduct(db: Executor, product: Insertable<ProductsTable>): Promise<ProductRow> {
  return db.insertInto('products').values(product).returningAll().executeTakeFirstOrThrow()
}

export function updateProduct(db: Executor, storeId: string, id: string, changes: Updateable<ProductsTable>): Promise<ProductRow | undefined> {
  return db.updateTable('products').set(changes).where('id', '=', id).where('store_id', '=', storeId).returningAll().executeTakeFirst()
}

export async function deleteProduct(db: Executor, storeId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('products').where('id', '=', id).where('store_id', '=', storeId).executeTakeFirst()
  return result.numDeletedRows > 0n
}

export function findPlan(db: Executor, id: string, storeId?: string): Promise<PlanWithProduct | undefined> {
  let query = plansQuery(db).where('pl.id', '=', id)
  if (storeId) query = query.where('pl.store_id', '=', storeId)
  return query.executeTakeFirst()
}

export function listPlans(
  db: Executor,
  storeId: string,
  filter: ListFilter & {
    productId?: string | undefined
    active?: boolean | undefined
    productActive?: boolean | undefined
    currency?: string | undefined
    excludeId?: string | undefined
    b2b?: boolean | undefined
  },
): Promise<PlanWithProduct[]> {
  let query = plansQuery(db).where('pl.store_id', '=', storeId)
  if (filter.currency !== undefined) query = query.where('pl.currency', '=', filter.currency)
  if (filter.excludeId !== undefined) query = query.where('pl.id', '<>', filter.excludeId)
  if (filter.b2b !== undefined) query = query.where('pl.b2b', '=', filter.b2b)
  if (filter.productId !== undefined) query = query.where('pl.product_id', '=', filter.productId)
  if (filter.active !== undefined) query = query.where('pl.active', '=', filter.active)
  if (filter.productActive !== undefined) query = query.where('p.active', '=', filter.productActive)
  if (filter.afterId) query = query.where('pl.id', '<', filter.afterId)
  return query.orderBy('pl.id', 'desc').limit(filter.limit + 1).execute()
}

/** Active plans of an active product, found by the platform's ids: what a storefront widget may offer. */
export function listStorefrontPlans(db: Executor, storeHash: string, platformProductId: string): Promise<PlanWithProduct[]> {
  return plansQuery(db)
    .where('pl.store_id', '=', storeIdOfHash(storeHash))
    .where('p.platform_product_id', '=', platformProductId)
    .where('p.active', '=', true)
    .where('pl.active', '=', true)
    .orderBy('pl.id')
    .execute()
}

export function findProductByPlatformId(db: Executor, storeHash: string, platformProductId: string): Promise<ProductWithStore | undefined> {
  return productsQuery(db)
    .where('p.store_id', '=', storeIdOfHash(storeHash))
    .where('p.platform_product_id', '=', platformProductId)
    .executeTakeFirst()
}

export function insertPlan(db: Executor, plan: Insertable<PlansTable>): Promise<PlanRow> {
  return db.insertInto('plans').values(plan).returningAll().executeTakeFirstOrThrow()
}

export function updatePlan(db: Executor, storeId: string, id: string, changes: Updateable<PlansTable>): Promise<PlanRow | undefined> {
  return db.updateTable('plans').set(changes).where('id', '=', id).where('store_id', '=', storeId).returningAll().executeTakeFirst()
}

export async function deletePlan(db: Executor, storeId: string, id: string): Promise<boolean> {
  const result = await db.deleteFrom('plans').where('id', '=', id).where('store_id', '=', storeId).executeTakeFirst()
  return result.numDeletedRows > 0n
}

/** The plan row itself, without its product: what the subscription module reads when it changes plans. */
export function findPlanRow(db: Executor, storeId: string, id: string): Promise<PlanRow | undefined> {
  return db.selectFrom('plans').selectAll().where('id', '=', id).where('store_id', '=', storeId).executeTakeFirst()
}

export function findPlanRows(db: Executor, storeId: string, ids: readonly string[]): Promise<PlanRow[]> {
  if (ids.length === 0) return Promise.resolve([])
  return db.selectFrom('plans').selectAll().where('store_id', '=', storeId).where('id', 'in', [...ids]).execute()
}

/** Whether the plan is a business plan (changed by request); undefined when there is no such plan. */
export async function isBusinessPlan(db: Executor, planId: string): Promise<boolean | undefined> {
  const row = await db.selectFrom('plans').select('b2b').where('id', '=', planId).executeTakeFirst()
  return row?.b2b
}

/** The platform's id for one of our products: what a renewal order names. */
export async function platformProductIdOf(db: Executor, productId: string): Promise<string> {
  const row = await db.selectFrom('products').select('platform_product_id').where('id', '=', productId).executeTakeFirstOrThrow()
  return row.platform_product_id
}

/** The store's products of these ids, by id (a page of subscriptions names each one's product). */
export async function findProductsByIds(db: Executor, storeId: string, ids: readonly string[]): Promise<Map<string, ProductRow>> {
  if (ids.length === 0) return new Map()
  const rows = await db.selectFrom('products').selectAll().where('store_id', '=', storeId).where('id', 'in', [...new Set(ids)]).execute()
  return new Map(rows.map((row) => [row.id, row]))
}

/**
 * The store's catalogue as an import matches against it: every product (with its plans) whose
 * platform product id or exact name is asked about. One read per batch of rows, not per row.
 */
export async function catalogueForImport(
  db: Executor,
  storeId: string,
  { platformIds, names, productIds = [] }: { platformIds: readonly string[]; names: readonly string[]; productIds?: readonly string[] },
): Promise<{ products: ProductRow[]; plans: PlanRow[] }> {
  if (platformIds.length === 0 && names.length === 0 && productIds.length === 0) return { products: [], plans: [] }
  const products = await db
    .selectFrom('products')
    .selectAll()
    .where('store_id', '=', storeId)
    .where((eb) =>
      eb.or([
        ...(platformIds.length ? [eb('platform_product_id', 'in', [...platformIds])] : []),
        ...(names.length ? [eb('name', 'in', [...names])] : []),
        ...(productIds.length ? [eb('id', 'in', [...productIds])] : []),
      ]),
    )
    .execute()
  if (products.length === 0) return { products, plans: [] }
  const plans = await db.selectFrom('plans').selectAll().where('store_id', '=', storeId).where('product_id', 'in', products.map((p) => p.id)).orderBy('created_at').orderBy('id').execute()
  return { products, plans }
}

/** The plan row, locked for the caller's transaction: a price change holds it while it changes the price. */
export function lockPlanRow(trx: Executor, storeId: string, id: string): Promise<PlanRow | undefined> {
  return trx.selectFrom('plans').selectAll().where('id', '=', id).where('store_id', '=', storeId).forUpdate().executeTakeFirst()
}

/** A new price for the plan: what new subscriptions pay (docs/contract.md, Price changes with notice). */
export async function setPlanAmount(trx: Executor, storeId: string, id: string, amount: number, at: Date): Promise<void> {
  await trx.updateTable('plans').set({ amount, updated_at: at }).where('id', '=', id).where('store_id', '=', storeId).execute()
}
