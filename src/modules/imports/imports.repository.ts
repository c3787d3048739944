import { sql } from 'kysely'
import type { Executor } from '../../db/database.ts'
import type { ImportFormat, ImportRowError, ImportsTable } from './imports.tables.ts'
import type { Selectable } from 'kysely'
import type { PageBounds } from '../../lib/pagination.ts'

export type ImportRow = Selectable<ImportsTable>

/** The most row errors one import keeps (its counts stay exact): a broken 100,000-row file must not make a 100,000-entry answer. */
export const MAX_KEPT_ERRORS = 1_000

export function insertImport(db: Executor, row: { id: string; store_id: string; format: ImportFormat; dry_run: boolean; bytes_total: number | null; actor: Record<string, unknown>; now: Date }): Promise<ImportRow> {
  return db
    .insertInto('imports')
    .values({ id: row.id, store_id: row.store_id, format: row.format, dry_run: row.dry_run, status: 'running', errors: '[]', ignored_columns: '[]', bytes_total: row.bytes_total, actor: JSON.stringify(row.actor), created_at: row.now, updated_at: row.now })
    .returningAll()
    .executeTakeFirstOrThrow()
}

export interface ImportProgress {
  rows: number
  created: number
  skipped: number
  failed: number
  bytesRead: number
  /** Errors found since the last update, appended up to MAX_KEPT_ERRORS. */
  newErrors: readonly ImportRowError[]
  ignoredColumns?: readonly string[]
}

/** Records how far the import got; in the batch's own transaction, so the counts always match what was written. */
export async function recordProgress(db: Executor, id: string, progress: ImportProgress, now: Date, finish?: { status: 'completed' | 'failed' }): Promise<ImportRow> {
  return db
    .updateTable('imports')
    .set({
      rows: progress.rows,
      created: progress.created,
      skipped: progress.skipped,
      failed: progress.failed,
      bytes_read: progress.bytesRead,
      ...(progress.ignoredColumns ? { ignored_columns: JSON.stringify(progress.ignoredColumns) } : {}),
      // jsonb_path_query_array keeps the first MAX_KEPT_ERRORS of the concatenation.
      errors: progress.newErrors.length
        ? sql`jsonb_path_query_array(errors || ${JSON.stringify([...progress.newErrors].sort((a, b) => a.row - b.row))}::jsonb, ${`$[0 to ${MAX_KEPT_ERRORS - 1}]`}::jsonpath)`
        : sql`errors`,
      updated_at: now,
      ...(finish ? { status: finish.status, finished_at: now } : {}),
    })
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function findImport(db: Executor, storeId: string, id: string): Promise<ImportRow | undefined> {
  return db.selectFrom('imports').selectAll().where('store_id', '=', storeId).where('id', '=', id).executeTakeFirst()
}

export function listImports(db: Executor, storeId: string, { limit, afterId }: PageBounds): Promise<ImportRow[]> {
  let query = db.selectFrom('imports').selectAll().where('store_id', '=', storeId)
  if (afterId) query = query.where('id', '<', afterId)
  return query.orderBy('id', 'desc').limit(limit + 1).execute()
}
