import type { Json, NullableTimestamp, Timestamp } from '../../db/column-types.ts'

/** The tables this part of the service owns, as Kysely sees them (assembled into the database type in src/db/database.ts). */

export const PRICE_CHANGE_SCOPES = ['new_subscriptions', 'existing_too'] as const
export type PriceChangeScope = (typeof PRICE_CHANGE_SCOPES)[number]

export const PRICE_CHANGE_STATUSES = ['scheduling', 'completed'] as const
export type PriceChangeStatus = (typeof PRICE_CHANGE_STATUSES)[number]

/** One price change of a plan, and how far scheduling it on the plan's subscriptions has gone. */
export interface PriceChangesTable {
  id: string
  store_id: string
  plan_id: string
  amount: number
  /** The plan's price before the change. */
  previous_amount: number
  currency: string
  applies_to: PriceChangeScope
  notice_days: number
  status: PriceChangeStatus
  /** The subscriptions it reaches (not cancelled or expired) when it was asked for. */
  total: number
  /** Subscriptions given the new price (or whose different scheduled price it replaced). */
  scheduled: number
  /** Subscriptions that already paid, or were already moving to, the new price. */
  unchanged: number
  /** Subscriptions whose row could not be changed (logged); the others went on. */
  failed: number
  /** The keyset cursor: the last subscription id of the last page done. */
  after_subscription_id: string | null
  /** Who asked, as the events it causes name them. */
  actor: Json<Record<string, unknown>>
  created_at: Timestamp
  updated_at: Timestamp
  completed_at: NullableTimestamp
}
