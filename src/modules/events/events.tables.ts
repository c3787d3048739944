import type { Generated } from 'kysely'
import type { Timestamp } from '../../db/column-types.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

export interface EventsTable {
  id: string
  position: Generated<number>
  store_id: string
  entity_type: string
  entity_id: string
  event_type: string
  sequence: number
  occurred_at: Timestamp
  /** The event exactly as delivered: kept as text so every delivery sends the same bytes. */
  payload: string
  created_at: Timestamp
}
