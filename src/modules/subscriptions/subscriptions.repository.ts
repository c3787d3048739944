import type { Insertable, Updateable } from 'kysely'
import type { ChangeRequestsTable, Executor, SubscriberRow, SubscribersTable, SubscriptionRow, SubscriptionsTable } from '../../db/database.ts'

export function findSubscription(db: Executor, storeId: string, id: string): Promise<SubscriptionRow | undefined> {
  return db.selectFrom('subscriptions').selectAll().where('id', '=', id).where('store_id', '=', storeId).executeTakeFirst()
}

/** Locks the row for the rest of the transaction: every change to one subscription is serialized here. */
export function lockSubscription(trx: Executor, storeId: string, id: string): Promise<SubscriptionRow | undefined> {
  return trx.selectFrom('subscriptions').selectAll().where('id', '=', id).where('store_id', '=', storeId).forUpdate().executeTakeFirst()
}

export function findSubscriptionsByIds(db: Executor, storeId: string, ids: string[]): Promise<SubscriptionRow[]> {
  if (ids.length === 0) return Promise.resolve([])
  return db.selectFrom('subscriptions').selectAll().where('store_id', '=', storeId).where('id', 'in', ids).execute()
}

export interface SubscriptionFilter {
  limit: number
  afterId?: string | undefined
  status?: string | undefined
  email?: string | undefined
  planId?: string | undefined
  subscriberId?: string | undefined
}

export function listSubscriptions(db: Executor, storeId: string, filter: SubscriptionFilter): Promise<SubscriptionRow[]> {
  let query = db.selectFrom('subscriptions as s').selectAll('s').where('s.store_id', '=', storeId)
  if (filter.status) query = query.where('s.status', '=', filter.status as SubscriptionRow['status'])
  if (filter.planId) query = query.where('s.plan_id', '=', filter.planId)
  // Any given subscriber id filters, the empty one too (it owns nothing): never "everyone's".
  if (filter.subscriberId !== undefined) query = query.where('s.subscriber_id', '=', filter.subscriberId)
  if (filter.email) {
    const email = filter.email.toLowerCase()
    query = query.where('s.subscriber_id', 'in', (eb) =>
      eb.selectFrom('subscribers').select('id').where('store_id', '=', storeId).where('email', '=', email),
    )
  }
  if (filter.afterId) query = query.where('s.id', '<', filter.afterId)
  return query.orderBy('s.id', 'desc').limit(filter.limit + 1).execute()
}

export function insertSubscriptions(trx: Executor, rows: Insertable<SubscriptionsTable>[]): Promise<SubscriptionRow[]> {
  return trx.insertInto('subscriptions').values(rows).returningAll().execute()
}

/** Applies a change and bumps the version; the caller holds the row lock. */
export function updateSubscription(trx: Executor, id: string, changes: Updateable<SubscriptionsTable>, now: Date): Promise<SubscriptionRow> {
  return trx
    .updateTable('subscriptions')
    .set((eb) => ({ ...changes, updated_at: now, version: eb('version', '+', 1) }))
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function findSubscriber(db: Executor, storeId: string, id: string): Promise<SubscriberRow | undefined> {
  return db.selectFrom('subscribers').selectAll().where('id', '=', id).where('store_id', '=', storeId).executeTakeFirst()
}

export async function findSubscriberIdByEmail(db: Executor, storeId: string, email: string): Promise<string | undefined> {
  const row = await db.selectFrom('subscribers').select('id').where('store_id', '=', storeId).where('email', '=', email).executeTakeFirst()
  return row?.id
}

export function updateSubscriber(db: Executor, storeId: string, id: string, changes: Updateable<SubscribersTable>): Promise<SubscriberRow | undefined> {
  return db.updateTable('subscribers').set(changes).where('id', '=', id).where('store_id', '=', storeId).returningAll().executeTakeFirst()
}

/** One subscriber per (store, email): the first checkout creates it, later ones refresh what they say. */
export function upsertSubscriber(trx: Executor, row: Insertable<SubscribersTable>): Promise<SubscriberRow> {
  return trx
    .insertInto('subscribers')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['store_id', 'email']).doUpdateSet((eb) => ({
        name: eb.fn.coalesce(eb.ref('excluded.name'), eb.ref('subscribers.name')),
        shipping_address: eb.fn.coalesce(eb.ref('excluded.shipping_address'), eb.ref('subscribers.shipping_address')),
        platform_customer_id: eb.fn.coalesce(eb.ref('excluded.platform_customer_id'), eb.ref('subscribers.platform_customer_id')),
        updated_at: eb.ref('excluded.updated_at'),
      })),
    )
    .returningAll()
    .executeTakeFirstOrThrow()
}

export function insertChangeRequest(trx: Executor, row: Insertable<ChangeRequestsTable>) {
  return trx.insertInto('change_requests').values(row).returningAll().executeTakeFirstOrThrow()
}

export function lockChangeRequest(trx: Executor, storeId: string, id: string) {
  return trx.selectFrom('change_requests').selectAll().where('id', '=', id).where('store_id', '=', storeId).forUpdate().executeTakeFirst()
}

/** With `subscriberId`, only a request on one of that subscriber's subscriptions is found. */
export function findChangeRequest(db: Executor, storeId: string, id: string, subscriberId?: string) {
  let query = db.selectFrom('change_requests as cr').selectAll('cr').where('cr.id', '=', id).where('cr.store_id', '=', storeId)
  if (subscriberId !== undefined) {
    query = query.where('cr.subscription_id', 'in', (eb) =>
      eb.selectFrom('subscriptions').select('id').where('store_id', '=', storeId).where('subscriber_id', '=', subscriberId),
    )
  }
  return query.executeTakeFirst()
}

export function listChangeRequests(
  db: Executor,
  storeId: string,
  filter: { limit: number; afterId?: string | undefined; status?: string | undefined; subscriptionId?: string | undefined; subscriberId?: string | undefined },
) {
  let query = db.selectFrom('change_requests as cr').selectAll('cr').where('cr.store_id', '=', storeId)
  if (filter.status) query = query.where('cr.status', '=', filter.status as 'pending')
  if (filter.subscriptionId) query = query.where('cr.subscription_id', '=', filter.subscriptionId)
  if (filter.subscriberId) {
    const subscriberId = filter.subscriberId
    query = query.where('cr.subscription_id', 'in', (eb) => eb.selectFrom('subscriptions').select('id').where('subscriber_id', '=', subscriberId))
  }
  if (filter.afterId) query = query.where('cr.id', '<', filter.afterId)
  return query.orderBy('cr.id', 'desc').limit(filter.limit + 1).execute()
}
