import type { Db } from '../../db/database.ts'
import type { Module } from '../module.ts'
import { createEventLog, type EventLog } from './event-log.ts'
import { eventRoutes } from './events.routes.ts'
import { createEventsService, type EventsService } from './events.service.ts'

export type EventsModuleService = EventsService & {
  /** Where every module records its events, in its own transaction (the outbox), and where reactions subscribe. */
  log: EventLog
}

/** The event log: every change recorded with it, read by the admin API and consumed by webhooks and emails. */
export function createEventsModule({ db }: { db: Db }): Module<EventsModuleService> {
  const service = { ...createEventsService({ db }), log: createEventLog() }
  return {
    name: 'events',
    service,
    routes: { admin: (app) => eventRoutes(app, service) },
  }
}

export {
  CHANGE_REQUEST_EVENT_TYPES,
  CHARGE_EVENT_TYPES,
  EVENT_ACTOR_TYPES,
  EVENT_TYPES,
  EventActor,
  ONETIME_EVENT_TYPES,
  eventEnvelope,
  EventTypeSchema,
  STORE_EVENT_TYPES,
  SUBSCRIPTION_EVENT_TYPES,
  TEST_EVENT_TYPES,
  type EventActorView,
  type EventType,
} from './event.schemas.ts'
export { eventActor, type EventLog, type EventReaction, type EventRecorded, type NewEvent, type RecordedEvent, type SubscriberLabels } from './event-log.ts'
export { eventPayload, findFeedEvent, lastEventAt, markFannedOut, takeEventsToFanOut, type FeedEvent } from './events.repository.ts'
