import type { Executor, SubscriptionRow } from '../../db/database.ts'

/**
 * The subscriptions a price change of a plan reaches (docs/contract.md, Price changes with notice):
 * every one on the plan that is not cancelled or expired. Read in pages by id, from the
 * (plan_id, id) index of migration 0033, so a plan with 100,000 subscriptions is gone through a page
 * per transaction.
 */

const ENDED = ['cancelled', 'expired'] as const

function onPlan(db: Executor, storeId: string, planId: string) {
  return db.selectFrom('subscriptions').where('plan_id', '=', planId).where('store_id', '=', storeId).where('status', 'not in', [...ENDED])
}

/** A page of them after `afterId`, in id order, locked for the caller's transaction. */
export function lockPlanSubscriptionsPage(trx: Executor, storeId: string, planId: string, page: { afterId: string | null; limit: number }): Promise<SubscriptionRow[]> {
  let query = onPlan(trx, storeId, planId).selectAll()
  if (page.afterId !== null) query = query.where('id', '>', page.afterId)
  return query.orderBy('id').limit(page.limit).forUpdate().execute()
}

/** The ids of the same page, without locks: a page changed one row at a time goes by them. */
export async function planSubscriptionIdsPage(db: Executor, storeId: string, planId: string, page: { afterId: string | null; limit: number }): Promise<string[]> {
  let query = onPlan(db, storeId, planId).select('id')
  if (page.afterId !== null) query = query.where('id', '>', page.afterId)
  return (await query.orderBy('id').limit(page.limit).execute()).map((row) => row.id)
}

/** How many there are, and the largest quantity among them (a new price x it must stay within one renewal's limit). */
export async function planSubscriptionFigures(db: Executor, storeId: string, planId: string): Promise<{ count: number; maxQuantity: number }> {
  const row = await onPlan(db, storeId, planId)
    .select((eb) => [eb.fn.countAll<string>().as('n'), eb.fn.max('quantity').as('max_quantity')])
    .executeTakeFirstOrThrow()
  // count() is a bigint: the drivers answer it as text.
  return { count: Number(row.n), maxQuantity: Number(row.max_quantity ?? 0) }
}
