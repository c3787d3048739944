import type { Timestamp } from '../../db/column-types.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

/** Order webhooks received, by the payload's `hash` (the same on a duplicate delivery): each is acted on once. */
export interface PlatformWebhookReceiptsTable {
  store_id: string
  hash: string
  scope: string
  received_at: Timestamp
}
