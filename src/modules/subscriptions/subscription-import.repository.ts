import type { Insertable } from 'kysely'
import type { Executor, SubscriberRow, SubscriptionRow } from '../../db/database.ts'
import type { ShippingAddressValue, SubscribersTable, SubscriptionsTable } from './subscriptions.tables.ts'

/**
 * The writes of an import (module imports), a batch of rows at a time: a handful of statements per
 * batch, not per row, so 100,000 rows take minutes, not hours.
 */

/**
 * The external ids among `ids` the store already has: those rows were imported before and are skipped.
 * An id that is one of the store's own subscription ids counts too: this store's export imported back
 * into it names subscriptions it already has.
 */
export async function existingExternalIds(db: Executor, storeId: string, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const rows = await db
    .selectFrom('subscriptions')
    .select(['id', 'external_id'])
    .where('store_id', '=', storeId)
    .where((eb) => eb.or([eb('external_id', 'in', [...ids]), eb('id', 'in', [...ids])]))
    .execute()
  const wanted = new Set(ids)
  return new Set(rows.flatMap((row) => [row.external_id, row.id].filter((id): id is string => id !== null && wanted.has(id))))
}

export interface WantedSubscriber {
  email: string
  name: string | null
  platformCustomerId: string | null
  shippingAddress: ShippingAddressValue | null
}

/**
 * The subscriber of each email, found or created, by the rule a checkout keeps
 * (findOrCreateSubscriber): the subscriber of the same platform customer first, else the one of that
 * email; an email whose subscriber is another platform customer's is a conflict (an import never
 * re-points someone to another customer's cards). Emails are lower case and distinct.
 */
export async function subscribersForImport(trx: Executor, storeId: string, wanted: readonly WantedSubscriber[], newId: () => string, now: Date): Promise<Map<string, SubscriberRow | { conflict: SubscriberRow }>> {
  const found = new Map<string, SubscriberRow | { conflict: SubscriberRow }>()
  if (wanted.length === 0) return found
  const customerIds = wanted.map((w) => w.platformCustomerId).filter((id): id is string => id !== null)
  const existing = await trx
    .selectFrom('subscribers')
    .selectAll()
    .where('store_id', '=', storeId)
    .where((eb) => eb.or([eb('email', 'in', wanted.map((w) => w.email)), ...(customerIds.length ? [eb('platform_customer_id', 'in', customerIds)] : [])]))
    .orderBy('created_at')
    .orderBy('id')
    .execute()
  const toInsert: Insertable<SubscribersTable>[] = []
  const toLink: { id: string; platformCustomerId: string }[] = []
  // A customer already being created in this batch under another email: that subscriber (one per customer, as a checkout keeps).
  const plannedEmailOfCustomer = new Map<string, string>()
  const aliases = new Map<string, string>()
  for (const w of wanted) {
    const ofCustomer = w.platformCustomerId === null ? undefined : existing.find((s) => s.platform_customer_id === w.platformCustomerId)
    if (ofCustomer) {
      found.set(w.email, ofCustomer)
      continue
    }
    const planned = w.platformCustomerId === null ? undefined : plannedEmailOfCustomer.get(w.platformCustomerId)
    if (planned !== undefined) {
      aliases.set(w.email, planned)
      continue
    }
    const ofEmail = existing.find((s) => s.email === w.email)
    if (ofEmail) {
      if (w.platformCustomerId !== null && ofEmail.platform_customer_id !== null && ofEmail.platform_customer_id !== w.platformCustomerId) found.set(w.email, { conflict: ofEmail })
      else {
        if (w.platformCustomerId !== null && ofEmail.platform_customer_id === null) toLink.push({ id: ofEmail.id, platformCustomerId: w.platformCustomerId })
        found.set(w.email, ofEmail)
      }
      continue
    }
    if (w.platformCustomerId !== null) plannedEmailOfCustomer.set(w.platformCustomerId, w.email)
    toInsert.push({
      id: newId(),
      store_id: storeId,
      email: w.email,
      name: w.name,
      shipping_address: w.shippingAddress ? JSON.stringify(w.shippingAddress) : null,
      platform_customer_id: w.platformCustomerId,
      created_at: now,
      updated_at: now,
    })
  }
  for (const link of toLink) {
    await trx.updateTable('subscribers').set({ platform_customer_id: link.platformCustomerId, updated_at: now }).where('id', '=', link.id).execute()
  }
  if (toInsert.length > 0) {
    // Another writer may have created one of these meanwhile (a checkout): that row is read back and used.
    const inserted = await trx.insertInto('subscribers').values(toInsert).onConflict((oc) => oc.columns(['store_id', 'email']).doNothing()).returningAll().execute()
    for (const row of inserted) found.set(row.email, row)
    const missing = toInsert.filter((row) => !found.has(row.email)).map((row) => row.email)
    if (missing.length > 0) {
      const raced = await trx.selectFrom('subscribers').selectAll().where('store_id', '=', storeId).where('email', 'in', missing).execute()
      for (const row of raced) {
        const w = wanted.find((candidate) => candidate.email === row.email)!
        found.set(row.email, w.platformCustomerId !== null && row.platform_customer_id !== null && row.platform_customer_id !== w.platformCustomerId ? { conflict: row } : row)
      }
    }
  }
  for (const [email, planned] of aliases) {
    const subscriber = found.get(planned)
    if (subscriber) found.set(email, subscriber)
  }
  return found
}

/** Inserts the batch's subscriptions; a row whose external id another run inserted meanwhile is left out of the answer. */
export function insertImportedSubscriptions(trx: Executor, rows: Insertable<SubscriptionsTable>[]): Promise<SubscriptionRow[]> {
  if (rows.length === 0) return Promise.resolve([])
  return trx
    .insertInto('subscriptions')
    .values(rows)
    .onConflict((oc) => oc.columns(['store_id', 'external_id']).where('external_id', 'is not', null).doNothing())
    .returningAll()
    .execute()
}
