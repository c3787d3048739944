import type { Insertable } from 'kysely'
import type { Executor, OnetimeRow } from '../../db/database.ts'
import type { OnetimesTable } from './onetimes.tables.ts'

/** The onetimes table: add-ons waiting for (or paid by) a subscription's next renewal. */

/** The add-ons waiting for each subscription's next charge, oldest first. */
export async function pendingAddOns(db: Executor, subscriptionIds: readonly string[]): Promise<Map<string, OnetimeRow[]>> {
  const bySubscription = new Map<string, OnetimeRow[]>()
  if (subscriptionIds.length === 0) return bySubscription
  const rows = await db.selectFrom('onetimes').selectAll().where('subscription_id', 'in', [...new Set(subscriptionIds)]).where('status', '=', 'pending').orderBy('id').execute()
  for (const row of rows) bySubscription.set(row.subscription_id, [...(bySubscription.get(row.subscription_id) ?? []), row])
  return bySubscription
}

/** The add-ons a succeeded charge paid, in the settling transaction; only ones still pending move. */
export async function markAddOnsCharged(trx: Executor, charges: readonly { chargeId: string; onetimeIds: readonly string[]; at: Date }[]): Promise<void> {
  for (const { chargeId, onetimeIds, at } of charges) {
    if (onetimeIds.length === 0) continue
    await trx.updateTable('onetimes').set({ status: 'charged', charge_id: chargeId, updated_at: at }).where('id', 'in', [...onetimeIds]).where('status', '=', 'pending').execute()
  }
}

export function insertOnetime(trx: Executor, row: Insertable<OnetimesTable>): Promise<OnetimeRow> {
  return trx.insertInto('onetimes').values(row).returningAll().executeTakeFirstOrThrow()
}

export function listOnetimes(db: Executor, storeId: string, subscriptionId: string, filter: { limit: number; afterId?: string | undefined; status?: OnetimeRow['status'] | undefined }): Promise<OnetimeRow[]> {
  let select = db.selectFrom('onetimes').selectAll().where('store_id', '=', storeId).where('subscription_id', '=', subscriptionId)
  if (filter.status !== undefined) select = select.where('status', '=', filter.status)
  if (filter.afterId) select = select.where('id', '<', filter.afterId)
  return select.orderBy('id', 'desc').limit(filter.limit + 1).execute()
}

export function lockOnetime(trx: Executor, subscriptionId: string, id: string): Promise<OnetimeRow | undefined> {
  return trx.selectFrom('onetimes').selectAll().where('id', '=', id).where('subscription_id', '=', subscriptionId).forUpdate().executeTakeFirst()
}

export function markRemoved(trx: Executor, id: string, at: Date): Promise<OnetimeRow> {
  return trx.updateTable('onetimes').set({ status: 'removed', updated_at: at }).where('id', '=', id).returningAll().executeTakeFirstOrThrow()
}
