import { sql } from 'kysely'
import type { ChargeRow, Executor } from '../../db/database.ts'

/** The store's charges waiting for an admin to resolve them, oldest first (partial index `charges_requires_review_idx`). */
export function listChargesUnderReview(db: Executor, storeId: string, limit: number): Promise<ChargeRow[]> {
  return db.selectFrom('charges').selectAll().where('store_id', '=', storeId).where('status', '=', 'requires_review').orderBy(sql`(review->>'since')::timestamptz`).orderBy('id').limit(limit).execute()
}

export function findChargesByIds(db: Executor, storeId: string, ids: readonly string[]): Promise<ChargeRow[]> {
  if (ids.length === 0) return Promise.resolve([])
  return db.selectFrom('charges').selectAll().where('store_id', '=', storeId).where('id', 'in', [...ids]).execute()
}
