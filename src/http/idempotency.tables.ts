import type { Timestamp } from '../db/column-types.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

export interface IdempotencyKeysTable {
  scope: string
  key: string
  request_hash: string
  /** While null the first request is still running; `locked_until` bounds how long a crash can hold the key. */
  response_status: number | null
  response_body: string | null
  response_content_type: string | null
  locked_until: Timestamp
  created_at: Timestamp
}
