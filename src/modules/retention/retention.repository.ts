import type { Insertable } from 'kysely'
import type { Executor } from '../../db/database.ts'
import type { RetentionSavesTable } from './retention.tables.ts'

/** A retention offer taken instead of a cancellation: what the analytics count as a save. */
export async function insertRetentionSave(trx: Executor, row: Insertable<RetentionSavesTable>): Promise<void> {
  await trx.insertInto('retention_saves').values(row).execute()
}
