import { Type } from 'typebox'
import { adminStore } from '../../http/admin-auth.ts'
import { Id, PageOf, PageQuery, problemResponses, StringEnum, Timestamp } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import type { RecordedEvent } from './event-log.ts'
import { EVENT_TYPES } from './event.schemas.ts'
import type { EventsService } from './events.service.ts'

// The payload schema is assembled at the top from the modules that own each entity; named here by its id.
const EventRef = Type.Unsafe<RecordedEvent>({ $ref: 'Event#' })

const EventListQuery = Type.Object(
  {
    ...PageQuery,
    event_type: Type.Optional(StringEnum(EVENT_TYPES)),
    entity_id: Type.Optional(Type.String({ minLength: 3, maxLength: 64, description: 'Only events about this subscription, charge, change request, add-on or store (`store.updated`: the store id)' })),
    occurred_after: Type.Optional({ ...Timestamp, description: 'Only events at or after this time (store clock)' }),
    occurred_before: Type.Optional({ ...Timestamp, description: 'Only events before this time (store clock)' }),
  },
  { additionalProperties: false },
)

const EventPage = PageOf(EventRef, 'A page of events, newest first')

/** The event log: every change as it was recorded, in the order it was recorded. */
export async function eventRoutes(app: App, events: EventsService): Promise<void> {
  app.get('/events', {
    schema: { operationId: 'listEvents', summary: 'List events, newest first', tags: ['Events'], querystring: EventListQuery, response: { 200: EventPage } },
  }, async (request) => events.list(adminStore(request), request.query))

  app.get('/events/:id', {
    schema: {
      operationId: 'getEvent',
      summary: 'Read one event',
      tags: ['Events'],
      params: Type.Object({ id: Id('evt') }, { additionalProperties: false }),
      response: { 200: EventRef, ...problemResponses(404) },
    },
  }, async (request) => events.get(adminStore(request), request.params.id))
}
