import type { Insertable } from 'kysely'
import type { Executor } from '../../db/database.ts'
import { storeHashOf } from '../stores/index.ts'
import type { PlatformConnectionsTable } from './platform.tables.ts'

/** The platform_connections table: one row per store that was ever connected to BigCommerce. */

export function findConnection(db: Executor, storeId: string) {
  return db.selectFrom('platform_connections').selectAll().where('store_id', '=', storeId).executeTakeFirst()
}

export async function upsertConnection(db: Executor, storeId: string, values: Omit<Insertable<PlatformConnectionsTable>, 'store_id'>): Promise<void> {
  await db
    .insertInto('platform_connections')
    .values({ store_id: storeId, ...values })
    .onConflict((oc) => oc.column('store_id').doUpdateSet(values))
    .execute()
}

/**
 * Whether the store is connected, holding its connection row (FOR SHARE) until the caller's transaction
 * ends: an uninstall or a disconnect (which updates the row) waits for it, or has already happened.
 */
export async function lockLiveConnection(trx: Executor, storeId: string): Promise<boolean> {
  const row = await trx.selectFrom('platform_connections').select('store_id').where('store_id', '=', storeId).where('access_token_ciphertext', 'is not', null).forShare().executeTakeFirst()
  return row !== undefined
}

/** Forgets the store's token (kept encrypted until now) and marks the connection uninstalled. */
export async function clearToken(db: Executor, storeId: string, at: Date): Promise<void> {
  await db
    .updateTable('platform_connections')
    .set({ access_token_ciphertext: null, key_version: null, uninstalled_at: at, updated_at: at })
    .where('store_id', '=', storeId)
    .where('access_token_ciphertext', 'is not', null)
    .execute()
}

/** The sealed token of a connected store, with the store's hash. */
export function findSealedToken(db: Executor, storeId: string) {
  return db
    .selectFrom('platform_connections as c')
    .select(['c.access_token_ciphertext', 'c.key_version', 'c.source', storeHashOf('c.store_id').as('store_hash')])
    .where('c.store_id', '=', storeId)
    .executeTakeFirst()
}

/** Connected stores whose order hooks were never registered since they connected, or not since `checkedBefore`. */
export async function storesDueForHookCheck(db: Executor, checkedBefore: Date): Promise<string[]> {
  const rows = await db
    .selectFrom('platform_connections')
    .select('store_id')
    .where('access_token_ciphertext', 'is not', null)
    .where((eb) => eb.or([eb('hooks_registered_at', 'is', null), eb('hooks_registered_at', '<', checkedBefore)]))
    .execute()
  return rows.map((row) => row.store_id)
}

export async function markHooksRegistered(db: Executor, storeId: string, at: Date): Promise<void> {
  await db.updateTable('platform_connections').set({ hooks_registered_at: at }).where('store_id', '=', storeId).where('access_token_ciphertext', 'is not', null).execute()
}
