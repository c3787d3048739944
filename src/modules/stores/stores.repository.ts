import type { AdminKeyScope } from './stores.tables.ts'
import { sql, type RawBuilder } from 'kysely'
import type { AdminApiKeyRow, Executor, NewStore, StoreRow, StoreUpdate } from '../../db/database.ts'

/**
 * Other modules read stores only through this file. Queries of theirs that need a store's value per
 * row (its clock, its hash) take these expressions instead of joining the table themselves.
 */

/** Where the store named by `storeIdColumn` stands: its test clock, or `now` for a real store. */
export function storeClockOf(storeIdColumn: string, now: Date): RawBuilder<Date> {
  return sql<Date>`coalesce((SELECT st.test_clock_now FROM stores st WHERE st.id = ${sql.ref(storeIdColumn)}), ${now})`
}

/** Where the test clock of the store named by `storeIdColumn` stands; null for a store on real time. */
export function storeTestClockOf(storeIdColumn: string): RawBuilder<Date | null> {
  return sql<Date | null>`(SELECT st.test_clock_now FROM stores st WHERE st.id = ${sql.ref(storeIdColumn)})`
}

/**
 * A day-count setting of the store named by `storeIdColumn`: how many days ahead it announces
 * renewals (0: never), or after how many days past due it cancels.
 */
export function storeDaysOf(storeIdColumn: string, setting: 'renewal_reminder_days' | 'past_due_cancel_days'): RawBuilder<number> {
  return sql<number>`(SELECT ${sql.ref(`st.${setting}`)} FROM stores st WHERE st.id = ${sql.ref(storeIdColumn)})`
}

/**
 * The one rule for whether a store bills, over the stores row aliased `st`: its billing is not stopped
 * (its app uninstalled) and the merchant has not switched it off (`billing_enabled`, the cutover
 * switch). Every reader below takes it from here, so the renewal claim, due work and the card-expiry
 * check never disagree about a store.
 */
const STORE_BILLS = sql<boolean>`(st.billing_stopped_at IS NULL AND st.billing_enabled)`

/**
 * Every store whose billing runs, with where its clock stands (`clock_now`), for a query to join as a
 * table: the planner reads the few store rows once instead of looking one up per candidate row.
 */
export function billingStoreClocks(db: Executor, now: Date) {
  return db
    .selectFrom('stores as st')
    .select(['st.id', sql<Date>`coalesce(st.test_clock_now, ${now})`.as('clock_now')])
    .where(STORE_BILLS)
}

/**
 * Whether the store named by `storeIdColumn` bills: false while its billing is stopped (its app was
 * uninstalled) or switched off (`billing_enabled`). The renewal claim and due work read it, so such a
 * store is never even tried.
 */
export function storeBillsOf(storeIdColumn: string): RawBuilder<boolean> {
  return sql<boolean>`EXISTS (SELECT 1 FROM stores st WHERE st.id = ${sql.ref(storeIdColumn)} AND ${STORE_BILLS})`
}

/**
 * Of `storeIds`, the stores that do not bill now (stopped, or switched off). Read again just before a
 * charge is first sent: a store switched off after its renewal was claimed sends nothing more.
 */
export async function storesNotBilling(db: Executor, storeIds: readonly string[]): Promise<Set<string>> {
  if (storeIds.length === 0) return new Set()
  const rows = await db.selectFrom('stores as st').select('st.id').where('st.id', 'in', [...new Set(storeIds)]).where(sql<boolean>`NOT ${STORE_BILLS}`).execute()
  return new Set(rows.map((row) => row.id))
}

/** Stops the store's billing (kept if already stopped: the first time stays); its data is untouched. */
export async function stopStoreBilling(db: Executor, id: string, at: Date): Promise<void> {
  await db.updateTable('stores').set({ billing_stopped_at: at, updated_at: at }).where('id', '=', id).where('billing_stopped_at', 'is', null).execute()
}

/** Lets a stopped store bill again (it was connected again); its overdue renewals are then due. */
export async function resumeStoreBilling(db: Executor, id: string, at: Date): Promise<void> {
  await db.updateTable('stores').set({ billing_stopped_at: null, updated_at: at }).where('id', '=', id).where('billing_stopped_at', 'is not', null).execute()
}

/** The hash of the store named by `storeIdColumn`. */
export function storeHashOf(storeIdColumn: string): RawBuilder<string> {
  return sql<string>`(SELECT st.store_hash FROM stores st WHERE st.id = ${sql.ref(storeIdColumn)})`
}

/** The id of the store with this hash, as a value a query compares with (evaluated once per query). */
export function storeIdOfHash(storeHash: string): RawBuilder<string> {
  return sql<string>`(SELECT st.id FROM stores st WHERE st.store_hash = ${storeHash})`
}

/** The store rows for a set of ids (duplicates allowed), keyed by id. */
export async function findStoresByIds(db: Executor, ids: readonly string[]): Promise<Map<string, StoreRow>> {
  if (ids.length === 0) return new Map()
  const rows = await db.selectFrom('stores').selectAll().where('id', 'in', [...new Set(ids)]).execute()
  return new Map(rows.map((row) => [row.id, row]))
}

/** The store's row unless `unless` (a condition on another module's table) holds: one round trip for both. */
export function findStoreByIdUnless(db: Executor, id: string, unless: RawBuilder<boolean>): Promise<StoreRow | undefined> {
  return db.selectFrom('stores').selectAll().where('id', '=', id).where(sql<boolean>`NOT ${unless}`).executeTakeFirst()
}

/** The hash of some live store, if there is one. */
export async function anyLiveStoreHash(db: Executor): Promise<string | undefined> {
  const row = await db.selectFrom('stores').select('store_hash').where('mode', '=', 'live').limit(1).executeTakeFirst()
  return row?.store_hash
}

export function setTestClock(db: Executor, id: string, at: Date): Promise<unknown> {
  return db.updateTable('stores').set({ test_clock_now: at }).where('id', '=', id).execute()
}

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

/** The store's row, locked until the transaction ends: its settings are compared and changed under it. */
export function lockStore(trx: Executor, id: string): Promise<StoreRow | undefined> {
  return trx.selectFrom('stores').selectAll().where('id', '=', id).forUpdate().executeTakeFirst()
}

export function updateStore(db: Executor, id: string, changes: StoreUpdate): Promise<StoreRow | undefined> {
  return db.updateTable('stores').set(changes).where('id', '=', id).returningAll().executeTakeFirst()
}

export interface ActiveKey {
  keyId: string
  keyName: string
  scope: AdminKeyScope
  store: StoreRow
}

export async function findActiveKeyByHash(db: Executor, keyHash: string): Promise<ActiveKey | undefined> {
  return (await findActiveKeysByHash(db, [keyHash])).get(keyHash)
}

/** The active keys among these hashes, each with its store, in one statement; a hash with no active key is absent. */
export async function findActiveKeysByHash(db: Executor, keyHashes: readonly string[]): Promise<Map<string, ActiveKey>> {
  if (keyHashes.length === 0) return new Map()
  const rows = await db
    .selectFrom('admin_api_keys as k')
    .innerJoin('stores as s', 's.id', 'k.store_id')
    .selectAll('s')
    .select(['k.id as key_id', 'k.name as key_name', 'k.key_hash as key_hash', 'k.scope as key_scope'])
    .where('k.key_hash', 'in', [...new Set(keyHashes)])
    .where('k.revoked_at', 'is', null)
    .execute()
  return new Map(rows.map(({ key_id, key_name, key_hash, key_scope, ...store }) => [key_hash, { keyId: key_id, keyName: key_name, scope: key_scope, store }]))
}

export function insertAdminKey(db: Executor, key: Omit<AdminApiKeyRow, 'created_at' | 'last_used_at' | 'revoked_at' | 'scope'> & { scope?: AdminKeyScope; created_at?: Date }): Promise<AdminApiKeyRow> {
  return db
    .insertInto('admin_api_keys')
    .values(key)
    .returningAll()
    .executeTakeFirstOrThrow()
}

/** A key made on several processes' start at once: the first insert wins, the others change nothing. */
export async function insertAdminKeyIfAbsent(db: Executor, key: Omit<AdminApiKeyRow, 'created_at' | 'last_used_at' | 'revoked_at' | 'scope'> & { scope?: AdminKeyScope }): Promise<void> {
  await db.insertInto('admin_api_keys').values(key).onConflict((oc) => oc.column('key_hash').doNothing()).execute()
}

export function findKeyByHash(db: Executor, keyHash: string): Promise<AdminApiKeyRow | undefined> {
  return db.selectFrom('admin_api_keys').selectAll().where('key_hash', '=', keyHash).executeTakeFirst()
}

export function listAdminKeys(db: Executor, storeId: string): Promise<AdminApiKeyRow[]> {
  return db.selectFrom('admin_api_keys').selectAll().where('store_id', '=', storeId).orderBy('id').execute()
}

/** The store's keys, locked (in id order) until the caller's transaction ends: two revocations run one after the other. */
export function lockAdminKeys(trx: Executor, storeId: string): Promise<AdminApiKeyRow[]> {
  return trx.selectFrom('admin_api_keys').selectAll().where('store_id', '=', storeId).orderBy('id').forUpdate().execute()
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

/** Revokes one of this store's active keys; undefined when it has no such key. */
export function revokeStoreAdminKey(db: Executor, storeId: string, keyId: string, at: Date): Promise<AdminApiKeyRow | undefined> {
  return db
    .updateTable('admin_api_keys')
    .set({ revoked_at: at })
    .where('id', '=', keyId)
    .where('store_id', '=', storeId)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst()
}

export async function touchKey(db: Executor, keyId: string, at: Date): Promise<void> {
  await db.updateTable('admin_api_keys').set({ last_used_at: at }).where('id', '=', keyId).execute()
}
