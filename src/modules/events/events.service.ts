import type { Db, StoreRow } from '../../db/database.ts'
import { notFound } from '../../lib/errors.ts'
import { listPage, type Page } from '../../lib/pagination.ts'
import type { RecordedEvent } from './event-log.ts'
import { findEventPayload, listEventPayloads } from './events.repository.ts'

export interface EventListQuery {
  limit: number
  cursor?: string | undefined
  event_type?: string | undefined
  entity_id?: string | undefined
  occurred_after?: string | undefined
  occurred_before?: string | undefined
}

export type EventsService = ReturnType<typeof createEventsService>

/** The event log as the admin API reads it: every change as recorded, exactly the bytes delivered. */
export function createEventsService({ db }: { db: Db }) {
  return {
    list(store: StoreRow, query: EventListQuery): Promise<Page<RecordedEvent>> {
      return listPage(query, (bounds) => listEventPayloads(db, store.id, {
        ...bounds,
        eventType: query.event_type,
        entityId: query.entity_id,
        occurredAfter: query.occurred_after ? new Date(query.occurred_after) : undefined,
        occurredBefore: query.occurred_before ? new Date(query.occurred_before) : undefined,
      }), (row) => JSON.parse(row.payload) as RecordedEvent)
    },

    async get(store: StoreRow, id: string): Promise<RecordedEvent> {
      const row = await findEventPayload(db, store.id, id)
      if (!row) throw notFound('event', id)
      return JSON.parse(row.payload) as RecordedEvent
    },
  }
}
