import type { Generated } from 'kysely'
import type { NullableTimestamp, Timestamp } from '../../db/column-types.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

export type NotificationStatus = 'pending' | 'sent' | 'failed'

export interface NotificationsTable {
  id: string
  store_id: string
  template: string
  recipient: string
  subscription_id: string | null
  status: NotificationStatus
  attempts: Generated<number>
  error: string | null
  dedupe_key: string
  sent_at: NullableTimestamp
  created_at: Timestamp
  updated_at: Timestamp
}
