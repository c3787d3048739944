import type { Executor, StoreRow, SubscriptionRow } from '../../db/database.ts'
import { pendingAddOns } from '../onetimes/index.ts'
import { findStoresByIds } from '../stores/index.ts'
import type { RenewalAddOn } from './renewal-plan.ts'

/**
 * What the pure renewal plan needs beside the subscription rows: their stores and the add-ons waiting
 * for their next charge. The renewal engine (when it claims) and the upcoming-renewal preview both
 * load through here, so the preview is priced from exactly what the charge will be priced from.
 */
export interface RenewalInputs {
  stores: Map<string, StoreRow>
  addOns: Map<string, RenewalAddOn[]>
}

export async function loadRenewalInputs(executor: Executor, subscriptions: readonly Pick<SubscriptionRow, 'id' | 'store_id'>[]): Promise<RenewalInputs> {
  // One after the other: inside a transaction both go over its one connection anyway.
  const stores = await findStoresByIds(executor, subscriptions.map((row) => row.store_id))
  const addOns = await pendingAddOns(executor, subscriptions.map((row) => row.id))
  return { stores, addOns }
}
