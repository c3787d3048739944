import type { Generated } from 'kysely'
import type { Timestamp, NullableTimestamp } from '../../db/column-types.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

export type PlatformConnectionSource = 'app' | 'api_account'

/** One store's connection to BigCommerce. The token is never stored in the clear (token-vault.ts). */
export interface PlatformConnectionsTable {
  store_id: string
  source: PlatformConnectionSource
  /** base64(iv | AES-256-GCM ciphertext | tag), the store id as additional data; null once disconnected. */
  access_token_ciphertext: string | null
  /** The version of the key that encrypted it; null once disconnected. */
  key_version: number | null
  /** Space-separated, as the platform granted them; null when unknown (an API account token). */
  scopes: string | null
  connected_at: Timestamp
  uninstalled_at: NullableTimestamp
  updated_at: Timestamp
  /** When the order webhooks were registered on the platform; null: not yet (a job is on it) or since the last connect. */
  hooks_registered_at: NullableTimestamp
}

/** A store's share of its platform API quota, as the platform's rate-limit headers last said (CONTRACT section 19). */
export interface PlatformBudgetsTable {
  store_id: string
  quota: number
  window_ms: number
  requests_left: number
  reserved_calls: Generated<number>
  reserved_before: Generated<number>
  resets_at: Timestamp
  updated_at: Timestamp
}
