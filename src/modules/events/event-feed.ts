import { sql } from 'kysely'
import type { Executor } from '../../db/database.ts'

/**
 * How consumers of the event log (the webhook fan-out) read it: in log order, each event handed
 * out once (the fan-out queue, migration 0017). Consumers never query the events table themselves.
 */

export interface FeedEvent {
  id: string
  store_id: string
  event_type: string
  entity_id: string
  position: number
}

/**
 * Takes up to `limit` events not yet fanned out, oldest first, off the fan-out queue (migration 0017:
 * a trigger queues every event in the transaction that records it). They leave the queue in the
 * caller's transaction, so they are handed out again only if it rolls back; concurrent takers skip
 * each other's (SKIP LOCKED).
 */
export async function takeEventsToFanOut(trx: Executor, limit: number): Promise<FeedEvent[]> {
  // = ANY(ARRAY(...)): each row by the primary key, whatever the statistics say of the queue's size.
  const { rows } = await sql<Omit<FeedEvent, 'position'> & { position: number | string }>`
    DELETE FROM event_fanout_queue
     WHERE position = ANY(ARRAY(SELECT position FROM event_fanout_queue ORDER BY position LIMIT ${limit} FOR UPDATE SKIP LOCKED))
 RETURNING event_id AS id, store_id, event_type, entity_id, position`.execute(trx)
  return rows.map((row) => ({ ...row, position: Number(row.position) })).sort((a, b) => a.position - b.position)
}

/** Takes events off the fan-out queue without fanning them out (their deliveries are made another way), in the caller's transaction. */
export async function markFannedOut(trx: Executor, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return
  await sql`
    DELETE FROM event_fanout_queue
     WHERE position = ANY(ARRAY(SELECT position FROM events WHERE id = ANY(${[...ids]}::text[])))`.execute(trx)
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
