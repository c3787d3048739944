import type { Generated } from 'kysely'
import type { Json, NullableTimestamp, Timestamp } from '../../db/column-types.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

export type BulkAction = 'swap_plan' | 'change_price' | 'reschedule' | 'pause' | 'resume' | 'cancel' | 'apply_discount'

export interface BulkOperationsTable {
  id: string
  store_id: string
  action: BulkAction
  params: Json<Record<string, unknown>>
  /** The list filter that chose the targets (null when they were named by id). */
  filter: Json<Record<string, unknown> | null>
  status: 'running' | 'completed'
  total: number
  succeeded: Generated<number>
  failed: Generated<number>
  actor: Json<Record<string, unknown>>
  created_at: Timestamp
  updated_at: Timestamp
  finished_at: NullableTimestamp
}

export interface BulkOperationItemsTable {
  operation_id: string
  /** The operation's store (0037): the table is distributable by store beside the subscriptions. */
  store_id: string
  subscription_id: string
  status: 'pending' | 'succeeded' | 'failed'
  /** Its next renewal when the operation chose it: a reschedule moves that renewal only. */
  next_charge_at: NullableTimestamp
  /** Why it failed: the single action's problem code (`invalid_state`, `not_found`, ...). */
  code: string | null
  detail: string | null
  updated_at: Timestamp
}
