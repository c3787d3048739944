import { sql, type ExpressionBuilder, type Insertable, type SelectQueryBuilder, type Updateable } from 'kysely'
import type { ChangeRequestsTable, CheckoutsTable, Database, Executor, SubscriberRow, SubscribersTable, SubscriptionRow, SubscriptionsTable } from '../../db/database.ts'
import { escapeLike, type SearchTerms } from './subscription-search.ts'

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
  /** A search (`q`): what subscription-search.ts makes of the text. */
  search?: SearchTerms | undefined
  /** Renewing in [from, to): a bulk operation's "every renewal due on a holiday". */
  nextChargeFrom?: Date | undefined
  nextChargeTo?: Date | undefined
}

/** The one subscription list query: the store's rows the filter selects, newest first, one more than a page. */
export function listSubscriptions(db: Executor, storeId: string, filter: SubscriptionFilter): Promise<SubscriptionRow[]> {
  return pageOf(db.selectFrom('subscriptions as s').selectAll('s'), storeId, filter).execute()
}

/**
 * listSubscriptions for each of several subscribers of one store, in one statement: each subscriber's
 * page is the same query, run for them as a LATERAL subquery (the same index-ordered LIMIT), so pages
 * asked for at the same moment share one round trip. A subscriber who owns nothing here gets [].
 */
export async function listSubscriptionsOfEach(db: Executor, storeId: string, subscriberIds: readonly string[], filter: Omit<SubscriptionFilter, 'subscriberId'>): Promise<Map<string, SubscriptionRow[]>> {
  const pages = new Map(subscriberIds.map((id) => [id, [] as SubscriptionRow[]]))
  if (pages.size === 0) return pages
  const rows = await db
    .selectFrom('subscribers as owner')
    .where('owner.store_id', '=', storeId)
    .where('owner.id', 'in', [...pages.keys()])
    .crossJoinLateral((eb) => pageOf(eb.selectFrom('subscriptions as s').selectAll('s').whereRef('s.subscriber_id', '=', 'owner.id'), storeId, filter).as('page'))
    .selectAll('page')
    // Newest first within each subscriber, as listSubscriptions answers.
    .orderBy('page.id', 'desc')
    .execute()
  for (const row of rows as SubscriptionRow[]) pages.get(row.subscriber_id)!.push(row)
  return pages
}

/** The list's conditions, order and size, on a query of `subscriptions as s`. */
function pageOf<QB extends SelectQueryBuilder<any, any, any>>(query: QB, storeId: string, filter: SubscriptionFilter): QB {
  let page = query.where('s.store_id', '=', storeId)
  if (filter.status) page = page.where('s.status', '=', filter.status)
  if (filter.planId) page = page.where('s.plan_id', '=', filter.planId)
  // Any given subscriber id filters, the empty one too (it owns nothing): never "everyone's".
  if (filter.subscriberId !== undefined) page = page.where('s.subscriber_id', '=', filter.subscriberId)
  if (filter.email) {
    const email = filter.email.toLowerCase()
    page = page.where('s.subscriber_id', 'in', (eb: ExpressionBuilder<Database, 'subscribers'>) =>
      eb.selectFrom('subscribers').select('id').where('store_id', '=', storeId).where('email', '=', email),
    )
  }
  if (filter.search) page = page.where('s.id', 'in', searchMatches(storeId, filter.search))
  if (filter.nextChargeFrom) page = page.where('s.next_charge_at', '>=', filter.nextChargeFrom)
  if (filter.nextChargeTo) page = page.where('s.next_charge_at', '<', filter.nextChargeTo)
  if (filter.afterId) page = page.where('s.id', '<', filter.afterId)
  return page.orderBy('s.id', 'desc').limit(filter.limit + 1) as QB
}

/**
 * The ids of the store's subscriptions a search finds, as one union of index reads (migration 0028; the
 * trigram indexes are led by the store since 0036, so they yield only this store's matches):
 * those of subscribers whose email or name holds the text (trigram indexes), whose id it is; those
 * started by the order it names, or renewed by it (a charge's order); those whose id starts with it.
 * Every branch is the store's own rows only.
 */
function searchMatches(storeId: string, search: SearchTerms) {
  return (eb: ExpressionBuilder<Database, 'subscriptions'>) => {
    let matches = eb
      .selectFrom('subscriptions as bySubscriber')
      .select('bySubscriber.id')
      .where('bySubscriber.store_id', '=', storeId)
      .where('bySubscriber.subscriber_id', 'in', (inner) =>
        inner
          .selectFrom('subscribers as who')
          .select('who.id')
          .where('who.store_id', '=', storeId)
          .where((w) => {
            const found = [w('who.email', 'ilike', search.pattern), w('who.name', 'ilike', search.pattern)]
            if (search.subscriberId) found.push(w('who.id', '=', search.subscriberId))
            return w.or(found)
          }),
      )
      .union((u) => u.selectFrom('subscriptions as byOrder').select('byOrder.id').where('byOrder.store_id', '=', storeId).where('byOrder.platform_order_id', 'in', search.orderIds))
      .union((u) =>
        u.selectFrom('charges as byRenewal').select('byRenewal.subscription_id as id').where('byRenewal.store_id', '=', storeId).where('byRenewal.platform_order_id', 'in', search.orderIds),
      )
    const prefix = search.subscriptionIdPrefix
    if (prefix) {
      // A range on the (store_id, id) index whatever the collation (ids hold only 0-9 and A-Z after
      // the prefix), and LIKE for exactness.
      matches = matches.union((u) =>
        u
          .selectFrom('subscriptions as byId')
          .select('byId.id')
          .where('byId.store_id', '=', storeId)
          .where('byId.id', '>=', prefix)
          .where('byId.id', '<=', `${prefix}${'Z'.repeat(32)}`)
          .where('byId.id', 'like', `${escapeLike(prefix)}%`),
      )
    }
    return matches
  }
}

/** The store's subscribers of these ids, by id (a page of subscriptions names each one's subscriber). */
export async function findSubscribersByIds(db: Executor, storeId: string, ids: readonly string[]): Promise<Map<string, SubscriberRow>> {
  if (ids.length === 0) return new Map()
  const rows = await db.selectFrom('subscribers').selectAll().where('store_id', '=', storeId).where('id', 'in', [...new Set(ids)]).execute()
  return new Map(rows.map((row) => [row.id, row]))
}

export type SubscriberWithCount = SubscriberRow & { subscription_count: number }

/**
 * A page of the store's subscribers, newest first (one more than a page), each with how many
 * subscriptions they have: `email` exactly, `search` as the subscription list's search finds its
 * subscribers (part of the email or name through the trigram indexes of migration 0028, or the id).
 */
export async function listSubscribersWithCounts(
  db: Executor,
  storeId: string,
  filter: { limit: number; afterId?: string | undefined; email?: string | undefined; search?: SearchTerms | undefined },
): Promise<SubscriberWithCount[]> {
  let query = db
    .selectFrom('subscribers as who')
    .selectAll('who')
    .select((eb) =>
      eb.selectFrom('subscriptions as s').select(eb.fn.countAll<string>().as('n')).where('s.store_id', '=', storeId).whereRef('s.subscriber_id', '=', 'who.id').as('subscription_count'),
    )
    .where('who.store_id', '=', storeId)
  if (filter.email) query = query.where('who.email', '=', filter.email.toLowerCase())
  const search = filter.search
  if (search) {
    query = query.where((w) => {
      const found = [w('who.email', 'ilike', search.pattern), w('who.name', 'ilike', search.pattern)]
      if (search.subscriberId) found.push(w('who.id', '=', search.subscriberId))
      return w.or(found)
    })
  }
  if (filter.afterId) query = query.where('who.id', '<', filter.afterId)
  const rows = await query.orderBy('who.id', 'desc').limit(filter.limit + 1).execute()
  // count() is a bigint: the drivers answer it as text.
  return rows.map((row) => ({ ...row, subscription_count: Number(row.subscription_count ?? 0) }))
}

/** How many distinct addresses and instruments a subscriber page lists at most (the most recently used first). */
export const SUBSCRIBER_PROFILE_LIMIT = 50

/** The shipping addresses a subscriber's subscriptions ship to, each with the subscriptions that use it, the most recent first. */
export function shippingAddressesOfSubscriber(db: Executor, storeId: string, subscriberId: string) {
  return db
    .selectFrom('subscriptions')
    .select((eb) => ['shipping_address', sql<string[]>`json_agg(${eb.ref('id')} ORDER BY ${eb.ref('id')} DESC)`.as('subscription_ids')])
    .where('store_id', '=', storeId)
    .where('subscriber_id', '=', subscriberId)
    .where('shipping_address', 'is not', null)
    .groupBy('shipping_address')
    .orderBy(sql`max(id)`, 'desc')
    .limit(SUBSCRIBER_PROFILE_LIMIT)
    .execute()
}

/** The payment instruments a subscriber's subscriptions are paid with, as stored (brand, last 4, expiry: never more), the most recent first. */
export function instrumentsOfSubscriber(db: Executor, storeId: string, subscriberId: string) {
  return db
    .selectFrom('subscriptions')
    .select((eb) => [
      'payment_instrument_id',
      'payment_instrument_brand',
      'payment_instrument_last4',
      'payment_instrument_expiry_month',
      'payment_instrument_expiry_year',
      sql<string[]>`json_agg(${eb.ref('id')} ORDER BY ${eb.ref('id')} DESC)`.as('subscription_ids'),
    ])
    .where('store_id', '=', storeId)
    .where('subscriber_id', '=', subscriberId)
    .groupBy(['payment_instrument_id', 'payment_instrument_brand', 'payment_instrument_last4', 'payment_instrument_expiry_month', 'payment_instrument_expiry_year'])
    .orderBy(sql`max(id)`, 'desc')
    .limit(SUBSCRIBER_PROFILE_LIMIT)
    .execute()
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

/** The emails of these subscribers of a store, by id: how an event names a subscriber who acted. */
export async function subscriberEmails(db: Executor, storeId: string, ids: readonly string[]): Promise<Map<string, string>> {
  if (ids.length === 0) return new Map()
  const rows = await db.selectFrom('subscribers').select(['id', 'email']).where('store_id', '=', storeId).where('id', 'in', [...ids]).execute()
  return new Map(rows.map((row) => [row.id, row.email]))
}

export async function findSubscriberIdByEmail(db: Executor, storeId: string, email: string): Promise<string | undefined> {
  const row = await db.selectFrom('subscribers').select('id').where('store_id', '=', storeId).where('email', '=', email).executeTakeFirst()
  return row?.id
}

export function updateSubscriber(db: Executor, storeId: string, id: string, changes: Updateable<SubscribersTable>): Promise<SubscriberRow | undefined> {
  return db.updateTable('subscribers').set(changes).where('id', '=', id).where('store_id', '=', storeId).returningAll().executeTakeFirst()
}

/**
 * The checkout's subscriber, by who they are on the platform first (docs/contract.md, Subscriber
 * identity): the store's subscriber of that platform customer, else the one of that email, else a new
 * one; the first checkout creates it, later ones refresh the name and address they give. An email
 * that is another platform customer's subscriber is answered `{ conflict }` and changes nothing: an
 * email typed at a checkout is no proof of who pays (it would re-point their renewals to another card).
 */
export async function findOrCreateSubscriber(trx: Executor, row: Insertable<SubscribersTable> & { store_id: string; email: string }): Promise<SubscriberRow | { conflict: SubscriberRow }> {
  const customerId = row.platform_customer_id ?? null
  const refresh = (existing: SubscriberRow, setCustomer: boolean) =>
    trx
      .updateTable('subscribers')
      .set((eb) => ({
        name: eb.fn.coalesce(eb.val(row.name ?? null), eb.ref('name')),
        shipping_address: eb.fn.coalesce(eb.val((row.shipping_address as string | null | undefined) ?? null), eb.ref('shipping_address')),
        ...(setCustomer ? { platform_customer_id: customerId } : {}),
        updated_at: row.updated_at,
      }))
      .where('id', '=', existing.id)
      .returningAll()
      .executeTakeFirstOrThrow()
  if (customerId !== null) {
    const ofCustomer = await trx.selectFrom('subscribers').selectAll().where('store_id', '=', row.store_id).where('platform_customer_id', '=', customerId).orderBy('created_at').orderBy('id').limit(1).forUpdate().executeTakeFirst()
    if (ofCustomer) return refresh(ofCustomer, false)
  }
  const inserted = await trx.insertInto('subscribers').values(row).onConflict((oc) => oc.columns(['store_id', 'email']).doNothing()).returningAll().executeTakeFirst()
  if (inserted) return inserted
  const ofEmail = await trx.selectFrom('subscribers').selectAll().where('store_id', '=', row.store_id).where('email', '=', row.email).forUpdate().executeTakeFirstOrThrow()
  if (customerId !== null && ofEmail.platform_customer_id !== null && ofEmail.platform_customer_id !== customerId) return { conflict: ofEmail }
  // A checkout naming no customer (a gift, an API checkout) for a subscriber who is a platform customer
  // adds its subscription, but does not rewrite who they are or where they live.
  if (customerId === null && ofEmail.platform_customer_id !== null) return ofEmail
  return refresh(ofEmail, customerId !== null && ofEmail.platform_customer_id === null)
}

/** A checkout's order, claimed once per store: false when it was ingested before (the caller replays it). */
export async function claimCheckout(trx: Executor, row: Insertable<CheckoutsTable>): Promise<boolean> {
  const claimed = await trx
    .insertInto('checkouts')
    .values(row)
    .onConflict((oc) => oc.columns(['store_id', 'platform_order_id']).doNothing())
    .returning('platform_order_id')
    .executeTakeFirst()
  return claimed !== undefined
}

export function findCheckout(db: Executor, storeId: string, platformOrderId: string) {
  return db.selectFrom('checkouts').selectAll().where('store_id', '=', storeId).where('platform_order_id', '=', platformOrderId).executeTakeFirst()
}

export function insertChangeRequest(trx: Executor, row: Insertable<ChangeRequestsTable>) {
  return trx.insertInto('change_requests').values(row).returningAll().executeTakeFirstOrThrow()
}

export function recordDecision(trx: Executor, id: string, decision: Updateable<ChangeRequestsTable>) {
  return trx.updateTable('change_requests').set(decision).where('id', '=', id).returningAll().executeTakeFirstOrThrow()
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
