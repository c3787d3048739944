export {
  CHANGE_REQUEST_EVENT_TYPES,
  CHARGE_EVENT_TYPES,
  EVENT_TYPES,
  ONETIME_EVENT_TYPES,
  eventEnvelope,
  EventTypeSchema,
  SUBSCRIPTION_EVENT_TYPES,
  TEST_EVENT_TYPES,
  type EventType,
} from './event.schemas.ts'
export { recordEvent, recordEvents, recordEventsOfNewEntities, type NewEvent, type RecordedEvent } from './event-log.ts'
export { eventRoutes } from './events.routes.ts'
export { findFeedEvent, takeEventsToFanOut, markFannedOut, type FeedEvent } from './event-feed.ts'
