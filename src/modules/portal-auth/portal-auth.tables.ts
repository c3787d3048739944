import type { Generated } from 'kysely'
import type { Timestamp, NullableTimestamp } from '../../db/column-types.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

export interface MagicLinkTokensTable {
  token_hash: string
  store_id: string
  subscriber_id: string
  expires_at: Timestamp
  used_at: NullableTimestamp
  created_at: Generated<Date>
}

export interface RevokedSessionsTable {
  jti: string
  expires_at: Timestamp
}
