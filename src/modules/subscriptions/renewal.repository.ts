import { sql } from 'kysely'
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
    // A prepaid block whose later cycles have not begun yet (due work `prepaid_cycle`, due before
    // this renewal) renews after them: charging first would move the period past those cycles.
    .where(sql<boolean>`NOT (s.prepaid_cycles_total IS NOT NULL AND s.dunning_attempts = 0 AND s.stock_attempts = 0 AND s.period_index >= 0
                             AND s.current_period_end IS NOT NULL AND s.current_period_end < s.next_charge_at)`)
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
