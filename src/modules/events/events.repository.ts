import { sql, type Insertable } from 'kysely'
import type { EventsTable, Executor } from '../../db/database.ts'

/**
 * The events table: appended to by the event log (event-log.ts), read by the admin API and by the
 * log's consumers (the webhook fan-out), in log order, each event handed out once (the fan-out queue,
 * migration 0017). Consumers never query the events table themselves.
 */

/** The last sequence of each entity that has events (for numbering the next ones). */
export async function lastSequences(trx: Executor, entityIds: readonly string[]): Promise<Map<string, number>> {
  if (entityIds.length === 0) return new Map()
  const rows = await trx
    .selectFrom('events')
    .select(['entity_id', (eb) => eb.fn.max('sequence').as('sequence')])
    .where('entity_id', 'in', [...entityIds])
    .groupBy('entity_id')
    .execute()
  return new Map(rows.map((row) => [row.entity_id, Number(row.sequence)]))
}

export async function insertEvents(trx: Executor, rows: readonly Insertable<EventsTable>[]): Promise<void> {
  if (rows.length === 0) return
  await trx.insertInto('events').values([...rows]).execute()
}

/**
 * When the entity's latest event of this type happened (its `occurred_at`, on the store's clock), if
 * it has one: read backwards along the entity's own events (index on entity_id, sequence).
 */
export async function lastEventAt(db: Executor, storeId: string, entityId: string, eventType: string): Promise<Date | undefined> {
  const row = await db
    .selectFrom('events')
    .select('occurred_at')
    .where('entity_id', '=', entityId)
    .where('store_id', '=', storeId)
    .where('event_type', '=', eventType)
    .orderBy('sequence', 'desc')
    .limit(1)
    .executeTakeFirst()
  return row?.occurred_at
}

export interface EventFilter {
  limit: number
  afterId?: string | undefined
  eventType?: string | undefined
  entityId?: string | undefined
  occurredAfter?: Date | undefined
  occurredBefore?: Date | undefined
}

/** A page of one store's events as recorded (their payloads), newest first. */
export function listEventPayloads(db: Executor, storeId: string, filter: EventFilter): Promise<{ id: string; payload: string }[]> {
  let query = db.selectFrom('events').select(['id', 'payload']).where('store_id', '=', storeId)
  if (filter.eventType) query = query.where('event_type', '=', filter.eventType)
  if (filter.entityId) query = query.where('entity_id', '=', filter.entityId)
  if (filter.occurredAfter) query = query.where('occurred_at', '>=', filter.occurredAfter)
  if (filter.occurredBefore) query = query.where('occurred_at', '<', filter.occurredBefore)
  if (filter.afterId) query = query.where('id', '<', filter.afterId)
  return query.orderBy('id', 'desc').limit(filter.limit + 1).execute()
}

export function findEventPayload(db: Executor, storeId: string, id: string): Promise<{ payload: string } | undefined> {
  return db.selectFrom('events').select('payload').where('id', '=', id).where('store_id', '=', storeId).executeTakeFirst()
}

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

/** The stored text of one of the store's events: the body every delivery of it sends, byte for byte. */
export async function eventPayload(db: Executor, storeId: string, id: string): Promise<string | undefined> {
  const row = await db.selectFrom('events').select('payload').where('store_id', '=', storeId).where('id', '=', id).executeTakeFirst()
  return row?.payload
}
