import type { Insertable, Selectable, Updateable } from 'kysely'
import type { Executor } from '../../db/database.ts'
import type { PriceChangesTable } from './price-changes.tables.ts'

export type PriceChangeRow = Selectable<PriceChangesTable>

export async function insertPriceChange(trx: Executor, row: Insertable<PriceChangesTable>): Promise<PriceChangeRow> {
  return trx.insertInto('price_changes').values(row).returningAll().executeTakeFirstOrThrow()
}

export function findPriceChange(db: Executor, storeId: string, id: string): Promise<PriceChangeRow | undefined> {
  return db.selectFrom('price_changes').selectAll().where('id', '=', id).where('store_id', '=', storeId).executeTakeFirst()
}

export function findPriceChangeById(db: Executor, id: string): Promise<PriceChangeRow | undefined> {
  return db.selectFrom('price_changes').selectAll().where('id', '=', id).executeTakeFirst()
}

/** The change, locked: one page at a time moves it on, whoever runs it. */
export function lockPriceChange(trx: Executor, id: string): Promise<PriceChangeRow | undefined> {
  return trx.selectFrom('price_changes').selectAll().where('id', '=', id).forUpdate().executeTakeFirst()
}

/** A change of the plan still being scheduled on its subscriptions, if any. */
export function findSchedulingOfPlan(trx: Executor, planId: string): Promise<PriceChangeRow | undefined> {
  return trx.selectFrom('price_changes').selectAll().where('plan_id', '=', planId).where('status', '=', 'scheduling').executeTakeFirst()
}

export async function updatePriceChange(trx: Executor, id: string, set: Updateable<PriceChangesTable>): Promise<void> {
  await trx.updateTable('price_changes').set(set).where('id', '=', id).execute()
}
