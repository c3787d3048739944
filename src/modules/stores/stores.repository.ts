import type { AdminApiKeyRow, Executor, NewStore, StoreRow, StoreUpdate } from '../../db/database.ts'

export function findStoreById(db: Executor, id: string): Promise<StoreRow | undefined> {
  return db.selectFrom('stores').selectAll().where('id', '=', id).executeTakeFirst()
}

export function findStoreByHash(db: Executor, storeHash: string): Promise<StoreRow | undefined> {
  return db.selectFrom('stores').selectAll().where('store_hash', '=', storeHash).executeTakeFirst()
}

export function listStores(db: Executor): Promise<StoreRow[]> {
  return db.selectFrom('stores').selectAll().orderBy('id').execute()
}

export async function insertStore(db: Executor, store: NewStore): Promise<StoreRow> {
  return db.insertInto('stores').values(store).returningAll().executeTakeFirstOrThrow()
}

/** Inserts the store unless one with the same hash exists; returns whichever is stored. */
export async function insertStoreIfAbsent(db: Executor, store: NewStore): Promise<StoreRow> {
  await db.insertInto('stores').values(store).onConflict((oc) => oc.column('store_hash').doNothing()).execute()
  const stored = await findStoreByHash(db, store.store_hash)
  if (!stored) throw new Error(`store ${store.store_hash} vanished while being created`)
  return stored
}

export function updateStore(db: Executor, id: string, changes: StoreUpdate): Promise<StoreRow | undefined> {
  return db.updateTable('stores').set(changes).where('id', '=', id).returningAll().executeTakeFirst()
}

export interface ActiveKey {
  keyId: string
  store: StoreRow
}

export async function findActiveKeyByHash(db: Executor, keyHash: string): Promise<ActiveKey | undefined> {
  const row = await db
    .selectFrom('admin_api_keys as k')
    .innerJoin('stores as s', 's.id', 'k.store_id')
    .selectAll('s')
    .select('k.id as key_id')
    .where('k.key_hash', '=', keyHash)
    .where('k.revoked_at', 'is', null)
    .executeTakeFirst()
  if (!row) return undefined
  const { key_id, ...store } = row
  return { keyId: key_id, store }
}

export function insertAdminKey(db: Executor, key: Omit<AdminApiKeyRow, 'created_at' | 'last_used_at' | 'revoked_at'>): Promise<AdminApiKeyRow> {
  return db
    .insertInto('admin_api_keys')
    .values(key)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function findKeyByHash(db: Executor, keyHash: string): Promise<AdminApiKeyRow | undefined> {
  return db.selectFrom('admin_api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst()
}

export function listAdminKeys(db: Executor, storeId: string): Promise<AdminApiKeyRow[]> {
  return db.selectFrom('admin_api_keys').selectAll().where('store_id', '=', storeId).orderBy('id').execute()
}

export function revokeAdminKey(db: Executor, keyId: string, at: Date): Promise<AdminApiKeyRow | undefined> {
  return db
    .updateTable('admin_api_keys')
    .set({ revoked_at: at })
    .where('id', '=', keyId)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst()
}

export async function touchKey(db: Executor, keyId: string, at: Date): Promise<void> {
  await db.updateTable('admin_api_keys').set({ last_used_at: at }).where('id', '=', keyId).execute()
}
