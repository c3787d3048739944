import type { Executor } from '../../db/database.ts'

/**
 * How consumers of the event log (the webhook fan-out) read it: in log order, each event handed
 * out once. Consumers never query the events table themselves.
 */

export interface FeedEvent {
  id: string
  store_id: string
  event_type: string
  entity_id: string
  position: number
}

/** Locks (SKIP LOCKED) up to `limit` events not yet fanned out, oldest first. */
export function lockEventsToFanOut(trx: Executor, limit: number): Promise<FeedEvent[]> {
  return trx
    .selectFrom('events')
    .select(['id', 'store_id', 'event_type', 'entity_id', 'position'])
    .where('fanned_out', '=', false)
    .orderBy('position')
    .limit(limit)
    .forUpdate()
    .skipLocked()
    .execute()
}

/** Marks events as handed to their consumers, in the transaction that recorded what they produced. */
export async function markFannedOut(trx: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return
  await trx.updateTable('events').set({ fanned_out: true }).where('id', 'in', [...ids]).execute()
}

/** One of the store's events, as a consumer addresses it. */
export function findFeedEvent(db: Executor, storeId: string, id: string): Promise<FeedEvent | undefined> {
  return db
    .selectFrom('events')
    .select(['id', 'store_id', 'event_type', 'entity_id', 'position'])
    .where('store_id', '=', storeId)
    .where('id', '=', id)
    .executeTakeFirst()
}
