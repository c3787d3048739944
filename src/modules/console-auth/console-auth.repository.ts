import type { Executor } from '../../db/database.ts'
import type { ConsoleSessionEnd } from './console-auth.tables.ts'

/** Records a new session; false when its load payload already opened one (a replayed payload). */
export async function insertConsoleSession(db: Executor, row: { jti: string; store_id: string; load_key: string; created_at: Date; expires_at: Date }): Promise<boolean> {
  // No error on a replay: the caller's transaction goes on to refuse it in words.
  const inserted = await db.insertInto('console_sessions').values(row).onConflict((oc) => oc.column('load_key').doNothing()).returning('jti').executeTakeFirst()
  return inserted !== undefined
}

/** Ends one session of the store, if it is still open; true when it was. */
export async function endConsoleSession(db: Executor, storeId: string, jti: string, at: Date, reason: ConsoleSessionEnd): Promise<boolean> {
  const ended = await db.updateTable('console_sessions').set({ ended_at: at, ended_reason: reason }).where('jti', '=', jti).where('store_id', '=', storeId).where('ended_at', 'is', null).executeTakeFirst()
  return Number(ended.numUpdatedRows) === 1
}

/** Ends every open session of the store (its app uninstalled or its connection removed). */
export async function endStoreConsoleSessions(db: Executor, storeId: string, at: Date, reason: ConsoleSessionEnd): Promise<number> {
  const ended = await db.updateTable('console_sessions').set({ ended_at: at, ended_reason: reason }).where('store_id', '=', storeId).where('ended_at', 'is', null).executeTakeFirst()
  return Number(ended.numUpdatedRows)
}

/** Sessions past their end or their lifetime are of no more use: kept a day for the record, then dropped. */
export async function deleteStaleConsoleSessions(db: Executor, before: Date): Promise<void> {
  await db.deleteFrom('console_sessions').where('expires_at', '<', before).execute()
}
