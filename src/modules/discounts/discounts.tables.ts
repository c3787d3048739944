import type { Generated } from 'kysely'
import type { Json, NullableTimestamp, Timestamp } from '../../db/column-types.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

export type DiscountType = 'percentage' | 'fixed_amount'
export type DiscountDuration = 'once' | 'repeating' | 'forever'

export interface DiscountsTable {
  id: string
  store_id: string
  /** Unique per store whatever its case (index on lower(code)); kept as the merchant wrote it. */
  code: string
  type: DiscountType
  /** Percent (1-100) or integer minor units of `currency`. */
  value: number
  /** Only for `fixed_amount`. */
  currency: string | null
  duration: DiscountDuration
  /** Only for `repeating`: how many charges it covers. */
  duration_in_cycles: number | null
  applies_to_plan_ids: Json<string[]>
  max_redemptions: number | null
  /** One per application to a subscription; never above max_redemptions (a check holds it). */
  times_redeemed: Generated<number>
  starts_at: NullableTimestamp
  ends_at: NullableTimestamp
  active: Generated<boolean>
  created_at: Timestamp
  updated_at: Timestamp
}
