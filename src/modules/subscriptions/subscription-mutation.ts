import type { Updateable } from 'kysely'
import type { Executor, StoreRow, SubscriptionRow, SubscriptionsTable } from '../../db/database.ts'
import type { Actor } from '../../http/actors.ts'
import { notFound } from '../../lib/errors.ts'
import type { EventType } from '../events/index.ts'
import type { SubscriptionView } from './subscription.schemas.ts'
import { lockSubscription } from './subscriptions.repository.ts'

export type { Actor } from '../../http/actors.ts'

export interface Mutation {
  set: Updateable<SubscriptionsTable>
  /** Events in the order they happened; each carries the subscription as it is after the change. */
  events: EventType[]
  /** The event time, when it is not "now" (due work happens at its due time). */
  at?: Date
  /** Runs in the same transaction after the change and its events (e.g. a retention save recorded by its module). */
  after?: (trx: Executor, view: SubscriptionView, at: Date) => Promise<void>
}

/**
 * What a caller adds to an action it performs on a subscriber's behalf: more events, and work in the
 * same transaction (a retention offer taken instead of a cancellation is recorded as a save).
 */
export interface ActionMark {
  events?: EventType[]
  after?: Mutation['after']
}

export function withMark(mutation: Mutation, mark: ActionMark | undefined): Mutation {
  if (!mark) return mutation
  return { ...mutation, events: [...mutation.events, ...(mark.events ?? [])], ...(mark.after ? { after: mark.after } : {}) }
}

export interface MutationContext {
  trx: Executor
  subscription: SubscriptionRow
  store: StoreRow
  now: Date
}

/** Locks a subscription the actor may see (another subscriber's is simply not found). */
export async function lockForActor(trx: Executor, store: StoreRow, id: string, actor: Actor): Promise<SubscriptionRow> {
  const subscription = await lockSubscription(trx, store.id, id)
  if (!subscription || (actor.kind === 'subscriber' && subscription.subscriber_id !== actor.subscriberId)) {
    throw notFound('subscription', id)
  }
  return subscription
}
