import { sql, type Selectable } from 'kysely'
import type { Executor } from '../../db/database.ts'
import type { PageBounds } from '../../lib/pagination.ts'
import type { BulkAction, BulkOperationItemsTable, BulkOperationsTable } from './bulk-operations.tables.ts'

export type BulkOperationRow = Selectable<BulkOperationsTable>
export type BulkItemRow = Selectable<BulkOperationItemsTable>

export function insertOperation(db: Executor, row: { id: string; store_id: string; action: BulkAction; params: Record<string, unknown>; filter: Record<string, unknown> | null; actor: Record<string, unknown>; now: Date }): Promise<BulkOperationRow> {
  return db
    .insertInto('bulk_operations')
    .values({ id: row.id, store_id: row.store_id, action: row.action, params: JSON.stringify(row.params), filter: row.filter ? JSON.stringify(row.filter) : null, status: 'running', total: 0, actor: JSON.stringify(row.actor), created_at: row.now, updated_at: row.now })
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** Adds targets (pending); a subscription named twice is one target. */
export async function addItems(db: Executor, storeId: string, operationId: string, targets: readonly { id: string; next_charge_at: Date | null }[], now: Date): Promise<void> {
  if (targets.length === 0) return
  await db
    .insertInto('bulk_operation_items')
    .values(targets.map((target) => ({ operation_id: operationId, store_id: storeId, subscription_id: target.id, next_charge_at: target.next_charge_at, status: 'pending' as const, updated_at: now })))
    .onConflict((oc) => oc.columns(['operation_id', 'subscription_id']).doNothing())
    .execute()
}

/** Targets refused before they could run (not the store's): failed at once. */
export async function addFailedItems(db: Executor, storeId: string, operationId: string, subscriptionIds: readonly string[], code: string, detail: string, now: Date): Promise<void> {
  if (subscriptionIds.length === 0) return
  await db
    .insertInto('bulk_operation_items')
    .values(subscriptionIds.map((id) => ({ operation_id: operationId, store_id: storeId, subscription_id: id, status: 'failed' as const, code, detail, updated_at: now })))
    .onConflict((oc) => oc.columns(['operation_id', 'subscription_id']).doNothing())
    .execute()
}

/** Sets the operation's counts from its items: one statement, so what GET shows always adds up. */
export async function refreshCounts(db: Executor, operationId: string, now: Date): Promise<BulkOperationRow> {
  return db
    .updateTable('bulk_operations')
    .set({
      total: sql<number>`(SELECT count(*) FROM bulk_operation_items i WHERE i.operation_id = ${operationId})::int`,
      succeeded: sql<number>`(SELECT count(*) FROM bulk_operation_items i WHERE i.operation_id = ${operationId} AND i.status = 'succeeded')::int`,
      failed: sql<number>`(SELECT count(*) FROM bulk_operation_items i WHERE i.operation_id = ${operationId} AND i.status = 'failed')::int`,
      updated_at: now,
    })
    .where('id', '=', operationId)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function finishOperation(db: Executor, operationId: string, now: Date): Promise<BulkOperationRow | undefined> {
  return db.updateTable('bulk_operations').set({ status: 'completed', finished_at: now, updated_at: now }).where('id', '=', operationId).where('status', '=', 'running').returningAll().executeTakeFirst()
}

export function pendingItems(db: Executor, operationId: string, limit: number): Promise<BulkItemRow[]> {
  return db.selectFrom('bulk_operation_items').selectAll().where('operation_id', '=', operationId).where('status', '=', 'pending').orderBy('subscription_id').limit(limit).execute()
}

export async function recordOutcome(db: Executor, operationId: string, subscriptionId: string, outcome: { status: 'succeeded' | 'failed'; code: string | null; detail: string | null }, now: Date): Promise<void> {
  await db.updateTable('bulk_operation_items').set({ ...outcome, updated_at: now }).where('operation_id', '=', operationId).where('subscription_id', '=', subscriptionId).execute()
}

export function findOperation(db: Executor, storeId: string, id: string): Promise<BulkOperationRow | undefined> {
  return db.selectFrom('bulk_operations').selectAll().where('store_id', '=', storeId).where('id', '=', id).executeTakeFirst()
}

export function findOperationById(db: Executor, id: string): Promise<BulkOperationRow | undefined> {
  return db.selectFrom('bulk_operations').selectAll().where('id', '=', id).executeTakeFirst()
}

export function listOperations(db: Executor, storeId: string, { limit, afterId }: PageBounds): Promise<BulkOperationRow[]> {
  let query = db.selectFrom('bulk_operations').selectAll().where('store_id', '=', storeId)
  if (afterId) query = query.where('id', '<', afterId)
  return query.orderBy('id', 'desc').limit(limit + 1).execute()
}

/** A page of one operation's items in subscription id order (the cursor is the last subscription id). */
export function listItems(db: Executor, operationId: string, { limit, afterId, status }: PageBounds & { status?: string | undefined }): Promise<BulkItemRow[]> {
  let query = db.selectFrom('bulk_operation_items').selectAll().where('operation_id', '=', operationId)
  if (status) query = query.where('status', '=', status as BulkItemRow['status'])
  if (afterId) query = query.where('subscription_id', '>', afterId)
  return query.orderBy('subscription_id').limit(limit + 1).execute()
}
