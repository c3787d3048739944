import { sql, type RawBuilder } from 'kysely'
import type { Executor, SubscriptionRow } from '../../db/database.ts'
import { billingStoreClocks } from '../stores/index.ts'
import { RENEWAL_FAILED } from './billing-issues.ts'
import type { ShippingAddressValue } from './subscriptions.tables.ts'

/**
 * The reads billing makes of subscriptions and subscribers: billing owns charges, this module owns
 * the rows they are charged for.
 */

export interface DueFilter {
  storeId?: string | undefined
  id?: string
}

export interface FairDueOptions {
  /** Renewals each store may give at most (an expression over `st.id` and `st.gateway`): its platform budget, a cap. */
  perStore: RawBuilder<number>
  /** Only stores whose id sorts after this one (the round-robin's cursor), or at or before it (the wrap). */
  after?: string | undefined
  upTo?: string | undefined
  /** Stores this claimer has enough of in hand already. */
  exceptStores?: readonly string[] | undefined
}

/**
 * The claim across stores (CONTRACT section 19): stores in id order from the caller's cursor, each
 * giving its oldest due renewals up to its own allowance, until `limit` is reached. A store with
 * nothing left of its platform budget gives none and costs no read of its subscriptions; a store
 * with a backlog gives no more than its allowance, so every other store's renewals go on at once.
 * Answers the rows locked (SKIP LOCKED) in store order.
 */
export async function lockDueFairly(trx: Executor, now: Date, limit: number, options: FairDueOptions): Promise<SubscriptionRow[]> {
  const except = options.exceptStores?.length ? sql`AND st.id <> ALL(${[...options.exceptStores]}::text[])` : sql``
  const after = options.after === undefined ? sql`` : sql`AND st.id > ${options.after}`
  const upTo = options.upTo === undefined ? sql`` : sql`AND st.id <= ${options.upTo}`
  const rows = await sql<SubscriptionRow>`
    SELECT s.* FROM (
      SELECT st.id, coalesce(st.test_clock_now, ${now}) AS clock_now, ${options.perStore} AS allowance
        FROM stores st
       WHERE st.billing_stopped_at IS NULL AND st.billing_enabled ${after} ${upTo} ${except}
    ) st
    CROSS JOIN LATERAL (
      SELECT s.* FROM subscriptions s
       WHERE s.store_id = st.id
         AND s.status IN ('active', 'past_due') AND s.pending_charge_id IS NULL AND NOT s.cancel_at_period_end AND s.billing_issue IS NULL
         AND s.next_charge_at <= st.clock_now
         AND ${NOT_BEHIND_PREPAID_CYCLES}
       ORDER BY s.next_charge_at
       LIMIT st.allowance
       FOR UPDATE SKIP LOCKED
    ) s
    WHERE st.allowance > 0
    ORDER BY st.id
    LIMIT ${limit}`.execute(trx)
  return rows.rows
}

/**
 * Whether any store that bills has a renewal due: one probe of the due index (real time), and of the
 * few stores on a test clock ahead of it. An idle claimer asks this instead of walking every store.
 */
export async function anyRenewalDue(db: Executor, now: Date): Promise<boolean> {
  const due = sql<boolean>`s.status IN ('active', 'past_due') AND s.pending_charge_id IS NULL AND NOT s.cancel_at_period_end AND s.billing_issue IS NULL`
  const { rows } = await sql<{ due: boolean }>`
    SELECT EXISTS (SELECT 1 FROM subscriptions s JOIN stores st ON st.id = s.store_id
                    WHERE ${due} AND s.next_charge_at <= ${now} AND st.billing_stopped_at IS NULL AND st.billing_enabled)
        OR EXISTS (SELECT 1 FROM stores st
                    WHERE st.test_clock_now > ${now} AND st.billing_stopped_at IS NULL AND st.billing_enabled
                      AND EXISTS (SELECT 1 FROM subscriptions s WHERE s.store_id = st.id AND ${due} AND s.next_charge_at <= st.test_clock_now)) AS due`.execute(db)
  return rows[0]?.due === true
}

// A prepaid block whose later cycles have not begun yet (due work `prepaid_cycle`, due before this
// renewal) renews after them: charging first would move the period past those cycles.
const NOT_BEHIND_PREPAID_CYCLES = sql<boolean>`NOT (s.prepaid_cycles_total IS NOT NULL AND s.dunning_attempts = 0 AND s.stock_attempts = 0 AND s.period_index >= 0
                             AND s.current_period_end IS NOT NULL AND s.current_period_end < s.next_charge_at)`

/**
 * Locks (SKIP LOCKED) up to `limit` subscriptions whose renewal is due on their store's clock and
 * that nothing holds back: no charge waiting, no cancellation at period end, no billing issue, and
 * a store whose billing is not stopped (its app uninstalled: never even tried).
 */
export function lockDueForRenewal(trx: Executor, now: Date, limit: number, filter: DueFilter = {}): Promise<SubscriptionRow[]> {
  let query = trx
    .selectFrom('subscriptions as s')
    .innerJoin(billingStoreClocks(trx, now).as('st'), 'st.id', 's.store_id')
    .selectAll('s')
    .where('s.status', 'in', ['active', 'past_due'])
    .where('s.pending_charge_id', 'is', null)
    .where('s.cancel_at_period_end', '=', false)
    .where('s.billing_issue', 'is', null)
    .whereRef('s.next_charge_at', '<=', 'st.clock_now')
    .where(NOT_BEHIND_PREPAID_CYCLES)
  if (filter.storeId) query = query.where('s.store_id', '=', filter.storeId)
  if (filter.id) query = query.where('s.id', '=', filter.id)
  return query.orderBy('s.next_charge_at').limit(limit).forUpdate('s').skipLocked().execute()
}

/** Locks the subscriptions (in id order, so two settlers never deadlock), whatever their store. */
export function lockSubscriptionsByIds(trx: Executor, ids: readonly string[]): Promise<SubscriptionRow[]> {
  if (ids.length === 0) return Promise.resolve([])
  return trx.selectFrom('subscriptions').selectAll().where('id', 'in', [...ids]).orderBy('id').forUpdate().execute()
}

/** What a renewal's platform order needs from the subscription and its subscriber. */
export interface RenewalOrderDetails {
  productId: string
  quantity: number
  shippingAddress: ShippingAddressValue | null
  billingAddress: ShippingAddressValue | null
  email: string
  platformCustomerId: string | null
  platformVariantId: string | null
  /** The shipping rate its checkout paid, null when it named none. */
  keptShippingAmount: number | null
}

export async function renewalOrderDetails(db: Executor, subscriptionId: string): Promise<RenewalOrderDetails> {
  const row = await db
    .selectFrom('subscriptions as s')
    .innerJoin('subscribers as c', 'c.id', 's.subscriber_id')
    .select(['s.product_id', 's.quantity', 's.shipping_address', 's.billing_address', 's.platform_customer_id', 's.platform_variant_id', 's.shipping_amount', 'c.email'])
    .where('s.id', '=', subscriptionId)
    .executeTakeFirstOrThrow()
  return {
    productId: row.product_id,
    quantity: row.quantity,
    shippingAddress: row.shipping_address ?? null,
    billingAddress: row.billing_address ?? null,
    email: row.email,
    platformCustomerId: row.platform_customer_id,
    platformVariantId: row.platform_variant_id,
    keptShippingAmount: row.shipping_amount === null ? null : Number(row.shipping_amount),
  }
}

/** Subscriptions whose renewal was set aside on their own data and waits for a person. */
export async function countRenewalsSetAside(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('subscriptions')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where(sql<boolean>`billing_issue->>'code' = ${RENEWAL_FAILED}`)
    .executeTakeFirstOrThrow()
  return Number(row.n)
}
