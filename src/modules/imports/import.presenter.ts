import { toRfc3339, toRfc3339OrNull } from '../../lib/time.ts'
import type { ImportRow } from './imports.repository.ts'
import type { ImportView } from './imports.schemas.ts'

export type { ImportView } from './imports.schemas.ts'

export function presentImport(row: ImportRow): ImportView {
  const total = row.bytes_total
  return {
    id: row.id,
    object: 'import',
    format: row.format,
    dry_run: row.dry_run,
    status: row.status,
    rows: row.rows,
    created: row.created,
    updated: row.updated,
    skipped: row.skipped,
    failed: row.failed,
    errors: row.errors,
    ignored_columns: row.ignored_columns,
    progress: total ? Math.min(1, row.status === 'running' ? row.bytes_read / total : 1) : row.status === 'running' ? null : 1,
    actor: row.actor as ImportView['actor'],
    created_at: toRfc3339(row.created_at),
    finished_at: toRfc3339OrNull(row.finished_at),
  }
}
