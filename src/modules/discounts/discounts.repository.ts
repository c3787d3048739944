import { sql, type Insertable, type Updateable } from 'kysely'
import type { DiscountRow, Executor } from '../../db/database.ts'
import type { DiscountsTable } from './discounts.tables.ts'

/** The discounts table: the store's codes, compared whatever their case. */

export function findDiscountByCode(db: Executor, storeId: string, code: string): Promise<DiscountRow | undefined> {
  return db.selectFrom('discounts').selectAll().where('store_id', '=', storeId).where(sql`lower(code)`, '=', code.toLowerCase()).executeTakeFirst()
}

export function findDiscount(db: Executor, storeId: string, id: string): Promise<DiscountRow | undefined> {
  return db.selectFrom('discounts').selectAll().where('store_id', '=', storeId).where('id', '=', id).executeTakeFirst()
}

/**
 * Counts one redemption while below the limit: the row lock of the update serialises racing
 * applications, and the loser sees the winner's count. Undefined when the limit is reached.
 */
export function countRedemption(trx: Executor, id: string): Promise<{ times_redeemed: number } | undefined> {
  return trx
    .updateTable('discounts')
    .set((eb) => ({ times_redeemed: eb('times_redeemed', '+', 1) }))
    .where('id', '=', id)
    .where((eb) => eb.or([eb('max_redemptions', 'is', null), eb('times_redeemed', '<', eb.ref('max_redemptions'))]))
    .returning('times_redeemed')
    .executeTakeFirst()
}

export function insertDiscount(db: Executor, row: Insertable<DiscountsTable>): Promise<DiscountRow> {
  return db.insertInto('discounts').values(row).returningAll().executeTakeFirstOrThrow()
}

export function listDiscounts(db: Executor, storeId: string, filter: { limit: number; afterId?: string | undefined; active?: boolean | undefined; code?: string | undefined }): Promise<DiscountRow[]> {
  let select = db.selectFrom('discounts').selectAll().where('store_id', '=', storeId)
  if (filter.active !== undefined) select = select.where('active', '=', filter.active)
  if (filter.code !== undefined) select = select.where(sql`lower(code)`, '=', filter.code.toLowerCase())
  if (filter.afterId) select = select.where('id', '<', filter.afterId)
  return select.orderBy('id', 'desc').limit(filter.limit + 1).execute()
}

export function updateDiscount(db: Executor, storeId: string, id: string, changes: Updateable<DiscountsTable>): Promise<DiscountRow | undefined> {
  return db.updateTable('discounts').set(changes).where('store_id', '=', storeId).where('id', '=', id).returningAll().executeTakeFirst()
}

/** Answers whether a row was deleted. */
export async function deleteDiscount(db: Executor, storeId: string, id: string): Promise<boolean> {
  const deleted = await db.deleteFrom('discounts').where('store_id', '=', storeId).where('id', '=', id).executeTakeFirst()
  return Number(deleted.numDeletedRows) > 0
}
