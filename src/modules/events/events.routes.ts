import { Type } from 'typebox'
import type { Db } from '../../db/database.ts'
import { adminStore } from '../../http/admin-auth.ts'
import { Id, PageOf, PageQuery, problemResponses, StringEnum, Timestamp } from '../../http/schemas.ts'
import type { App } from '../../http/types.ts'
import { notFound } from '../../lib/errors.ts'
import { listPage } from '../../lib/pagination.ts'
import type { RecordedEvent } from './event-log.ts'
import { EVENT_TYPES } from './event.schemas.ts'

// The payload schema is assembled at the top from the modules that own each entity; named here by its id.
const EventRef = Type.Unsafe<RecordedEvent>({ $ref: 'Event#' })

const EventListQuery = Type.Object(
  {
    ...PageQuery,
    event_type: Type.Optional(StringEnum(EVENT_TYPES)),
    entity_id: Type.Optional(Type.String({ minLength: 3, maxLength: 64, description: 'Only events about this subscription, charge or change request' })),
    occurred_after: Type.Optional({ ...Timestamp, description: 'Only events at or after this time (store clock)' }),
    occurred_before: Type.Optional({ ...Timestamp, description: 'Only events before this time (store clock)' }),
  },
  { additionalProperties: false },
)

const EventPage = PageOf(EventRef, 'A page of events, newest first')

/** The event log: every change as it was recorded, in the order it was recorded. */
export async function eventRoutes(app: App, { db }: { db: Db }): Promise<void> {
  app.get('/events', {
    schema: { operationId: 'listEvents', summary: 'List events, newest first', tags: ['Events'], querystring: EventListQuery, response: { 200: EventPage } },
  }, async (request) => {
    const { limit, cursor, event_type, entity_id, occurred_after, occurred_before } = request.query
    let query = db.selectFrom('events').select(['id', 'payload']).where('store_id', '=', adminStore(request).id)
    if (event_type) query = query.where('event_type', '=', event_type)
    if (entity_id) query = query.where('entity_id', '=', entity_id)
    if (occurred_after) query = query.where('occurred_at', '>=', new Date(occurred_after))
    if (occurred_before) query = query.where('occurred_at', '<', new Date(occurred_before))
    return listPage({ limit, cursor }, ({ afterId }) => (afterId ? query.where('id', '<', afterId) : query).orderBy('id', 'desc').limit(limit + 1).execute(), (row) => JSON.parse(row.payload))
  })

  app.get('/events/:id', {
    schema: {
      operationId: 'getEvent',
      summary: 'Read one event',
      tags: ['Events'],
      params: Type.Object({ id: Id('evt') }, { additionalProperties: false }),
      response: { 200: EventRef, ...problemResponses(404) },
    },
  }, async (request) => {
    const row = await db.selectFrom('events').select('payload').where('id', '=', request.params.id).where('store_id', '=', adminStore(request).id).executeTakeFirst()
    if (!row) throw notFound('event', request.params.id)
    return JSON.parse(row.payload)
  })
}
