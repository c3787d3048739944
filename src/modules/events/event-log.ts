import type { Executor } from '../../db/database.ts'
import { findCardNumber } from '../../lib/card-data.ts'
import { AppError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import { enqueueNotificationJobs } from '../notifications/triggers.ts'
import type { EventType } from './event.schemas.ts'

export interface NewEvent {
  storeId: string
  eventType: EventType
  /** When it happened on the store's clock. */
  occurredAt: Date
  /** The affected entity as the API shows it; its `id` and `object` name the entity. */
  data: { id?: string; object: string } & Record<string, unknown>
  /** For entities without an id of their own (webhook.test pings). */
  entityId?: string
}

export interface RecordedEvent {
  id: string
  event_type: EventType
  timestamp: string
  api_version: 'v1'
  data: Record<string, unknown>
  sequence: number
}

/**
 * Appends an event to the outbox inside the caller's transaction, so the change and its event commit
 * or vanish together. The caller holds the entity's row lock, which makes `sequence` gapless per entity.
 */
export async function recordEvent(trx: Executor, event: NewEvent): Promise<RecordedEvent> {
  const entityId = entityIdOf(event)
  const last = await trx
    .selectFrom('events')
    .select((eb) => eb.fn.max('sequence').as('sequence'))
    .where('entity_id', '=', entityId)
    .executeTakeFirst()
  const { recorded, row } = eventRow(event, entityId, Number(last?.sequence ?? 0) + 1)
  await trx.insertInto('events').values(row).execute()
  await queueNotifications(trx, [{ recorded, row }])
  return recorded
}

/**
 * The first events of entities created in this same transaction, in one statement: nothing can have
 * been recorded about them before, so each entity's sequence starts at 1 in the order given.
 */
export function recordEventsOfNewEntities(trx: Executor, events: NewEvent[]): Promise<RecordedEvent[]> {
  return insertNumbered(trx, events, new Map())
}

/**
 * Events about entities that may already have events, in one read and one write: for batches whose
 * rows the caller has locked. Events of one entity keep the order given.
 */
export async function recordEvents(trx: Executor, events: NewEvent[]): Promise<RecordedEvent[]> {
  if (events.length === 0) return []
  const entityIds = [...new Set(events.map(entityIdOf))]
  const last = await trx
    .selectFrom('events')
    .select(['entity_id', (eb) => eb.fn.max('sequence').as('sequence')])
    .where('entity_id', 'in', entityIds)
    .groupBy('entity_id')
    .execute()
  return insertNumbered(trx, events, new Map(last.map((row) => [row.entity_id, Number(row.sequence)])))
}

/** Numbers each entity's events on from its last sequence (0 when it has none) and writes them in one statement. */
async function insertNumbered(trx: Executor, events: NewEvent[], lastSequence: Map<string, number>): Promise<RecordedEvent[]> {
  if (events.length === 0) return []
  const built = events.map((event) => {
    const entityId = entityIdOf(event)
    const sequence = (lastSequence.get(entityId) ?? 0) + 1
    lastSequence.set(entityId, sequence)
    return eventRow(event, entityId, sequence)
  })
  await trx
    .insertInto('events')
    .values(built.map(({ row }) => row))
    .execute()
  await queueNotifications(trx, built)
  return built.map(({ recorded }) => recorded)
}

/** Subscriber emails are queued with the events that call for them, in the same transaction (src/modules/notifications/triggers.ts). */
function queueNotifications(trx: Executor, built: ReadonlyArray<ReturnType<typeof eventRow>>): Promise<void> {
  return enqueueNotificationJobs(
    trx,
    built.map(({ recorded, row }) => ({ id: recorded.id, storeId: row.store_id, eventType: row.event_type, occurredAt: row.occurred_at, data: recorded.data })),
  )
}

function entityIdOf(event: NewEvent): string {
  const entityId = event.entityId ?? event.data.id
  if (!entityId) throw new Error('an event needs the id of the entity it is about')
  if (findCardNumber(event.data) !== undefined) {
    // Card numbers are refused at the edge; one reaching an event is a bug, and must not leave the service.
    throw new AppError('internal_error', 'refusing to record an event that holds card data')
  }
  return entityId
}

function eventRow(event: NewEvent, entityId: string, sequence: number) {
  const recorded: RecordedEvent = {
    id: newId('evt'),
    event_type: event.eventType,
    timestamp: event.occurredAt.toISOString(),
    api_version: 'v1',
    data: event.data,
    sequence,
  }
  const row = {
    id: recorded.id,
    store_id: event.storeId,
    entity_type: event.data.object,
    entity_id: entityId,
    event_type: event.eventType,
    sequence,
    occurred_at: event.occurredAt,
    payload: JSON.stringify(recorded),
  }
  return { recorded, row }
}
