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

/** Charges and refunds set aside for a person: what the set-aside gauge reports. */
export async function countBillingSetAside(db: Executor): Promise<{ charge_review: number; refund_review: number }> {
  const [charges, refunds] = await Promise.all([
    db.selectFrom('charges').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'requires_review').executeTakeFirstOrThrow(),
    db.selectFrom('refunds').select((eb) => eb.fn.countAll<number>().as('n')).where('status', '=', 'pending').where('review', 'is not', null).executeTakeFirstOrThrow(),
  ])
  return { charge_review: Number(charges.n), refund_review: Number(refunds.n) }
}

/** A page of the store's charge attempts, newest first. */
export function listCharges(
  db: Executor,
  storeId: string,
  filter: { limit: number; afterId?: string | undefined; subscriptionId?: string | undefined; subscriberId?: string | undefined; status?: ChargeRow['status'] | undefined },
): Promise<ChargeRow[]> {
  let query = db.selectFrom('charges').selectAll().where('store_id', '=', storeId)
  if (filter.subscriptionId) query = query.where('subscription_id', '=', filter.subscriptionId)
  const subscriberId = filter.subscriberId
  // One subscriber's: their subscriptions' charges (charges_subscription_idx for each).
  if (subscriberId) query = query.where('subscription_id', 'in', (eb) => eb.selectFrom('subscriptions').select('id').where('store_id', '=', storeId).where('subscriber_id', '=', subscriberId))
  if (filter.status) query = query.where('status', '=', filter.status)
  if (filter.afterId) query = query.where('id', '<', filter.afterId)
  return query.orderBy('id', 'desc').limit(filter.limit + 1).execute()
}

export function findCharge(db: Executor, storeId: string, id: string): Promise<ChargeRow | undefined> {
  return db.selectFrom('charges').selectAll().where('store_id', '=', storeId).where('id', '=', id).executeTakeFirst()
}

/**
 * The tax of the subscription's latest succeeded charge with anything taxable, and what it was taxed on:
 * its goods (subtotal less discount) and its shipping, which a store may tax too.
 */
export async function latestTaxBase(db: Executor, subscriptionId: string): Promise<{ base: number; tax: number } | undefined> {
  const row = await db
    .selectFrom('charges')
    .select(['subtotal', 'discount_amount', 'shipping_amount', 'tax_amount'])
    .where('subscription_id', '=', subscriptionId)
    .where('status', '=', 'succeeded')
    .whereRef('subtotal', '>', 'discount_amount')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst()
  return row ? { base: Number(row.subtotal) - Number(row.discount_amount) + Number(row.shipping_amount), tax: Number(row.tax_amount) } : undefined
}

/** `latestTaxBase` of each subscription at once (those with such a charge), for the expected-revenue forecast. */
export async function latestTaxBases(db: Executor, subscriptionIds: readonly string[]): Promise<Map<string, { base: number; tax: number }>> {
  const found = new Map<string, { base: number; tax: number }>()
  if (subscriptionIds.length === 0) return found
  const rows = await db
    .selectFrom('charges')
    .distinctOn('subscription_id')
    .select(['subscription_id', 'subtotal', 'discount_amount', 'shipping_amount', 'tax_amount'])
    .where('subscription_id', 'in', [...new Set(subscriptionIds)])
    .where('status', '=', 'succeeded')
    .whereRef('subtotal', '>', 'discount_amount')
    .orderBy('subscription_id')
    .orderBy('id', 'desc')
    .execute()
  for (const row of rows) found.set(row.subscription_id, { base: Number(row.subtotal) - Number(row.discount_amount) + Number(row.shipping_amount), tax: Number(row.tax_amount) })
  return found
}
