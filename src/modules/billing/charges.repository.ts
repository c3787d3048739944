import type { ChargeRow, Executor } from '../../db/database.ts'

/** One subscription's charge attempts, newest first (charge ids sort by creation time). */
export function listChargesOfSubscription(
  db: Executor,
  storeId: string,
  subscriptionId: string,
  filter: { limit: number; afterId?: string | undefined },
): Promise<ChargeRow[]> {
  let query = db.selectFrom('charges').selectAll().where('store_id', '=', storeId).where('subscription_id', '=', subscriptionId)
  if (filter.afterId) query = query.where('id', '<', filter.afterId)
  return query.orderBy('id', 'desc').limit(filter.limit + 1).execute()
}
