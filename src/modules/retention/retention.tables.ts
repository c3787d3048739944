import type { ColumnType } from 'kysely'
import type { Timestamp } from '../../db/column-types.ts'
import type { RetentionOfferValue } from '../stores/stores.tables.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

/** One retention offer a subscriber took instead of cancelling: what the analytics count as a save. */
export interface RetentionSavesTable {
  id: string
  store_id: string
  subscription_id: string
  offer_type: RetentionOfferValue['type']
  offer: ColumnType<RetentionOfferValue, string, string>
  actor: 'subscriber' | 'admin'
  /** On the store's clock: the time of the action's event. */
  occurred_at: Timestamp
  created_at: Timestamp
}
