import type { NullableTimestamp, Timestamp } from '../../db/column-types.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

export type ConsoleSessionEnd = 'signed_out' | 'disconnected'

/** A console session opened by the platform's load callback; good while `ended_at` is null and it has not expired. */
export interface ConsoleSessionsTable {
  jti: string
  store_id: string
  /** The load payload that opened it (its `jti`, else a hash of it): one session per payload. */
  load_key: string
  created_at: Timestamp
  expires_at: Timestamp
  ended_at: NullableTimestamp
  ended_reason: ConsoleSessionEnd | null
}
