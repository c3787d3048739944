import type { Generated } from 'kysely'
import type { Timestamp, NullableTimestamp, Json } from '../db/column-types.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

export interface JobsTable {
  id: Generated<number>
  kind: string
  payload: Json<Record<string, unknown>>
  /** The store the job works for (its lane in the fair claim, src/jobs/fair-claim.ts); null for upkeep of no store. */
  store_id: string | null
  dedupe_key: string | null
  run_at: Timestamp
  attempts: Generated<number>
  max_attempts: Generated<number>
  locked_until: NullableTimestamp
  locked_by: string | null
  last_error: string | null
  failed_at: NullableTimestamp
  created_at: Timestamp
}
