import type { Timestamp } from '../../db/column-types.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

export type OnetimeStatus = 'pending' | 'charged' | 'removed'

export interface OnetimesTable {
  id: string
  store_id: string
  subscription_id: string
  product_id: string
  quantity: number
  /** The product's one-time price when it was added: the price the next renewal charges. */
  unit_amount: number
  currency: string
  status: OnetimeStatus
  /** The renewal charge that paid it, once charged. */
  charge_id: string | null
  created_at: Timestamp
  updated_at: Timestamp
}
