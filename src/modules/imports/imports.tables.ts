import type { Generated } from 'kysely'
import type { Json, NullableTimestamp, Timestamp } from '../../db/column-types.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

export type ImportFormat = 'native' | 'recharge'
export type ImportStatus = 'running' | 'completed' | 'failed'

/** A row the import refused: its number in the file (the header is row 1), the column at fault when one is, and why. */
export interface ImportRowError {
  row: number
  column?: string
  code: string
  detail: string
}

export interface ImportsTable {
  id: string
  store_id: string
  format: ImportFormat
  dry_run: boolean
  status: ImportStatus
  /** Data rows read so far (the header not counted). */
  rows: Generated<number>
  created: Generated<number>
  updated: Generated<number>
  skipped: Generated<number>
  /** Rows refused: each has its entry in `errors` (up to the kept maximum). */
  failed: Generated<number>
  errors: Json<ImportRowError[]>
  ignored_columns: Json<string[]>
  /** How far through the file: the progress bar is bytes read of bytes total (the request's length, when it said). */
  bytes_read: Generated<number>
  bytes_total: number | null
  actor: Json<Record<string, unknown> | null>
  created_at: Timestamp
  updated_at: Timestamp
  finished_at: NullableTimestamp
}
