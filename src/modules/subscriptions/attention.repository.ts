import { sql } from 'kysely'
import type { Executor, SubscriptionRow } from '../../db/database.ts'

/** A subscription that needs a person, with who subscribes. */
export type AttentionRow = SubscriptionRow & { subscriber_email: string; subscriber_name: string | null }

function withSubscriber(db: Executor, storeId: string) {
  return db
    .selectFrom('subscriptions as s')
    .innerJoin('subscribers as p', 'p.id', 's.subscriber_id')
    .selectAll('s')
    .select(['p.email as subscriber_email', 'p.name as subscriber_name'])
    .where('s.store_id', '=', storeId)
}

/**
 * Since when the subscription has needed a person, by the precedence the attention list applies: the
 * billing issue's, else the first failed attempt of the unpaid period (in dunning and past due alike).
 */
const ATTENTION_SINCE = sql`CASE WHEN s.billing_issue IS NOT NULL THEN (s.billing_issue->>'since')::timestamptz
                                 ELSE coalesce(s.dunning_started_at, s.past_due_at, s.updated_at) END`

/**
 * The store's subscriptions that need a person now, from their current state (docs/contract.md,
 * Payment recovery): in dunning (active, a failed renewal charge with a retry to come: nothing in
 * flight, not waiting for stock), past due, or with a billing issue while still live: the `limit`
 * that have waited longest (ATTENTION_SINCE), oldest first. A cancelled subscription with old failed
 * charges is not among them. The conditions imply the partial index `subscriptions_attention_idx`
 * (migration 0026).
 */
export function listSubscriptionsNeedingAttention(db: Executor, storeId: string, limit: number): Promise<AttentionRow[]> {
  return withSubscriber(db, storeId)
    .where((eb) =>
      eb.or([
        eb.and([eb('s.status', '=', 'active'), eb('s.dunning_attempts', '>', 0), eb('s.stock_attempts', '=', 0), eb('s.pending_charge_id', 'is', null)]),
        eb('s.status', '=', 'past_due'),
        eb.and([eb('s.billing_issue', 'is not', null), eb('s.status', 'not in', ['cancelled', 'expired'])]),
      ]),
    )
    .orderBy(ATTENTION_SINCE)
    .orderBy('s.id')
    .limit(limit)
    .execute() as Promise<AttentionRow[]>
}

/** Subscriptions of the store by id, with who subscribes (those whose charge waits for review, whatever their state). */
export function findSubscriptionsWithSubscriber(db: Executor, storeId: string, ids: readonly string[]): Promise<AttentionRow[]> {
  if (ids.length === 0) return Promise.resolve([])
  return withSubscriber(db, storeId).where('s.id', 'in', [...ids]).execute() as Promise<AttentionRow[]>
}
