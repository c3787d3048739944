import type { Executor, SubscriptionRow } from '../../db/database.ts'

/**
 * The subscriptions of a store that may renew before `before` (the expected-revenue forecast,
 * module analytics): active ones whose next renewal (or dunning retry) is due before it, paused ones
 * resuming before it, pending ones starting before it. Nothing set to cancel at its period's end, and
 * nothing held for an admin (a billing issue): those renew no more unless someone acts. A page of
 * `limit` in id order after `afterId`, so a large store is read a page at a time.
 */
export function subscriptionsRenewingBefore(db: Executor, storeId: string, before: Date, page: { afterId?: string | undefined; limit: number }): Promise<SubscriptionRow[]> {
  let query = db
    .selectFrom('subscriptions')
    .selectAll()
    .where('store_id', '=', storeId)
    .where('cancel_at_period_end', '=', false)
    .where('billing_issue', 'is', null)
    .where((eb) =>
      eb.or([
        eb.and([eb('status', '=', 'active'), eb('next_charge_at', '<', before)]),
        eb.and([eb('status', '=', 'paused'), eb('resume_at', '<', before)]),
        eb.and([eb('status', '=', 'pending'), eb('start_at', '<', before)]),
      ]),
    )
  if (page.afterId) query = query.where('id', '>', page.afterId)
  return query.orderBy('id').limit(page.limit).execute()
}
