import type { Updateable } from 'kysely'
import type { Db, Executor, StoreRow, SubscriptionRow, SubscriptionsTable } from '../../db/database.ts'
import type { Clock } from '../../lib/clock.ts'
import { notFound } from '../../lib/errors.ts'
import { recordEvent, type EventType } from '../events/index.ts'
import { storeNow } from '../stores/index.ts'
import { presentSubscription } from './subscription.presenter.ts'
import type { SubscriptionView } from './subscription.schemas.ts'
import { RENEWAL_FAILED } from './subscription-batch.ts'
import { lockSubscription, updateSubscription } from './subscriptions.repository.ts'

/** Who acts: the merchant through the admin API, or a subscriber on their own subscriptions only. */
export type Actor = { kind: 'admin' } | { kind: 'subscriber'; subscriberId: string } | { kind: 'system' }

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

/** Applies a change and records its events in one transaction, holding the row lock throughout. */
export async function applyMutation(trx: Executor, store: StoreRow, subscription: SubscriptionRow, mutation: Mutation, now: Date): Promise<SubscriptionView> {
  // A renewal set aside for its data is tried again after any change: the change may have fixed it.
  const set = subscription.billing_issue?.code === RENEWAL_FAILED && !('billing_issue' in mutation.set) ? { ...mutation.set, billing_issue: null } : mutation.set
  const updated = await updateSubscription(trx, subscription.id, set, now)
  const view = presentSubscription(updated, store.store_hash)
  for (const eventType of mutation.events) {
    await recordEvent(trx, { storeId: store.id, eventType, occurredAt: mutation.at ?? now, data: view })
  }
  if (mutation.after) await mutation.after(trx, view, mutation.at ?? now)
  return view
}

export function createMutator(db: Db, clock: Clock) {
  return async function mutate(
    store: StoreRow,
    id: string,
    actor: Actor,
    decide: (context: MutationContext) => Mutation | Promise<Mutation>,
  ): Promise<SubscriptionView> {
    return db.transaction().execute(async (trx) => {
      const subscription = await lockForActor(trx, store, id, actor)
      const now = storeNow(store, clock)
      const mutation = await decide({ trx, subscription, store, now })
      return applyMutation(trx, store, subscription, mutation, now)
    })
  }
}
