import type { Executor } from '../../db/database.ts'
import { SYSTEM_ACTORS, type Actor } from '../../http/actors.ts'
import { findCardNumber } from '../../lib/card-data.ts'
import { AppError } from '../../lib/errors.ts'
import { newId } from '../../lib/ids.ts'
import type { EventActorView, EventType } from './event.schemas.ts'
import { insertEvents, lastSequences } from './events.repository.ts'

export interface NewEvent {
  storeId: string
  eventType: EventType
  /** When it happened on the store's clock. */
  occurredAt: Date
  /** The affected entity as the API shows it; its `id` and `object` name the entity. */
  data: { id?: string; object: string } & Record<string, unknown>
  /** For entities without an id of their own (webhook.test pings). */
  entityId?: string
  /** Who caused it: recorded with the event and delivered in it (docs/contract.md, Events: `actor`). */
  actor: Actor
}

export interface RecordedEvent {
  id: string
  event_type: EventType
  timestamp: string
  api_version: 'v1'
  /** Absent only from events recorded before actors were kept. */
  actor?: EventActorView
  data: Record<string, unknown>
  sequence: number
}

/** An event as reactions see it: what was recorded, and for which store. */
export interface EventRecorded {
  storeId: string
  occurredAt: Date
  event: RecordedEvent
}

/**
 * Work that must happen exactly when an event does (a subscriber email queued for it, say): run
 * inside the transaction that records the events, so a rollback leaves nothing and a commit always
 * leaves the work queued. Reactions are registered by the modules that react (notifications), so
 * the event log knows none of them.
 */
export type EventReaction = (trx: Executor, recorded: readonly EventRecorded[]) => Promise<void>

/** The emails of a store's subscribers, by id: how an event names a subscriber who acted (given by the subscriptions module). */
export type SubscriberLabels = (trx: Executor, storeId: string, subscriberIds: readonly string[]) => Promise<Map<string, string>>

export type EventLog = ReturnType<typeof createEventLog>

/**
 * The outbox: each event is appended inside the caller's transaction, so the change and its event
 * commit or vanish together. The caller holds the entity's row lock, which makes `sequence` gapless
 * per entity.
 */
export function createEventLog() {
  const reactions: EventReaction[] = []
  let subscriberLabels: SubscriberLabels | undefined

  /** Each event's actor as delivered; a subscriber is named by their email, read in the same transaction. */
  async function actorsOf(trx: Executor, events: readonly NewEvent[]): Promise<EventActorView[]> {
    const emails = new Map<string, string>()
    const subscribers = new Map<string, Set<string>>()
    for (const { storeId, actor } of events) {
      if (actor.kind === 'subscriber') subscribers.set(storeId, (subscribers.get(storeId) ?? new Set()).add(actor.subscriberId))
    }
    if (subscriberLabels) {
      for (const [storeId, ids] of subscribers) {
        for (const [id, email] of await subscriberLabels(trx, storeId, [...ids])) emails.set(id, email)
      }
    }
    return events.map(({ actor }) => eventActor(actor, emails))
  }

  /** Numbers each entity's events on from its last sequence (0 when it has none), writes them in one statement, then reacts. */
  async function insertNumbered(trx: Executor, events: readonly NewEvent[], lastSequence: Map<string, number>): Promise<RecordedEvent[]> {
    if (events.length === 0) return []
    const actors = await actorsOf(trx, events)
    const built = events.map((event, index) => {
      const entityId = entityIdOf(event)
      const sequence = (lastSequence.get(entityId) ?? 0) + 1
      lastSequence.set(entityId, sequence)
      return eventRow(event, actors[index]!, entityId, sequence)
    })
    await insertEvents(trx, built.map(({ row }) => row))
    const recorded = built.map(({ recorded: event, row }) => ({ storeId: row.store_id, occurredAt: row.occurred_at, event }))
    for (const reaction of reactions) await reaction(trx, recorded)
    return built.map(({ recorded: event }) => event)
  }

  return {
    /** One event about an entity that may already have events. */
    async record(trx: Executor, event: NewEvent): Promise<RecordedEvent> {
      const [recorded] = await insertNumbered(trx, [event], await lastSequences(trx, [entityIdOf(event)]))
      return recorded!
    },

    /**
     * Events about entities that may already have events, in one read and one write: for batches whose
     * rows the caller has locked. Events of one entity keep the order given.
     */
    async recordMany(trx: Executor, events: readonly NewEvent[]): Promise<RecordedEvent[]> {
      if (events.length === 0) return []
      return insertNumbered(trx, events, await lastSequences(trx, [...new Set(events.map(entityIdOf))]))
    },

    /**
     * The first events of entities created in this same transaction, in one statement: nothing can have
     * been recorded about them before, so each entity's sequence starts at 1 in the order given.
     */
    recordOfNewEntities(trx: Executor, events: readonly NewEvent[]): Promise<RecordedEvent[]> {
      return insertNumbered(trx, events, new Map())
    },

    /** Adds a reaction to every event recorded from now on (see EventReaction). */
    react(reaction: EventReaction): void {
      reactions.push(reaction)
    },

    /** Where the email that names a subscriber who acted is read (the subscriptions module owns subscribers). */
    labelSubscribers(labels: SubscriberLabels): void {
      subscriberLabels = labels
    },
  }
}

/**
 * The actor as an event carries it: ids and names a person can tell apart, never a credential (an
 * admin key by its id and name, a console session by its id).
 */
export function eventActor(actor: Actor, subscriberEmails: ReadonlyMap<string, string> = new Map()): EventActorView {
  switch (actor.kind) {
    case 'admin_key':
      return { type: 'admin_key', id: actor.keyId, label: actor.keyName }
    case 'console':
      return { type: 'console', id: actor.sessionId, label: 'Console' }
    case 'subscriber': {
      const email = subscriberEmails.get(actor.subscriberId)
      return { type: 'subscriber', id: actor.subscriberId, ...(email ? { label: email } : {}) }
    }
    case 'platform':
      return { type: 'platform', label: actor.label }
    case 'system':
      return { type: 'system', id: actor.id, label: SYSTEM_ACTORS[actor.id] }
  }
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

function eventRow(event: NewEvent, actor: EventActorView, entityId: string, sequence: number) {
  const recorded: RecordedEvent = {
    id: newId('evt'),
    event_type: event.eventType,
    timestamp: event.occurredAt.toISOString(),
    api_version: 'v1',
    actor,
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
