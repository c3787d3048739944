import type { Executor } from '../../db/database.ts'

/** Order webhooks received, by the payload's `hash`: each acted on once. */

/** Records a callback's hash; false when it was received before (a duplicate delivery). */
export async function recordReceipt(db: Executor, receipt: { storeId: string; hash: string; scope: string; at: Date }): Promise<boolean> {
  const fresh = await db
    .insertInto('platform_webhook_receipts')
    .values({ store_id: receipt.storeId, hash: receipt.hash, scope: receipt.scope, received_at: receipt.at })
    .onConflict((oc) => oc.columns(['store_id', 'hash']).doNothing())
    .returning('hash')
    .executeTakeFirst()
  return fresh !== undefined
}

/** Forgets receipts older than `before`; answers how many. */
export async function purgeReceipts(db: Executor, before: Date): Promise<number> {
  const purged = await db.deleteFrom('platform_webhook_receipts').where('received_at', '<', before).executeTakeFirst()
  return Number(purged.numDeletedRows)
}
