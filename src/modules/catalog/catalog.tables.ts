import type { ColumnType } from 'kysely'
import type { Timestamp } from '../../db/column-types.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

export type PlanInterval = 'day' | 'week' | 'month' | 'year'

export interface ProductsTable {
  id: string
  store_id: string
  platform_product_id: string
  name: string
  description: string | null
  one_time_amount: number | null
  one_time_currency: string | null
  active: boolean
  created_at: Timestamp
  updated_at: Timestamp
}

export interface PlansTable {
  id: string
  store_id: string
  product_id: string
  name: string
  amount: number
  currency: string
  interval: PlanInterval
  interval_count: number
  trial_days: number
  prepaid_cycles: number | null
  /** The catalog variant the plan sells, when its product has variants. */
  platform_variant_id: ColumnType<string | null, string | null | undefined, string | null>
  b2b: boolean
  active: boolean
  created_at: Timestamp
  updated_at: Timestamp
}
