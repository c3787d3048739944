import { sql, type Updateable } from 'kysely'
import type { BillingIssue, Executor, SubscriptionRow, SubscriptionsTable } from '../../db/database.ts'
import type { EventType } from '../events/index.ts'
import { RENEWAL_FAILED } from './billing-issues.ts'

/**
 * The batched write path for subscriptions: the renewal engine moves hundreds of subscriptions per
 * transaction, and one UPDATE per row would dominate its cost. Every change other modules make to a
 * subscription row goes through here (see subscription-writes.ts, which records their events).
 */
export interface SubscriptionChange {
  id: string
  set: Updateable<SubscriptionsTable>
  /** When it happened on the store's clock: `updated_at` and the events' time. */
  at: Date
  storeId: string
  storeHash: string
  /** Events in order; each carries the subscription as it is after the change. */
  events?: readonly EventType[]
}

// The SQL type of each column a batched change may set, for the typed VALUES list.
const COLUMN_TYPES: Partial<Record<keyof SubscriptionsTable, string>> = {
  status: 'text', pending_charge_id: 'text', latest_charge_id: 'text', period_index: 'integer', current_period_start: 'timestamptz',
  current_period_end: 'timestamptz', next_charge_at: 'timestamptz', prepaid_cycles_remaining: 'integer', dunning_attempts: 'integer',
  dunning_started_at: 'timestamptz', unpaid_period_start: 'timestamptz', past_due_at: 'timestamptz', reminded_for: 'timestamptz',
  skip_next: 'boolean', billing_issue: 'jsonb', discount_id: 'text', discount: 'jsonb', discount_cycles_remaining: 'integer',
  stock_attempts: 'integer', out_of_stock_since: 'timestamptz', skip_reason: 'text',
  amount: 'integer', scheduled_amount: 'integer', scheduled_amount_from: 'timestamptz',
}

function toParam(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString()
  if (value !== null && typeof value === 'object') return JSON.stringify(value)
  return value
}

/** Applies each change, one UPDATE per shape of change; the caller holds the rows' locks. Answers the rows afterwards, by id. */
export async function updateSubscriptionsInBatch(trx: Executor, changes: readonly SubscriptionChange[]): Promise<Map<string, SubscriptionRow>> {
  const after = new Map<string, SubscriptionRow>()
  const groups = new Map<string, SubscriptionChange[]>()
  for (const change of changes) {
    const columns = Object.keys(change.set).sort()
    for (const column of columns) {
      if (!(column in COLUMN_TYPES)) throw new Error(`a batched subscription change cannot set ${column}`)
    }
    const key = columns.join(',')
    groups.set(key, [...(groups.get(key) ?? []), change])
  }
  for (const [key, group] of groups) {
    const columns = key === '' ? [] : key.split(',')
    const rows = group.map((change) => {
      const values = change.set as Record<string, unknown>
      return sql`(${sql.join([sql`${change.id}`, sql`${change.at.toISOString()}`, ...columns.map((column) => sql`${toParam(values[column])}`)])})`
    })
    const assignments = columns.map((column) => sql`${sql.ref(column)} = ${sql.raw(`v.${column}::${COLUMN_TYPES[column as keyof SubscriptionsTable]}`)}`)
    const { rows: updated } = await sql<SubscriptionRow>`
      UPDATE subscriptions AS s SET ${sql.join([...assignments, sql`updated_at = v.at::timestamptz`, sql`version = s.version + 1`])}
        FROM (VALUES ${sql.join(rows)}) AS v(${sql.join([sql.ref('id'), sql.ref('at'), ...columns.map((column) => sql.ref(column))])})
       WHERE s.id = v.id
   RETURNING s.*`.execute(trx)
    for (const row of updated) after.set(row.id, row)
  }
  return after
}

/**
 * Sets renewals aside: the subscriptions are not claimed for renewal again until the issue is
 * cleared (a change to the subscription clears `renewal_failed`; resolving the charge clears
 * `charge_requires_review`). A data failure never hides a charge waiting for review, and a review
 * flag is only set while the subscription still waits for that charge.
 */
export async function setBillingIssue(db: Executor, ids: readonly string[], issue: BillingIssue, options: { whilePendingCharge?: string } = {}): Promise<void> {
  if (ids.length === 0) return
  let update = db
    .updateTable('subscriptions')
    .set((eb) => ({ billing_issue: JSON.stringify(issue), version: eb('version', '+', 1) }))
    .where('id', 'in', [...ids])
  if (issue.code === RENEWAL_FAILED) update = update.where(sql<boolean>`(billing_issue IS NULL OR billing_issue->>'code' = ${RENEWAL_FAILED})`)
  if (options.whilePendingCharge !== undefined) update = update.where('pending_charge_id', '=', options.whilePendingCharge)
  await update.execute()
}
